package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// registryFields maps the exact JSON member names of a target to its fields.
var registryFields = map[string]field{
	"submissionTarget":     fieldSubmissionTarget,
	"gatewayType":          fieldGatewayType,
	"gatewayUrl":           fieldGatewayURL,
	"mode":                 fieldMode,
	"policy":               fieldPolicy,
	"maxAcceptanceSeconds": fieldMaxAcceptanceSeconds,
	"maxAttempts":          fieldMaxAttempts,
	"terminalOutcomes":     fieldTerminalOutcomes,
}

// DecodeRegistry reads a registry document ({"targets": [...]}) strictly and
// validates it, returning a *RegistryError that lists every problem with its
// JSON path. The caller reads the file; the core does no I/O.
//
// Strict means: unknown members, repeated members, wrong JSON types, null
// where a value is required, and data after the document are all problems.
// Member names match exactly. That is why this walks the JSON tokens rather
// than relying on json.Decoder.DisallowUnknownFields alone: encoding/json
// matches names case-insensitively and lets a repeated member win silently,
// and it stops at the first problem without a path.
func DecodeRegistry(data []byte) (*Registry, error) {
	var chk registryCheck
	doc, ok := chk.document(data)
	if !ok {
		return nil, chk.err()
	}
	top, ok := chk.members("$", doc)
	if !ok {
		return nil, chk.err()
	}
	var targets json.RawMessage
	for _, m := range top {
		if m.key != "targets" {
			chk.add(memberPath("$", m.key), "unknown field")
			continue
		}
		targets = m.value
	}
	var contracts []Contract
	switch kind := jsonKind(targets); {
	case targets == nil:
		chk.add("$.targets", "must be present")
	case kind != "array":
		chk.add("$.targets", "must be an array of targets, got %s", kind)
	default:
		contracts = chk.targets(targets)
	}
	if err := chk.err(); err != nil {
		return nil, err
	}
	return buildRegistry(contracts), nil
}

// document returns the single JSON value in data, reporting invalid JSON and
// anything after the value.
func (rc *registryCheck) document(data []byte) (json.RawMessage, bool) {
	if len(bytes.TrimSpace(data)) == 0 {
		rc.add("$", "must be a JSON object, got an empty document")
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var doc json.RawMessage
	if err := dec.Decode(&doc); err != nil {
		rc.add("$", "is not valid JSON: %s", describeJSONError(err))
		return nil, false
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		rc.add("$", "must be a single JSON document, found more data after byte %d", end)
		return nil, false
	}
	return doc, true
}

func describeJSONError(err error) string {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("%v (at byte %d)", err, syn.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

// targets decodes and validates every element of the targets array.
func (rc *registryCheck) targets(raw json.RawMessage) []Contract {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		rc.add("$.targets", "is not valid JSON: %s", describeJSONError(err))
		return nil
	}
	if len(elems) == 0 {
		rc.add("$.targets", "must list at least one target")
		return nil
	}
	contracts := make([]Contract, 0, len(elems))
	for i, elem := range elems {
		members, ok := rc.members(targetPath(i), elem)
		if !ok {
			continue
		}
		t := rc.targetFields(targetPath(i), members)
		rc.target(i, t)
		contracts = append(contracts, t.contract)
	}
	return contracts
}

// targetFields decodes one target's members into a contract, reporting
// unknown members and values of the wrong JSON type.
func (rc *registryCheck) targetFields(base string, members []member) targetFields {
	var t targetFields
	for _, m := range members {
		path := memberPath(base, m.key)
		f, known := registryFields[m.key]
		if !known {
			rc.add(path, "unknown field")
			continue
		}
		t.present.set(f)
		if !rc.decodeField(path, f, m.value, &t.contract) {
			t.reported.set(f)
		}
	}
	return t
}

// decodeField stores one member's value in c and reports whether its JSON
// type was right; when it was not, the problem is already recorded.
func (rc *registryCheck) decodeField(path string, f field, raw json.RawMessage, c *Contract) bool {
	switch f {
	case fieldMaxAcceptanceSeconds:
		return rc.decodeInt(path, raw, &c.MaxAcceptanceSeconds)
	case fieldMaxAttempts:
		return rc.decodeInt(path, raw, &c.MaxAttempts)
	case fieldTerminalOutcomes:
		return rc.decodeStrings(path, raw, &c.TerminalOutcomes)
	}
	var s string
	if !rc.decodeString(path, raw, &s) {
		return false
	}
	switch f {
	case fieldSubmissionTarget:
		c.SubmissionTarget = s
	case fieldGatewayType:
		c.GatewayType = GatewayType(s)
	case fieldGatewayURL:
		c.GatewayURL = s
	case fieldMode:
		c.Mode = Mode(s)
	case fieldPolicy:
		c.Policy = Policy(s)
	}
	return true
}

func (rc *registryCheck) decodeString(path string, raw json.RawMessage, dst *string) bool {
	if kind := jsonKind(raw); kind != "string" {
		rc.add(path, "must be a string, got %s", kind)
		return false
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		rc.add(path, "is not a valid JSON string: %s", describeJSONError(err))
		return false
	}
	return true
}

// decodeInt accepts only integer syntax: 3.0 and 3e0 are refused rather
// than silently truncated, and out-of-range values are refused here because
// they cannot be held to be reported later.
func (rc *registryCheck) decodeInt(path string, raw json.RawMessage, dst *int) bool {
	if kind := jsonKind(raw); kind != "number" {
		rc.add(path, "must be an integer, got %s", kind)
		return false
	}
	text := string(bytes.TrimSpace(raw))
	v, err := strconv.ParseInt(text, 10, strconv.IntSize)
	switch {
	case errors.Is(err, strconv.ErrRange) && text[0] == '-':
		rc.add(path, "must be at least 1, got %s", text)
		return false
	case errors.Is(err, strconv.ErrRange):
		rc.add(path, "must be at most %d, got %s", maxContractInt, text)
		return false
	case err != nil:
		rc.add(path, "must be an integer, got %s", text)
		return false
	}
	*dst = int(v)
	return true
}

func (rc *registryCheck) decodeStrings(path string, raw json.RawMessage, dst *[]string) bool {
	if kind := jsonKind(raw); kind != "array" {
		rc.add(path, "must be an array of strings, got %s", kind)
		return false
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		rc.add(path, "is not valid JSON: %s", describeJSONError(err))
		return false
	}
	out := make([]string, len(elems))
	ok := true
	for j, elem := range elems {
		ok = rc.decodeString(path+"["+strconv.Itoa(j)+"]", elem, &out[j]) && ok
	}
	if ok {
		*dst = out
	}
	return ok
}
