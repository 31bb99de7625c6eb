package executor_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/gatewayfake"
	"github.com/submissionmanager/submission-manager/ports"
)

// lookupGateway is the fake gateway with a lookup that answers from a
// table (or fails with err).
type lookupGateway struct {
	*gatewayfake.Gateway
	mu      sync.Mutex
	answers map[string]ports.LookupResult
	err     error
	asked   []string
	// during, when set, runs in each lookup before it answers; an error
	// it returns is the lookup's.
	during func(ctx context.Context) error
}

var _ ports.GatewayLookup = (*lookupGateway)(nil)

func (g *lookupGateway) Lookup(ctx context.Context, p ports.LookupParams) (ports.LookupResult, error) {
	if g.during != nil {
		if err := g.during(ctx); err != nil {
			return ports.LookupResult{}, err
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asked = append(g.asked, p.Reference)
	if g.err != nil {
		return ports.LookupResult{}, g.err
	}
	return g.answers[p.Reference], nil
}

// withLookup gives the harness's executor a gateway client with a lookup.
func withLookup(h *harness, answers map[string]ports.LookupResult, err error) *lookupGateway {
	lg := &lookupGateway{Gateway: h.gw, answers: answers, err: err}
	h.cfg.Gateways = map[core.GatewayType]ports.Gateway{core.GatewaySMS: lg, core.GatewayPush: lg}
	h.rebuildExecutor()
	return lg
}

// orphanAttempt makes attempt 1 of id open, as a previous leader that died
// during the gateway call left it, and lets that leader's lease expire.
func orphanAttempt(h *harness, id string) {
	h.t.Helper()
	old, _, err := h.mem.Acquire(h.ctx, ports.AcquireLeaseParams{
		LeaseName: core.DefaultLeaseName, HolderID: "instance-old", Duration: time.Minute,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.mem.StartAttempt(h.ctx, ports.StartAttemptParams{Fence: old.Fence(), IntentID: id, Number: 1, StartedAt: h.clock.Now()}); err != nil {
		h.t.Fatal(err)
	}
	h.clock.Advance(time.Minute)
}

var duplicate = rejected(core.ReasonDuplicateReference)

func TestDuplicateAfterAnAttemptInDoubtFlagsTheIntent(t *testing.T) {
	h := newHarness(t)
	h.on("d-1", duplicate, duplicate)
	h.submit("d-1", smsMaxAttempts, `{}`)
	orphanAttempt(h, "d-1")

	h.startLead()
	in := h.waitAttempts("d-1", 1)
	if in.Attempts[0].Error != executor.OutcomeUnknownError || in.PossiblyAccepted {
		t.Fatalf("after recovery: %+v, want an attempt in doubt and no flag yet", in)
	}
	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	in = h.waitIntent("d-1", "flagged", func(in core.Intent) bool { return in.PossiblyAccepted })
	if in.Status != core.StatusPending {
		t.Fatalf("status %s: duplicate_reference must stay non-terminal", in.Status)
	}
	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	in = h.waitStatus("d-1", core.StatusExhausted)
	if !in.PossiblyAccepted {
		t.Fatal("the flag was lost when the intent was exhausted")
	}
	flagged, err := h.store.ListIntents(h.ctx, ports.ListIntentsParams{PossiblyAccepted: true, Limit: 10})
	if err != nil || len(flagged) != 1 || flagged[0].IntentID != "d-1" {
		t.Fatalf("listing flagged intents: %+v, %v", flagged, err)
	}
	h.metrics.mu.Lock()
	defer h.metrics.mu.Unlock()
	if !slices.Equal(h.metrics.possiblyAccepted, []string{"sms.batch"}) {
		t.Fatalf("IntentPossiblyAccepted counted %v, want once for sms.batch", h.metrics.possiblyAccepted)
	}
}

func TestDuplicateWithoutAnAttemptInDoubtIsNotFlagged(t *testing.T) {
	h := newHarness(t)
	h.on("d-2", duplicate, accepted)
	h.submit("d-2", smsMaxAttempts, `{}`)
	h.startLead()
	in := h.waitAttempts("d-2", 1)
	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	if in = h.waitStatus("d-2", core.StatusAccepted); in.PossiblyAccepted {
		t.Fatal("an intent with no attempt in doubt was flagged")
	}
}

func TestLookupOfAKnownOutcomeClosesTheAttemptInDoubt(t *testing.T) {
	h := newHarness(t)
	lg := withLookup(h, map[string]ports.LookupResult{
		"l-1": {Answer: core.LookupKnown, Outcome: core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-9"}},
	}, nil)
	h.submit("l-1", smsMaxAttempts, `{}`)
	orphanAttempt(h, "l-1")

	h.startLead()
	in := h.waitStatus("l-1", core.StatusAccepted)
	if in.AttemptCount != 1 || in.Attempts[0].Outcome == nil || in.Attempts[0].Outcome.MessageID != "m-9" {
		t.Fatalf("attempt in doubt closed as %+v, want the looked-up acceptance", in.Attempts)
	}
	if n := h.gw.CallCount(); n != 0 {
		t.Fatalf("the gateway was submitted to %d times; the lookup answered", n)
	}
	if !slices.Equal(lg.asked, []string{"l-1"}) {
		t.Fatalf("lookups %v", lg.asked)
	}
}

func TestLookupKnownAcceptanceAfterTheDeadlineExhausts(t *testing.T) {
	h := newHarness(t)
	withLookup(h, map[string]ports.LookupResult{
		"l-2": {Answer: core.LookupKnown, Outcome: core.Outcome{Status: core.OutcomeAccepted}},
	}, nil)
	h.submit("l-2", smsDeadline, `{}`)
	orphanAttempt(h, "l-2") // a minute passes: past the 30 s deadline

	h.startLead()
	in := h.waitStatus("l-2", core.StatusExhausted)
	if in.ExhaustedReason != core.ExhaustedDeadlineExceeded {
		t.Fatalf("exhausted as %s, want the deadline rule", in.ExhaustedReason)
	}
}

func TestLookupNeverReceivedRetriesUnflagged(t *testing.T) {
	h := newHarness(t)
	withLookup(h, map[string]ports.LookupResult{"l-3": {Answer: core.LookupNeverReceived}}, nil)
	h.on("l-3", duplicate, accepted)
	h.submit("l-3", smsMaxAttempts, `{}`)
	orphanAttempt(h, "l-3")

	h.startLead()
	// The retry is due at once, so the second attempt may already be there.
	in := h.waitIntent("l-3", "closed its attempt in doubt", func(in core.Intent) bool {
		return len(in.Attempts) >= 1 && in.Attempts[0].Finished()
	})
	if in.Attempts[0].Error != executor.NeverReceivedError || in.Attempts[0].Sent {
		t.Fatalf("attempt closed with %q sent=%v, want %q and not sent: the gateway never had it, so it was no try",
			in.Attempts[0].Error, in.Attempts[0].Sent, executor.NeverReceivedError)
	}
	in = h.waitAttempts("l-3", 2) // due at once: a retry cannot be a duplicate
	if in.PossiblyAccepted {
		t.Fatal("flagged although the gateway said it never received the attempt")
	}
}

func TestLookupFailureKeepsTheOutcomeUnknown(t *testing.T) {
	h := newHarness(t)
	withLookup(h, nil, errors.New("HTTP 404"))
	h.on("l-4", duplicate)
	h.submit("l-4", smsMaxAttempts, `{}`)
	orphanAttempt(h, "l-4")

	h.startLead()
	in := h.waitAttempts("l-4", 1)
	if in.Attempts[0].Error != executor.OutcomeUnknownError {
		t.Fatalf("attempt closed with %q, want the unknown outcome", in.Attempts[0].Error)
	}
	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	h.waitIntent("l-4", "flagged", func(in core.Intent) bool { return in.PossiblyAccepted })
}

// TestLostAnswerThenDuplicateIsFlagged covers an answer lost without any
// crash: the connection broke after the request went out (the gateway
// accepted it), so the retry is refused as duplicate_reference. The first
// attempt was sent and got no outcome: it is in doubt by its data, and the
// intent is flagged as the crash case is.
func TestLostAnswerThenDuplicateIsFlagged(t *testing.T) {
	h := newHarness(t)
	h.on("l-5", failed(errors.New("read tcp: connection reset by peer")), duplicate)
	h.submit("l-5", smsMaxAttempts, `{}`)
	h.startLead()
	in := h.waitAttempts("l-5", 1)
	if !in.Attempts[0].Sent || in.PossiblyAccepted {
		t.Fatalf("first attempt sent=%v, intent flagged=%v; want sent and not yet flagged", in.Attempts[0].Sent, in.PossiblyAccepted)
	}
	h.waitTimer(in.NextDueAt)
	h.clock.AdvanceTo(in.NextDueAt)
	in = h.waitAttempts("l-5", 2)
	if !in.PossiblyAccepted {
		t.Fatal("a duplicate_reference after a lost answer did not flag the intent as possibly accepted")
	}
}
