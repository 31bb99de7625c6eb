// Package gatewaytest is the conformance suite of ports.Gateway: every
// adapter of the port runs it, for every gateway type, against a scripted far
// side its own test provides (see FarSide; adapters/gateway uses the gateway
// simulator over real HTTP). It pins what the engine relies on: outcomes come
// back as the gateway said them (as core.NewOutcome builds them), every
// invalid answer is an error of the kind the far side names and never an
// outcome, each Submit is exactly one call (no retry), the call goes to
// the params' gatewayUrl, the payload travels byte for byte, and the
// caller's context bounds the call.
package gatewaytest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// hangDeadline is the caller's deadline in the hanging cases: long enough
// for a loopback round trip, short enough to keep the suite quick.
const hangDeadline = 300 * time.Millisecond

// Run runs the suite for every gateway type.
func Run(t *testing.T, h Harness) {
	if h.NewGateway == nil || h.StartFarSide == nil {
		t.Fatal("gatewaytest.Run needs Harness.NewGateway and Harness.StartFarSide")
	}
	far := h.StartFarSide(t)
	for _, gt := range core.GatewayTypes() {
		t.Run(string(gt), func(t *testing.T) {
			s := &suite{h: h, gw: h.NewGateway(t, gt), gt: gt, far: far}
			t.Run("Accepted", s.accepted)
			t.Run("Rejected", s.rejected)
			t.Run("DuplicateAfterAcceptance", s.duplicateAfterAcceptance)
			t.Run("ScriptedSequence", s.scriptedSequence)
			t.Run("InvalidAnswersAreErrors", s.invalidAnswers)
			t.Run("CallerDeadlineBoundsTheCall", s.callerDeadline)
			t.Run("CanceledContext", s.canceledContext)
			t.Run("UnreachableGateway", s.unreachable)
			t.Run("RoutesToTheParamsGatewayURL", s.routesToParamsURL)
			t.Run("PayloadIsForwardedVerbatim", s.payloadVerbatim)
			t.Run("ConcurrentSubmissions", s.concurrent)
		})
	}
}

type suite struct {
	h   Harness
	gw  ports.Gateway
	gt  core.GatewayType
	far FarSide
}

// ref makes a reference unique to the running test and gateway type.
func (s *suite) ref(t *testing.T, suffix string) string {
	return strings.ReplaceAll(t.Name(), "/", ".") + "." + suffix
}

func (s *suite) params(ref string, payload string) ports.SubmitParams {
	return ports.SubmitParams{GatewayType: s.gt, GatewayURL: s.far.URL(s.gt), Reference: ref, Payload: json.RawMessage(payload)}
}

func (s *suite) script(t *testing.T, ref string, steps ...Step) {
	t.Helper()
	if err := s.far.Script(ref, steps...); err != nil {
		t.Fatalf("script %s: %v", ref, err)
	}
}

// wantOutcome submits once and checks the outcome, its validity for the
// core, and that the gateway saw exactly the expected number of calls.
func (s *suite) wantOutcome(t *testing.T, p ports.SubmitParams, want core.Outcome) core.Outcome {
	t.Helper()
	got, err := s.gw.Submit(t.Context(), p)
	if err != nil {
		t.Fatalf("Submit(%s) error: %v; want outcome %+v", p.Reference, err, want)
	}
	if o, err := core.NewOutcome(got.Status, got.Reason, got.MessageID); err != nil || o != got {
		t.Fatalf("Submit(%s) returned an outcome core.NewOutcome would not build: %+v (%+v, %v)", p.Reference, got, o, err)
	}
	if got.Status != want.Status || got.Reason != want.Reason {
		t.Fatalf("Submit(%s) = %+v, want %+v", p.Reference, got, want)
	}
	return got
}

func (s *suite) accepted(t *testing.T) {
	t.Parallel()
	ref := s.ref(t, "1")
	got := s.wantOutcome(t, s.params(ref, `{"to":"x"}`), core.Outcome{Status: core.OutcomeAccepted})
	if got.MessageID == "" {
		t.Fatalf("the simulator sent a messageId, the outcome lost it: %+v", got)
	}
	if st := s.far.Received(ref); st.Submissions != 1 || st.Accepted != 1 {
		t.Fatalf("gateway saw %+v, want one accepted submission", st)
	}
}

