package core

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxIntentIDLength is the most characters (Unicode code points) an
// intentId may have: the width of every store's intent_id column.
const MaxIntentIDLength = 255

// intentIDForbidden are the Unicode categories no intentId may contain:
// controls (Cc), invisible format characters such as zero-width spaces and
// bidirectional overrides (Cf: U+200B, U+202E, U+2066, U+FEFF...), and the
// line and paragraph separators (Zl U+2028, Zp U+2029). An identifier made
// of them can look like another one in logs, consoles and support tickets, or
// reorder what is printed around it; no client needs them in a key.
var intentIDForbidden = []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp}

// IntentIDPattern is the regular expression of the same rule for
// api/openapi.yaml (the IntentID schema), minus the length and the three
// refused ids, which the schema states with minLength, maxLength and "not".
// A test checks that the document carries exactly this pattern and that it
// agrees with ValidateIntentID.
const IntentIDPattern = `^[^\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$`

// ValidateIntentID is the one home of the intentId rule: 1 to 255
// characters of valid UTF-8, without any character of intentIDForbidden,
// and none of the ids ".", ".." and "/". The rule exists so that every
// accepted intentId can be read back through GET /v1/intents/{intentId}
// with the id percent-encoded as one path segment, as the SDK sends it:
// "." and ".." are dot segments that URL resolution removes, and a lone
// "/" (sent as %2F) is routed as an empty segment. A "/" inside a longer
// id ("order/42") travels as %2F and is readable; a fuzz test in
// adapters/httpapi holds the rule to that. Invisible characters are
// refused because they make two different ids look the same. The error is
// a *FieldError naming intentId.
func ValidateIntentID(id string) error {
	field := func(msg string) error { return &FieldError{Field: "intentId", Message: msg} }
	switch n := utf8.RuneCountInString(id); {
	case id == "":
		return field("is required")
	case n > MaxIntentIDLength:
		return field(fmt.Sprintf("has %d characters, the limit is %d", n, MaxIntentIDLength))
	case !utf8.ValidString(id):
		return field("is not valid UTF-8")
	case id == "." || id == ".." || id == "/":
		return field(`must not be ".", ".." or "/"`)
	}
	for _, r := range id {
		if unicode.In(r, intentIDForbidden...) {
			return field(fmt.Sprintf("contains the invisible or control character %U", r))
		}
	}
	return nil
}
