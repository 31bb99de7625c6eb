package core

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// DefaultMaxPayloadBytes is the compacted payload size limit unless the
// operator sets another: generous for SMS and push bodies, small enough that
// one client cannot fill the store. The service enforces it and the HTTP API
// bounds request bodies from it, so it has this one home.
const DefaultMaxPayloadBytes = 256 << 10

// CompactPayload validates a JSON payload (UTF-8, at most MaxPayloadDepth
// levels deep) and removes insignificant white space. The compacted bytes are what SubmissionManager stores, compares for
// idempotency and forwards to the gateway, so two submissions that differ
// only in formatting are the same intent while any other difference (key
// order, number spelling, string escapes) is a conflict.
func CompactPayload(raw []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, &FieldError{Field: "payload", Message: "is required"}
	}
	// encoding/json passes invalid UTF-8 inside strings through untouched;
	// such a payload is not interchangeable JSON (RFC 8259 section 8.1) and
	// would be forwarded to gateways and returned to clients as it came.
	if !utf8.Valid(raw) {
		return nil, &FieldError{Field: "payload", Message: "must be UTF-8 encoded JSON"}
	}
	// Before json.Compact, whose own depth limit would call the payload
	// merely "not valid JSON".
	if nestsDeeperThan(raw, MaxPayloadDepth) {
		return nil, TooDeep("payload")
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	if err := json.Compact(&buf, raw); err != nil {
		return nil, &FieldError{Field: "payload", Message: fmt.Sprintf("is not valid JSON: %v", err)}
	}
	return json.RawMessage(buf.Bytes()), nil
}