func (s *suite) rejected(t *testing.T) {
	t.Parallel()
	// Every reason of the taxonomy, and one outside it, which must be
	// recorded as said (the core decides it is never terminal).
	for _, reason := range append(s.gt.RejectionReasons(), "carrier_on_fire") {
		ref := s.ref(t, reason)
		s.script(t, ref, Rejected(reason))
		got := s.wantOutcome(t, s.params(ref, `{}`), core.Outcome{Status: core.OutcomeRejected, Reason: reason})
		if got.MessageID != "" {
			t.Fatalf("rejection %s came with a messageId the gateway never sent: %+v", reason, got)
		}
	}
}

func (s *suite) duplicateAfterAcceptance(t *testing.T) {
	t.Parallel()
	ref := s.ref(t, "1")
	s.wantOutcome(t, s.params(ref, `{}`), core.Outcome{Status: core.OutcomeAccepted})
	s.wantOutcome(t, s.params(ref, `{}`), core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference})
	if st := s.far.Received(ref); st.Submissions != 2 || st.Accepted != 1 {
		t.Fatalf("gateway saw %+v, want 2 submissions and one acceptance", st)
	}
}

func (s *suite) scriptedSequence(t *testing.T) {
	t.Parallel()
	ref := s.ref(t, "1")
	s.script(t, ref, Rejected(core.ReasonProviderFailure), Rejected(core.ReasonProviderFailure), Accepted())
	for _, want := range []core.Outcome{
		{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure},
		{Status: core.OutcomeRejected, Reason: core.ReasonProviderFailure},
		{Status: core.OutcomeAccepted},
	} {
		s.wantOutcome(t, s.params(ref, `{}`), want)
	}
	if st := s.far.Received(ref); st.Submissions != 3 {
		t.Fatalf("gateway saw %d submissions for 3 calls: the adapter must not retry", st.Submissions)
	}
}

func (s *suite) invalidAnswers(t *testing.T) {
	t.Parallel()
	faults := s.far.Faults()
	if len(faults) == 0 {
		t.Fatal("the far side plays no faults")
	}
	messages := map[string]Fault{}
	for _, f := range faults {
		ref := s.ref(t, f.Name)
		s.script(t, ref, Faulted(f))
		ctx, cancel := t.Context(), context.CancelFunc(func() {})
		if f.Hangs {
			ctx, cancel = context.WithTimeout(ctx, hangDeadline)
		}
		got, err := s.gw.Submit(ctx, s.params(ref, `{}`))
		cancel()
		if err == nil {
			t.Fatalf("fault %s: Submit returned outcome %+v, want an error", f.Name, got)
		}
		if got != (core.Outcome{}) {
			t.Fatalf("fault %s: Submit returned both an error and outcome %+v", f.Name, got)
		}
		if lost := errors.Is(err, ports.ErrAnswerLost); lost != f.AnswerLost {
			t.Fatalf("fault %s: error %q wraps ports.ErrAnswerLost: %v, want %v", f.Name, err, lost, f.AnswerLost)
		}
		if s.h.KindOf != nil && f.Kind != "" {
			if kind := s.h.KindOf(err); kind != f.Kind {
				t.Fatalf("fault %s: error %q is of kind %q, want %q", f.Name, err, kind, f.Kind)
			}
		}
		// A hanging call may, on a loaded machine, hit its deadline before
		// it reaches the gateway; any other call must have reached it once.
		if n := s.far.Received(ref).Submissions; n > 1 || (n == 0 && !f.Hangs) {
			t.Fatalf("fault %s: gateway saw %d submissions for one call: want 1, the adapter must not retry", f.Name, n)
		}
		// Faults that look alike on the wire (an acceptance then a hang
		// looks like a hang) may share a message; the others must say
		// which failure they were.
		if f.LooksLike != "" {
			continue
		}
		if other, dup := messages[err.Error()]; dup {
			t.Fatalf("faults %s and %s give the same error %q: the error must say which failure it was", other.Name, f.Name, err)
		}
		messages[err.Error()] = f
	}
}

