package core

import (
	"errors"
	"strings"
	"testing"
)

// intentIDCases is the table every home of the intentId rule is checked
// against: ValidateIntentID here, and the OpenAPI schema in adapters/httpapi.
var intentIDCases = []struct {
	id    string
	valid bool
}{
	{"order-1234-shipping-sms", true},
	{"a", true},
	{"a b", true},
	{" leading and trailing ", true},
	{"é\u00e9日本語😀", true},
	{"a\ufffdb", true},
	{"%2F", true},
	{`back\slash`, true},
	{"?#&=+;:@!$'()*,", true},
	{"...", true},
	{".a", true},
	{"a.", true},
	{strings.Repeat("x", 255), true},
	{strings.Repeat("😀", 255), true},
	{"", false},
	{strings.Repeat("x", 256), false},
	{".", false},
	{"..", false},
	{"/", false},
	{"a/b", true},
	{"a/", true},
	{"/a", true},
	{"//", true},
	{"a/../b", true},
	{"a\x00b", false},
	{"a\tb", false},
	{"a\x7fb", false},
	{"a\u0085b", false},
	{"a\u200bb", false}, // zero-width space (Cf)
	{"a\u200eb", false}, // left-to-right mark
	{"a\u202eb", false}, // right-to-left override
	{"a\u2066b", false}, // left-to-right isolate
	{"\ufeffa", false},  // byte order mark
	{"a\u00adb", false}, // soft hyphen (Cf)
	{"a\u2028b", false}, // line separator (Zl)
	{"a\u2029b", false}, // paragraph separator (Zp)
	{"a\xffb", false},   // invalid UTF-8
	{"a\xed\xa0\x80b", false},
}

// TestValidateIntentID checks the rule on the shared table.
func TestValidateIntentID(t *testing.T) {
	for _, tc := range intentIDCases {
		err := ValidateIntentID(tc.id)
		if (err == nil) != tc.valid {
			t.Errorf("ValidateIntentID(%q) = %v, want valid=%v", tc.id, err, tc.valid)
		}
		var fe *FieldError
		if err != nil && (!errors.As(err, &fe) || fe.Field != "intentId") {
			t.Errorf("ValidateIntentID(%q) = %v, want a FieldError naming intentId", tc.id, err)
		}
	}
}
