package console

import (
	"bytes"
	"fmt"
)

// The bounds of the pretty view of a payload. A payload is client data of
// up to --max-payload-bytes, and plain indentation costs twice the depth in
// spaces per line: 20 KB of 9,999 nested arrays indented in full was a
// 200 MB page. So the view indents the first prettyMaxDepth levels only
// (deeper values stay on one line, as compact as stored), and stops at
// prettyBudget, after which the raw download (always beside the view) has
// the rest. The view is then at most a few times its payload, whatever its
// shape: the indentation of one line is at most 2 × prettyMaxDepth bytes,
// and the whole text at most the budget.
const (
	prettyMaxDepth = 20
	// prettyMinBudget lets a small payload be shown whole however it is
	// nested; larger ones get prettyBudgetFactor times their size.
	prettyMinBudget    = 64 << 10
	prettyBudgetFactor = 2
)

// prettyView is the pretty view of a payload and what it left out.
type prettyView struct {
	Text string
	// Flattened says that values nested deeper than prettyMaxDepth are
	// shown on one line.
	Flattened bool
	// Truncated says the view stops before the payload's end.
	Truncated bool
	// MaxDepth is prettyMaxDepth, for the page to name.
	MaxDepth int
}

// prettyBudget is the most text the view of a payload of n bytes may hold.
func prettyBudget(n int) int { return max(prettyMinBudget, prettyBudgetFactor*n) }

// prettyJSON indents raw JSON (a stored payload: valid, usually compact)
// within the bounds above, in one pass over its bytes, allocating only the
// text it returns. Input that is not valid JSON comes out re-spaced but
// never longer than the budget. The template escapes the text like any
// other.
func prettyJSON(raw []byte) prettyView {
	budget := prettyBudget(len(raw))
	var out bytes.Buffer
	out.Grow(min(budget, 2*len(raw)+64))
	v := prettyView{MaxDepth: prettyMaxDepth}
	depth := 0
	newline := func(d int) {
		out.WriteByte('\n')
		for range d {
			out.WriteString("  ")
		}
	}
	inString, escaped := false, false
	for i := 0; i < len(raw); i++ {
		if out.Len() >= budget {
			v.Truncated = true
			break
		}
		c := raw[i]
		if inString {
			out.WriteByte(c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
		case '"':
			inString = true
			out.WriteByte(c)
		case '{', '[':
			out.WriteByte(c)
			if j := nextSignificant(raw, i+1); j < len(raw) && (raw[j] == '}' || raw[j] == ']') {
				out.WriteByte(raw[j]) // an empty object or array stays "{}" or "[]"
				i = j
				continue
			}
			depth++
			if depth <= prettyMaxDepth {
				newline(depth)
			} else {
				v.Flattened = true
			}
		case '}', ']':
			if depth <= prettyMaxDepth {
				newline(depth - 1)
			}
			depth = max(0, depth-1)
			out.WriteByte(c)
		case ',':
			out.WriteByte(c)
			if depth <= prettyMaxDepth {
				newline(depth)
			}
		case ':':
			out.WriteString(": ")
		default:
			out.WriteByte(c)
		}
	}
	if v.Truncated {
		fmt.Fprintf(&out, "\n… (the view stops here, after %d KiB: download the raw payload for the rest)", budget>>10)
	}
	v.Text = out.String()
	return v
}

// nextSignificant returns the index of the first byte at or after i that is
// not JSON whitespace.
func nextSignificant(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
		i++
	}
	return i
}
