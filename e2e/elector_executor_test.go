package e2e

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/gatewayfake"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// The elector and the executor together, on a fake clock over the in-memory
// store: an integration of three rooms (app/leader, app/executor,
// app/intake), so it lives here, where a test may import every room. The
// HA tests check the same over real SQLite and the wall clock; this one is
// exact about when each instance acts.

// Executor.Lead is what the elector runs for each leadership term.
var _ leader.LeadFunc = (*executor.Executor)(nil).Lead

// electorContract is the one target of the test.
var electorContract = core.Contract{
	SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS, GatewayURL: "http://sms-a.test",
	Mode: core.ModeRealtime, Policy: core.PolicyDeadline, MaxAcceptanceSeconds: 30,
	TerminalOutcomes: []string{core.ReasonInvalidRequest, core.ReasonInvalidRecipient, core.ReasonInvalidMessage},
}

// electedInstance is one SubmissionManager process: an elector, an
// executor and an intake service over the shared store, with its own strict
// gateway so the test can tell which instance executed an attempt.
type electedInstance struct {
	gw      *gatewayfake.Gateway
	service *intake.Service
	stop    context.CancelFunc
	done    chan error
}

func startElectedInstance(ctx context.Context, t *testing.T, store *memstore.Store, clk *clocktest.Clock, holder string) *electedInstance {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	in := &electedInstance{done: make(chan error, 1), gw: gatewayfake.New(gatewayfake.Config{
		Name: holder, Strict: t, Clock: clk,
		Serves: map[string]core.GatewayType{electorContract.GatewayURL: electorContract.GatewayType},
	})}
	eng, err := executor.New(executor.Config{
		Store: store, Clock: clk, Logger: logger,
		Gateways: map[core.GatewayType]ports.Gateway{core.GatewaySMS: in.gw, core.GatewayPush: in.gw},
	})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := core.NewRegistry([]core.Contract{electorContract})
	if err != nil {
		t.Fatal(err)
	}
	in.service, err = intake.NewService(intake.ServiceConfig{Registry: reg, Store: store, Clock: clk, Notifier: eng})
	if err != nil {
		t.Fatal(err)
	}
	el, err := leader.New(leader.Config{Leases: store, Clock: clk, HolderID: holder, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	in.stop = cancel
	go func() { in.done <- el.Run(ctx, eng.Lead) }()
	t.Cleanup(func() { cancel(); <-in.done })
	return in
}

func (in *electedInstance) submit(ctx context.Context, t *testing.T, id string) {
	t.Helper()
	if _, err := in.service.SubmitIntent(ctx, ports.SubmitIntentParams{
		IntentID: id, SubmissionTarget: electorContract.SubmissionTarget, Payload: []byte(`{}`),
	}); err != nil {
		t.Fatal(err)
	}
}

func TestOnlyTheElectedInstanceExecutesAndAFollowerTakesOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	t0 := time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)
	clk := clocktest.New(t0)
	store := memstore.New(clk)
	waitTimer := func(at time.Time) {
		t.Helper()
		if err := clk.WaitForTimer(ctx, at); err != nil {
			t.Fatalf("no timer armed for %s (pending: %v): %v", at.Sub(t0), clk.Timers(), err)
		}
	}
	waitAccepted := func(id string) core.Intent {
		t.Helper()
		in, err := store.WaitIntent(ctx, id, func(in core.Intent) bool { return in.Status == core.StatusAccepted })
		if err != nil {
			t.Fatalf("waiting until %s is accepted: %v", id, err)
		}
		return in
	}
	refresh := executor.DefaultRefreshInterval

	a := startElectedInstance(ctx, t, store, clk, "instance-a")
	waitTimer(t0.Add(refresh)) // a leads: its executor armed its first refresh
	b := startElectedInstance(ctx, t, store, clk, "instance-b")
	waitTimer(t0.Add(leader.DefaultAcquireInterval)) // b follows: it will retry in 30 s

	// Submitted through the follower: only the leader's refresh finds it.
	if err := a.gw.Script("i-1", gatewayfake.Step{}); err != nil {
		t.Fatal(err)
	}
	b.submit(ctx, t, "i-1")
	clk.Advance(refresh)
	waitAccepted("i-1")
	if n := b.gw.CallCount(); n != 0 {
		t.Fatalf("the follower called its gateway %d times", n)
	}

	// a shuts down and releases the lease; b takes over at its next try.
	a.stop()
	if err := <-a.done; err != nil {
		t.Fatal(err)
	}
	a.done <- nil // for the cleanup
	takeover := t0.Add(leader.DefaultAcquireInterval)
	clk.AdvanceTo(takeover)
	waitTimer(takeover.Add(refresh)) // b leads
	if err := b.gw.Script("i-2", gatewayfake.Step{}); err != nil {
		t.Fatal(err)
	}
	b.submit(ctx, t, "i-2")
	in := waitAccepted("i-2")
	if !in.Attempts[0].StartedAt.Equal(takeover) {
		t.Fatalf("b ran i-2 at %v, want at once after taking over", in.Attempts[0].StartedAt.Sub(t0))
	}
	if n := a.gw.CallCount(); n != 1 {
		t.Fatalf("a called its gateway %d times, want 1 (i-1 only)", n)
	}
	lease, _, _ := store.Read(ctx, core.DefaultLeaseName)
	if lease.HolderID != "instance-b" || lease.Epoch != 2 {
		t.Fatalf("lease %+v, want instance-b at epoch 2", lease)
	}
}
