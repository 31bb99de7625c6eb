package gatewayfake_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/gatewayfake"
	"github.com/submissionmanager/submission-manager/ports"
)

// failures records what a strict gateway reports to its test, so that the
// failure itself can be checked.
type failures struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (f *failures) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

const smsURL = "http://sms-a.test"

func params(ref string) ports.SubmitParams {
	return ports.SubmitParams{GatewayType: core.GatewaySMS, GatewayURL: smsURL, Reference: ref, Payload: []byte(`{}`)}
}

func strict(t *testing.T) (*gatewayfake.Gateway, *failures, *clocktest.Clock) {
	f := &failures{TB: t}
	clk := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	g := gatewayfake.New(gatewayfake.Config{Strict: f, Clock: clk, Serves: map[string]core.GatewayType{smsURL: core.GatewaySMS}})
	return g, f, clk
}

func TestStrictGatewayAnswersItsScriptAndFailsTheTestOnAnyOtherCall(t *testing.T) {
	g, f, clk := strict(t)
	accepted := core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"}
	down := errors.New("HTTP 503")
	if err := g.Script("i-1", gatewayfake.Step{Err: down}, gatewayfake.Step{Outcome: accepted}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Submit(t.Context(), params("i-1")); err != down {
		t.Fatalf("first call: %v, want the scripted error as is", err)
	}
	clk.Advance(time.Second)
	if o, err := g.Submit(t.Context(), params("i-1")); err != nil || o != accepted {
		t.Fatalf("second call: %+v, %v; want the scripted outcome as is", o, err)
	}
	if len(f.errs) != 0 {
		t.Fatalf("scripted calls failed the test: %v", f.errs)
	}
	if _, err := g.Submit(t.Context(), params("i-1")); gatewayfake.KindOf(err) != gatewayfake.KindUnscripted {
		t.Fatalf("third call: %v, want an unscripted-call error", err)
	}
	if len(f.errs) != 1 {
		t.Fatalf("an unscripted call reported %v to the test, want one failure", f.errs)
	}
	calls := g.CallsFor("i-1")
	if len(calls) != 3 || !calls[1].At.Equal(calls[0].At.Add(time.Second)) || g.CallCount() != 3 {
		t.Fatalf("calls %+v, want three stamped by the clock", calls)
	}
	if r := g.Received("i-1"); r.Submissions != 3 || r.Accepted != 1 {
		t.Fatalf("received %+v, want 3 submissions, 1 accepted", r)
	}
}

func TestHeldCallAnswersOnRelease(t *testing.T) {
	g, _, _ := strict(t)
	release := make(chan struct{})
	accepted := gatewayfake.Step{Outcome: core.Outcome{Status: core.OutcomeAccepted, MessageID: "m-1"}}
	if err := g.Script("a", accepted.HeldUntil(release)); err != nil {
		t.Fatal(err)
	}
	if err := g.Script("b", accepted); err != nil {
		t.Fatal(err)
	}
	answered := make(chan error, 1)
	go func() {
		_, err := g.Submit(t.Context(), params("a"))
		answered <- err
	}()
	if c, err := g.NextCall(t.Context()); err != nil || c.Params.Reference != "a" {
		t.Fatalf("NextCall = %+v, %v", c, err)
	}
	if _, err := g.Submit(t.Context(), params("b")); err != nil { // answered at once meanwhile
		t.Fatal(err)
	}
	select {
	case err := <-answered:
		t.Fatalf("the held call answered (%v) before its release", err)
	default:
	}
	if n := g.MaxConcurrent(); n != 2 {
		t.Fatalf("MaxConcurrent = %d, want 2 (the held call and the other)", n)
	}
	close(release)
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if refs := g.References(); !slices.Equal(refs, []string{"a", "b"}) {
		t.Fatalf("references %v", refs)
	}
	if c, err := g.NextCall(t.Context()); err != nil || c.Params.Reference != "b" {
		t.Fatalf("second NextCall = %+v, %v", c, err)
	}
}

func TestHeldCallCancelledReturnsTheContextsError(t *testing.T) {
	g, _, _ := strict(t)
	step := gatewayfake.Step{Outcome: core.Outcome{Status: core.OutcomeAccepted}}
	if err := g.Script("a", step.HeldUntil(make(chan struct{}))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	answered := make(chan error, 1)
	go func() {
		_, err := g.Submit(ctx, params("a"))
		answered <- err
	}()
	if _, err := g.NextCall(t.Context()); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-answered; !errors.Is(err, context.Canceled) || errors.Is(err, ports.ErrAnswerLost) {
		t.Fatalf("cancelled held call: %v, want the context's error alone", err)
	}
	if r := g.Received("a"); r.Submissions != 1 || r.Accepted != 0 {
		t.Fatalf("received %+v, want one submission, none accepted", r)
	}
	ended, stop := context.WithCancel(t.Context())
	stop()
	if _, err := g.NextCall(ended); err == nil {
		t.Fatal("NextCall with no call left and an ended context returned a call")
	}
}

func TestGatewayAnswersOnlyAtItsURLsForTheirType(t *testing.T) {
	g, f, _ := strict(t)
	p := params("x")
	p.GatewayType = core.GatewayPush
	if _, err := g.Submit(t.Context(), p); gatewayfake.KindOf(err) != gatewayfake.KindHTTPStatus || errors.Is(err, ports.ErrAnswerLost) {
		t.Fatalf("push call to an SMS URL: %v, want a refusal that lost nothing", err)
	}
	p = params("x")
	p.GatewayURL = "http://nowhere.test"
	if _, err := g.Submit(t.Context(), p); gatewayfake.KindOf(err) != gatewayfake.KindUnreachable {
		t.Fatalf("call to a URL nothing serves: %v", err)
	}
	if err := g.Script("x", gatewayfake.Step{Fault: "no_such_fault"}); err == nil {
		t.Fatal("Script accepted an unknown fault")
	}
	if n := g.CallCount(); n != 0 || len(f.errs) != 0 {
		t.Fatalf("refused calls reached the script: %d calls, failures %v", n, f.errs)
	}
}
