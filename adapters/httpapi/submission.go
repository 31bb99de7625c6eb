package httpapi

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
)

// maxSubmissionTargetLength is the OpenAPI document's maxLength of
// submissionTarget, in characters.
const maxSubmissionTargetLength = 255

// errNotAnObject refuses a body that is valid JSON but not an object.
var errNotAnObject = &malformedError{reason: "the request body must be a JSON object"}

// decodeSubmission reads a submit body in one pass over the bytes already
// read and checked (valid UTF-8, exactly one JSON document). It never builds
// the payload as a tree: the payload is the slice of body that holds its
// JSON value, byte for byte, so the store receives what the client sent and
// memory stays at the size of the body. It checks what the OpenAPI schema
// states for the request, with messages naming the field: the keys are
// strings without JSON-escaped lone surrogates (encoding/json would decode
// "\ud800" and "\udc00" alike to U+FFFD, merging different intentIds),
// notBefore is what core.ParseNotBefore takes, and each field is given
// once. What an intentId may be is the service's to judge
// (core.ValidateIntentID), once. Other members are ignored, as the schema
// allows.
func decodeSubmission(body []byte) (apigen.SubmitIntentRequest, error) {
	var (
		req                apigen.SubmitIntentRequest
		seenID, seenTarget bool
		seenNotBefore      bool
	)
	s := scanner{b: body}
	if s.skipSpace(); !s.next('{') {
		return req, errNotAnObject
	}
	for s.skipSpace(); !s.next('}'); s.skipSpace() {
		rawKey, ok := s.stringToken()
		if !ok {
			return req, errNotAnObject
		}
		key, err := unquote(rawKey)
		if err != nil {
			return req, errNotAnObject
		}
		if s.skipSpace(); !s.next(':') {
			return req, errNotAnObject
		}
		s.skipSpace()
		value, ok := s.value()
		if !ok {
			return req, errNotAnObject
		}
		switch key {
		case "intentId":
			if seenID {
				return req, &core.FieldError{Field: key, Message: "must be given once"}
			}
			seenID = true
			if req.IntentId, err = keyString(key, value); err != nil {
				return req, err
			}
		case "submissionTarget":
			if seenTarget {
				return req, &core.FieldError{Field: key, Message: "must be given once"}
			}
			seenTarget = true
			if req.SubmissionTarget, err = keyString(key, value); err != nil {
				return req, err
			}
		case "payload":
			if req.Payload != nil {
				return req, &core.FieldError{Field: key, Message: "must be given once"}
			}
			req.Payload = json.RawMessage(value)
		case "notBefore":
			if seenNotBefore {
				return req, &core.FieldError{Field: key, Message: "must be given once"}
			}
			seenNotBefore = true
			if req.NotBefore, err = notBefore(value); err != nil {
				return req, err
			}
		}
		if s.skipSpace(); !s.next(',') && (s.i >= len(s.b) || s.b[s.i] != '}') {
			return req, errNotAnObject
		}
	}
	switch n := utf8.RuneCountInString(req.SubmissionTarget); {
	case !seenID:
		return req, &core.FieldError{Field: "intentId", Message: "is required"}
	case !seenTarget || n == 0:
		return req, &core.FieldError{Field: "submissionTarget", Message: "is required"}
	case n > maxSubmissionTargetLength:
		return req, &core.FieldError{Field: "submissionTarget",
			Message: fmt.Sprintf("must be at most %d characters", maxSubmissionTargetLength)}
	case req.Payload == nil:
		return req, &core.FieldError{Field: "payload", Message: "is required"}
	}
	return req, nil
}

// keyString decodes a JSON string the service keys on, refusing other JSON
// types and lone surrogates.
func keyString(field string, raw []byte) (string, error) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", &core.FieldError{Field: field, Message: "must be a JSON string"}
	}
	if hasLoneSurrogate(raw) {
		return "", &core.FieldError{Field: field, Message: `contains a lone UTF-16 surrogate escape (such as \ud800)`}
	}
	s, err := unquote(raw)
	if err != nil {
		return "", &core.FieldError{Field: field, Message: "must be a JSON string"}
	}
	return s, nil
}

// unquote decodes a JSON string token; most have no escapes and need no
// decoder.
func unquote(raw []byte) (string, error) {
	plain := len(raw) >= 2
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c == '"' {
			plain = false
			break
		}
	}
	if plain {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

// hasLoneSurrogate reports whether a JSON text (a string token, or a whole
// document) escapes a UTF-16 surrogate that is not half of a pair: a high
// surrogate (\ud800-\udbff) not followed by a low one (\udc00-\udfff), or
// a low one on its own. Such text names no Unicode character.
func hasLoneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // skip the escaped character, which may be a backslash
			continue
		}
		r, ok := hex4(raw, i+2)
		if !ok {
			continue
		}
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 >= len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
				return true
			}
			if lo, ok := hex4(raw, i+8); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// hex4 reads four hex digits at raw[at:].
func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// scanner walks a JSON document known to be valid, finding the extent of
// values without decoding them.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// next consumes c if it comes next.
func (s *scanner) next(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// stringToken consumes a string token, quotes included.
func (s *scanner) stringToken() ([]byte, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false
	}
	for j := s.i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			tok := s.b[s.i : j+1]
			s.i = j + 1
			return tok, true
		}
	}
	return nil, false
}

// value consumes one value and returns its bytes.
func (s *scanner) value() ([]byte, bool) {
	if s.i >= len(s.b) {
		return nil, false
	}
	start := s.i
	switch s.b[s.i] {
	case '"':
		return s.stringToken()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, ok := s.stringToken(); !ok {
					return nil, false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return s.b[start:s.i], true
			}
		}
		return nil, false
	default:
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return s.b[start:s.i], s.i > start
			}
			s.i++
		}
		return s.b[start:s.i], s.i > start
	}
}

// notBefore reads the notBefore field with core.ParseNotBefore, the one
// judge of what a notBefore may be (an RFC 3339 date-time no earlier than
// core.EarliestNotBefore). A value that is not a JSON string (a number,
// null) is judged as the empty text, so it gets the same refusal as any
// other text that is not a date-time.
func notBefore(raw []byte) (*time.Time, error) {
	var text string
	if len(raw) > 0 && raw[0] == '"' {
		text, _ = unquote(raw) // raw is a valid JSON string token
	}
	t, err := core.ParseNotBefore(text)
	if err != nil {
		return nil, err
	}
	return &t, nil
}
