package core

import (
	"strings"
	"testing"
	"time"
)

func TestNormalizeTraceParent(t *testing.T) {
	const valid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, c := range []struct {
		in, want string
	}{
		{valid, valid},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"},
		// A later version is read by its first 55 characters and kept as 00.
		{"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", valid},
		{"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds", valid},
	} {
		got, ok := NormalizeTraceParent(c.in)
		if !ok || got != c.want {
			t.Errorf("NormalizeTraceParent(%q) = %q, %v; want %q, true", c.in, got, ok, c.want)
		}
	}
	for _, in := range []string{
		"",
		valid[:54],
		valid + "-",            // version 00 is exactly 55 characters
		valid + "0",            // likewise
		"cc" + valid[2:] + "x", // a later version's extra fields follow a dash
		"ff" + valid[2:],       // version ff is invalid
		"0g" + valid[2:],       // not hex
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", // upper case
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0X",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", // all-zero trace-id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // all-zero parent-id
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01",
		" " + valid[1:],
		strings.Repeat("a", 55),
	} {
		if got, ok := NormalizeTraceParent(in); ok || got != "" {
			t.Errorf("NormalizeTraceParent(%q) = %q, %v; want it ignored", in, got, ok)
		}
	}
}

// TestResubmissionKeepsTheTrace: the same message sent again belongs to the
// trace it was submitted in.
func TestResubmissionKeepsTheTrace(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	c := Contract{SubmissionTarget: "t", GatewayType: GatewaySMS}
	original := NewIntent("a", c, []byte(`{}`), time.Unix(0, 0))
	original.TraceParent = tp
	if got := NewResubmission(original, "a~r1", c, time.Unix(1, 0)).TraceParent; got != tp {
		t.Errorf("the resubmission's TraceParent = %q, want the original's %q", got, tp)
	}
}
