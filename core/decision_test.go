package core

import (
	"errors"
	"testing"
	"time"
)

func TestDeadlinePassedIsStrictlyBefore(t *testing.T) {
	deadline := at(30 * time.Second)
	for _, c := range []struct {
		name     string
		contract Contract
		at       time.Time
		want     bool
	}{
		{"before the deadline", deadlineContract, deadline.Add(-time.Nanosecond), false},
		{"at the deadline", deadlineContract, deadline, true},
		{"after the deadline", deadlineContract, deadline.Add(time.Nanosecond), true},
		{"no deadline under max_attempts", maxAttemptsContract, deadline.Add(time.Hour), false},
		{"no deadline under one_shot", oneShotContract, deadline.Add(time.Hour), false},
	} {
		if got := DeadlinePassed(c.contract, policyCreatedAt, c.at); got != c.want {
			t.Errorf("%s: DeadlinePassed = %v, want %v", c.name, got, c.want)
		}
	}
	// The window opens at the start given (notBefore), not at creation.
	if DeadlinePassed(deadlineContract, policyCreatedAt.Add(time.Hour), deadline) {
		t.Error("a window opened an hour later passed its deadline at the first window's end")
	}
}

func TestDecideDeferral(t *testing.T) {
	deadline := at(30 * time.Second)
	if got := DecideDeferral(deadlineContract, policyCreatedAt, deadline.Add(-time.Microsecond), policyCreatedAt); got.Status != StatusPending ||
		!got.NextDueAt.Equal(deadline.Add(-time.Microsecond)) {
		t.Errorf("a deferral ending before the deadline: %+v, want pending until then", got)
	}
	if got := DecideDeferral(deadlineContract, policyCreatedAt, deadline, deadline.Add(-LastTryLead)); got.Status != StatusExhausted ||
		got.ExhaustedReason != ExhaustedDeadlineExceeded {
		t.Errorf("a deferral ending at the deadline: %+v, want exhausted by it", got)
	}
	// A deferral that would miss the deadline waits for the intent's last
	// try while that lies ahead, and only then exhausts it.
	lastTry := deadline.Add(-LastTryLead)
	if got := DecideDeferral(deadlineContract, policyCreatedAt, deadline.Add(time.Hour), at(10*time.Second)); got.Status != StatusPending ||
		!got.NextDueAt.Equal(lastTry) {
		t.Errorf("a deferral past the deadline at +10s: %+v, want pending until the last try %v", got, lastTry)
	}
	if got := DecideDeferral(deadlineContract, policyCreatedAt, deadline, lastTry.Add(-time.Microsecond)); got.Status != StatusPending ||
		!got.NextDueAt.Equal(lastTry) {
		t.Errorf("a deferral just before the last try: %+v, want pending until it", got)
	}
	// A deferral spends no try: no other policy ends an intent by it.
	for _, c := range []Contract{maxAttemptsContract, oneShotContract} {
		if got := DecideDeferral(c, policyCreatedAt, at(time.Hour), policyCreatedAt); got.Status != StatusPending {
			t.Errorf("a deferral under %s: %+v, want pending", c.Policy, got)
		}
	}
}

// TestDecisionValidate holds the rule to both sides: every shape the policy
// makes passes, and every contradiction either store's schema would refuse
// (or would silently drop) is refused as ErrInvalidDecision.
func TestDecisionValidate(t *testing.T) {
	due := at(time.Second)
	acc := &Outcome{Status: OutcomeAccepted, MessageID: "m-1"}
	rej := &Outcome{Status: OutcomeRejected, Reason: ReasonInvalidRecipient}
	good := []Decision{
		{Status: StatusPending, NextDueAt: due},
		{Status: StatusPending, NextDueAt: due, PossiblyAccepted: true},
		{Status: StatusAccepted, FinalOutcome: acc},
		{Status: StatusRejected, FinalOutcome: rej},
		{Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded},
		{Status: StatusExhausted, ExhaustedReason: ExhaustedMaxAttempts, PossiblyAccepted: true},
		{Status: StatusExhausted, ExhaustedReason: ExhaustedOneShotCompleted},
		{Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded, AcceptedAfterDeadline: true, AcceptedMessageID: "m-1"},
		{Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded, AcceptedAfterDeadline: true},
		{Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded, AcceptedAfterDeadline: true, PossiblyAccepted: true},
	}
	for _, d := range good {
		if err := d.Validate(); err != nil {
			t.Errorf("%+v refused: %v", d, err)
		}
	}
	bad := map[string]Decision{
		"no status":                        {},
		"unknown status":                   {Status: "cancelled"},
		"pending without a due time":       {Status: StatusPending},
		"pending with a final outcome":     {Status: StatusPending, NextDueAt: due, FinalOutcome: rej},
		"pending with an exhausted reason": {Status: StatusPending, NextDueAt: due, ExhaustedReason: ExhaustedMaxAttempts},
		"accepted without an outcome":      {Status: StatusAccepted},
		"accepted with a rejection":        {Status: StatusAccepted, FinalOutcome: rej},
		"rejected with an acceptance":      {Status: StatusRejected, FinalOutcome: acc},
		"accepted with a due time":         {Status: StatusAccepted, FinalOutcome: acc, NextDueAt: due},
		"rejected with an exhausted reason": {Status: StatusRejected, FinalOutcome: rej,
			ExhaustedReason: ExhaustedMaxAttempts},
		"exhausted without a reason":       {Status: StatusExhausted},
		"exhausted with an unknown reason": {Status: StatusExhausted, ExhaustedReason: "tired"},
		"exhausted with a due time": {Status: StatusExhausted, ExhaustedReason: ExhaustedMaxAttempts,
			NextDueAt: due},
		"exhausted with a final outcome": {Status: StatusExhausted, ExhaustedReason: ExhaustedMaxAttempts,
			FinalOutcome: rej},
		// An acceptance after the deadline goes only with the exhaustion
		// the deadline rule makes of it, and its message id only with it.
		"accepted after the deadline, by max attempts": {Status: StatusExhausted, ExhaustedReason: ExhaustedMaxAttempts,
			AcceptedAfterDeadline: true},
		"accepted after the deadline, yet accepted": {Status: StatusAccepted, FinalOutcome: acc, AcceptedAfterDeadline: true},
		"accepted after the deadline, yet pending":  {Status: StatusPending, NextDueAt: due, AcceptedAfterDeadline: true},
		"a message id without a late acceptance": {Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded,
			AcceptedMessageID: "m-1"},
	}
	for name, d := range bad {
		if err := d.Validate(); !errors.Is(err, ErrInvalidDecision) {
			t.Errorf("%s: Validate = %v, want ErrInvalidDecision", name, err)
		}
	}
}

