package core

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// absent marks a member that targetJSON must leave out.
type absentMember struct{}

var absent = absentMember{}

// targetJSON returns a valid sms deadline target as a JSON object, changed by
// edits: a value replaces the member (json.RawMessage verbatim), absent drops
// it.
func targetJSON(t *testing.T, edits map[string]any) string {
	t.Helper()
	m := map[string]any{
		"submissionTarget":     "sms.realtime",
		"gatewayType":          "sms",
		"gatewayUrl":           "http://127.0.0.1:8080",
		"mode":                 "realtime",
		"policy":               "deadline",
		"maxAcceptanceSeconds": 30,
		"terminalOutcomes":     []string{"invalid_request", "invalid_recipient"},
	}
	for k, v := range edits {
		if v == absent {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func registryJSON(targets ...string) string {
	return `{"targets":[` + strings.Join(targets, ",") + `]}`
}

// problemsOf returns the problems of a *RegistryError as "path: message"
// lines, failing the test for any other error.
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	var re *RegistryError
	if !errors.As(err, &re) {
		t.Fatalf("error = %v (%T), want *RegistryError", err, err)
	}
	if len(re.Problems) == 0 {
		t.Fatal("RegistryError with no problems")
	}
	out := make([]string, len(re.Problems))
	for i, p := range re.Problems {
		out[i] = p.String()
	}
	return out
}

func TestDecodeRegistryAcceptsTheShippedExample(t *testing.T) {
	data, err := os.ReadFile("../config/submission_targets.json")
	if err != nil {
		t.Fatalf("the shipped example registry must be readable from core's tests: %v", err)
	}
	r, err := DecodeRegistry(data)
	if err != nil {
		t.Fatalf("DecodeRegistry(config/submission_targets.json): %v", err)
	}
	var targets []string
	for _, c := range r.Contracts() {
		targets = append(targets, c.SubmissionTarget)
	}
	if want := []string{"push.oneshot", "push.realtime", "sms.batch", "sms.realtime"}; !reflect.DeepEqual(targets, want) {
		t.Errorf("Contracts() targets = %v, want %v (sorted)", targets, want)
	}
	got, ok := r.Lookup("sms.batch")
	want := Contract{
		SubmissionTarget: "sms.batch",
		GatewayType:      GatewaySMS,
		GatewayURL:       "http://127.0.0.1:8080",
		Mode:             ModeBatch,
		Policy:           PolicyMaxAttempts,
		MaxAttempts:      5,
		TerminalOutcomes: []string{"invalid_request", "invalid_recipient", "invalid_message"},
	}
	if !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("Lookup(sms.batch) = %+v, %v; want %+v, true", got, ok, want)
	}
	oneShot, _ := r.Lookup("push.oneshot")
	if oneShot.Policy != PolicyOneShot || oneShot.MaxAttempts != 0 || oneShot.MaxAcceptanceSeconds != 0 {
		t.Errorf("Lookup(push.oneshot) = %+v, want one_shot without bounds", oneShot)
	}
}

func TestDecodeRegistryReportsEveryProblemWithItsPath(t *testing.T) {
	ok := func(edits map[string]any) string { return targetJSON(t, edits) }
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"empty document", "  \n", []string{`$: must be a JSON object, got an empty document`}},
		{"top level array", `[]`, []string{`$: must be an object, got array`}},
		{"top level null", `null`, []string{`$: must be an object, got null`}},
		{"targets missing", `{}`, []string{`$.targets: must be present`}},
		{"targets null", `{"targets":null}`, []string{`$.targets: must be an array of targets, got null`}},
		{"targets object", `{"targets":{}}`, []string{`$.targets: must be an array of targets, got object`}},
		{"targets empty", `{"targets":[]}`, []string{`$.targets: must list at least one target`}},
		{"trailing document", "{\"targets\":[]}\n{}", []string{`$: must be a single JSON document, found more data after byte 14`}},
		{"trailing garbage", `{} x`, []string{`$: must be a single JSON document, found more data after byte 2`}},
		{"trailing brace", registryJSON(ok(nil)) + "}", []string{`$: must be a single JSON document, found more data after byte 229`}},
		{
			"unknown members everywhere",
			`{"version":1,"targets":[` + ok(map[string]any{"color": "red", "a b": 1}) + `]}`,
			[]string{`$.version: unknown field`, `$.targets[0]["a b"]: unknown field`, `$.targets[0].color: unknown field`},
		},
		{
			"member names match exactly",
			registryJSON(ok(map[string]any{"submissionTarget": absent, "SubmissionTarget": "x"})),
			[]string{`$.targets[0].SubmissionTarget: unknown field`, `$.targets[0].submissionTarget: must be present`},
		},
		{
			"repeated member",
			`{"targets":[` + strings.TrimSuffix(ok(nil), "}") + `,"policy":"one_shot"}]}`,
			[]string{`$.targets[0].policy: is repeated; a member may appear only once`},
		},
		{
			"repeated targets member",
			`{"targets":[` + ok(nil) + `],"targets":[]}`,
			[]string{`$.targets: is repeated; a member may appear only once`},
		},
		{"target not an object", registryJSON(`1`, ok(nil)), []string{`$.targets[0]: must be an object, got number`}},
		{
			"every required member missing",
			registryJSON(`{}`),
			[]string{
				`$.targets[0].submissionTarget: must be present`,
				`$.targets[0].gatewayType: must be present`,
				`$.targets[0].gatewayUrl: must be present`,
				`$.targets[0].mode: must be present`,
				`$.targets[0].policy: must be present`,
				`$.targets[0].terminalOutcomes: must be present`,
			},
		},
		{
			"wrong JSON types and null",
			registryJSON(ok(map[string]any{
				"submissionTarget": 7, "gatewayType": nil, "gatewayUrl": true, "mode": []string{},
				"policy": map[string]any{}, "maxAcceptanceSeconds": "30", "terminalOutcomes": nil,
			})),
			[]string{
				`$.targets[0].gatewayType: must be a string, got null`,
				`$.targets[0].gatewayUrl: must be a string, got boolean`,
				`$.targets[0].maxAcceptanceSeconds: must be an integer, got string`,
				`$.targets[0].mode: must be a string, got array`,
				`$.targets[0].policy: must be a string, got object`,
				`$.targets[0].submissionTarget: must be a string, got number`,
				`$.targets[0].terminalOutcomes: must be an array of strings, got null`,
			},
		},
		{
			"max_attempts: quoted number",
			registryJSON(ok(map[string]any{"policy": "max_attempts", "maxAcceptanceSeconds": absent, "maxAttempts": "3"})),
			[]string{`$.targets[0].maxAttempts: must be an integer, got string`},
		},
		{
			"integers only",
			registryJSON(
				ok(map[string]any{"maxAcceptanceSeconds": raw(`30.5`)}),
				ok(map[string]any{"submissionTarget": "b", "maxAcceptanceSeconds": raw(`3e1`)}),
				ok(map[string]any{"submissionTarget": "c", "maxAcceptanceSeconds": raw(`30.0`)}),
			),
			[]string{
				`$.targets[0].maxAcceptanceSeconds: must be an integer, got 30.5`,
				`$.targets[1].maxAcceptanceSeconds: must be an integer, got 3e1`,
				`$.targets[2].maxAcceptanceSeconds: must be an integer, got 30.0`,
			},
		},
		{
			"bounds out of range",
			registryJSON(
				ok(map[string]any{"maxAcceptanceSeconds": 0}),
				ok(map[string]any{"submissionTarget": "b", "maxAcceptanceSeconds": -5}),
				ok(map[string]any{"submissionTarget": "c", "maxAcceptanceSeconds": 2147483648}),
				ok(map[string]any{"submissionTarget": "d", "maxAcceptanceSeconds": raw(`99999999999999999999`)}),
				ok(map[string]any{"submissionTarget": "e", "maxAcceptanceSeconds": raw(`-99999999999999999999`)}),
				ok(map[string]any{"submissionTarget": "f", "policy": "max_attempts", "maxAcceptanceSeconds": absent, "maxAttempts": 0}),
				ok(map[string]any{"submissionTarget": "g", "maxAcceptanceSeconds": 2147483647}),
			),
			[]string{
				`$.targets[0].maxAcceptanceSeconds: must be at least 1, got 0`,
				`$.targets[1].maxAcceptanceSeconds: must be at least 1, got -5`,
				`$.targets[2].maxAcceptanceSeconds: must be at most 2147483647, got 2147483648`,
				`$.targets[3].maxAcceptanceSeconds: must be at most 2147483647, got 99999999999999999999`,
				`$.targets[4].maxAcceptanceSeconds: must be at least 1, got -99999999999999999999`,
				`$.targets[5].maxAttempts: must be at least 1, got 0`,
			},
		},
		{
			"bounds present only for their policy",
			registryJSON(
				ok(map[string]any{"maxAcceptanceSeconds": absent}),
				ok(map[string]any{"submissionTarget": "b", "maxAttempts": 3}),
				ok(map[string]any{"submissionTarget": "c", "policy": "max_attempts"}),
				ok(map[string]any{"submissionTarget": "d", "policy": "one_shot", "maxAttempts": 1}),
			),
			[]string{
				`$.targets[0].maxAcceptanceSeconds: must be present for policy deadline`,
				`$.targets[1].maxAttempts: must be omitted for policy deadline`,
				`$.targets[2].maxAcceptanceSeconds: must be omitted for policy max_attempts`,
				`$.targets[2].maxAttempts: must be present for policy max_attempts`,
				`$.targets[3].maxAcceptanceSeconds: must be omitted for policy one_shot`,
				`$.targets[3].maxAttempts: must be omitted for policy one_shot`,
			},
		},
		{
			"zero counts as present, not omitted",
			registryJSON(ok(map[string]any{"maxAttempts": 0})),
			[]string{`$.targets[0].maxAttempts: must be omitted for policy deadline`},
		},
		{
			"unknown enumerations",
			registryJSON(ok(map[string]any{"gatewayType": "mms", "mode": "fast", "policy": "forever", "terminalOutcomes": []string{"whatever"}})),
			[]string{
				`$.targets[0].gatewayType: must be one of sms, push, got "mms"`,
				`$.targets[0].mode: must be one of realtime, batch, got "fast"`,
				`$.targets[0].policy: must be one of deadline, max_attempts, one_shot, got "forever"`,
			},
		},
		{
			"enumerations are case-sensitive",
			registryJSON(ok(map[string]any{"gatewayType": "SMS", "mode": "Realtime", "policy": "Deadline", "maxAcceptanceSeconds": absent})),
			[]string{
				`$.targets[0].gatewayType: must be one of sms, push, got "SMS"`,
				`$.targets[0].mode: must be one of realtime, batch, got "Realtime"`,
				`$.targets[0].policy: must be one of deadline, max_attempts, one_shot, got "Deadline"`,
			},
		},
		{
			"gateway URLs",
			registryJSON(
				ok(map[string]any{"submissionTarget": "a", "gatewayUrl": ""}),
				ok(map[string]any{"submissionTarget": "b", "gatewayUrl": "/relative/path"}),
				ok(map[string]any{"submissionTarget": "c", "gatewayUrl": "ftp://gw.example"}),
				ok(map[string]any{"submissionTarget": "d", "gatewayUrl": "localhost:8080"}),
				ok(map[string]any{"submissionTarget": "e", "gatewayUrl": "http://"}),
				ok(map[string]any{"submissionTarget": "f", "gatewayUrl": "http://:8080"}),
				ok(map[string]any{"submissionTarget": "g", "gatewayUrl": "https://user:secret@gw.example"}),
				ok(map[string]any{"submissionTarget": "h", "gatewayUrl": "http://gw.example/?x=1"}),
				ok(map[string]any{"submissionTarget": "i", "gatewayUrl": "http://gw.example/#top"}),
				ok(map[string]any{"submissionTarget": "j", "gatewayUrl": "http://gw example"}),
				ok(map[string]any{"submissionTarget": "k", "gatewayUrl": "http://gw.example:#"}),
				ok(map[string]any{"submissionTarget": "l", "gatewayUrl": "http://gw.example?"}),
				ok(map[string]any{"submissionTarget": "m", "gatewayUrl": "HTTPS://gw.example:8443/base/"}),
			),
			[]string{
				`$.targets[0].gatewayUrl: must be an absolute http(s) URL`,
				`$.targets[1].gatewayUrl: must be an absolute http(s) URL`,
				`$.targets[2].gatewayUrl: must use scheme http or https, got "ftp"`,
				`$.targets[3].gatewayUrl: must use scheme http or https, got "localhost"`,
				`$.targets[4].gatewayUrl: must name a host`,
				`$.targets[5].gatewayUrl: must name a host`,
				`$.targets[6].gatewayUrl: must not carry user info`,
				`$.targets[7].gatewayUrl: must not have a query or fragment`,
				`$.targets[8].gatewayUrl: must not have a query or fragment`,
				`$.targets[9].gatewayUrl: must be an absolute http(s) URL`,
				`$.targets[10].gatewayUrl: must not have a query or fragment`,
				`$.targets[11].gatewayUrl: must not have a query or fragment`,
			},
		},
		{
			"terminal outcomes",
			registryJSON(
				ok(map[string]any{"terminalOutcomes": []string{"accepted", "invalid_request", "invalid_request", "unregistered_token", "made_up"}}),
				ok(map[string]any{"submissionTarget": "push", "gatewayType": "push", "terminalOutcomes": []string{"invalid_recipient", "unregistered_token"}}),
				ok(map[string]any{"submissionTarget": "types", "terminalOutcomes": []any{"invalid_request", 5, nil}}),
				ok(map[string]any{"submissionTarget": "none", "terminalOutcomes": []string{}}),
			),
			[]string{
				`$.targets[0].terminalOutcomes[0]: accepted is always terminal and must not be listed`,
				`$.targets[0].terminalOutcomes[2]: "invalid_request" duplicates terminalOutcomes[1]`,
				`$.targets[0].terminalOutcomes[3]: "unregistered_token" is not a rejection reason of gatewayType sms`,
				`$.targets[0].terminalOutcomes[4]: "made_up" is not a rejection reason of gatewayType sms`,
				`$.targets[1].terminalOutcomes[0]: "invalid_recipient" is not a rejection reason of gatewayType push`,
				`$.targets[2].terminalOutcomes[1]: must be a string, got number`,
				`$.targets[2].terminalOutcomes[2]: must be a string, got null`,
			},
		},
		{
			"submission targets non-empty and unique",
			registryJSON(
				ok(map[string]any{"submissionTarget": "a"}),
				ok(map[string]any{"submissionTarget": ""}),
				ok(map[string]any{"submissionTarget": "b"}),
				ok(map[string]any{"submissionTarget": "a"}),
				ok(map[string]any{"submissionTarget": "b"}),
				ok(map[string]any{"submissionTarget": "A"}),
			),
			[]string{
				`$.targets[1].submissionTarget: must not be empty`,
				`$.targets[3].submissionTarget: "a" duplicates $.targets[0].submissionTarget`,
				`$.targets[4].submissionTarget: "b" duplicates $.targets[2].submissionTarget`,
			},
		},
		{
			"problems in several targets at once",
			registryJSON(
				ok(map[string]any{"policy": "max_attempts"}),
				ok(map[string]any{"submissionTarget": "b", "gatewayUrl": "gw", "extra": true}),
			),
			[]string{
				`$.targets[0].maxAcceptanceSeconds: must be omitted for policy max_attempts`,
				`$.targets[0].maxAttempts: must be present for policy max_attempts`,
				`$.targets[1].extra: unknown field`,
				`$.targets[1].gatewayUrl: must be an absolute http(s) URL`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := DecodeRegistry([]byte(tt.doc))
			if err == nil {
				t.Fatalf("DecodeRegistry(%s) = %d contracts, want problems %q", tt.doc, r.Len(), tt.want)
			}
			if r != nil {
				t.Errorf("DecodeRegistry returned a registry together with an error")
			}
			if got := problemsOf(t, err); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DecodeRegistry(%s) problems:\n got %q\nwant %q", tt.doc, got, tt.want)
			}
		})
	}
}

