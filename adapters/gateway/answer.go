package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/submissionmanager/submission-manager/api/gatewayapi"
	"github.com/submissionmanager/submission-manager/core"
)

// answerReader turns a 200 body into an outcome by a gateway type's rules.
type answerReader func(c *Client, body []byte) (core.Outcome, error)

// answerReaders holds the reading rules per gateway type. SMS and push speak
// the same protocol today, so both read a status answer; a gateway type with
// another answer format gets its own reader here and nowhere else.
var answerReaders = map[core.GatewayType]answerReader{
	core.GatewaySMS:  readStatusAnswer,
	core.GatewayPush: readStatusAnswer,
}

// readStatusAnswer reads {"status": "accepted"|"rejected", "reason": ...,
// "messageId": ...}. It checks the answer's JSON shape; core.NewOutcome says
// whether it is an outcome, and which reasons are known or terminal is for
// the core and the contract to decide.
func readStatusAnswer(c *Client, body []byte) (core.Outcome, error) {
	var ans gatewayapi.SubmissionAnswer
	if err := json.Unmarshal(body, &ans); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return core.Outcome{}, c.errorf(KindBadField, http.StatusOK, err, "gateway answer field %q is not a %s", typeErr.Field, jsonKind(typeErr))
		case errors.As(err, &typeErr):
			return core.Outcome{}, c.errorf(KindNotObject, http.StatusOK, err, "gateway answer is not a JSON object: %s", truncate(body))
		default:
			return core.Outcome{}, c.errorf(KindNotJSON, http.StatusOK, err, "gateway answer is not JSON: %v", err)
		}
	}
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		return core.Outcome{}, c.errorf(KindNotObject, http.StatusOK, nil, "gateway answer is not a JSON object: null")
	}
	if name, dup := repeatedField(body, "status", "reason", "messageId"); dup {
		return core.Outcome{}, c.errorf(KindDuplicateField, http.StatusOK, nil, "gateway answer gives %q more than once", name)
	}
	var reason, messageID string
	if ans.Reason != nil {
		reason = *ans.Reason
	}
	if ans.MessageId != nil {
		messageID = *ans.MessageId
	}
	o, err := core.NewOutcome(core.OutcomeStatus(ans.Status), reason, messageID)
	if err != nil {
		return core.Outcome{}, c.errorf(outcomeErrorKind(err), http.StatusOK, err, "%v", err)
	}
	return o, nil
}

// outcomeErrorKind classifies an answer core.NewOutcome refused.
func outcomeErrorKind(err error) Kind {
	switch {
	case errors.Is(err, core.ErrOutcomeNoStatus):
		return KindNoStatus
	case errors.Is(err, core.ErrOutcomeNoReason):
		return KindNoReason
	default:
		return KindUnknownStatus
	}
}

// repeatedField reports a field of fields that the JSON object body (known
// to be valid) names more than once at its top level. encoding/json keeps
// the last of repeated keys and matches them case-insensitively, so
// {"status":"rejected",...,"Status":"accepted"} would read as accepted while
// another reader (a proxy, a log viewer, the gateway's own) sees rejected:
// an ambiguous answer is no answer.
func repeatedField(body []byte, fields ...string) (string, bool) {
	if namedAtMostOnce(body, fields) {
		return "", false
	}
	return repeatedFieldScan(body, fields)
}

// namedAtMostOnce is repeatedField's fast path for the usual answer: in a
// body of plain ASCII without escapes, a key is spelled exactly as it is
// matched, so a field whose quoted name occurs at most once anywhere
// (values included, letters in any case) cannot be a repeated key. Any
// other body (escapes, non-ASCII that case folding could match, a name
// seen twice) gets the token scan.
func namedAtMostOnce(body []byte, fields []string) bool {
	for _, b := range body {
		if b == '\\' || b >= utf8.RuneSelf {
			return false
		}
	}
	for _, f := range fields {
		if quotedCount(body, f) > 1 {
			return false
		}
	}
	return true
}

// quotedCount counts the occurrences of name between double quotes in body,
// ASCII letters in any case.
func quotedCount(body []byte, name string) int {
	n := 0
	for i := 0; i+len(name)+2 <= len(body); i++ {
		if body[i] == '"' && body[i+len(name)+1] == '"' && strings.EqualFold(string(body[i+1:i+1+len(name)]), name) {
			n++
		}
	}
	return n
}

// repeatedFieldScan is repeatedField by reading the object's keys as tokens.
func repeatedFieldScan(body []byte, fields []string) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", false
	}
	seen := make(map[string]bool, len(fields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		key, _ := tok.(string)
		for _, f := range fields {
			if strings.EqualFold(key, f) {
				if seen[f] {
					return f, true
				}
				seen[f] = true
			}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// truncate keeps error messages short when quoting a body.
func truncate(body []byte) string {
	const limit = 80
	if len(body) > limit {
		return string(body[:limit]) + "..."
	}
	return string(body)
}

// jsonKind names the JSON type a field should have had.
func jsonKind(e *json.UnmarshalTypeError) string {
	if e.Type == nil {
		return "valid value"
	}
	switch e.Type.Kind() {
	case reflect.String:
		return "string"
	case reflect.Struct, reflect.Map:
		return "object"
	default:
		return e.Type.Kind().String()
	}
}
