package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
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

func TestCreateIntentIsRaceSafe(t *testing.T) {
	s, _ := newStore()
	var wg sync.WaitGroup
	created := make(chan bool, 32)
	for range 32 {
		wg.Go(func() {
			res, err := s.CreateIntent(context.Background(), core.NewIntent("race", smsContract, []byte(`1`), t0))
			if err != nil {
				t.Error(err)
			}
			created <- res.Created
		})
	}
	wg.Wait()
	close(created)
	n := 0
	for c := range created {
		if c {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d concurrent creates reported Created, want exactly 1", n)
	}
}

func TestReadsAreSnapshots(t *testing.T) {
	s, _ := newStore()
	create(t, s, "i1", t0)
	got, err := s.GetIntent(t.Context(), "i1")
	if err != nil {
		t.Fatal(err)
	}
	got.Payload[0] = 'X'
	got.Contract.TerminalOutcomes[0] = "changed"
	again, _ := s.GetIntent(t.Context(), "i1")
	if string(again.Payload) != `{"to":"1"}` || again.Contract.TerminalOutcomes[0] != core.ReasonInvalidRecipient {
		t.Fatalf("a caller's edit reached the stored intent: %+v", again)
	}
	if _, err := s.GetIntent(t.Context(), "nope"); !errors.Is(err, core.ErrIntentNotFound) {
		t.Fatalf("missing intent: %v", err)
	}
}

func TestExecutionWritesAreFenced(t *testing.T) {
	s, clk := newStore()
	create(t, s, "i1", t0)
	stale := core.Fence{LeaseName: core.DefaultLeaseName, HolderID: "a", Epoch: 1}
	start := ports.StartAttemptParams{Fence: stale, IntentID: "i1", Number: 1, StartedAt: t0}
	if err := s.StartAttempt(t.Context(), start); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("start without any lease: %v, want ErrFenced", err)
	}
	fa := lead(t, s, "a")
	if fa != stale {
		t.Fatalf("first acquire fence %+v, want epoch 1", fa)
	}
	wrongHolder := start
	wrongHolder.Fence.HolderID = "b"
	if err := s.StartAttempt(t.Context(), wrongHolder); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("start by a non-holder: %v, want ErrFenced", err)
	}
	if err := s.StartAttempt(t.Context(), start); err != nil {
		t.Fatalf("start under the lease: %v", err)
	}
	clk.Advance(time.Minute) // expiresAt == now: expired in the store's time
	finish := ports.FinishAttemptParams{Fence: fa, IntentID: "i1", Number: 1, FinishedAt: clk.Now(), Error: "timeout",
		Decision: core.Decision{Status: core.StatusPending, NextDueAt: clk.Now().Add(5 * time.Second)}}
	if err := s.FinishAttempt(t.Context(), finish); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("finish after expiry: %v, want ErrFenced", err)
	}
	fb := lead(t, s, "b")
	if fb.Epoch != 2 {
		t.Fatalf("takeover epoch %d, want 2", fb.Epoch)
	}
	if err := s.FinishAttempt(t.Context(), finish); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("finish by the former leader: %v, want ErrFenced", err)
	}
	in, _ := s.GetIntent(t.Context(), "i1")
	if in.Attempts[0].Finished() {
		t.Fatal("a fenced finish changed the attempt")
	}
	finish.Fence = fb
	if err := s.FinishAttempt(t.Context(), finish); err != nil {
		t.Fatalf("finish by the new leader: %v", err)
	}
}

