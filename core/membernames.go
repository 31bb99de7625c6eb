package core

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// CheckMemberNames refuses a compacted payload in which one object has two
// members of the same name (compared after unescaping), at any depth, with a
// *FieldError naming the repeated member's path, as CanonicalPayload does.
// It is the check every submission pays, so it scans the compacted bytes
// once without decoding them: it allocates only for objects with escaped or
// many member names. payload must be the output of CompactPayload (valid,
// compact JSON); anything else may be misread.
func CheckMemberNames(payload []byte) error {
	s := memberScan{p: payload}
	s.value(0)
	return s.err
}

// memberScan walks compacted JSON; path holds the member names and array
// indexes leading to the current value, to name a repeated member.
type memberScan struct {
	p    []byte
	path []pathStep
	err  error
}

type pathStep struct {
	inArray bool
	index   int    // the element's index, in an array
	key     []byte // the raw (still escaped) member name, in an object
}

// value scans the value starting at i and returns the index after it.
func (s *memberScan) value(i int) int {
	if s.err != nil || i >= len(s.p) {
		return len(s.p)
	}
	switch s.p[i] {
	case '{':
		return s.object(i + 1)
	case '[':
		return s.array(i + 1)
	case '"':
		return stringEnd(s.p, i) + 1
	default: // a number, true, false or null runs to the next delimiter
		for i < len(s.p) && s.p[i] != ',' && s.p[i] != ']' && s.p[i] != '}' {
			i++
		}
		return i
	}
}

func (s *memberScan) array(i int) int {
	if i < len(s.p) && s.p[i] == ']' {
		return i + 1
	}
	for n := 0; s.err == nil && i < len(s.p); n++ {
		s.path = append(s.path, pathStep{inArray: true, index: n})
		i = s.value(i)
		s.path = s.path[:len(s.path)-1]
		if i >= len(s.p) || s.p[i] == ']' {
			return i + 1
		}
		i++ // ','
	}
	return len(s.p)
}

// maxLinearMembers is the object size up to which names are compared pair
// by pair, which is faster than a map for the objects payloads usually have.
const maxLinearMembers = 16

func (s *memberScan) object(i int) int {
	if i < len(s.p) && s.p[i] == '}' {
		return i + 1
	}
	var (
		small [maxLinearMembers][]byte
		names = small[:0]
		seen  map[string]struct{}
	)
	for s.err == nil && i < len(s.p) {
		end := stringEnd(s.p, i)
		raw := s.p[i+1 : end]
		if repeated(raw, names, &seen) {
			s.path = append(s.path, pathStep{key: raw})
			s.err = &FieldError{Field: s.pathString(), Message: "appears more than once in its object; every member name must be unique"}
			return len(s.p)
		}
		names = append(names, raw)
		s.path = append(s.path, pathStep{key: raw})
		i = s.value(end + 2) // past '":'
		s.path = s.path[:len(s.path)-1]
		if i >= len(s.p) || s.p[i] == '}' {
			return i + 1
		}
		i++ // ','
	}
	return len(s.p)
}

// repeated reports whether raw names a member already in names (raw,
// escaped names). Escaped names are compared unescaped; beyond
// maxLinearMembers names, a set of unescaped names takes over.
func repeated(raw []byte, names [][]byte, seen *map[string]struct{}) bool {
	if len(names) >= maxLinearMembers {
		if *seen == nil {
			*seen = make(map[string]struct{}, 2*len(names))
			for _, n := range names {
				(*seen)[unescapeName(n)] = struct{}{}
			}
		}
		key := unescapeName(raw)
		if _, dup := (*seen)[key]; dup {
			return true
		}
		(*seen)[key] = struct{}{}
		return false
	}
	escaped := bytes.IndexByte(raw, '\\') >= 0
	for _, n := range names {
		if bytes.Equal(n, raw) {
			return true
		}
		if (escaped || bytes.IndexByte(n, '\\') >= 0) && unescapeName(n) == unescapeName(raw) {
			return true
		}
	}
	return false
}

// stringEnd returns the index of the closing quote of the string whose
// opening quote is at i.
func stringEnd(p []byte, i int) int {
	for i++; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(p)
}

// unescapeName decodes a raw member name as JSON does.
func unescapeName(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	_ = json.Unmarshal(quoted, &s) // valid: it comes from compacted JSON
	return s
}

// pathString renders the current path in CanonicalPayload's notation.
func (s *memberScan) pathString() string {
	var b strings.Builder
	b.WriteString("payload")
	for _, step := range s.path {
		if step.inArray {
			b.WriteString("[" + strconv.Itoa(step.index) + "]")
			continue
		}
		b.WriteString(pathElement(unescapeName(step.key)))
	}
	return b.String()
}
