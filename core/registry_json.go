package core

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// member is one name/value pair of a JSON object, value undecoded.
type member struct {
	key   string
	value json.RawMessage
}

// members splits the JSON object raw into its members in document order. It
// reports a value that is not an object and every repeated name (keeping the
// first), because encoding/json would silently let the last one win.
func (rc *registryCheck) members(path string, raw json.RawMessage) ([]member, bool) {
	if kind := jsonKind(raw); kind != "object" {
		rc.add(path, "must be an object, got %s", kind)
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil { // the opening brace
		rc.add(path, "is not valid JSON: %s", describeJSONError(err))
		return nil, false
	}
	var out []member
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			rc.add(path, "is not valid JSON: %s", describeJSONError(err))
			return nil, false
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			rc.add(memberPath(path, key), "is not valid JSON: %s", describeJSONError(err))
			return nil, false
		}
		if seen[key] {
			rc.add(memberPath(path, key), "is repeated; a member may appear only once")
			continue
		}
		seen[key] = true
		out = append(out, member{key: key, value: value})
	}
	return out, true
}

// memberPath appends a member name to a JSON path: `.name` for identifiers,
// `["odd name"]` otherwise, so that every path is unambiguous.
func memberPath(path, key string) string {
	if isIdentifier(key) {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z':
		case i > 0 && '0' <= r && r <= '9':
		default:
			return false
		}
	}
	return true
}

// jsonKind names the JSON type of a valid JSON value for problem messages;
// a nil value (an absent member) is "nothing".
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}
