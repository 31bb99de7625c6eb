package core

import (
	"testing"
	"time"
)

func TestTriesCountsOnlyWhatWasSent(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	closed := func(n int, sent bool, text string) Attempt {
		return Attempt{Number: n, StartedAt: at, FinishedAt: at, Error: text, Sent: sent}
	}
	open := Attempt{Number: 4, StartedAt: at}
	attempts := []Attempt{
		closed(1, true, "gateway timeout"),
		closed(2, false, "any sentence at all"),
		// A sent attempt counts whatever its text says.
		closed(3, true, "not submitted: leadership was lost before the gateway call"),
		open,
	}
	cases := []struct {
		name     string
		n        int
		attempts []Attempt
		want     int
	}{
		{"none", 0, nil, 0},
		{"first sent", 1, attempts, 1},
		{"an unsent attempt is no try", 2, attempts, 1},
		{"a sent attempt counts under any text", 3, attempts, 2},
		{"an open attempt may have been sent", 4, attempts, 3},
		{"only the first n are looked at", 1, attempts[1:2], 1},
		{"attempts not loaded", 3, nil, 3},
	}
	for _, c := range cases {
		if got := Tries(c.n, c.attempts); got != c.want {
			t.Errorf("%s: Tries(%d) = %d, want %d", c.name, c.n, got, c.want)
		}
	}
}
