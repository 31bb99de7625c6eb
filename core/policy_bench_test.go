package core

import (
	"testing"
	"time"
)

// BenchmarkDecide measures policy evaluation after one attempt, per kind of
// result the leader sees.
func BenchmarkDecide(b *testing.B) {
	cases := []struct {
		name     string
		contract Contract
		result   AttemptResult
	}{
		{"deadline/accepted", deadlineContract, accepted()},
		{"deadline/retry", deadlineContract, rejected(ReasonProviderFailure)},
		{"max_attempts/terminal", maxAttemptsContract, rejected(ReasonInvalidRecipient)},
		{"max_attempts/transport_error", maxAttemptsContract, transportError()},
		{"one_shot/invalid_outcome", oneShotContract, AttemptResult{Outcome: &Outcome{Status: "queued"}}},
	}
	finished := policyCreatedAt.Add(10 * time.Second)
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var d Decision
			for b.Loop() {
				d = Decide(c.contract, policyCreatedAt, 2, finished, c.result, DefaultRetryDelay)
			}
			if d.Status == "" {
				b.Fatal("no decision")
			}
		})
	}
}
