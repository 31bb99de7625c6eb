package memstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

var t0 = time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)

var smsContract = core.Contract{
	SubmissionTarget: "sms.realtime",
	GatewayType:      core.GatewaySMS,
	GatewayURL:       "http://sms.example",
	Mode:             core.ModeRealtime,
	Policy:           core.PolicyMaxAttempts,
	MaxAttempts:      3,
	TerminalOutcomes: []string{core.ReasonInvalidRecipient},
}

func newStore() (*memstore.Store, *clocktest.Clock) {
	clk := clocktest.New(t0)
	return memstore.New(clk), clk
}

func create(t *testing.T, s *memstore.Store, id string, now time.Time) core.Intent {
	t.Helper()
	res, err := s.CreateIntent(t.Context(), core.NewIntent(id, smsContract, []byte(`{"to":"1"}`), now))
	if err != nil || !res.Created {
		t.Fatalf("create %s: created=%v err=%v", id, res.Created, err)
	}
	return res.Intent
}

func lead(t *testing.T, s *memstore.Store, holder string) core.Fence {
	t.Helper()
	l, ok, err := s.Acquire(t.Context(), ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: holder, Duration: time.Minute})
	if err != nil || !ok {
		t.Fatalf("acquire by %s: ok=%v err=%v", holder, ok, err)
	}
	return l.Fence()
}

// TestNoSharedMemory pins what only an in-memory store can get wrong: its
// callers and its stored state share no slices or pointers, in either
// direction, so each read is a snapshot as a row read from SQL is.
func TestNoSharedMemory(t *testing.T) {
	s, _ := newStore()
	in := core.NewIntent("i1", smsContract.Clone(), []byte(`{"to":"1"}`), t0)
	if _, err := s.CreateIntent(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	in.Payload[0] = 'X'
	in.Contract.TerminalOutcomes[0] = "edited by the caller"
	got, err := s.GetIntent(t.Context(), "i1")
	if err != nil {
		t.Fatal(err)
	}
	got.Payload[1] = 'Y'
	got.Contract.TerminalOutcomes[0] = "edited by the reader"

	f := lead(t, s, "a")
	if err := s.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "i1", Number: 1, StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	ok := &core.Outcome{Status: core.OutcomeAccepted, MessageID: "m1"}
	if err := s.FinishAttempt(t.Context(), ports.FinishAttemptParams{Fence: f, IntentID: "i1", Number: 1, FinishedAt: t0,
		Outcome: ok, Sent: true, Decision: core.Decision{Status: core.StatusAccepted, FinalOutcome: ok}}); err != nil {
		t.Fatal(err)
	}
	ok.MessageID = "edited by the executor"
	read, _ := s.GetIntent(t.Context(), "i1")
	read.FinalOutcome.MessageID = "edited by a reader"
	read.Attempts[0].Outcome.MessageID = "edited by a reader"

	again, _ := s.GetIntent(t.Context(), "i1")
	if string(again.Payload) != `{"to":"1"}` || again.Contract.TerminalOutcomes[0] != core.ReasonInvalidRecipient ||
		again.FinalOutcome.MessageID != "m1" || again.Attempts[0].Outcome.MessageID != "m1" {
		t.Fatalf("an edit outside the store reached its state: payload %s, terminal outcomes %v, final %+v, attempt outcome %+v",
			again.Payload, again.Contract.TerminalOutcomes, again.FinalOutcome, again.Attempts[0].Outcome)
	}
}

func TestFinishAttemptRefusesContradictions(t *testing.T) {
	s, _ := newStore()
	create(t, s, "i1", t0)
	f := lead(t, s, "a")
	if err := s.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "i1", Number: 1, StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	base := ports.FinishAttemptParams{Fence: f, IntentID: "i1", Number: 1, FinishedAt: t0, Error: "boom",
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: t0.Add(time.Second)}}
	bad := map[string]func(*ports.FinishAttemptParams){
		"no finish time":          func(p *ports.FinishAttemptParams) { p.FinishedAt = time.Time{} },
		"neither outcome nor err": func(p *ports.FinishAttemptParams) { p.Error = "" },
		"outcome but not sent": func(p *ports.FinishAttemptParams) {
			p.Error, p.Outcome = "", &core.Outcome{Status: core.OutcomeAccepted}
			p.Decision = core.Decision{Status: core.StatusAccepted, FinalOutcome: p.Outcome}
		},
		"pending without due":   func(p *ports.FinishAttemptParams) { p.Decision.NextDueAt = time.Time{} },
		"exhausted without why": func(p *ports.FinishAttemptParams) { p.Decision = core.Decision{Status: core.StatusExhausted} },
		"accepted without outcome": func(p *ports.FinishAttemptParams) {
			p.Decision = core.Decision{Status: core.StatusAccepted}
		},
	}
	for name, edit := range bad {
		p := base
		edit(&p)
		if err := s.FinishAttempt(t.Context(), p); err == nil || errors.Is(err, core.ErrFenced) {
			t.Errorf("%s: err=%v, want a refusal", name, err)
		}
	}
	if err := s.FinishAttempt(t.Context(), base); err != nil {
		t.Fatalf("the well-formed finish after refusals: %v", err)
	}
}

func TestCancelledContextIsStoreUnavailable(t *testing.T) {
	s, _ := newStore()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.GetIntent(ctx, "i1")
	if !errors.Is(err, core.ErrStoreUnavailable) || !errors.Is(err, context.Canceled) {
		t.Fatalf("GetIntent on a cancelled context: %v", err)
	}
}

func TestWaitIntentWakesOnWrites(t *testing.T) {
	s, _ := newStore()
	f := lead(t, s, "a")
	done := make(chan error, 1)
	go func() {
		_, err := s.WaitIntent(t.Context(), "i1", func(in core.Intent) bool { return in.AttemptCount == 1 })
		done <- err
	}()
	create(t, s, "i1", t0)
	if err := s.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "i1", Number: 1, StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
