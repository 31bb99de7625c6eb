package console

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestPrettyMatchesIndentWithinBounds: an ordinary payload reads exactly as
// json.Indent would write it.
func TestPrettyMatchesIndentWithinBounds(t *testing.T) {
	for _, raw := range []string{
		`{"to":"+15550100","text":"Shipped! \"quoted\" \\ {not a brace} [nor, a: bracket]","n":[1,2.5e3,null,true],"e":{},"a":[]}`,
		` { "spaced" : [ 1 , { } , [ ] ] } `,
		`"just a string"`,
		`[[[[1]]],{"a":{"b":{"c":[]}}}]`,
	} {
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(strings.TrimSpace(raw)), "", "  "); err != nil {
			t.Fatal(err)
		}
		got := prettyJSON([]byte(raw))
		if got.Text != want.String() || got.Flattened || got.Truncated {
			t.Errorf("prettyJSON(%s) =\n%s\nwant\n%s", raw, got.Text, want.String())
		}
	}
}

// TestPrettyBoundsDeepAndWidePayloads: however a payload is nested or
// repeated, its view stays within the budget, a small multiple of its size.
func TestPrettyBoundsDeepAndWidePayloads(t *testing.T) {
	deep := []byte(strings.Repeat("[", 9999) + strings.Repeat("]", 9999))
	v := prettyJSON(deep)
	if !v.Flattened || v.Truncated || len(v.Text) > prettyBudget(len(deep)) {
		t.Fatalf("9,999 nested arrays: %d bytes of view (flattened %v, truncated %v), budget %d",
			len(v.Text), v.Flattened, v.Truncated, prettyBudget(len(deep)))
	}
	// Many values at the deepest indented level: each comma costs a line
	// of 2 × prettyMaxDepth spaces, so the budget ends the view.
	wide := []byte(strings.Repeat("[", prettyMaxDepth) + strings.Repeat("1,", 200000) + "1" + strings.Repeat("]", prettyMaxDepth))
	v = prettyJSON(wide)
	if !v.Truncated || len(v.Text) > prettyBudget(len(wide))+200 {
		t.Fatalf("wide payload: %d bytes of view (truncated %v), budget %d", len(v.Text), v.Truncated, prettyBudget(len(wide)))
	}
	if !strings.Contains(v.Text, "download the raw payload") {
		t.Fatal("a truncated view does not say where the rest is")
	}
}
