package intake_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// completedMetrics records the completions the service reports.
type completedMetrics struct {
	ports.NopMetrics
	mu        sync.Mutex
	completed []string
}

func (m *completedMetrics) IntentCompleted(target string, status core.IntentStatus, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.completed = append(m.completed, target+"/"+string(status)+"/"+reason)
}

var byConsole = core.Actor{Surface: ports.SurfaceConsole, Role: core.RoleOperator, Session: "00112233aabb"}

// TestCancelAnswersTheIntentWithItsHistory: the service cancels through
// the store, answers the intent as read afterwards (cancelled, with the
// event), counts one completion, and answers a repeat with the same intent
// and nothing new; GetIntent shows the events too.
func TestCancelAnswersTheIntentWithItsHistory(t *testing.T) {
	clk := clocktest.New(t0)
	store := memstore.New(clk)
	reg, err := core.NewRegistry([]core.Contract{smsDeadline})
	if err != nil {
		t.Fatal(err)
	}
	m := &completedMetrics{}
	svc, err := intake.NewService(intake.ServiceConfig{Registry: reg, Store: store, Clock: clk, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := svc.SubmitIntent(ctx, ports.SubmitIntentParams{IntentID: "c-1", SubmissionTarget: "sms.realtime", Payload: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	p := ports.IntentActionParams{IntentID: "c-1", Actor: byConsole}
	res, err := svc.CancelIntent(ctx, p)
	if err != nil || !res.Applied {
		t.Fatalf("CancelIntent = %+v, %v", res, err)
	}
	in := res.Intent
	if in.Status != core.StatusExhausted || in.ExhaustedReason != core.ExhaustedCancelled || len(in.Events) != 1 ||
		in.Events[0].Action != core.ActionCancel || in.Events[0].Actor != byConsole {
		t.Fatalf("cancelled intent = %s/%s with events %+v", in.Status, in.ExhaustedReason, in.Events)
	}
	again, err := svc.CancelIntent(ctx, ports.IntentActionParams{IntentID: "c-1", Actor: core.Actor{Surface: ports.SurfaceAPI}})
	if err != nil || again.Applied || again.Intent.Status != core.StatusExhausted || len(again.Intent.Events) != 1 {
		t.Fatalf("cancelling again = %+v (events %+v), %v; want the same intent, not applied", again, again.Intent.Events, err)
	}
	if want := []string{"sms.realtime/exhausted/cancelled"}; len(m.completed) != 1 || m.completed[0] != want[0] {
		t.Errorf("completions = %v, want %v", m.completed, want)
	}
	got, err := svc.GetIntent(ctx, "c-1")
	if err != nil || len(got.Events) != 1 {
		t.Fatalf("GetIntent = events %+v, %v", got.Events, err)
	}
	if _, err := svc.RunNow(ctx, p); !errors.Is(err, core.ErrIntentEnded) {
		t.Errorf("RunNow on a cancelled intent: %v, want core.ErrIntentEnded", err)
	}
	if _, err := svc.CancelIntent(ctx, ports.IntentActionParams{IntentID: "nobody", Actor: byConsole}); !errors.Is(err, core.ErrIntentNotFound) {
		t.Errorf("cancelling a missing intent: %v, want core.ErrIntentNotFound", err)
	}
}

// TestRunNowMakesAScheduledIntentDue: an intent scheduled by notBefore is
// due at the store's now after RunNow, keeps its notBefore, and a repeat
// changes nothing.
func TestRunNowMakesAScheduledIntentDue(t *testing.T) {
	svc, _, _, _ := newService(t, 0)
	ctx := t.Context()
	later := t0.Add(time.Hour)
	if _, err := svc.SubmitIntent(ctx, ports.SubmitIntentParams{IntentID: "r-1", SubmissionTarget: "sms.realtime",
		Payload: []byte(`{}`), NotBefore: later}); err != nil {
		t.Fatal(err)
	}
	res, err := svc.RunNow(ctx, ports.IntentActionParams{IntentID: "r-1", Actor: byConsole})
	if err != nil || !res.Applied {
		t.Fatalf("RunNow = %+v, %v", res, err)
	}
	if in := res.Intent; in.Status != core.StatusPending || !in.NextDueAt.Equal(t0) || !in.NotBefore.Equal(later) ||
		len(in.Events) != 1 || in.Events[0].Action != core.ActionRunNow {
		t.Fatalf("after RunNow: %s due %v notBefore %v events %+v", in.Status, in.NextDueAt, in.NotBefore, in.Events)
	}
	again, err := svc.RunNow(ctx, ports.IntentActionParams{IntentID: "r-1", Actor: byConsole})
	if err != nil || again.Applied || len(again.Intent.Events) != 1 {
		t.Fatalf("RunNow again = applied %v, events %+v, %v; want a no-op", again.Applied, again.Intent.Events, err)
	}
}
