// Package gateway is the ports.Gateway adapter: it submits one attempt of an
// intent to its SMS or push gateway over the protocol of api/gateway.yaml and
// reads the answer by the gateway type's rules.
//
// Only a 200 answer carrying accepted, or rejected with a reason, is an
// outcome, and core.NewOutcome, which holds that rule, builds it. Everything else (transport failure, timeout, another HTTP status,
// a body that is not a JSON object, a missing or unknown status, a rejection
// without a reason) is returned as an *Error whose message says which, and
// which errors.Is matches against ErrTransport, ErrTimeout, ErrCanceled,
// ErrHTTPStatus, ErrInvalidAnswer or ErrNotSent. Whether a reason is in the
// gateway type's taxonomy, and whether it is terminal, is for the core to say.
//
// A Client never retries: the execution engine owns attempts, and a silent
// second POST could make the gateway answer duplicate_reference to an attempt
// whose acceptance nobody recorded. Calls to http:// gateways go through the
// Client's own keep-alive connections (conns.go), which peek an idle
// connection before reusing it and never resend. For https:// the only
// resend is Go's transport replaying a request on a fresh connection when not
// one byte of it was written to a stale pooled connection, which the gateway
// never saw.
package gateway
