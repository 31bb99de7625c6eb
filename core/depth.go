package core

import "fmt"

// MaxPayloadDepth is how deeply a payload may nest arrays and objects. Real
// gateway messages nest a handful of levels; Jackson and most parsers a
// gateway may run stop at about this depth (some far sooner), and every
// view of a payload (canonical comparison, the console) walks it level by
// level. Stating one limit makes a deep payload a clear refusal naming it,
// instead of whatever the first parser to give up says.
const MaxPayloadDepth = 1000

// TooDeep refuses a value, named by field, that nests arrays and objects
// more than MaxPayloadDepth levels deep. The HTTP API uses it too, for a
// body deeper than it can read at all.
func TooDeep(field string) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(
		"nests arrays and objects more than %d levels deep; %d levels is the limit", MaxPayloadDepth, MaxPayloadDepth)}
}

// nestsDeeperThan reports whether JSON text nests arrays and objects more
// than limit levels deep. Brackets inside strings do not count; the text
// need not be valid, so it can be checked before a parser with a depth
// limit of its own reads it.
func nestsDeeperThan(doc []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(doc); i++ {
		switch doc[i] {
		case '"':
			i = stringEnd(doc, i)
		case '[', '{':
			if depth++; depth > limit {
				return true
			}
		case ']', '}':
			depth--
		}
	}
	return false
}
