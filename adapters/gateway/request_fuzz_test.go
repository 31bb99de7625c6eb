package gateway

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzAppendJSONStringMatchesTheEncoder holds the reference's fast path to
// what encoding/json (without HTML escaping) writes for the same string,
// byte for byte, and checks that the body around it stays valid JSON that
// reads back the reference it was given (invalid UTF-8 aside, which the
// encoder replaces).
func FuzzAppendJSONStringMatchesTheEncoder(f *testing.F) {
	for _, seed := range []string{
		"order-1234", "a b", `quo"te`, `back\slash`, "tab\there", "<html>&", "café", "\u2028", "\xff", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		want := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		got, err := appendJSONString([]byte("x"), s)
		if err != nil || !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Fatalf("appendJSONString(%q) = %q, %v; the encoder writes %q", s, got, err, want)
		}
		if s == "" {
			return
		}
		body, err := requestBody(s, []byte(`{"to":"+15550100"}`))
		if err != nil {
			t.Fatal(err)
		}
		var back struct {
			Reference string          `json:"reference"`
			Payload   json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(body, &back); err != nil {
			t.Fatalf("body %q is not JSON: %v", body, err)
		}
		if utf8.ValidString(s) && back.Reference != s {
			t.Fatalf("body %q reads back reference %q, want %q", body, back.Reference, s)
		}
	})
}
