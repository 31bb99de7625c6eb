package gatewaysim

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Mode says how a simulated gateway answers a submission that has no
// scripted step: normally (an outcome drawn from the configured behaviour) or
// with one of the faults a real gateway or network can produce. Every fault
// is an answer the client must turn into an attempt error, never an outcome.
type Mode string

// The modes. ModeNormal answers outcomes; every other mode is a fault.
const (
	// ModeNormal answers accepted or rejected by the configured ratio.
	ModeNormal Mode = "normal"
	// ModeHang never answers; the call ends only when the client gives up
	// (its timeout) or the simulator closes.
	ModeHang Mode = "hang"
	// ModeDrop closes the connection without an answer.
	ModeDrop Mode = "drop"
	// ModeNotJSON answers 200 with an HTML body.
	ModeNotJSON Mode = "not_json"
	// ModeEmptyBody answers 200 with no body.
	ModeEmptyBody Mode = "empty_body"
	// ModeNotObject answers 200 with a JSON array instead of an object.
	ModeNotObject Mode = "not_object"
	// ModeNoStatus answers 200 with a JSON object that has no status.
	ModeNoStatus Mode = "no_status"
	// ModeUnknownStatus answers 200 with the status "queued".
	ModeUnknownStatus Mode = "unknown_status"
	// ModeNoReason answers 200 with "rejected" and no reason.
	ModeNoReason Mode = "no_reason"
	// ModeReasonNotString answers 200 with "rejected" and a numeric reason.
	ModeReasonNotString Mode = "reason_not_string"
	// ModeOversized answers 200 with a well-formed but 1 MiB large body.
	ModeOversized Mode = "oversized"
	// ModeAcceptThenHang accepts the reference, then never answers: the
	// ambiguous case where only duplicate_reference saves at-most-once.
	ModeAcceptThenHang Mode = "accept_then_hang"
	// ModeAcceptThenDrop accepts the reference, then closes the connection.
	ModeAcceptThenDrop Mode = "accept_then_drop"
)

// httpModePrefix starts the modes that answer a bare HTTP status, such as
// "http_503".
const httpModePrefix = "http_"

// namedModes lists every mode that is not an HTTP status mode.
var namedModes = []Mode{
	ModeNormal, ModeHang, ModeDrop, ModeNotJSON, ModeEmptyBody, ModeNotObject,
	ModeNoStatus, ModeUnknownStatus, ModeNoReason, ModeReasonNotString,
	ModeOversized, ModeAcceptThenHang, ModeAcceptThenDrop,
}

// FaultModes returns every fault mode (all modes but normal), with HTTP 503
// standing for the HTTP status modes, so tests can cover each fault.
func FaultModes() []Mode {
	modes := make([]Mode, 0, len(namedModes))
	for _, m := range namedModes {
		if m != ModeNormal {
			modes = append(modes, m)
		}
	}
	return append(modes, HTTPStatusMode(http.StatusServiceUnavailable))
}

// HTTPStatusMode returns the mode that answers the given HTTP status with a
// short JSON error body, as a failing gateway or proxy would.
func HTTPStatusMode(code int) Mode {
	return Mode(httpModePrefix + strconv.Itoa(code))
}

// ParseMode validates a mode name: one of the named modes or http_NNN with
// NNN from 201 to 599 (200 is the protocol's only success status).
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.TrimSpace(s))
	if _, ok := m.httpStatus(); ok {
		return m, nil
	}
	for _, known := range namedModes {
		if m == known {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q: want one of %v or http_NNN (201-599)", s, namedModes)
}

// httpStatus returns the status an http_NNN mode answers.
func (m Mode) httpStatus() (int, bool) {
	digits, ok := strings.CutPrefix(string(m), httpModePrefix)
	if !ok || len(digits) != 3 {
		return 0, false
	}
	code, err := strconv.Atoi(digits)
	if err != nil || code <= http.StatusOK || code > 599 {
		return 0, false
	}
	return code, true
}

// accepts reports whether the mode records an acceptance before its fault.
func (m Mode) accepts() bool {
	return m == ModeAcceptThenHang || m == ModeAcceptThenDrop
}
