package gateway

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
)

// FuzzReadStatusAnswer reads arbitrary 200 bodies: the reader never panics,
// every outcome it returns is well formed, an answer that repeats a field
// is never an outcome, and every refusal is an invalid-answer *Error.
func FuzzReadStatusAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"status":"accepted","messageId":"m-1"}`,
		`{"status":"rejected","reason":"invalid_message"}`,
		`{"status":"rejected","reason":"invalid_message","status":"accepted"}`,
		`{"status":"rejected","reason":"x","STATUS":"accepted"}`,
		`{"ſtatus":"accepted"}`,
		`{"status":"accepted","reason":"a","reason":"b"}`,
		`{"status":"accepted","nested":{"status":"rejected","status":"x"}}`,
		`{"status":"\u0061ccepted"}`,
		`{"status":"accepted\ud800"}`,
		`{"status":1e999999999}`,
		`{"status":null}`, `null`, `[]`, `"accepted"`, ``, `{`, `{"status":"accepted"} {}`,
		"{\"status\":\"accepted\",\"reason\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	c, err := New(core.GatewaySMS, Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(c.Close)
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := readStatusAnswer(c, body)
		if err != nil {
			if KindOf(err) == "" || !isInvalidAnswer(err) {
				t.Fatalf("body %q: %v is not an invalid-answer error", body, err)
			}
			return
		}
		switch {
		case o.Status == core.OutcomeAccepted && o.Reason == "":
		case o.Status == core.OutcomeRejected && o.Reason != "":
		default:
			t.Fatalf("body %q read as malformed outcome %+v", body, o)
		}
		if n := countKey(body, "status"); n != 1 {
			t.Fatalf("body %q names status %d times but read as %+v", body, n, o)
		}
	})
}

func isInvalidAnswer(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Is(ErrInvalidAnswer)
}

// countKey counts the top-level keys of a JSON object equal to name as
// encoding/json matches them.
func countKey(body []byte, name string) int {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return -1
	}
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return -1
		}
		if key, _ := tok.(string); strings.EqualFold(key, name) {
			n++
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return -1
		}
	}
	return n
}

// FuzzRepeatedFieldFastPath checks that the fast path for answers without
// escapes or non-ASCII bytes never clears a body that the token scan finds
// a repeated field in.
func FuzzRepeatedFieldFastPath(f *testing.F) {
	for _, seed := range []string{
		`{"status":"accepted","messageId":"m-1"}`,
		`{"status":"rejected","reason":"status"}`,
		`{"status":"rejected","reason":"x","STATUS":"accepted"}`,
		`{"Reason":"a","reason":"b","status":"rejected"}`,
		`{"ſtatus":"accepted","status":"rejected"}`,
		`{"st\u0061tus":"accepted","status":"rejected"}`,
		`{"status":"accepted","nested":{"status":"rejected"}}`,
		`{"messageid":"m","messageId":"n","status":"accepted"}`,
	} {
		f.Add([]byte(seed))
	}
	fields := []string{"status", "reason", "messageId"}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		name, dup := repeatedFieldScan(body, fields)
		if dup && namedAtMostOnce(body, fields) {
			t.Fatalf("body %q repeats %q, but the fast path clears it", body, name)
		}
		if gotName, gotDup := repeatedField(body, fields...); gotName != name || gotDup != dup {
			t.Fatalf("body %q: repeatedField = %q, %v; the scan says %q, %v", body, gotName, gotDup, name, dup)
		}
	})
}
