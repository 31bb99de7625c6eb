package httpapi

import (
	"errors"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
)

// TestDecodeBatch: the batch body is split into its items without judging
// them; only the shape of the batch itself is refused.
func TestDecodeBatch(t *testing.T) {
	cases := []struct {
		name, body string
		items      []string
		field      string // the FieldError's field, "" for a malformed body
		malformed  bool
	}{
		{"items kept as sent", `{"other":{"x":[1]}, "intents": [ {"a" : 1}, "x",5 ,null,[{}]] }`,
			[]string{`{"a" : 1}`, `"x"`, `5`, `null`, `[{}]`}, "", false},
		{"empty", `{"intents":[]}`, []string{}, "", false},
		{"missing", `{"other":[]}`, nil, "intents", false},
		{"twice", `{"intents":[],"intents":[{}]}`, nil, "intents", false},
		{"not an array", `{"intents":{"a":1}}`, nil, "intents", false},
		{"null", `{"intents":null}`, nil, "intents", false},
		{"not an object", `[{"intents":[]}]`, nil, "", true},
		{"escaped key", `{"int\u0065nts":[1]}`, []string{`1`}, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			items, err := decodeBatch([]byte(c.body))
			var fe *core.FieldError
			var malformed *malformedError
			switch {
			case c.malformed:
				if !errors.As(err, &malformed) {
					t.Fatalf("err = %v, want a malformed body", err)
				}
			case c.field != "":
				if !errors.As(err, &fe) || fe.Field != c.field {
					t.Fatalf("err = %v, want a field error on %s", err, c.field)
				}
			case err != nil:
				t.Fatalf("err = %v", err)
			default:
				got := make([]string, len(items))
				for i, it := range items {
					got[i] = string(it)
				}
				if strings.Join(got, "|") != strings.Join(c.items, "|") || len(got) != len(c.items) {
					t.Fatalf("items %q, want %q", got, c.items)
				}
			}
		})
	}
}
