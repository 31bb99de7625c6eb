package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// CanonicalPayload returns the form in which two payloads are compared for
// idempotency, so that the same data sent by different JSON writers is the
// same intent. The canonical form is JSON with:
//
//   - insignificant white space removed;
//   - object members sorted by key, comparing keys as sequences of UTF-16
//     code units after unescaping (the order of RFC 8785, section 3.2.3);
//   - every string (keys included) written in one escaping: '"' and '\' as
//     \" and \\, U+0008, U+0009, U+000A, U+000C and U+000D as \b, \t, \n,
//     \f and \r, the other control characters below U+0020 as \u00xx with
//     lower-case hex digits, and everything else as raw UTF-8;
//   - numbers exactly as written: no number is parsed into a float, so 1
//     and 1.0 differ and two different big numbers never compare equal.
//
// A payload with two members of the same name in one object (after
// unescaping) is refused with a *FieldError naming the path of the repeated
// canonicalMember: parsers disagree about which one wins, so such a payload has no
// single meaning to compare. The canonical form is only compared, never
// stored or forwarded: the stored payload stays the bytes the first
// submission sent, compacted.
//
// One consequence of decoding strings: an escaped lone surrogate (such as
// "\ud800"), which has no Unicode meaning, decodes to U+FFFD as in every Go
// JSON decoder, and so compares equal to "\ufffd".
func CanonicalPayload(payload []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	var buf bytes.Buffer
	buf.Grow(len(payload))
	if err := canonicalValue(dec, &buf, "payload"); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &FieldError{Field: "payload", Message: "is not one JSON value"}
	}
	return buf.Bytes(), nil
}

// canonicalMember is one object canonicalMember in canonical form, kept until the object
// closes and its members can be sorted.
type canonicalMember struct {
	key   string
	units []uint16
	value []byte
}

// canonicalValue writes the next value of dec in canonical form to buf;
// path names the value for error messages.
func canonicalValue(dec *json.Decoder, buf *bytes.Buffer, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return &FieldError{Field: path, Message: fmt.Sprintf("is not valid JSON: %v", err)}
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return canonicalArray(dec, buf, path)
		}
		return canonicalObject(dec, buf, path)
	case string:
		writeCanonicalString(buf, t)
	case json.Number:
		buf.WriteString(string(t))
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	}
	return nil
}

func canonicalArray(dec *json.Decoder, buf *bytes.Buffer, path string) error {
	buf.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := canonicalValue(dec, buf, fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return &FieldError{Field: path, Message: fmt.Sprintf("is not valid JSON: %v", err)}
	}
	buf.WriteByte(']')
	return nil
}

func canonicalObject(dec *json.Decoder, buf *bytes.Buffer, path string) error {
	var members []canonicalMember
	seen := make(map[string]struct{})
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &FieldError{Field: path, Message: fmt.Sprintf("is not valid JSON: %v", err)}
		}
		key, _ := tok.(string) // the decoder only yields strings in key position
		memberPath := path + pathElement(key)
		if _, dup := seen[key]; dup {
			return &FieldError{Field: memberPath, Message: "appears more than once in its object; every canonicalMember name must be unique"}
		}
		seen[key] = struct{}{}
		var value bytes.Buffer
		if err := canonicalValue(dec, &value, memberPath); err != nil {
			return err
		}
		members = append(members, canonicalMember{key: key, units: utf16.Encode([]rune(key)), value: value.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return &FieldError{Field: path, Message: fmt.Sprintf("is not valid JSON: %v", err)}
	}
	slices.SortFunc(members, func(a, b canonicalMember) int { return slices.Compare(a.units, b.units) })
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeCanonicalString(buf, m.key)
		buf.WriteByte(':')
		buf.Write(m.value)
	}
	buf.WriteByte('}')
	return nil
}

// pathElement names an object canonicalMember in a field path: .name for simple
// names, ["name"] (JSON-quoted) for any other.
func pathElement(key string) string {
	simple := key != ""
	for i, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			simple = false
			break
		}
	}
	if simple {
		return "." + key
	}
	var b bytes.Buffer
	b.WriteString("[")
	writeCanonicalString(&b, key)
	b.WriteString("]")
	return b.String()
}

// writeCanonicalString writes s in the one escaping CanonicalPayload uses.
func writeCanonicalString(buf *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			_, size := utf8.DecodeRuneInString(s[i:])
			buf.WriteString(s[i : i+size])
			i += size
			continue
		}
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\t':
			buf.WriteString(`\t`)
		case '\n':
			buf.WriteString(`\n`)
		case '\f':
			buf.WriteString(`\f`)
		case '\r':
			buf.WriteString(`\r`)
		default:
			if c < 0x20 {
				buf.WriteString(`\u00`)
				buf.WriteByte(hex[c>>4])
				buf.WriteByte(hex[c&0xf])
			} else {
				buf.WriteByte(c)
			}
		}
		i++
	}
	buf.WriteByte('"')
}
