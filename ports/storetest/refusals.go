package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// testMalformedWritesRefused pins, for every store, that an execution write
// whose parameters their Validate method refuses is refused with
// ports.ErrInvalidWrite before anything is written: each malformed write
// below would succeed if it were well formed (the well-formed ones succeed
// at the end), and neither intent changes, its change marker included. The
// refusal comes first, whatever the fence or the intent: a malformed write
// under a lost lease, or for a missing intent, is still ErrInvalidWrite.
func testMalformedWritesRefused(t *testing.T, h Harness) {
	f := leader(t, h)
	lost := core.Fence{LeaseName: "no-such-lease", HolderID: f.HolderID, Epoch: f.Epoch}
	mustCreate(t, h.Store, newIntent("started", smsContract("alerts"), `{}`, base))
	mustCreate(t, h.Store, newIntent("fresh", smsContract("alerts"), `{}`, base))
	start(t, h.Store, f, "started", 1, at(1))
	before := []core.Intent{mustGet(t, h.Store, "started"), mustGet(t, h.Store, "fresh")}

	goodStart := ports.StartAttemptParams{Fence: f, IntentID: "fresh", Number: 1, StartedAt: at(2)}
	goodFinish := retryAfter(f, "started", 1, at(2), at(5002))
	goodDeferral := ports.RescheduleParams{Fence: f, IntentID: "fresh", AttemptCount: 0,
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: at(10000)}}

	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ports.ErrInvalidWrite) {
			t.Errorf("%s: err = %v, want ports.ErrInvalidWrite", what, err)
		}
	}
	for name, edit := range map[string]func(*ports.StartAttemptParams){
		"no start time":             func(p *ports.StartAttemptParams) { p.StartedAt = time.Time{} },
		"no start time, lease lost": func(p *ports.StartAttemptParams) { p.StartedAt, p.Fence = time.Time{}, lost },
		"no start time, no intent":  func(p *ports.StartAttemptParams) { p.StartedAt, p.IntentID = time.Time{}, "missing" },
	} {
		p := goodStart
		edit(&p)
		refused("StartAttempt with "+name, h.Store.StartAttempt(t.Context(), p))
	}
	for name, edit := range malformedFinishes(lost) {
		p := goodFinish
		edit(&p)
		refused("FinishAttempt with "+name, h.Store.FinishAttempt(t.Context(), p))
	}
	for name, edit := range malformedDeferrals(lost) {
		p := goodDeferral
		edit(&p)
		refused("Reschedule with "+name, h.Store.Reschedule(t.Context(), p))
	}
	for _, in := range before {
		assertUnchanged(t, h.Store, in)
	}

	if err := h.Store.StartAttempt(t.Context(), goodStart); err != nil {
		t.Fatalf("the well-formed StartAttempt after the refusals: %v", err)
	}
	finish(t, h.Store, goodFinish)
	finish(t, h.Store, retryAfter(f, "fresh", 1, at(3), at(5003)))
	goodDeferral.AttemptCount = 1
	if err := h.Store.Reschedule(t.Context(), goodDeferral); err != nil {
		t.Fatalf("the well-formed Reschedule after the refusals: %v", err)
	}
}

