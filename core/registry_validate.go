package core

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
)

// maxContractInt bounds maxAcceptanceSeconds and maxAttempts. It keeps both
// inside a 32-bit SQL INT column and keeps a deadline (about 68 years at
// most) far from overflowing time.Duration.
const maxContractInt = math.MaxInt32

// field names one contract field, so that validation can tell a field the
// source omitted from one it gave with a zero value.
type field uint8

// The contract fields, in the order their problems are reported.
const (
	fieldSubmissionTarget field = 1 << iota
	fieldGatewayType
	fieldGatewayURL
	fieldMode
	fieldPolicy
	fieldMaxAcceptanceSeconds
	fieldMaxAttempts
	fieldTerminalOutcomes
)

// fieldSet is a set of fields.
type fieldSet uint8

func (s fieldSet) has(f field) bool { return s&fieldSet(f) != 0 }

func (s *fieldSet) set(f field) { *s |= fieldSet(f) }

// targetFields is one target to validate: the contract plus which fields the
// source carried and which of them already drew a problem while decoding
// (a wrong JSON type), so that validation does not report them twice.
type targetFields struct {
	contract Contract
	present  fieldSet
	reported fieldSet
}

// contractFields describes a Contract value built in Go: every field is
// present except the policy bounds left at zero.
func contractFields(c Contract) targetFields {
	t := targetFields{contract: c}
	for _, f := range []field{fieldSubmissionTarget, fieldGatewayType, fieldGatewayURL, fieldMode, fieldPolicy, fieldTerminalOutcomes} {
		t.present.set(f)
	}
	if c.MaxAcceptanceSeconds != 0 {
		t.present.set(fieldMaxAcceptanceSeconds)
	}
	if c.MaxAttempts != 0 {
		t.present.set(fieldMaxAttempts)
	}
	return t
}

// registryCheck collects the problems of a whole registry in document order
// and remembers submissionTargets already seen, for the uniqueness rule.
type registryCheck struct {
	problems []RegistryProblem
	seen     map[string]int
}

func (rc *registryCheck) add(path, format string, args ...any) {
	rc.problems = append(rc.problems, RegistryProblem{Path: path, Message: fmt.Sprintf(format, args...)})
}

// err returns the collected problems as a *RegistryError, or nil.
func (rc *registryCheck) err() error {
	if len(rc.problems) == 0 {
		return nil
	}
	return &RegistryError{Problems: rc.problems}
}

func targetPath(i int) string { return "$.targets[" + strconv.Itoa(i) + "]" }

// target validates the target at index i of the targets array.
func (rc *registryCheck) target(i int, t targetFields) {
	base := targetPath(i)
	c := t.contract
	// ok reports a missing required field, and whether a present field's
	// value is still to be checked.
	ok := func(f field, name string) bool {
		if !t.present.has(f) {
			rc.add(base+"."+name, "must be present")
			return false
		}
		return !t.reported.has(f)
	}

	if ok(fieldSubmissionTarget, "submissionTarget") {
		rc.checkSubmissionTarget(base, i, c.SubmissionTarget)
	}
	if ok(fieldGatewayType, "gatewayType") && !c.GatewayType.Known() {
		rc.add(base+".gatewayType", "must be one of sms, push, got %q", c.GatewayType)
	}
	if ok(fieldGatewayURL, "gatewayUrl") {
		if msg := checkGatewayURL(c.GatewayURL); msg != "" {
			rc.add(base+".gatewayUrl", "%s", msg)
		}
	}
	if ok(fieldMode, "mode") && c.Mode != ModeRealtime && c.Mode != ModeBatch {
		rc.add(base+".mode", "must be one of realtime, batch, got %q", c.Mode)
	}
	policyKnown := false
	if ok(fieldPolicy, "policy") {
		switch c.Policy {
		case PolicyDeadline, PolicyMaxAttempts, PolicyOneShot:
			policyKnown = true
		default:
			rc.add(base+".policy", "must be one of deadline, max_attempts, one_shot, got %q", c.Policy)
		}
	}
	rc.checkPolicyBound(t, base+".maxAcceptanceSeconds", fieldMaxAcceptanceSeconds, c.MaxAcceptanceSeconds, PolicyDeadline, policyKnown)
	rc.checkPolicyBound(t, base+".maxAttempts", fieldMaxAttempts, c.MaxAttempts, PolicyMaxAttempts, policyKnown)
	if ok(fieldTerminalOutcomes, "terminalOutcomes") {
		rc.checkTerminalOutcomes(base+".terminalOutcomes", c.GatewayType, c.TerminalOutcomes)
	}
}

func (rc *registryCheck) checkSubmissionTarget(base string, i int, target string) {
	if target == "" {
		rc.add(base+".submissionTarget", "must not be empty")
		return
	}
	if first, dup := rc.seen[target]; dup {
		rc.add(base+".submissionTarget", "%q duplicates %s.submissionTarget", target, targetPath(first))
		return
	}
	if rc.seen == nil {
		rc.seen = make(map[string]int)
	}
	rc.seen[target] = i
}

// checkPolicyBound applies "present only for its policy" to maxAcceptanceSeconds
// (owner deadline) or maxAttempts (owner max_attempts). With an unknown policy
// only the value's range is checked: which rule applies cannot be known.
func (rc *registryCheck) checkPolicyBound(t targetFields, path string, f field, v int, owner Policy, policyKnown bool) {
	if t.reported.has(f) {
		return
	}
	policy := t.contract.Policy
	switch {
	case policyKnown && policy != owner:
		if t.present.has(f) {
			rc.add(path, "must be omitted for policy %s", policy)
		}
		return
	case policyKnown && !t.present.has(f):
		rc.add(path, "must be present for policy %s", policy)
		return
	case !t.present.has(f):
		return
	}
	if v < 1 {
		rc.add(path, "must be at least 1, got %d", v)
	} else if v > maxContractInt {
		rc.add(path, "must be at most %d, got %d", maxContractInt, v)
	}
}

func (rc *registryCheck) checkTerminalOutcomes(path string, gt GatewayType, reasons []string) {
	firstAt := make(map[string]int, len(reasons))
	for j, reason := range reasons {
		p := path + "[" + strconv.Itoa(j) + "]"
		switch first, dup := firstAt[reason]; {
		case dup:
			rc.add(p, "%q duplicates terminalOutcomes[%d]", reason, first)
			continue
		case reason == string(OutcomeAccepted):
			rc.add(p, "accepted is always terminal and must not be listed")
		case gt.Known() && !gt.KnowsReason(reason):
			rc.add(p, "%q is not a rejection reason of gatewayType %s", reason, gt)
		}
		firstAt[reason] = j
	}
}

// checkGatewayURL returns why s is not a usable gateway base URL, or "". The
// URL is the base the gateway adapter builds its request URL on, so it must
// name a host over http(s) and carry nothing a path join would mangle.
func checkGatewayURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case s == "" || err != nil || !u.IsAbs():
		return "must be an absolute http(s) URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("must use scheme http or https, got %q", u.Scheme)
	case u.Hostname() == "":
		return "must name a host"
	case u.User != nil:
		return "must not carry user info"
	case u.RawQuery != "" || u.ForceQuery || strings.Contains(s, "#"): // an empty fragment leaves no other trace
		return "must not have a query or fragment"
	}
	return ""
}