func TestDecodeRegistryRefusesInvalidJSONWithoutPanicking(t *testing.T) {
	for _, doc := range []string{`{`, `{"targets":[`, `{"targets":[}`, `{'targets':[]}`, "\xff", `{"targets":[{"mode":"realtime",}]}`} {
		_, err := DecodeRegistry([]byte(doc))
		got := problemsOf(t, err)
		if len(got) != 1 || !strings.HasPrefix(got[0], "$: is not valid JSON: ") {
			t.Errorf("DecodeRegistry(%q) problems = %q, want one `$: is not valid JSON: ...`", doc, got)
		}
	}
}

func TestDecodeRegistryKeepsOddMemberNamesReadableInPaths(t *testing.T) {
	_, err := DecodeRegistry([]byte(registryJSON(strings.TrimSuffix(targetJSON(t, nil), "}") + `,"\u00e9t\u00e9":1,"9lives":2,"":3}`)))
	want := []string{
		`$.targets[0]["été"]: unknown field`,
		`$.targets[0]["9lives"]: unknown field`,
		`$.targets[0][""]: unknown field`,
	}
	if got := problemsOf(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
	}
}

func TestRegistryErrorListsEveryProblemOnItsOwnLine(t *testing.T) {
	_, err := DecodeRegistry([]byte(registryJSON(
		targetJSON(t, map[string]any{"maxAttempts": 2}),
		targetJSON(t, map[string]any{"submissionTarget": "b", "policy": "max_attempts", "maxAcceptanceSeconds": absent}),
	)))
	want := "invalid submission target registry: 2 problems\n" +
		"$.targets[0].maxAttempts: must be omitted for policy deadline\n" +
		"$.targets[1].maxAttempts: must be present for policy max_attempts"
	if err == nil || err.Error() != want {
		t.Errorf("Error() =\n%v\nwant\n%s", err, want)
	}
	one := &RegistryError{Problems: []RegistryProblem{{Path: "$", Message: "must be an object, got null"}}}
	if got, want := one.Error(), "invalid submission target registry: 1 problem\n$: must be an object, got null"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func validContracts() []Contract {
	return []Contract{
		{
			SubmissionTarget: "sms.realtime", GatewayType: GatewaySMS, GatewayURL: "http://127.0.0.1:8080",
			Mode: ModeRealtime, Policy: PolicyDeadline, MaxAcceptanceSeconds: 30,
			TerminalOutcomes: []string{ReasonInvalidRequest, ReasonInvalidRecipient},
		},
		{
			SubmissionTarget: "push.oneshot", GatewayType: GatewayPush, GatewayURL: "https://push.example",
			Mode: ModeBatch, Policy: PolicyOneShot,
		},
		{
			SubmissionTarget: "sms.batch", GatewayType: GatewaySMS, GatewayURL: "http://127.0.0.1:8080",
			Mode: ModeBatch, Policy: PolicyMaxAttempts, MaxAttempts: 5, TerminalOutcomes: []string{},
		},
	}
}

func TestRegistryLookupHandsOutIndependentClones(t *testing.T) {
	input := validContracts()
	r, err := NewRegistry(input)
	if err != nil {
		t.Fatal(err)
	}
	input[0].TerminalOutcomes[0] = "changed by the caller after NewRegistry"

	c, ok := r.Lookup("sms.realtime")
	if !ok {
		t.Fatal("Lookup(sms.realtime) not found")
	}
	if want := []string{ReasonInvalidRequest, ReasonInvalidRecipient}; !reflect.DeepEqual(c.TerminalOutcomes, want) {
		t.Fatalf("registry shares the caller's slice: TerminalOutcomes = %q, want %q", c.TerminalOutcomes, want)
	}
	c.TerminalOutcomes[0] = "changed through a snapshot"
	c.GatewayURL = "http://elsewhere"
	again, _ := r.Lookup("sms.realtime")
	if again.TerminalOutcomes[0] != ReasonInvalidRequest || again.GatewayURL != "http://127.0.0.1:8080" {
		t.Errorf("a snapshot changed the registry: %+v", again)
	}
	listed := r.Contracts()
	listed[2].TerminalOutcomes[0] = "changed through a listing"
	if again, _ := r.Lookup("sms.realtime"); again.TerminalOutcomes[0] != ReasonInvalidRequest {
		t.Errorf("a listing changed the registry: %+v", again)
	}

	oneShot, _ := r.Lookup("push.oneshot")
	if oneShot.TerminalOutcomes == nil || len(oneShot.TerminalOutcomes) != 0 {
		t.Errorf("nil terminalOutcomes should come back as an empty list, got %#v", oneShot.TerminalOutcomes)
	}
	if _, ok := r.Lookup("sms.unknown"); ok {
		t.Error("Lookup(sms.unknown) found a contract")
	}
	if _, ok := r.Lookup(""); ok {
		t.Error(`Lookup("") found a contract`)
	}
}

func TestRegistryContractsAreSortedByTarget(t *testing.T) {
	r, err := NewRegistry(validContracts())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Contracts() {
		got = append(got, c.SubmissionTarget)
	}
	if want := []string{"push.oneshot", "sms.batch", "sms.realtime"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Contracts() order = %v, want %v", got, want)
	}
	if r.Len() != 3 {
		t.Errorf("Len() = %d, want 3", r.Len())
	}
}

func TestNewRegistryValidatesLikeDecodeRegistry(t *testing.T) {
	cs := validContracts()
	cs[0].MaxAttempts = 3                         // not for deadline
	cs[1].GatewayType = "fax"                     // unknown
	cs[1].TerminalOutcomes = []string{"accepted"} // never listed
	cs[2].MaxAttempts = 0                         // zero is omitted: missing
	cs = append(cs, Contract{SubmissionTarget: "sms.realtime", GatewayType: GatewaySMS, GatewayURL: "http://h",
		Mode: ModeRealtime, Policy: PolicyDeadline, MaxAcceptanceSeconds: -1})
	_, err := NewRegistry(cs)
	want := []string{
		`$.targets[0].maxAttempts: must be omitted for policy deadline`,
		`$.targets[1].gatewayType: must be one of sms, push, got "fax"`,
		`$.targets[1].terminalOutcomes[0]: accepted is always terminal and must not be listed`,
		`$.targets[2].maxAttempts: must be present for policy max_attempts`,
		`$.targets[3].submissionTarget: "sms.realtime" duplicates $.targets[0].submissionTarget`,
		`$.targets[3].maxAcceptanceSeconds: must be at least 1, got -1`,
	}
	if got := problemsOf(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("NewRegistry problems:\n got %q\nwant %q", got, want)
	}

	if _, err := NewRegistry(nil); !reflect.DeepEqual(problemsOf(t, err), []string{`$.targets: must list at least one target`}) {
		t.Errorf("NewRegistry(nil) = %v", err)
	}
	zero := []Contract{{}}
	_, err = NewRegistry(zero)
	want = []string{
		`$.targets[0].submissionTarget: must not be empty`,
		`$.targets[0].gatewayType: must be one of sms, push, got ""`,
		`$.targets[0].gatewayUrl: must be an absolute http(s) URL`,
		`$.targets[0].mode: must be one of realtime, batch, got ""`,
		`$.targets[0].policy: must be one of deadline, max_attempts, one_shot, got ""`,
	}
	if got := problemsOf(t, err); !reflect.DeepEqual(got, want) {
		t.Errorf("NewRegistry(zero contract) problems:\n got %q\nwant %q", got, want)
	}
}

func TestRegistryJSONRoundTrips(t *testing.T) {
	r, err := NewRegistry(validContracts())
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRegistry(data)
	if err != nil {
		t.Fatalf("DecodeRegistry(json.Marshal(registry)) = %v\n%s", err, data)
	}
	if !reflect.DeepEqual(back.Contracts(), r.Contracts()) {
		t.Errorf("round trip changed the contracts:\n got %+v\nwant %+v", back.Contracts(), r.Contracts())
	}
	if strings.Contains(string(data), "maxAttempts\":0") || strings.Contains(string(data), "null") {
		t.Errorf("encoding writes members the policy forbids or nulls: %s", data)
	}
}
