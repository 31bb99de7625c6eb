package core

import (
	"errors"
	"testing"
)

func TestPossiblyAccepted(t *testing.T) {
	dup := &Outcome{Status: OutcomeRejected, Reason: ReasonDuplicateReference}
	other := &Outcome{Status: OutcomeRejected, Reason: "rate_limited"}
	acc := &Outcome{Status: OutcomeAccepted}
	for _, tc := range []struct {
		name    string
		inDoubt int
		r       AttemptResult
		want    bool
	}{
		{"duplicate after an attempt in doubt", 1, AttemptResult{Outcome: dup}, true},
		{"duplicate after two attempts in doubt", 2, AttemptResult{Outcome: dup}, true},
		{"duplicate with no attempt in doubt", 0, AttemptResult{Outcome: dup}, false},
		{"another rejection after an attempt in doubt", 1, AttemptResult{Outcome: other}, false},
		{"an acceptance after an attempt in doubt", 1, AttemptResult{Outcome: acc}, false},
		{"an error after an attempt in doubt", 1, AttemptResult{Err: errors.New("timeout")}, false},
	} {
		if got := PossiblyAccepted(tc.inDoubt, tc.r); got != tc.want {
			t.Errorf("%s: PossiblyAccepted = %v, want %v", tc.name, got, tc.want)
		}
	}
}