// malformedFinishes edit a well-formed retry of attempt 1 into every
// FinishAttempt the rule refuses: the attempt's own fields, then each
// decision that contradicts its status (the union of what the stores
// refused, before the rule had one home).
func malformedFinishes(lost core.Fence) map[string]func(*ports.FinishAttemptParams) {
	acc := &core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"}
	rej := &core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonInvalidRecipient}
	decision := func(d core.Decision) func(*ports.FinishAttemptParams) {
		return func(p *ports.FinishAttemptParams) { p.Decision = d }
	}
	due := at(5002)
	return map[string]func(*ports.FinishAttemptParams){
		"no finish time":            func(p *ports.FinishAttemptParams) { p.FinishedAt = time.Time{} },
		"neither outcome nor error": func(p *ports.FinishAttemptParams) { p.Error = "" },
		"both outcome and error":    func(p *ports.FinishAttemptParams) { p.Outcome = rej },
		"an outcome but not sent": func(p *ports.FinishAttemptParams) {
			p.Error, p.Outcome, p.Sent = "", rej, false
		},
		"no finish time, lease lost": func(p *ports.FinishAttemptParams) { p.FinishedAt, p.Fence = time.Time{}, lost },
		"no finish time, no intent":  func(p *ports.FinishAttemptParams) { p.FinishedAt, p.IntentID = time.Time{}, "missing" },
		"no decision":                decision(core.Decision{}),
		"an unknown status":          decision(core.Decision{Status: "cancelled", NextDueAt: due}),
		"pending without a due time": decision(core.Decision{Status: core.StatusPending}),
		"pending with a final outcome": decision(core.Decision{Status: core.StatusPending, NextDueAt: due,
			FinalOutcome: rej}),
		"pending with an exhausted reason": decision(core.Decision{Status: core.StatusPending, NextDueAt: due,
			ExhaustedReason: core.ExhaustedMaxAttempts}),
		"accepted without an outcome":   decision(core.Decision{Status: core.StatusAccepted}),
		"accepted with a rejection":     decision(core.Decision{Status: core.StatusAccepted, FinalOutcome: rej}),
		"rejected with an acceptance":   decision(core.Decision{Status: core.StatusRejected, FinalOutcome: acc}),
		"accepted with a due time":      decision(core.Decision{Status: core.StatusAccepted, FinalOutcome: acc, NextDueAt: due}),
		"exhausted without a reason":    decision(core.Decision{Status: core.StatusExhausted}),
		"exhausted with another reason": decision(core.Decision{Status: core.StatusExhausted, ExhaustedReason: "tired"}),
		"exhausted with a due time": decision(core.Decision{Status: core.StatusExhausted,
			ExhaustedReason: core.ExhaustedMaxAttempts, NextDueAt: due}),
		"exhausted with a final outcome": decision(core.Decision{Status: core.StatusExhausted,
			ExhaustedReason: core.ExhaustedMaxAttempts, FinalOutcome: rej}),
		"a bad decision, lease lost": func(p *ports.FinishAttemptParams) {
			p.Decision, p.Fence = core.Decision{Status: core.StatusPending}, lost
		},
	}
}

// malformedDeferrals edit a well-formed deferral into every Reschedule the
// rule refuses: a well-formed decision no deferral can make, and a
// malformed one.
func malformedDeferrals(lost core.Fence) map[string]func(*ports.RescheduleParams) {
	decision := func(d core.Decision) func(*ports.RescheduleParams) {
		return func(p *ports.RescheduleParams) { p.Decision = d }
	}
	acc := &core.Outcome{Status: core.OutcomeAccepted}
	return map[string]func(*ports.RescheduleParams){
		"an acceptance": decision(core.Decision{Status: core.StatusAccepted, FinalOutcome: acc}),
		"exhausted by max attempts": decision(core.Decision{Status: core.StatusExhausted,
			ExhaustedReason: core.ExhaustedMaxAttempts}),
		"exhausted by one shot": decision(core.Decision{Status: core.StatusExhausted,
			ExhaustedReason: core.ExhaustedOneShotCompleted}),
		"pending without a due time": decision(core.Decision{Status: core.StatusPending}),
		"pending with an exhausted reason": decision(core.Decision{Status: core.StatusPending, NextDueAt: at(10000),
			ExhaustedReason: core.ExhaustedDeadlineExceeded}),
		"exhausted with a due time": decision(core.Decision{Status: core.StatusExhausted,
			ExhaustedReason: core.ExhaustedDeadlineExceeded, NextDueAt: at(10000)}),
		"no decision": decision(core.Decision{}),
		"no decision, lease lost": func(p *ports.RescheduleParams) {
			p.Decision, p.Fence = core.Decision{}, lost
		},
		"no decision, no intent": func(p *ports.RescheduleParams) {
			p.Decision, p.IntentID = core.Decision{}, "missing"
		},
	}
}
