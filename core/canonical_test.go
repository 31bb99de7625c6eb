package core

import (
	"errors"
	"strings"
	"testing"
)

func canonical(t *testing.T, in string) string {
	t.Helper()
	out, err := CanonicalPayload([]byte(in))
	if err != nil {
		t.Fatalf("CanonicalPayload(%s): %v", in, err)
	}
	return string(out)
}

func TestCanonicalPayloadMakesTheSameDataEqual(t *testing.T) {
	tests := []struct{ a, b, want string }{
		{`{"a":1,"b":2}`, `{"b":2,"a":1}`, `{"a":1,"b":2}`},
		{`{"s":"<&>"}`, `{"s":"\u003c\u0026\u003e"}`, `{"s":"<&>"}`},
		{`{"s":"/"}`, `{"s":"\/"}`, `{"s":"/"}`},
		{`{"s":"é€😀"}`, `{"s":"\u00e9\u20AC\ud83d\ude00"}`, `{"s":"é€😀"}`},
		{`{"s":"\u001f\b\t\n\f\r"}`, `{"s":"\u001F\u0008\u0009\u000a\u000c\u000D"}`, `{"s":"\u001f\b\t\n\f\r"}`},
		{`{"s":"\"\\"}`, `{"s":"\u0022\u005c"}`, `{"s":"\"\\"}`},
		{`{"\u0062":{"y":[1,{"d":2,"c":3}],"x":null}}`, ` { "b" : { "x" : null , "y" : [ 1 , { "c" : 3 , "d" : 2 } ] } } `,
			`{"b":{"x":null,"y":[1,{"c":3,"d":2}]}}`},
		{`[true,false,null,"x"]`, `[ true , false , null , "\u0078" ]`, `[true,false,null,"x"]`},
		{`"\u00e9"`, `"é"`, `"é"`},
	}
	for _, tt := range tests {
		a, b := canonical(t, tt.a), canonical(t, tt.b)
		if a != tt.want || b != tt.want {
			t.Errorf("canonical forms %s and %s, want both %s", a, b, tt.want)
		}
	}
}

func TestCanonicalPayloadSortsKeysByUTF16CodeUnits(t *testing.T) {
	// U+1F600 is the surrogate pair D83D DE00 in UTF-16, so it sorts before
	// U+FB33 (0xFB33 > 0xD83D), although by code point or as UTF-8 bytes it
	// would sort after it: the order is RFC 8785's.
	got := canonical(t, `{"\ufb33":3,"😀":2,"€":1,"a":0,"":-1,"A":-2,"ab":4}`)
	want := `{"":-1,"A":-2,"a":0,"ab":4,"€":1,"😀":2,"דּ":3}`
	if got != want {
		t.Errorf("canonical = %s, want %s", got, want)
	}
}

func TestCanonicalPayloadComparesNumbersAsWritten(t *testing.T) {
	differ := [][2]string{
		{`1`, `1.0`},
		{`1`, `1e0`},
		{`0`, `-0`},
		{`1E2`, `1e2`},
		{`12345678901234567890123456789012345678901234567890`, `12345678901234567890123456789012345678901234567891`},
		{`9007199254740993`, `9007199254740992`}, // equal as float64
		{`0.1000000000000000055511151231257827`, `0.1`},
	}
	for _, d := range differ {
		a, b := canonical(t, d[0]), canonical(t, d[1])
		if a != d[0] || b != d[1] {
			t.Errorf("numbers rewritten: %s -> %s, %s -> %s", d[0], a, d[1], b)
		}
		if a == b {
			t.Errorf("%s and %s compare equal", d[0], d[1])
		}
	}
}

func TestCanonicalPayloadRefusesRepeatedMembersNamingThePath(t *testing.T) {
	tests := []struct{ in, field string }{
		{`{"a":1,"a":1}`, "payload.a"},
		{`{"a":1,"\u0061":2}`, "payload.a"},
		{`{"x":{"y":[0,{"z":1,"z":2}]}}`, "payload.x.y[1].z"},
		{`[{"ok":1},{"to":1,"to":2}]`, "payload[1].to"},
		{`{"a b":{"":1,"":2}}`, `payload["a b"][""]`},
		{`{"9":{"k":[],"k":{}}}`, `payload["9"].k`},
	}
	for _, tt := range tests {
		_, err := CanonicalPayload([]byte(tt.in))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field || !strings.Contains(fe.Message, "more than once") {
			t.Errorf("CanonicalPayload(%s) = %v, want a field error naming %s", tt.in, err, tt.field)
		}
		err = CheckMemberNames([]byte(tt.in))
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("CheckMemberNames(%s) = %v, want a field error naming %s", tt.in, err, tt.field)
		}
	}
	// Many members: the set takes over from pairwise comparison.
	var many strings.Builder
	many.WriteString(`{`)
	for i := range 40 {
		many.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	many.WriteString(`"\u006bxxx":2}`)
	err := CheckMemberNames([]byte(many.String()))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "payload.kxxx" {
		t.Errorf("CheckMemberNames on 41 members = %v, want a field error naming payload.kxxx", err)
	}
	for _, ok := range []string{`{"a":{"a":{"a":1}},"b":{"a":2}}`, `[{"a":1},{"a":1}]`, `{"":1,"a":[]}`, `"a"`, `[]`, `{}`} {
		if err := CheckMemberNames([]byte(ok)); err != nil {
			t.Errorf("CheckMemberNames(%s) = %v, want nil", ok, err)
		}
	}
	// The same name in sibling or nested objects is no repetition.
	if got := canonical(t, `{"a":{"a":{"a":1}},"b":{"a":2}}`); got != `{"a":{"a":{"a":1}},"b":{"a":2}}` {
		t.Errorf("canonical = %s", got)
	}
}

func TestCanonicalPayloadHandlesDeepNesting(t *testing.T) {
	// New payloads nest at most MaxPayloadDepth levels, but intents stored
	// before that limit may nest up to 10,000 (encoding/json's scanner),
	// and a repeat of one is judged in canonical form too. in is compact.
	const depth = 9999
	in := strings.Repeat(`{"k":[`, depth/2) + `1` + strings.Repeat(`]}`, depth/2)
	if got := canonical(t, in); got != in {
		t.Errorf("deeply nested payload changed in canonical form")
	}
}

func TestCanonicalPayloadOfACompactedPayloadIsStable(t *testing.T) {
	for _, in := range []string{`{"b":[1,2],"a":"\u00e9"}`, `"x"`, `null`, `[]`, `{}`, `-1.5e-7`} {
		once := canonical(t, in)
		if twice := canonical(t, once); twice != once {
			t.Errorf("canonical form is not a fixed point: %s -> %s -> %s", in, once, twice)
		}
	}
}
