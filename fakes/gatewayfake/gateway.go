// Package gatewayfake is an in-process gateway for tests: a far side that
// answers each reference from a script and, unscripted, as the gateway
// protocol says a gateway does (a new reference is accepted, an accepted one
// gets duplicate_reference), reached through its URLs. It is a ports.Gateway
// itself, so the code under test calls it as it would call a gateway client;
// a Network routes calls between several of them by the params' gatewayUrl.
//
// It runs the conformance suite ports/gatewaytest, as every gateway client
// does: what a test scripts on it is what a real client can return. A strict
// gateway (Config.Strict) fails its test on any call it has no step for, so
// a test that scripts every call also proves no other call was made.
package gatewayfake

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Config describes one fake gateway.
type Config struct {
	// Name makes the gateway's own URLs its own: URL(gt) is
	// http://<Name>.gatewayfake.test/<gt>. Empty means "gateway".
	Name string
	// Serves lists further base URLs the gateway answers at, each for one
	// gateway type, as a deployment's registry names them.
	Serves map[string]core.GatewayType
	// Strict, when set, is the test a call with no step left fails; the
	// call then returns an Error of KindUnscripted. Nil answers such a
	// call as a gateway would.
	Strict testing.TB
	// Clock stamps each call's At; nil leaves At zero.
	Clock ports.Clock
}

// Step is one scripted answer to one submission.
type Step struct {
	// Outcome is the answer, returned as given. The zero Outcome answers as
	// an unscripted submission is answered: accepted with a new messageId,
	// or duplicate_reference when the reference was accepted before.
	Outcome core.Outcome
	// Err, when set, is returned instead of an answer: a failure the test
	// words itself, as a gateway client would report it.
	Err error
	// Fault, when set, names the fault (see Faults) the call fails with.
	Fault string
	// Hold, when set, keeps the call waiting until it is closed; a call
	// whose context ends first returns the context's error, unwrapped, and
	// counts as neither answered nor accepted.
	Hold <-chan struct{}
}

// HeldUntil returns the step answered only once release is closed.
func (s Step) HeldUntil(release <-chan struct{}) Step {
	s.Hold = release
	return s
}

// Call is one submission the gateway received.
type Call struct {
	Params ports.SubmitParams
	At     time.Time
}

// Received is what the gateway saw of one reference.
type Received struct {
	// Submissions counts every call that reached the gateway.
	Submissions int
	// Accepted counts the calls it accepted, including those it accepted
	// before failing.
	Accepted int
	// LastPayload is the payload of the latest call, byte for byte.
	LastPayload []byte
}

// Gateway is one fake gateway. It is safe for concurrent use.
type Gateway struct {
	cfg  Config
	urls map[string]core.GatewayType

	mu        sync.Mutex
	script    map[string][]Step
	received  map[string]*Received
	calls     []Call
	taken     int // calls NextCall has returned
	active    int
	maxActive int
	messages  int
	// changed is closed and replaced on every call, for NextCall.
	changed chan struct{}
}

var _ ports.Gateway = (*Gateway)(nil)

// New returns a gateway that answers at its own URLs and at cfg.Serves.
func New(cfg Config) *Gateway {
	if cfg.Name == "" {
		cfg.Name = "gateway"
	}
	g := &Gateway{cfg: cfg, urls: map[string]core.GatewayType{}, script: map[string][]Step{},
		received: map[string]*Received{}, changed: make(chan struct{})}
	for _, gt := range core.GatewayTypes() {
		g.urls[g.URL(gt)] = gt
	}
	for u, gt := range cfg.Serves {
		g.urls[u] = gt
	}
	return g
}

// URL is the gateway's own base URL for gateway type gt.
func (g *Gateway) URL(gt core.GatewayType) string {
	return fmt.Sprintf("http://%s.gatewayfake.test/%s", g.cfg.Name, gt)
}

// serves reports whether the gateway answers at url.
func (g *Gateway) serves(url string) bool {
	_, ok := g.urls[url]
	return ok
}

