package executor_test

import (
	"context"
	"testing"

	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Engine.Lead is what the elector runs for each leadership term.
var _ leader.LeadFunc = (*executor.Executor)(nil).Lead

// instance is one SubmissionManager process: an elector, an executor and a
// service over the shared store, with its own gateway so a test can tell
// which instance executed an attempt.
type instance struct {
	gw      *scriptedGateway
	service *intake.Service
	stop    context.CancelFunc
	done    chan error
}

func startInstance(t *testing.T, h *harness, holder string) *instance {
	t.Helper()
	in := &instance{gw: newScriptedGateway(t, h.clock), done: make(chan error, 1)}
	eng, err := executor.New(executor.Config{
		Store: h.mem, Clock: h.clock, Logger: h.cfg.Logger,
		Gateways: map[core.GatewayType]ports.Gateway{core.GatewaySMS: in.gw, core.GatewayPush: in.gw},
	})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := core.NewRegistry([]core.Contract{smsDeadline})
	if err != nil {
		t.Fatal(err)
	}
	in.service, err = intake.NewService(intake.ServiceConfig{Registry: reg, Store: h.mem, Clock: h.clock, Notifier: eng})
	if err != nil {
		t.Fatal(err)
	}
	el, err := leader.New(leader.Config{Leases: h.mem, Clock: h.clock, HolderID: holder, Logger: h.cfg.Logger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(h.ctx)
	in.stop = cancel
	go func() { in.done <- el.Run(ctx, eng.Lead) }()
	t.Cleanup(func() { cancel(); <-in.done })
	return in
}

func (in *instance) submit(t *testing.T, h *harness, id string) {
	t.Helper()
	if _, err := in.service.SubmitIntent(h.ctx, ports.SubmitIntentParams{
		IntentID: id, SubmissionTarget: smsDeadline.SubmissionTarget, Payload: []byte(`{}`),
	}); err != nil {
		t.Fatal(err)
	}
}

func TestOnlyTheElectedInstanceExecutesAndAFollowerTakesOver(t *testing.T) {
	h := newHarness(t)
	refresh := executor.DefaultRefreshInterval

	a := startInstance(t, h, "instance-a")
	h.waitTimer(t0.Add(refresh)) // a leads: its executor armed its first refresh
	b := startInstance(t, h, "instance-b")
	h.waitTimer(t0.Add(leader.DefaultAcquireInterval)) // b follows: it will retry in 30 s

	// Submitted through the follower: only the leader's refresh finds it.
	a.gw.on("i-1", accepted)
	b.submit(t, h, "i-1")
	h.clock.Advance(refresh)
	h.waitStatus("i-1", core.StatusAccepted)
	if n := b.gw.callCount(); n != 0 {
		t.Fatalf("the follower called its gateway %d times", n)
	}

	// a shuts down and releases the lease; b takes over at its next try.
	a.stop()
	if err := <-a.done; err != nil {
		t.Fatal(err)
	}
	a.done <- nil // for the cleanup
	takeover := t0.Add(leader.DefaultAcquireInterval)
	h.clock.AdvanceTo(takeover)
	h.waitTimer(takeover.Add(refresh)) // b leads
	b.gw.on("i-2", accepted)
	b.submit(t, h, "i-2")
	in := h.waitStatus("i-2", core.StatusAccepted)
	if !in.Attempts[0].StartedAt.Equal(takeover) {
		t.Fatalf("b ran i-2 at %v, want at once after taking over", in.Attempts[0].StartedAt.Sub(t0))
	}
	if n := a.gw.callCount(); n != 1 {
		t.Fatalf("a called its gateway %d times, want 1 (i-1 only)", n)
	}
	lease, _, _ := h.mem.Read(h.ctx, core.DefaultLeaseName)
	if lease.HolderID != "instance-b" || lease.Epoch != 2 {
		t.Fatalf("lease %+v, want instance-b at epoch 2", lease)
	}
}
