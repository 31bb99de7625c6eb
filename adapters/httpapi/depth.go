package httpapi

import (
	"strconv"
	"strings"
)

// maxBodyDepth is how deeply encoding/json lets arrays and objects nest:
// to json.Valid, a deeper body is not JSON at all. Payloads may nest far
// less (core.MaxPayloadDepth), so any body this deep holds a value the
// service would refuse anyway.
const maxBodyDepth = 10000

// namedSteps is how many steps of the path to a too deep value tooDeepAt
// names when it meets no payload member on the way: enough for a batch's
// "intents[3].x".
const namedSteps = 3

// pathLevel is one level of the path tooDeepAt names: the element of an
// array, or the member of an object, the scan is in.
type pathLevel struct {
	array bool
	index int
	key   string
}

// tooDeepAt reports whether a body nests arrays and objects more than
// maxBodyDepth levels deep, and where: the path to the member holding the
// too deep value, down to its payload member ("payload",
// "intents[3].payload") or at most namedSteps steps. It is the refusal's
// field name, so a body encoding/json cannot read gets a 422 naming what
// to fix rather than a 400 "not valid JSON". It only tracks the first
// namedSteps levels, and expects nothing of the body's validity.
func tooDeepAt(body []byte) (string, bool) {
	var (
		named      []pathLevel // the outermost levels, innermost last
		depth      int
		expectsKey bool // a string here is a member name
	)
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '"':
			end := stringEnd(body, i)
			if expectsKey && depth == len(named) && depth > 0 {
				named[depth-1].key, _ = unquote(body[i : end+1])
			}
			expectsKey = false
			i = end
		case '[', '{':
			if depth++; depth > maxBodyDepth {
				return pathOf(named), true
			}
			if depth <= namedSteps {
				named = append(named, pathLevel{array: c == '['})
			}
			expectsKey = c == '{'
		case ']', '}':
			if depth > 0 && depth <= len(named) {
				named = named[:depth-1]
			}
			depth = max(0, depth-1)
			expectsKey = false
		case ',':
			if depth > 0 && depth <= len(named) {
				if l := &named[depth-1]; l.array {
					l.index++
				} else {
					expectsKey = true
				}
			}
		}
	}
	return "", false
}

// pathOf names the element or member each level is in, outermost first,
// and stops after a payload member.
func pathOf(levels []pathLevel) string {
	var b strings.Builder
	for _, l := range levels {
		switch {
		case l.array:
			b.WriteString("[" + strconv.Itoa(l.index) + "]")
		case b.Len() > 0:
			b.WriteString("." + l.key)
		default:
			b.WriteString(l.key)
		}
		if !l.array && l.key == "payload" {
			break
		}
	}
	return b.String()
}

// stringEnd returns the index of the closing quote of the string whose
// opening quote is at i, or len(b) when it has none.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b)
}
