package gatewayfake

import (
	"errors"
	"fmt"

	"github.com/submissionmanager/submission-manager/ports"
)

// The kinds of Error, named as the conformance suite's faults name them.
const (
	// KindHTTPStatus: the gateway answered a status other than 200, its
	// own word that it decided nothing.
	KindHTTPStatus = "http_status"
	// KindTransport: the connection broke before an answer came.
	KindTransport = "transport"
	// KindTimeout: no answer came before the caller's context ended.
	KindTimeout = "timeout"
	// KindInvalidAnswer: a 200 whose body is no outcome.
	KindInvalidAnswer = "invalid_answer"
	// KindUnreachable: nothing answers at the params' gatewayUrl.
	KindUnreachable = "unreachable"
	// KindNotSent: the caller's context had ended before the call.
	KindNotSent = "not_sent"
	// KindUnscripted: a strict gateway got a call it has no step for.
	KindUnscripted = "unscripted"
)

// Error is a call that produced no outcome, as a gateway client reports it:
// its message says which failure it was, and it wraps ports.ErrAnswerLost
// when the gateway may have acted on the call.
type Error struct {
	Kind       string
	msg        string
	answerLost bool
	cause      error
}

func (e *Error) Error() string { return e.msg }

// Unwrap exposes the cause (the context's error for a call that hung).
func (e *Error) Unwrap() error { return e.cause }

// Is matches ports.ErrAnswerLost when the far side may have taken the call.
func (e *Error) Is(target error) bool { return target == ports.ErrAnswerLost && e.answerLost }

// KindOf returns the kind of an error the fake returned, "" for any other.
func KindOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// Fault is one way the fake fails a submission, described in the words of
// the conformance suite's Fault, so a test can hand the list to it.
type Fault struct {
	Name string
	// Kind is the Kind of the Error the call returns.
	Kind string
	// Hangs says the call never answers: only the caller's context ends
	// it.
	Hangs bool
	// AcceptsFirst says the far side takes the submission (counts it as
	// accepted) before it fails.
	AcceptsFirst bool
	// LooksLike names the fault this one cannot be told from by the
	// caller; the two share an error message.
	LooksLike string
	// AnswerLost says the error wraps ports.ErrAnswerLost.
	AnswerLost bool
}

// faults are every way the fake fails a submission. Those that accept
// first look, to the caller, exactly like the fault they end with.
var faults = []Fault{
	{Name: "http_503", Kind: KindHTTPStatus},
	{Name: "drop", Kind: KindTransport, AnswerLost: true},
	{Name: "hang", Kind: KindTimeout, Hangs: true, AnswerLost: true},
	{Name: "not_an_outcome", Kind: KindInvalidAnswer, AnswerLost: true},
	{Name: "accept_then_drop", Kind: KindTransport, AcceptsFirst: true, LooksLike: "drop", AnswerLost: true},
	{Name: "accept_then_hang", Kind: KindTimeout, Hangs: true, AcceptsFirst: true, LooksLike: "hang", AnswerLost: true},
}

// Faults lists every fault a Step may name.
func Faults() []Fault { return append([]Fault(nil), faults...) }

func faultNamed(name string) (Fault, bool) {
	for _, f := range faults {
		if f.Name == name {
			return f, true
		}
	}
	return Fault{}, false
}

// faultError is the error a fault ends with; cause is the context's error
// for a fault that hangs.
func faultError(f Fault, cause error) *Error {
	msg := map[string]string{
		KindHTTPStatus:    "gateway answered HTTP 503",
		KindTransport:     "gateway connection reset before an answer",
		KindTimeout:       fmt.Sprintf("gateway call got no answer: %v", cause),
		KindInvalidAnswer: "gateway answer is not an outcome",
	}[f.Kind]
	return &Error{Kind: f.Kind, msg: msg, answerLost: f.AnswerLost, cause: cause}
}
