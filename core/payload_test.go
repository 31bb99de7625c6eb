package core

import (
	"errors"
	"strings"
	"testing"
)

func TestCompactPayloadIgnoresOnlyInsignificantWhitespace(t *testing.T) {
	const want = `{"to":"+15550100","body":"hello  world","tags":["a","b"],"n":1.50}`
	for _, in := range []string{
		want,
		`{ "to" : "+15550100", "body" : "hello  world", "tags" : [ "a", "b" ], "n" : 1.50 }`,
		"\n\t{\r\n  \"to\": \"+15550100\",\n  \"body\": \"hello  world\",\n  \"tags\": [\n    \"a\",\n    \"b\"\n  ],\n  \"n\": 1.50\n}\n\n",
	} {
		got, err := CompactPayload([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("CompactPayload(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestCompactPayloadKeepsEverythingElseExact(t *testing.T) {
	// Each pair is the same data to a JSON parser, but not the same payload:
	// SubmissionManager forwards bytes and never reinterprets them.
	pairs := [][2]string{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`},       // member order
		{`{"n":1}`, `{"n":1.0}`},                 // number spelling
		{`{"n":1}`, `{"n":1e0}`},                 // exponent
		{`{"s":"A"}`, `{"s":"\u0041"}`},          // string escapes
		{`{"s":"/"}`, `{"s":"\/"}`},              // optional escape
		{`{"s":"a b"}`, `{"s":"a  b"}`},          // whitespace inside a string
		{`{"a":1}`, `{"a":1,"a":1}`},             // repeated member
		{`{"s":"<&>"}`, `{"s":"\u003c\u0026>"}`}, // no HTML escaping either way
	}
	for _, p := range pairs {
		a, errA := CompactPayload([]byte(p[0]))
		b, errB := CompactPayload([]byte(p[1]))
		if errA != nil || errB != nil {
			t.Fatalf("CompactPayload(%s / %s): %v / %v", p[0], p[1], errA, errB)
		}
		if string(a) != p[0] || string(b) != p[1] {
			t.Errorf("compaction rewrote an already compact payload: %s -> %s, %s -> %s", p[0], a, p[1], b)
		}
	}
}

func TestCompactPayloadAcceptsAnyJSONValue(t *testing.T) {
	for _, in := range []string{`"text"`, `42`, `-0.5e-3`, `null`, `true`, `[]`, `{}`, ` [ 1 , [ 2 ] ] `} {
		got, err := CompactPayload([]byte(in))
		if want := strings.ReplaceAll(strings.TrimSpace(in), " ", ""); err != nil || string(got) != want {
			t.Errorf("CompactPayload(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestCompactPayloadRefusesInvalidJSONNamingThePayloadField(t *testing.T) {
	tests := []struct {
		in, message string
	}{
		{"", "is required"},
		{" \n\t", "is required"},
		{`{`, "is not valid JSON"},
		{`{"a":}`, "is not valid JSON"},
		{`{} {}`, "is not valid JSON"},
		{`{"a":1}x`, "is not valid JSON"},
		{`{'a':1}`, "is not valid JSON"},
		{`NaN`, "is not valid JSON"},
		{"\xef\xbb\xbf{}", "is not valid JSON"}, // a byte order mark is not JSON
		{"{\"s\":\"a\xffb\"}", "must be UTF-8"},
		{"\"\xed\xa0\x80\"", "must be UTF-8"}, // an encoded surrogate
	}
	for _, tt := range tests {
		got, err := CompactPayload([]byte(tt.in))
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Errorf("CompactPayload(%q) = %q, %v; want a *FieldError", tt.in, got, err)
			continue
		}
		if fe.Field != "payload" || !strings.HasPrefix(fe.Message, tt.message) {
			t.Errorf("CompactPayload(%q) error = %+v, want field payload, message %q...", tt.in, fe, tt.message)
		}
		if got != nil {
			t.Errorf("CompactPayload(%q) returned bytes %q with its error", tt.in, got)
		}
	}
	if got := (&FieldError{Field: "payload", Message: "is required"}).Error(); got != "payload: is required" {
		t.Errorf("FieldError.Error() = %q", got)
	}
}

func TestCompactPayloadDoesNotAliasItsInput(t *testing.T) {
	in := []byte(`{"a":1}`)
	out, err := CompactPayload(in)
	if err != nil {
		t.Fatal(err)
	}
	in[2] = 'X'
	if string(out) != `{"a":1}` {
		t.Errorf("changing the request body changed the payload: %s", out)
	}
}
