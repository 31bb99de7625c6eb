package sqlserver

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// The executor's batches and the batch insert travel as one JSON
// parameter, expanded by OPENJSON: a parameter costs Babelfish about 0.1 ms
// to bind, so a VALUES table of a thousand parameters (values.go) costs it
// 100 ms where the same rows in JSON cost a few. But Babelfish's OPENJSON
// hands a string value back in its JSON-escaped form whenever JSON must
// escape a character of it: `a"b` comes back as `a\"b`, a backslash
// doubled, a newline as `\n` (\uXXXX escapes of other characters it does
// decode). So no string of a batch carries a character JSON escapes:
// jsonText spells each such character, and its own escape character, with
// characters JSON leaves alone, and the database function
// dbo.submission_json_text (migration 00014) reads it back, the same on
// both servers. A string that needs none of this travels unchanged, and
// its item skips the function.

// jsonCodes spells the characters jsonText replaces: its escape character
// "~" itself (printable, without case, left alone by JSON), the two JSON
// escapes by backslash, and the control characters, each as "~3" and a
// letter. Every "~" of a spelled string begins a code, so "~3" appears
// only where a control character was, and the function reads the common
// strings (only quotes and backslashes) with three REPLACEs; only a
// string with a control character pays for the rest. The code of
// "~" is replaced last, which makes the decoding exact. NUL, which
// Babelfish cannot store at all (nor put through REPLACE), travels as
// U+FFFD on both servers: these strings are the attempts' diagnostics and
// the intents' identifiers, and a payload only when it is printable ASCII
// (payloadTravelsInJSON), which holds no NUL.
var jsonCodes = func() map[rune]string {
	codes := map[rune]string{'~': "~0", '"': "~1", '\\': "~2", 0: "\uFFFD"}
	for c := rune(1); c < 0x20; c++ {
		codes[c] = controlCode(c)
	}
	return codes
}()

// controlCode is the spelling of control character c (1 to 31).
func controlCode(c rune) string { return fmt.Sprintf("~3%c", '@'+c) }

// speller spells an item's texts with jsonText and remembers whether any
// needed it: such an item says so ("spelled"), and only its texts go
// through the function, a native NULL test sparing every other row the
// call.
type speller struct{ spelled bool }

// text is jsonText(s), noted.
func (sp *speller) text(s string) string {
	t := jsonText(s)
	if len(t) != len(s) || t != s {
		sp.spelled = true
	}
	return t
}

// flag is the item's "spelled" member: 1, or 0 (omitted) when no text of
// the item needed spelling.
func (sp *speller) flag() int { return bit(sp.spelled) }

// jsonTextFunction is the database function that reads back a string
// jsonText spelled (migration 00014): the one home of the decoding, which
// TestJSONTextRoundTrips plays in Go.
const jsonTextFunction = "dbo.submission_json_text"

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

// longJSONTextSQL is the T-SQL expression that reads member name of the
// items in param, at the OPENJSON row alias, whole: from the WITH column
// unless the item is long, else from the item's members by the default
// schema.
func longJSONTextSQL(doc, alias, name string) string {
	return fmt.Sprintf(`CASE WHEN %[2]s.long IS NULL THEN %[2]s.%[3]s
                 ELSE (SELECT m.value FROM OPENJSON(%[1]s) AS e CROSS APPLY OPENJSON(e.value) AS m
                       WHERE e.[key] = CAST(%[2]s.long AS nvarchar(10)) AND m.[key] = N'%[3]s') END`, doc, alias, name)
}

// batchColumn is one member of a batch item: its name, its T-SQL type, and
// whether it is a string that jsonText spells.
type batchColumn struct {
	name, sqlType string
	text          bool
}

// jsonItemsSQL is the derived table of the items in doc (OPENJSON's
// arguments: the JSON, and a path to the array if it is not the whole
// document), one column per member of cols: each text read whole (a long one
// through longJSONTextSQL), put in the binary collation (so that keys
// compare as the key columns do and no code of jsonText matches another
// letter's case) and, in an item that says it was spelled, read back from
// its spelling, then cast to its type. Every item has the members
// "spelled" and "long" (speller, jsonTextLong), omitted when false.
func jsonItemsSQL(doc string, cols []batchColumn) string {
	var with, keyed, read []string
	for _, c := range cols {
		jsonType, inner, outer := c.sqlType, "j."+c.name, "k."+c.name
		if c.text {
			jsonType = "nvarchar(max)"
			if c.sqlType == "nvarchar(max)" {
				inner = longJSONTextSQL(doc, "j", c.name)
			}
			inner = fmt.Sprintf("%s COLLATE Latin1_General_100_BIN2 AS %s", inner, c.name)
			outer = fmt.Sprintf("CAST(CASE WHEN k.spelled IS NULL THEN k.%[1]s ELSE %[2]s(k.%[1]s) END AS %[3]s) AS %[1]s",
				c.name, jsonTextFunction, c.sqlType)
		}
		with = append(with, fmt.Sprintf("%s %s '$.%s'", c.name, jsonType, c.name))
		keyed = append(keyed, inner)
		read = append(read, outer)
	}
	with = append(with, "spelled int '$.spelled'", "long int '$.long'")
	keyed = append(keyed, "j.spelled")
	return fmt.Sprintf(`(SELECT %s
      FROM (SELECT %s
            FROM OPENJSON(%s) WITH (%s) AS j) AS k)`,
		strings.Join(read, ", "), strings.Join(keyed, ", "), doc, strings.Join(with, ", "))
}