// TestDecideMakesOnlyValidDecisions runs the policy over every contract,
// result and timing the policy tests use, and requires each decision to
// pass the rule the stores apply before they write it.
func TestDecideMakesOnlyValidDecisions(t *testing.T) {
	results := []AttemptResult{accepted(), rejected(ReasonInvalidRecipient), rejected(ReasonDuplicateReference),
		rejected("gateway_specific"), transportError()}
	for _, c := range []Contract{deadlineContract, maxAttemptsContract, oneShotContract} {
		for tries := 0; tries <= c.MaxAttempts+1; tries++ {
			for _, finished := range []time.Duration{0, 25 * time.Second, 30 * time.Second, time.Minute} {
				for _, r := range results {
					d := Decide(c, policyCreatedAt, tries, at(finished), r, policyDelay)
					if err := d.Validate(); err != nil {
						t.Fatalf("%s, %d tries, finished at +%v, %+v: Decide made %+v: %v", c.Policy, tries, finished, r, d, err)
					}
				}
			}
		}
	}
}

func TestValidateDeferral(t *testing.T) {
	for _, d := range []Decision{
		{Status: StatusPending, NextDueAt: at(time.Second)},
		{Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded},
	} {
		if err := d.ValidateDeferral(); err != nil {
			t.Errorf("%+v refused as a deferral: %v", d, err)
		}
	}
	for name, d := range map[string]Decision{
		"accepted":                   {Status: StatusAccepted, FinalOutcome: &Outcome{Status: OutcomeAccepted}},
		"exhausted by max attempts":  {Status: StatusExhausted, ExhaustedReason: ExhaustedMaxAttempts},
		"exhausted by one shot":      {Status: StatusExhausted, ExhaustedReason: ExhaustedOneShotCompleted},
		"pending without a due time": {Status: StatusPending},
		"exhausted with a due time":  {Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded, NextDueAt: at(time.Second)},
		"pending with an exhaustion": {Status: StatusPending, NextDueAt: at(time.Second), ExhaustedReason: ExhaustedDeadlineExceeded},
		"an acceptance after the deadline": {Status: StatusExhausted, ExhaustedReason: ExhaustedDeadlineExceeded,
			AcceptedAfterDeadline: true},
		"no status": {},
	} {
		if err := d.ValidateDeferral(); !errors.Is(err, ErrInvalidDecision) {
			t.Errorf("%s: ValidateDeferral = %v, want ErrInvalidDecision", name, err)
		}
	}
}

func TestLastTryIsTheLeadBeforeTheDeadline(t *testing.T) {
	deadline := at(30 * time.Second)
	for _, c := range []struct {
		at   time.Time
		want bool
	}{
		{deadline.Add(-LastTryLead - time.Microsecond), false},
		{deadline.Add(-LastTryLead), true},
		{deadline.Add(-time.Microsecond), true},
		{deadline, false},
	} {
		got, last := LastTry(deadlineContract, policyCreatedAt, c.at)
		if last != c.want {
			t.Errorf("LastTry at deadline%+v = %v, want %v", c.at.Sub(deadline), last, c.want)
		}
		if last && !got.Equal(deadline) {
			t.Errorf("LastTry at deadline%+v gives the deadline %v, want %v", c.at.Sub(deadline), got, deadline)
		}
	}
	if _, last := LastTry(maxAttemptsContract, policyCreatedAt, deadline.Add(-time.Millisecond)); last {
		t.Error("a contract without a deadline has a last try")
	}
}
