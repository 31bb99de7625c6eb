package gatewaytest

import (
	"testing"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Harness is what an adapter's test hands the suite: the adapter under test
// and the far side it talks to. The suite depends on core and ports only, so
// the far side (for adapters/gateway, the gateway simulator over real HTTP)
// is provided by the adapter's test.
type Harness struct {
	// NewGateway builds the adapter under test for one gateway type.
	NewGateway NewGateway
	// StartFarSide starts a fresh far side and stops it in the test's
	// cleanup. The suite starts one for the whole run, and a second one to
	// check that a call goes to the params' gatewayUrl only.
	StartFarSide func(t *testing.T) FarSide
	// KindOf names the kind of an error the adapter returned, in the words
	// of Fault.Kind. Nil leaves the kinds unchecked.
	KindOf func(error) string
}

// NewGateway builds the adapter under test for one gateway type. It is
// called once per gateway type; the adapter is released by the test's
// cleanup if it needs releasing.
type NewGateway func(t *testing.T, gatewayType core.GatewayType) ports.Gateway

// FarSide is the scripted gateway the suite submits to, speaking the
// gateway protocol for every gateway type. Like a real gateway it accepts a
// new reference and answers duplicate_reference to any later submission of
// an accepted one. It is safe for concurrent use.
type FarSide interface {
	// URL is the base URL of the far side's gateway of type gt, the
	// params' gatewayUrl.
	URL(gt core.GatewayType) string
	// Script sets the answers to the next submissions of ref, one step per
	// submission, on every gateway type; later submissions are answered as
	// unscripted ones.
	Script(ref string, steps ...Step) error
	// Received says what the far side received for ref, over every gateway
	// type.
	Received(ref string) Received
	// Faults lists every way the far side can fail a submission; the suite
	// plays each one.
	Faults() []Fault
}

// Step is one scripted answer to one submission: an acceptance (the zero
// Step), a rejection with a reason, or a fault.
type Step struct {
	// Reject, when set, rejects the submission with this reason, which
	// may lie outside the gateway type's taxonomy.
	Reject string
	// Fault, when set, names the Fault the submission is answered with.
	Fault string
}

// Accepted returns the step that accepts (or answers duplicate_reference to
// a reference already accepted).
func Accepted() Step { return Step{} }

// Rejected returns the step that rejects with reason.
func Rejected(reason string) Step { return Step{Reject: reason} }

// Faulted returns the step that answers with fault f.
func Faulted(f Fault) Step { return Step{Fault: f.Name} }

// Received is what the far side saw of one reference.
type Received struct {
	// Submissions counts every submission that reached the far side,
	// whatever it answered.
	Submissions int
	// Accepted counts the submissions the far side accepted, including
	// those it accepted before failing.
	Accepted int
	// LastPayload is the payload of the latest submission, byte for byte.
	LastPayload []byte
}

// Fault is one way the far side fails a submission. Every fault must reach
// the caller as an error, never as an outcome.
type Fault struct {
	// Name identifies the fault in a Step and in test names.
	Name string
	// Kind is the error kind the adapter must report for the fault, in the
	// words of Harness.KindOf; empty leaves it unchecked.
	Kind string
	// Hangs says the far side never answers: only the caller's deadline
	// ends the call, which on a loaded machine may pass before the call
	// reaches the far side. The suite gives such calls a deadline.
	Hangs bool
	// LooksLike names the fault this one cannot be told from on the wire
	// (an acceptance then a hang looks like a hang); the two may share an
	// error message. Every other fault's message must be its own.
	LooksLike string
	// AnswerLost says the far side may have taken the submission and no
	// readable answer came back (a dropped connection, a hang, a 200
	// whose body is no outcome): the adapter's error must then wrap
	// ports.ErrAnswerLost, and for every other fault (a non-200 status)
	// it must not.
	AnswerLost bool
}
