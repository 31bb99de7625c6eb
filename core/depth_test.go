package core

import (
	"errors"
	"strings"
	"testing"
)

// nested is a JSON array nested depth levels deep around a value.
func nested(depth int, value string) string {
	return strings.Repeat("[", depth) + value + strings.Repeat("]", depth)
}

func TestCompactPayloadRefusesNestingBeyondTheLimit(t *testing.T) {
	for _, ok := range []string{
		nested(MaxPayloadDepth, "1"),
		`{"a":` + nested(MaxPayloadDepth-1, `"[[[[{{{{"`) + `}`, // brackets in strings do not nest
		`"` + strings.Repeat("[", 2*MaxPayloadDepth) + `"`,
		`"\"` + strings.Repeat("[", 2*MaxPayloadDepth) + `"`,
		`[` + strings.Repeat("[],", 2*MaxPayloadDepth) + `[]]`, // wide, not deep
	} {
		if _, err := CompactPayload([]byte(ok)); err != nil {
			t.Errorf("CompactPayload(%.40s...) = %v, want it accepted", ok, err)
		}
	}
	for _, deep := range []string{
		nested(MaxPayloadDepth+1, ""),
		`{"a":` + nested(MaxPayloadDepth, "{}") + `}`,
		nested(10001, ""), // deeper than encoding/json reads at all
	} {
		_, err := CompactPayload([]byte(deep))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "payload" || !strings.Contains(fe.Message, "1000 levels") {
			t.Errorf("CompactPayload(%.40s...) = %v, want a field error naming payload and the limit", deep, err)
		}
	}
}