// Script appends steps to the answers to ref's next submissions, in order,
// whatever gateway type they come in on.
func (g *Gateway) Script(ref string, steps ...Step) error {
	for _, s := range steps {
		if s.Fault == "" {
			continue
		}
		if _, ok := faultNamed(s.Fault); !ok {
			return fmt.Errorf("gatewayfake: no fault %q", s.Fault)
		}
		if s.Err != nil || s.Outcome != (core.Outcome{}) {
			return fmt.Errorf("gatewayfake: step %+v both faults and answers", s)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.script[ref] = append(g.script[ref], steps...)
	return nil
}

// Submit answers one call: by its reference's next step, or as a gateway
// answers an unscripted one. A call whose context has already ended is
// not sent, as a client does not send it; a call to a URL the gateway does
// not serve finds nothing there.
func (g *Gateway) Submit(ctx context.Context, p ports.SubmitParams) (core.Outcome, error) {
	gt, ok := g.urls[p.GatewayURL]
	if !ok || ctx.Err() != nil {
		return core.Outcome{}, unanswered(ctx, p.GatewayURL)
	}
	if gt != p.GatewayType {
		return core.Outcome{}, &Error{Kind: KindHTTPStatus, msg: fmt.Sprintf("gateway answered HTTP 404: %q serves %s, not %s", p.GatewayURL, gt, p.GatewayType)}
	}
	step, scripted := g.receive(p)
	defer g.done()
	if !scripted && g.cfg.Strict != nil {
		g.cfg.Strict.Errorf("gateway called for %q with no scripted answer left", p.Reference)
		return core.Outcome{}, &Error{Kind: KindUnscripted, msg: fmt.Sprintf("unscripted call for %q", p.Reference)}
	}
	if step.Hold != nil {
		select {
		case <-step.Hold:
		case <-ctx.Done():
			return core.Outcome{}, ctx.Err()
		}
	}
	if step.Fault != "" {
		f, _ := faultNamed(step.Fault)
		if f.AcceptsFirst {
			g.accept(p.Reference)
		}
		if f.Hangs {
			<-ctx.Done()
			return core.Outcome{}, faultError(f, ctx.Err())
		}
		return core.Outcome{}, faultError(f, nil)
	}
	if step.Err != nil {
		return core.Outcome{}, step.Err
	}
	return g.answer(p.Reference, step.Outcome), nil
}

// unanswered is the error of a call that reached no gateway: not sent, as
// a client does not send a call whose context has ended, or sent to a URL
// where nothing answers.
func unanswered(ctx context.Context, url string) error {
	if err := ctx.Err(); err != nil {
		return &Error{Kind: KindNotSent, msg: fmt.Sprintf("gateway call not sent: %v", err), cause: err}
	}
	return &Error{Kind: KindUnreachable, msg: fmt.Sprintf("no gateway answers at %q", url)}
}

// receive records the call and takes its reference's next step.
func (g *Gateway) receive(p ports.SubmitParams) (Step, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	call := Call{Params: p}
	if g.cfg.Clock != nil {
		call.At = g.cfg.Clock.Now()
	}
	g.calls = append(g.calls, call)
	r := g.receivedLocked(p.Reference)
	r.Submissions++
	r.LastPayload = append([]byte(nil), p.Payload...)
	g.active++
	g.maxActive = max(g.maxActive, g.active)
	close(g.changed)
	g.changed = make(chan struct{})
	steps := g.script[p.Reference]
	if len(steps) == 0 {
		return Step{}, false
	}
	g.script[p.Reference] = steps[1:]
	return steps[0], true
}

func (g *Gateway) done() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active--
}

func (g *Gateway) receivedLocked(ref string) *Received {
	r := g.received[ref]
	if r == nil {
		r = &Received{}
		g.received[ref] = r
	}
	return r
}

// accept counts an acceptance of ref.
func (g *Gateway) accept(ref string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.receivedLocked(ref).Accepted++
}

// answer is the outcome of a step that answers: the scripted outcome, or
// the gateway's own for the zero Outcome.
func (g *Gateway) answer(ref string, o core.Outcome) core.Outcome {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.receivedLocked(ref)
	if o == (core.Outcome{}) {
		if r.Accepted > 0 {
			return core.Outcome{Status: core.OutcomeRejected, Reason: core.ReasonDuplicateReference}
		}
		g.messages++
		o = core.Outcome{Status: core.OutcomeAccepted, MessageID: fmt.Sprintf("%s-%d", g.cfg.Name, g.messages)}
	}
	if o.Status == core.OutcomeAccepted {
		r.Accepted++
	}
	return o
}

// NextCall returns the oldest call no earlier NextCall returned, waiting
// for one if there is none; it fails only when ctx ends.
func (g *Gateway) NextCall(ctx context.Context) (Call, error) {
	for {
		g.mu.Lock()
		if g.taken < len(g.calls) {
			c := g.calls[g.taken]
			g.taken++
			g.mu.Unlock()
			return c, nil
		}
		changed := g.changed
		g.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Call{}, errors.Join(errors.New("gatewayfake: no call arrived"), ctx.Err())
		}
	}
}