// hang returns the fault that only hangs (accepts nothing first), for the
// deadline case.
func (s *suite) hang(t *testing.T) Fault {
	t.Helper()
	for _, f := range s.far.Faults() {
		if f.Hangs && f.LooksLike == "" {
			return f
		}
	}
	t.Fatal("the far side plays no fault that hangs")
	return Fault{}
}

func (s *suite) callerDeadline(t *testing.T) {
	t.Parallel()
	ref := s.ref(t, "1")
	s.script(t, ref, Faulted(s.hang(t)))
	ctx, cancel := context.WithTimeout(t.Context(), hangDeadline)
	defer cancel()
	got, err := s.gw.Submit(ctx, s.params(ref, `{}`))
	if err == nil {
		t.Fatalf("a hanging gateway produced outcome %+v, want an error", got)
	}
	if ctx.Err() == nil {
		t.Fatalf("Submit gave up before the caller's deadline with %v", err)
	}
}

func (s *suite) canceledContext(t *testing.T) {
	t.Parallel()
	ref := s.ref(t, "1")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got, err := s.gw.Submit(ctx, s.params(ref, `{}`)); err == nil {
		t.Fatalf("Submit with a canceled context returned outcome %+v", got)
	}
	if st := s.far.Received(ref); st.Accepted != 0 {
		t.Fatalf("a canceled call was accepted by the gateway: %+v", st)
	}
}

func (s *suite) unreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	_ = ln.Close()
	p := s.params(s.ref(t, "1"), `{}`)
	p.GatewayURL = url
	got, err := s.gw.Submit(t.Context(), p)
	if err == nil {
		t.Fatalf("Submit to a closed port returned outcome %+v", got)
	}
	if errors.Is(err, ports.ErrAnswerLost) {
		t.Fatalf("Submit to a closed port: error %q wraps ports.ErrAnswerLost, but no gateway can have received the call", err)
	}
}

func (s *suite) routesToParamsURL(t *testing.T) {
	t.Parallel()
	other := s.h.StartFarSide(t)
	ref := s.ref(t, "1")
	p := s.params(ref, `{}`)
	p.GatewayURL = other.URL(s.gt)
	s.wantOutcome(t, p, core.Outcome{Status: core.OutcomeAccepted})
	if n := other.Received(ref).Submissions; n != 1 {
		t.Fatalf("the gateway at the params' URL saw %d submissions, want 1", n)
	}
	if n := s.far.Received(ref).Submissions; n != 0 {
		t.Fatalf("another gateway saw %d submissions: the adapter must call the params' URL only", n)
	}
}

func (s *suite) payloadVerbatim(t *testing.T) {
	t.Parallel()
	payloads := []string{
		`{"to":"+15551234567","text":"Your order <#42> & co. shipped"}`,
		`{"z":1,"a":[1.0,1e3,-0,12345678901234567890],"u":"\u00e9\u2028é😀","esc":"\"\\/"}`,
		`"a bare string"`,
		`[null,true,false,{}]`,
		`{ "spaced" : [ 1 , 2 ] }`,
	}
	for i, payload := range payloads {
		ref := s.ref(t, fmt.Sprint(i))
		s.wantOutcome(t, s.params(ref, payload), core.Outcome{Status: core.OutcomeAccepted})
		if got := string(s.far.Received(ref).LastPayload); got != payload {
			t.Fatalf("gateway received payload\n%s\nwant byte for byte\n%s", got, payload)
		}
	}
}

func (s *suite) concurrent(t *testing.T) {
	t.Parallel()
	const n = 32
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			o, err := s.gw.Submit(t.Context(), s.params(s.ref(t, fmt.Sprint(i)), `{}`))
			if err == nil && o.Status != core.OutcomeAccepted {
				err = fmt.Errorf("outcome %+v, want accepted", o)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent submission %d: %v", i, err)
		}
	}
}
