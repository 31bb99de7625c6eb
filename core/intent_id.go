package core

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxIntentIDLength is the most characters (Unicode code points) an
// intentId may have: the width of every store's intent_id column.
const MaxIntentIDLength = 255

// IntentIDForbidden are the Unicode categories no intentId may contain:
// controls (Cc), invisible format characters such as zero-width spaces and
// bidirectional overrides (Cf: U+200B, U+202E, U+2066, U+FEFF...), and the
// line and paragraph separators (Zl U+2028, Zp U+2029). An identifier made
// of them can look like another one in logs, consoles and support tickets, or
// reorder what is printed around it; no client needs them in a key.
var IntentIDForbidden = []*unicode.RangeTable{unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp}

// IntentIDPattern is the regular expression of the same rule for
// api/openapi.yaml (the IntentID schema), minus the length and the dot
// segments, which the schema states with minLength, maxLength and "not".
// A test checks that the document carries exactly this pattern and that it
// agrees with ValidateIntentID.
const IntentIDPattern = `^[^/\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$`

// ValidateIntentID is the one home of the intentId rule: 1 to 255
// characters of valid UTF-8, without "/" or any character of
// IntentIDForbidden, and neither "." nor "..". The rule exists so that
// every accepted intentId can be read back: "/" and the dot segments do not
// survive as one segment of GET /v1/intents/{intentId} (clients, proxies and
// servers clean or split such paths), and invisible characters make two
// different ids look the same. The error is a *FieldError naming intentId.
func ValidateIntentID(id string) error {
	field := func(msg string) error { return &FieldError{Field: "intentId", Message: msg} }
	switch n := utf8.RuneCountInString(id); {
	case id == "":
		return field("is required")
	case n > MaxIntentIDLength:
		return field(fmt.Sprintf("has %d characters, the limit is %d", n, MaxIntentIDLength))
	case !utf8.ValidString(id):
		return field("is not valid UTF-8")
	case id == "." || id == "..":
		return field(`must not be "." or ".."`)
	}
	for _, r := range id {
		switch {
		case r == '/':
			return field(`must not contain "/"`)
		case unicode.In(r, IntentIDForbidden...):
			return field(fmt.Sprintf("contains the invisible or control character %U", r))
		}
	}
	return nil
}
