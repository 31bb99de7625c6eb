package httpapi

import (
	"testing"
	"time"
)

func TestPreferredWaitReadsRFC7240AndIgnoresWhatItCannotUse(t *testing.T) {
	tests := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"wait=10", 10 * time.Second, true},
		{"WAIT = 5", 5 * time.Second, true},
		{`wait="7"`, 7 * time.Second, true},
		{"respond-async, wait=3", 3 * time.Second, true},
		{"return=minimal; foo=bar, wait=2;x=y", 2 * time.Second, true},
		{"wait=3, wait=9", 3 * time.Second, true}, // RFC 7240: the first one counts
		{"wait=0", 0, false},
		{"wait=-1", 0, false},
		{"wait=1.5", 0, false},
		{"wait=soon", 0, false},
		{"wait", 0, false},
		{"wait=4294967295", 4294967295 * time.Second, true},
		{"wait=4294967296", 4294967296 * time.Second, true},
		{"wait=99999999999", longestPreferredWait, true},
		{"wait=184467440737095516160000", longestPreferredWait, true},
		{"wait=+5", 0, false},
		{"return=representation", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		h := tt.header
		got, ok := preferredWait(&h)
		if got != tt.want || ok != tt.ok {
			t.Errorf("preferredWait(%q) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := preferredWait(nil); ok {
		t.Error("no Prefer header asked for a wait")
	}
}
