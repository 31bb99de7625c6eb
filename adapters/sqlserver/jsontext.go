package sqlserver

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// The executor's batches travel as one JSON parameter, expanded by
// OPENJSON: a parameter costs Babelfish about 0.1 ms to bind, so a VALUES
// table of a thousand parameters (values.go) costs it 100 ms where the same
// rows in JSON cost a few. But Babelfish's OPENJSON hands a string value
// back in its JSON-escaped form whenever JSON must escape a character of
// it: `a"b` comes back as `a\"b`, a backslash doubled, a newline as `\n`
// (\uXXXX escapes of other characters it does decode). So no string of a
// batch carries a character JSON escapes: jsonText spells each such
// character, and its own escape character, as two characters JSON leaves
// alone, and jsonTextSQL undoes that in the statement, with the same
// REPLACEs on both servers. A string that needs none of this travels
// unchanged, and the statement skips the REPLACEs for it.

// jsonCodes spells the characters jsonText replaces: its escape character
// "~" itself (printable, without case, left alone by JSON), the two JSON
// escapes by backslash, and the control characters. Each code is "~" and
// one other character; jsonTextSQL replaces the code of "~" last, which
// makes the decoding exact. NUL, which Babelfish cannot store at all (nor
// put through REPLACE), travels as U+FFFD on both servers: these strings
// are the attempts' diagnostics, never a payload.
var jsonCodes = func() map[rune]string {
	codes := map[rune]string{'~': "~0", '"': "~1", '\\': "~2", 0: "\uFFFD"}
	for c := rune(1); c < 0x20; c++ {
		codes[c] = fmt.Sprintf("~%c", 'A'+c)
	}
	return codes
}()

// jsonText spells s for a batch's JSON (see the comment above).
func jsonText(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { _, ok := jsonCodes[r]; return ok }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if code, ok := jsonCodes[r]; ok {
			b.WriteString(code)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// jsonTextSQL is the T-SQL expression that reads back a string jsonText
// spelled, from col, a column already in a binary collation (so that no
// code matches another letter's case): the codes of the other characters
// first, the code of "~" last; a string without "~" is left as it is.
func jsonTextSQL(col string) string {
	out := col
	for c := rune(1); c < 0x20; c++ {
		out = fmt.Sprintf("REPLACE(%s, N'~%c', NCHAR(%d))", out, 'A'+c, c)
	}
	out = fmt.Sprintf(`REPLACE(REPLACE(REPLACE(%s, N'~1', N'"'), N'~2', N'\'), N'~0', N'~')`, out)
	return fmt.Sprintf("CASE WHEN CHARINDEX(N'~', %s) = 0 THEN %s ELSE %s END", col, col, out)
}

// Babelfish's OPENJSON reads a WITH column of nvarchar(max) as
// nvarchar(4000), cutting longer strings short without an error, where SQL
// Server reads them whole. Its default schema (key, value) reads values
// whole on both servers. So an item with a longer text says so: its "long"
// member is its position in the batch, and the statement reads each of its
// nvarchar(max) texts through the default schema instead (two more
// OPENJSON scans of the batch, for the rare item that needs them).

// jsonTextMax is the longest text, in UTF-16 code units, that Babelfish's
// OPENJSON WITH reads whole.
const jsonTextMax = 4000

// jsonTextLong reports whether any of the spelled texts is longer than
// jsonTextMax.
func jsonTextLong(texts ...string) bool {
	for _, s := range texts {
		if len(s) <= jsonTextMax { // bytes bound code units from above
			continue
		}
		units := 0
		for _, r := range s {
			units += max(utf16.RuneLen(r), 1)
		}
		if units > jsonTextMax {
			return true
		}
	}
	return false
}

// longJSONTextSQL is the T-SQL expression that reads column name of the
// OPENJSON row alias whole: from the WITH column unless the item is long,
// else from the item's members by the default schema.
func longJSONTextSQL(alias, name string) string {
	return fmt.Sprintf(`CASE WHEN %[1]s.long IS NULL THEN %[1]s.%[2]s
                 ELSE (SELECT m.value FROM OPENJSON(CAST($1 AS nvarchar(max))) AS e CROSS APPLY OPENJSON(e.value) AS m
                       WHERE e.[key] = CAST(%[1]s.long AS nvarchar(10)) AND m.[key] = N'%[2]s') END`, alias, name)
}
