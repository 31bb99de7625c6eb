package sqlserver

import (
	"strings"
	"testing"
)

// replaceAll plays jsonTextSQL's REPLACEs in Go, in its order, so the
// decoding is checked without a server; the server tests check it there.
func replaceAll(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	for c := rune(1); c < 0x20; c++ {
		s = strings.ReplaceAll(s, "~"+string('A'+c), string(c))
	}
	s = strings.ReplaceAll(s, "~1", `"`)
	s = strings.ReplaceAll(s, "~2", `\`)
	return strings.ReplaceAll(s, "~0", "~")
}

func TestJSONTextRoundTrips(t *testing.T) {
	for _, s := range []string{
		"", "plain", `a"b`, `a\b`, `~`, `~0`, `~~1`, `\"`, `~2~`, "tab\there", "new\nline\r\n",
		"\x01\x1f", `Post "http://127.0.0.1:9/sms": dial tcp`, "é ü 中 🙂", "~A~B", `\\~\~"`,
	} {
		enc := jsonText(s)
		if strings.ContainsAny(enc, "\"\\") || strings.ContainsFunc(enc, func(r rune) bool { return r < 0x20 }) {
			t.Errorf("jsonText(%q) = %q still holds a character JSON escapes", s, enc)
		}
		if got := replaceAll(enc); got != s {
			t.Errorf("jsonText(%q) = %q reads back as %q", s, enc, got)
		}
	}
	if got := jsonText("a\x00b"); got != "a\uFFFDb" {
		t.Errorf("NUL travels as %q, want U+FFFD", got)
	}
}

// TestJSONTextSQLReplacesInThatOrder pins the expression's order: the
// control characters, then the quote and the backslash, the escape
// character's own code last, all behind the check for any code.
func TestJSONTextSQLReplacesInThatOrder(t *testing.T) {
	sql := jsonTextSQL("k.x")
	if !strings.HasPrefix(sql, "CASE WHEN CHARINDEX(N'~', k.x) = 0 THEN k.x ELSE REPLACE(REPLACE(REPLACE(REPLACE(") {
		t.Errorf("jsonTextSQL starts %.80s", sql)
	}
	i, j, k := strings.Index(sql, "N'~1'"), strings.Index(sql, "N'~2'"), strings.Index(sql, "N'~0'")
	if !(strings.Index(sql, "N'~Z'") < i && i < j && j < k) {
		t.Errorf("jsonTextSQL replaces out of order:\n%s", sql)
	}
}