func TestAttemptsMustFollowTheCount(t *testing.T) {
	s, clk := newStore()
	create(t, s, "i1", t0)
	f := lead(t, s, "a")
	start := func(n int) error {
		return s.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "i1", Number: n, StartedAt: clk.Now()})
	}
	if err := start(2); !errors.Is(err, core.ErrIntentNotRunnable) {
		t.Fatalf("start attempt 2 first: %v, want ErrIntentNotRunnable", err)
	}
	if err := start(1); err != nil {
		t.Fatal(err)
	}
	if err := start(1); !errors.Is(err, core.ErrIntentNotRunnable) {
		t.Fatalf("second start of attempt 1: %v, want ErrIntentNotRunnable", err)
	}
	if err := s.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "x", Number: 1, StartedAt: t0}); !errors.Is(err, core.ErrIntentNotFound) {
		t.Fatalf("start of a missing intent: %v", err)
	}
	in, _ := s.GetIntent(t.Context(), "i1")
	if in.AttemptCount != 1 || len(in.Attempts) != 1 || in.Attempts[0].Finished() {
		t.Fatalf("after one start: %+v", in)
	}
}

func TestTerminalIntentsAreAppendOnly(t *testing.T) {
	s, clk := newStore()
	create(t, s, "i1", t0)
	f := lead(t, s, "a")
	if err := s.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "i1", Number: 1, StartedAt: t0}); err != nil {
		t.Fatal(err)
	}
	ok := &core.Outcome{Status: core.OutcomeAccepted, MessageID: "m1"}
	accept := ports.FinishAttemptParams{Fence: f, IntentID: "i1", Number: 1, FinishedAt: t0, Outcome: ok,
		Decision: core.Decision{Status: core.StatusAccepted, FinalOutcome: ok}}
	if err := s.FinishAttempt(t.Context(), accept); err != nil {
		t.Fatal(err)
	}
	ok.MessageID = "edited by the caller"
	if err := s.FinishAttempt(t.Context(), accept); !errors.Is(err, core.ErrIntentNotRunnable) {
		t.Fatalf("second finish: %v, want ErrIntentNotRunnable", err)
	}
	if err := s.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "i1", Number: 2, StartedAt: clk.Now()}); !errors.Is(err, core.ErrIntentNotRunnable) {
		t.Fatalf("start on an accepted intent: %v, want ErrIntentNotRunnable", err)
	}
	in, _ := s.GetIntent(t.Context(), "i1")
	if in.Status != core.StatusAccepted || in.FinalOutcome.MessageID != "m1" || !in.NextDueAt.IsZero() || in.AttemptCount != 1 {
		t.Fatalf("accepted intent changed: %+v", in)
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
		"pending without due":     func(p *ports.FinishAttemptParams) { p.Decision.NextDueAt = time.Time{} },
		"exhausted without why":   func(p *ports.FinishAttemptParams) { p.Decision = core.Decision{Status: core.StatusExhausted} },
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

func TestListChangedPagesThroughSharedTimestamps(t *testing.T) {
	s, clk := newStore()
	for _, id := range []string{"c", "a", "b"} {
		create(t, s, id, t0) // three rows stamped at one instant
	}
	clk.Advance(time.Millisecond)
	create(t, s, "0-later", clk.Now())

	latest, err := s.LatestChange(t.Context())
	if err != nil || latest.IntentID != "0-later" || !latest.LastModifiedAt.Equal(clk.Now()) {
		t.Fatalf("LatestChange = %+v, %v", latest, err)
	}
	var seen []string
	var cursor ports.ChangeCursor
	for {
		rows, err := s.ListChanged(t.Context(), ports.ListChangedParams{After: cursor, Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			break
		}
		last := rows[len(rows)-1]
		seen = append(seen, last.IntentID)
		cursor = ports.ChangeCursor{LastModifiedAt: last.LastModifiedAt, IntentID: last.IntentID}
	}
	if fmt.Sprint(seen) != "[a b c 0-later]" {
		t.Fatalf("changed rows in cursor order: %v, want [a b c 0-later]", seen)
	}
}

func TestListChangedShowsTerminalRowsAndListPendingHidesThem(t *testing.T) {
	s, clk := newStore()
	for _, id := range []string{"p1", "p2", "p3", "done"} {
		create(t, s, id, t0)
	}
	f := lead(t, s, "a")
	clk.Advance(time.Second)
	if err := s.StartAttempt(t.Context(), ports.StartAttemptParams{Fence: f, IntentID: "done", Number: 1, StartedAt: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishAttempt(t.Context(), ports.FinishAttemptParams{Fence: f, IntentID: "done", Number: 1, FinishedAt: clk.Now(), Error: "x",
		Decision: core.Decision{Status: core.StatusExhausted, ExhaustedReason: core.ExhaustedOneShotCompleted}}); err != nil {
		t.Fatal(err)
	}
	rows, err := s.ListChanged(t.Context(), ports.ListChangedParams{After: ports.ChangeCursor{LastModifiedAt: t0, IntentID: "p3"}, Limit: 10})
	if err != nil || len(rows) != 1 || rows[0].IntentID != "done" || rows[0].Status != core.StatusExhausted || rows[0].Mode != core.ModeRealtime {
		t.Fatalf("ListChanged after the creates = %+v, %v; want the exhausted row", rows, err)
	}
	var ids []string
	after := ""
	for {
		page, err := s.ListPending(t.Context(), ports.ListPendingParams{AfterIntentID: after, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			ids = append(ids, r.IntentID)
		}
		if len(page) < 2 {
			break
		}
		after = page[len(page)-1].IntentID
	}
	if fmt.Sprint(ids) != "[p1 p2 p3]" {
		t.Fatalf("pending pages: %v, want [p1 p2 p3]", ids)
	}
}

func TestLeaseAcquireRenewRelease(t *testing.T) {
	s, clk := newStore()
	ctx := t.Context()
	acquire := func(holder string) (core.Lease, bool) {
		l, ok, err := s.Acquire(ctx, ports.AcquireLeaseParams{LeaseName: core.DefaultLeaseName, HolderID: holder, Duration: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return l, ok
	}
	la, ok := acquire("a")
	if !ok || la.Epoch != 1 || !la.ExpiresAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("first acquire: %+v %v", la, ok)
	}
	if l, ok := acquire("b"); ok || l.HolderID != "a" {
		t.Fatalf("acquire of a held lease: ok=%v holder=%q, want refused showing holder a", ok, l.HolderID)
	}
	clk.Advance(30 * time.Second)
	renewed, err := s.Renew(ctx, ports.RenewLeaseParams{Fence: la.Fence(), Duration: time.Minute})
	if err != nil || renewed.Epoch != 1 || !renewed.ExpiresAt.Equal(clk.Now().Add(time.Minute)) {
		t.Fatalf("renew: %+v %v", renewed, err)
	}
	clk.Advance(time.Minute)
	if _, err := s.Renew(ctx, ports.RenewLeaseParams{Fence: la.Fence(), Duration: time.Minute}); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("renew after expiry: %v, want ErrFenced", err)
	}
	la2, ok := acquire("a")
	if !ok || la2.Epoch != 2 {
		t.Fatalf("re-acquire by the same holder after expiry: %+v %v, want epoch 2", la2, ok)
	}
	if err := s.Release(ctx, la.Fence()); !errors.Is(err, core.ErrFenced) {
		t.Fatalf("release by a stale epoch: %v, want ErrFenced", err)
	}
	if err := s.Release(ctx, la2.Fence()); err != nil {
		t.Fatal(err)
	}
	if lb, ok := acquire("b"); !ok || lb.Epoch != 3 {
		t.Fatalf("acquire after release: %+v %v, want epoch 3", lb, ok)
	}
	if l, found, err := s.Read(ctx, core.DefaultLeaseName); err != nil || !found || l.HolderID != "b" {
		t.Fatalf("Read = %+v %v %v", l, found, err)
	}
	if _, found, _ := s.Read(ctx, "other"); found {
		t.Fatal("Read found a lease never acquired")
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
