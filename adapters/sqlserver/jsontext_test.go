package sqlserver

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/db/migrations"
)

// replaceAll plays dbo.submission_json_text's REPLACEs in Go, in its
// order, so the spelling is checked without a server; the server tests
// (exact_test.go) check the function itself.
func replaceAll(s string) string {
	if !strings.Contains(s, "~") {
		return s
	}
	if strings.Contains(s, "~3") {
		for c := rune(1); c < 0x20; c++ {
			s = strings.ReplaceAll(s, controlCode(c), string(c))
		}
	}
	s = strings.ReplaceAll(s, "~1", `"`)
	s = strings.ReplaceAll(s, "~2", `\`)
	return strings.ReplaceAll(s, "~0", "~")
}

func TestJSONTextRoundTrips(t *testing.T) {
	for _, s := range []string{
		"", "plain", `a"b`, `a\b`, `~`, `~0`, `~~1`, `\"`, `~2~`, "tab\there", "new\nline\r\n",
		"\x01\x1f", `Post "http://127.0.0.1:9/sms": dial tcp`, "é ü 中 🙂", "~A~B", `\\~\~"`, "~3A", "~~3\x01", "3~\x1f3",
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

// TestJSONTextFunctionReadsThoseCodes holds the function in the migration
// to the codes jsonText writes: the control characters as "~3" and the
// character 64 above them, behind a check for "~3", then the quote, the
// backslash and "~" itself, in that order.
func TestJSONTextFunctionReadsThoseCodes(t *testing.T) {
	text, err := fs.ReadFile(migrations.SQLServer(), "00014_execution_procedures.sql")
	if err != nil {
		t.Fatal(err)
	}
	fn := string(text)
	fn = fn[strings.Index(fn, "CREATE FUNCTION "+jsonTextFunction):]
	fn = fn[:strings.Index(fn, "RETURN @s;")]
	if controlCode(1) != "~3A" || controlCode(31) != "~3_" {
		t.Fatalf("control codes %q..%q", controlCode(1), controlCode(31))
	}
	for _, want := range []string{
		"IF CHARINDEX(N'~3', @s) > 0", "WHILE @c < 32", "REPLACE(x.s, N'~3' + NCHAR(64 + @c), NCHAR(@c))",
		`REPLACE(REPLACE(REPLACE(x.s, N'~1', N'"'), N'~2', N'\'), N'~0', N'~')`,
	} {
		if !strings.Contains(fn, want) {
			t.Errorf("%s does not read %q:\n%s", jsonTextFunction, want, fn)
		}
	}
}
