package core

import (
	"errors"
	"testing"
	"time"
)

func TestPossiblyAccepted(t *testing.T) {
	dup := &Outcome{Status: OutcomeRejected, Reason: ReasonDuplicateReference}
	other := &Outcome{Status: OutcomeRejected, Reason: "rate_limited"}
	acc := &Outcome{Status: OutcomeAccepted}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lost := Attempt{Number: 1, StartedAt: at, FinishedAt: at, Error: "read: connection reset", Sent: true}
	unsent := Attempt{Number: 1, StartedAt: at, FinishedAt: at, Error: "not sent", Sent: false}
	answered := Attempt{Number: 1, StartedAt: at, FinishedAt: at, Outcome: other, Sent: true}
	open := Attempt{Number: 1, StartedAt: at, Sent: true}
	for _, tc := range []struct {
		name    string
		earlier []Attempt
		r       AttemptResult
		want    bool
	}{
		{"duplicate after an answer lost", []Attempt{lost}, AttemptResult{Outcome: dup}, true},
		{"duplicate after two answers lost", []Attempt{lost, lost}, AttemptResult{Outcome: dup}, true},
		{"duplicate after answered attempts only", []Attempt{answered}, AttemptResult{Outcome: dup}, false},
		{"duplicate after an attempt never sent", []Attempt{unsent}, AttemptResult{Outcome: dup}, false},
		{"duplicate while an attempt is still open", []Attempt{open}, AttemptResult{Outcome: dup}, false},
		{"duplicate with no earlier attempt", nil, AttemptResult{Outcome: dup}, false},
		{"another rejection after an answer lost", []Attempt{lost}, AttemptResult{Outcome: other}, false},
		{"an acceptance after an answer lost", []Attempt{lost}, AttemptResult{Outcome: acc}, false},
		{"an error after an answer lost", []Attempt{lost}, AttemptResult{Err: errors.New("timeout")}, false},
	} {
		if got := PossiblyAccepted(tc.earlier, tc.r); got != tc.want {
			t.Errorf("%s: PossiblyAccepted = %v, want %v", tc.name, got, tc.want)
		}
	}
}
