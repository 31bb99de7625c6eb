package httpapi

import (
	"errors"
	"fmt"
	"time"
)

// The errors below are the HTTP layer's own refusals. They carry what the
// problem document needs and nothing else; problemFor turns them, like the
// core errors, into HTTP answers.

// errUnauthorized means API keys are configured and the request carried none
// of them. It never says which part was wrong, so it cannot help guessing.
var errUnauthorized = errors.New("a valid API key is required")

// errForbidden means the request carried a client key where the operation
// needs an operator key.
var errForbidden = errors.New("an operator key is required")

// throttledError refuses a request, without looking at its key, because
// its client address presented too many unknown keys lately.
type throttledError struct {
	retryAfter time.Duration
}

func (e *throttledError) Error() string {
	return fmt.Sprintf("this address presented too many unknown keys; retry in %s", e.retryAfter.Round(time.Second))
}

// errBodyRequired means a request that needs a body came without one.
var errBodyRequired = errors.New("the request body is required")

// unsupportedMediaTypeError refuses a body that is not sent as JSON, before
// any of it is read.
type unsupportedMediaTypeError struct {
	contentType string
}

func (e *unsupportedMediaTypeError) Error() string {
	if e.contentType == "" {
		return "the request has no Content-Type; send application/json"
	}
	return fmt.Sprintf("Content-Type %q is not supported; send application/json", e.contentType)
}

// malformedError means the body is not a JSON object of the request's
// shape, so no field can be named as the culprit.
type malformedError struct {
	reason string
}

func (e *malformedError) Error() string { return e.reason }

// targetNotFoundError is an unknown target met where the target is the
// resource being read (a 404), unlike an unknown target in a submission,
// which is an invalid field (a 422).
type targetNotFoundError struct {
	target string
}

func (e *targetNotFoundError) Error() string {
	return fmt.Sprintf("no submission target is named %q", e.target)
}

// routeNotFoundError answers a path that no operation serves.
type routeNotFoundError struct {
	path string
}

func (e *routeNotFoundError) Error() string { return fmt.Sprintf("no resource at %s", e.path) }

// methodNotAllowedError answers a known path asked with a method it does not
// serve; allow lists the methods it does.
type methodNotAllowedError struct {
	method string
	allow  []string
}

func (e *methodNotAllowedError) Error() string {
	return fmt.Sprintf("method %s is not allowed here", e.method)
}

// errTooManyBodies means every body slot is taken, or the byte budget
// cannot take this body: the API already holds as many request bodies, or
// bytes of them, as the operator allows. The client should retry soon.
var errTooManyBodies = errors.New("the server is holding as many request bodies, or bytes of them, as it may; retry shortly")

// unsupportedEncodingError refuses a body sent with a Content-Encoding the
// server does not decode (anything but identity).
type unsupportedEncodingError struct {
	encoding string
}

func (e *unsupportedEncodingError) Error() string {
	return fmt.Sprintf("Content-Encoding %q is not supported; send the body unencoded", e.encoding)
}

// bodyTimeoutError means the client did not send its body within the
// server's read timeout: the client's fault (408), not the server's.
type bodyTimeoutError struct {
	cause error
}

func (e *bodyTimeoutError) Error() string {
	return "the request body did not arrive within the server's read timeout: " + e.cause.Error()
}

func (e *bodyTimeoutError) Unwrap() error { return e.cause }

// bodyReadError means the body could not be read because of its framing
// (malformed chunked encoding, a connection closed early): the client's
// fault (400), not the server's.
type bodyReadError struct {
	cause error
}

func (e *bodyReadError) Error() string {
	return "the request body could not be read: " + e.cause.Error()
}

func (e *bodyReadError) Unwrap() error { return e.cause }
