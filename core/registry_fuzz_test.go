package core

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// registryFuzzSeeds reach every branch of the decoder: valid registries of
// each policy, and the strictness rules (types, null, repeats, escapes in
// names, huge numbers, trailing data).
var registryFuzzSeeds = []string{
	`{"targets":[{"submissionTarget":"a","gatewayType":"sms","gatewayUrl":"http://h:1","mode":"realtime","policy":"deadline","maxAcceptanceSeconds":30,"terminalOutcomes":["invalid_request"]}]}`,
	`{"targets":[{"submissionTarget":"b","gatewayType":"push","gatewayUrl":"https://h/p","mode":"batch","policy":"max_attempts","maxAttempts":2147483647,"terminalOutcomes":[]}]}`,
	`{"targets":[{"submissionTarget":"c","gatewayType":"push","gatewayUrl":"http://h","mode":"batch","policy":"one_shot","terminalOutcomes":["unregistered_token","provider_failure"]}]}`,
	`{"targets":[{"submission\u0054arget":"\u00e9\ud83d\ude00","gatewayType":"sms","gatewayUrl":"HTTP://h","mode":"batch","policy":"one_shot","terminalOutcomes":[]}]}`,
	`{"targets":[{"submissionTarget":"a","submissionTarget":"b"},{"maxAttempts":1e999},[],null,"x"]} `,
	`{"targets":[{"policy":"max_attempts","maxAttempts":"3","maxAcceptanceSeconds":-0,"terminalOutcomes":[null,1,"accepted","accepted"]}]}`,
	`{"targets":[{"policy":"deadline","maxAcceptanceSeconds":99999999999999999999,"gatewayUrl":"http://u@h?q#f"}],"x":{}}`,
	`{"targets":[]}{}`,
	`{"targets":null}`,
	`[{"targets":[]}]`,
	"{\"targets\":[{\"\xff\":1}]}",
	`{"targets":[{"mode":"realtime",}]}`,
	``,
}

func FuzzDecodeRegistry(f *testing.F) {
	for _, seed := range registryFuzzSeeds {
		f.Add([]byte(seed))
	}
	if example, err := os.ReadFile("../config/submission_targets.json"); err == nil {
		f.Add(example)
	} else {
		f.Fatalf("the shipped example registry seeds the fuzzer and must be readable: %v", err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeRegistry(data)
		if err != nil {
			checkRegistryError(t, r, err)
			return
		}
		contracts := r.Contracts()
		for _, c := range contracts {
			checkContractInvariants(t, c)
			if got, ok := r.Lookup(c.SubmissionTarget); !ok || !reflect.DeepEqual(got, c) {
				t.Fatalf("Lookup(%q) = %+v, %v; want %+v", c.SubmissionTarget, got, ok, c)
			}
		}
		if !slices.IsSortedFunc(contracts, func(a, b Contract) int { return strings.Compare(a.SubmissionTarget, b.SubmissionTarget) }) {
			t.Fatalf("Contracts() not sorted by target")
		}
		if _, err := NewRegistry(contracts); err != nil {
			t.Fatalf("decoded registry fails re-validation: %v", err)
		}
		encoded, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("encoding a decoded registry: %v", err)
		}
		back, err := DecodeRegistry(encoded)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", encoded, err)
		}
		if !reflect.DeepEqual(back.Contracts(), contracts) {
			t.Fatalf("round trip changed the contracts:\n got %+v\nwant %+v", back.Contracts(), contracts)
		}
	})
}

// checkRegistryError asserts the error contract: a *RegistryError with at
// least one problem, each on one line with a JSON path, and no registry.
func checkRegistryError(t *testing.T, r *Registry, err error) {
	t.Helper()
	if r != nil {
		t.Fatalf("DecodeRegistry returned a registry and the error %v", err)
	}
	var re *RegistryError
	if !errors.As(err, &re) || len(re.Problems) == 0 {
		t.Fatalf("error %v (%T) is not a *RegistryError with problems", err, err)
	}
	for _, p := range re.Problems {
		if !strings.HasPrefix(p.Path, "$") || p.Message == "" || strings.ContainsAny(p.Path+p.Message, "\r\n") {
			t.Fatalf("problem %q is not one line of `$path: message`", p.String())
		}
	}
	if got := strings.Count(err.Error(), "\n"); got != len(re.Problems) {
		t.Fatalf("Error() has %d line breaks for %d problems:\n%s", got, len(re.Problems), err)
	}
}

// checkContractInvariants restates the registry rules independently of the
// validator, so that the fuzzer checks the validator rather than itself.
func checkContractInvariants(t *testing.T, c Contract) {
	t.Helper()
	if c.SubmissionTarget == "" {
		t.Fatalf("contract with an empty submissionTarget: %+v", c)
	}
	if c.GatewayType != GatewaySMS && c.GatewayType != GatewayPush {
		t.Fatalf("contract with gatewayType %q", c.GatewayType)
	}
	if c.Mode != ModeRealtime && c.Mode != ModeBatch {
		t.Fatalf("contract with mode %q", c.Mode)
	}
	lower := strings.ToLower(c.GatewayURL)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") || strings.ContainsAny(c.GatewayURL, "?# ") {
		t.Fatalf("contract with gatewayUrl %q", c.GatewayURL)
	}
	if u, err := url.Parse(c.GatewayURL); err != nil || u.User != nil || u.Hostname() == "" {
		t.Fatalf("contract with gatewayUrl %q: no host, or user info", c.GatewayURL)
	}
	switch c.Policy {
	case PolicyDeadline:
		if c.MaxAcceptanceSeconds < 1 || c.MaxAttempts != 0 {
			t.Fatalf("deadline contract with bounds %d/%d", c.MaxAcceptanceSeconds, c.MaxAttempts)
		}
	case PolicyMaxAttempts:
		if c.MaxAttempts < 1 || c.MaxAcceptanceSeconds != 0 {
			t.Fatalf("max_attempts contract with bounds %d/%d", c.MaxAcceptanceSeconds, c.MaxAttempts)
		}
	case PolicyOneShot:
		if c.MaxAcceptanceSeconds != 0 || c.MaxAttempts != 0 {
			t.Fatalf("one_shot contract with bounds %d/%d", c.MaxAcceptanceSeconds, c.MaxAttempts)
		}
	default:
		t.Fatalf("contract with policy %q", c.Policy)
	}
	if c.MaxAcceptanceSeconds > 1<<31-1 || c.MaxAttempts > 1<<31-1 {
		t.Fatalf("contract bounds beyond 32 bits: %+v", c)
	}
	if c.TerminalOutcomes == nil {
		t.Fatalf("contract with nil terminalOutcomes encodes as null")
	}
	seen := map[string]bool{}
	for _, reason := range c.TerminalOutcomes {
		if seen[reason] || reason == "accepted" || !slices.Contains(c.GatewayType.RejectionReasons(), reason) {
			t.Fatalf("contract with terminalOutcomes %q for %s", c.TerminalOutcomes, c.GatewayType)
		}
		seen[reason] = true
	}
}
