package core

// TraceParentLength is the length of a version-00 W3C traceparent,
// "00-{trace-id: 32 hex}-{parent-id: 16 hex}-{trace-flags: 2 hex}": the
// form every intent keeps and every gateway call sends.
const TraceParentLength = 55

// NormalizeTraceParent reads a W3C Trace Context traceparent
// (https://www.w3.org/TR/trace-context/#traceparent-header) as the
// specification tells a receiver to, and returns it in the version-00 form
// this service keeps with an intent and sends on, with ok false for a
// value it must ignore. The core treats a trace context as an opaque value
// the intent carries: this is only its syntax, so that what is stored and
// forwarded is always a well-formed traceparent.
//
// The rules are the specification's: lower-case hex only; version ff is
// invalid; an all-zero trace-id or parent-id is invalid; version 00 is
// exactly 55 characters. A later version is read by its first 55
// characters (the 56th, if any, must be a dash) and kept as version 00
// with the same ids and flags, since the specification asks a vendor to
// pass on the highest version it knows. An invalid traceparent is never a
// reason to refuse a request: the specification's answer to it is to start
// a new trace, so callers drop it.
func NormalizeTraceParent(s string) (string, bool) {
	if len(s) < TraceParentLength {
		return "", false
	}
	version := s[0:2]
	if !lowerHex(version) || version == "ff" || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return "", false
	}
	traceID, parentID, flags := s[3:35], s[36:52], s[53:55]
	if !lowerHex(traceID) || !lowerHex(parentID) || !lowerHex(flags) || allZero(traceID) || allZero(parentID) {
		return "", false
	}
	switch {
	case version == "00" && len(s) != TraceParentLength:
		return "", false
	case version != "00" && len(s) > TraceParentLength && s[TraceParentLength] != '-':
		return "", false
	case version == "00":
		return s, true
	}
	return "00-" + traceID + "-" + parentID + "-" + flags, true
}

// lowerHex reports whether s is made of lower-case hexadecimal digits only.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// allZero reports whether s is made of the digit 0 only.
func allZero(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
