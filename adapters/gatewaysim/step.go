package gatewaysim

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Step is one scripted answer for one submission of a reference: "accepted",
// a rejection reason such as "provider_failure" (any reason, also one outside
// the gateway type's taxonomy), or "mode:<mode>" for a single fault such as
// "mode:hang" or "mode:http_503". "mode:normal" lets that one submission be
// answered by the configured behaviour.
type Step string

// StepAccepted answers accepted (or duplicate_reference for a reference the
// gateway already accepted, as a real gateway would).
const StepAccepted Step = "accepted"

// faultPrefix marks a step that answers with a mode rather than an outcome.
const faultPrefix = "mode:"

// Rejected returns the step that rejects with reason.
func Rejected(reason string) Step { return Step(reason) }

// Fault returns the step that answers one submission with mode m.
func Fault(m Mode) Step { return Step(faultPrefix + string(m)) }

// ParseStep validates one step of a script.
func ParseStep(s string) (Step, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("empty script step")
	}
	if name, ok := strings.CutPrefix(s, faultPrefix); ok {
		m, err := ParseMode(name)
		if err != nil {
			return "", fmt.Errorf("script step %q: %w", s, err)
		}
		return Fault(m), nil
	}
	return Step(s), nil
}

// ParseSteps validates a whole script.
func ParseSteps(steps []string) ([]Step, error) {
	out := make([]Step, len(steps))
	for i, s := range steps {
		step, err := ParseStep(s)
		if err != nil {
			return nil, err
		}
		out[i] = step
	}
	return out, nil
}

// ParseScripts reads a script file: a JSON object mapping each reference to
// its list of steps, for example
// {"intent-1": ["provider_failure", "accepted"], "intent-2": ["mode:hang"]}.
func ParseScripts(data []byte) (map[string][]Step, error) {
	var raw map[string][]string
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("script file is not a JSON object of step lists: %w", err)
	}
	scripts := make(map[string][]Step, len(raw))
	for ref, steps := range raw {
		if ref == "" {
			return nil, fmt.Errorf("script file has an empty reference")
		}
		parsed, err := ParseSteps(steps)
		if err != nil {
			return nil, fmt.Errorf("reference %q: %w", ref, err)
		}
		scripts[ref] = parsed
	}
	return scripts, nil
}

// mode returns the fault mode of a "mode:" step.
func (s Step) mode() (Mode, bool) {
	name, ok := strings.CutPrefix(string(s), faultPrefix)
	return Mode(name), ok
}
