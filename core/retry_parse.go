package core

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RetryKey selects the intents a retry policy applies to: a gateway type, and
// optionally a mode within it. The zero key is the default for every intent.
type RetryKey struct {
	GatewayType GatewayType
	Mode        Mode
}

// String renders the key as the operator writes it: "default", "sms" or
// "sms.realtime".
func (k RetryKey) String() string {
	switch {
	case k.GatewayType == "":
		return "default"
	case k.Mode == "":
		return string(k.GatewayType)
	default:
		return string(k.GatewayType) + "." + string(k.Mode)
	}
}

// RetryRule is one operator setting: which intents, and their policy.
type RetryRule struct {
	Key    RetryKey
	Policy RetryPolicy
}

// RetryTable chooses the retry policy of an intent by its contract's gateway
// type and mode: the most specific rule wins (type and mode, then type, then
// the default). The zero table answers FixedDelay(DefaultRetryDelay) for
// everything, today's behaviour. It is read-only once built, so workers may
// share it.
type RetryTable struct {
	rules map[RetryKey]RetryPolicy
}

// NewRetryTable builds a table; a later rule for the same key replaces an
// earlier one, as a later flag does on a command line.
func NewRetryTable(rules ...RetryRule) RetryTable {
	t := RetryTable{rules: make(map[RetryKey]RetryPolicy, len(rules))}
	for _, r := range rules {
		t.rules[r.Key] = r.Policy
	}
	return t
}

// For returns the policy for intents of gateway type g in mode m.
func (t RetryTable) For(g GatewayType, m Mode) RetryPolicy {
	for _, k := range []RetryKey{{g, m}, {g, ""}, {}} {
		if p, ok := t.rules[k]; ok {
			return p
		}
	}
	return FixedDelay(DefaultRetryDelay)
}

// Rules returns the table's rules, for logging the effective settings.
func (t RetryTable) Rules() []RetryRule {
	out := make([]RetryRule, 0, len(t.rules))
	for k, p := range t.rules {
		out = append(out, RetryRule{Key: k, Policy: p})
	}
	return out
}

// ParseRetryRule reads one operator rule, KEY=POLICY, where KEY is
// "default", a gateway type ("sms") or a gateway type and mode
// ("sms.realtime"), and POLICY is one of
//
//	fixed:delay=5s
//	exponential:base=1s,factor=2,max=60s,jitter=full
//
// Every exponential parameter is optional (base 1s, factor 2, max 60s,
// jitter full). random draws the jitter. An error names the part that is
// wrong, so an operator can fix the flag without reading code.
func ParseRetryRule(s string, random Random) (RetryRule, error) {
	keyText, policyText, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok {
		return RetryRule{}, fmt.Errorf("retry rule %q: want KEY=POLICY, e.g. sms=exponential:base=1s,max=60s", s)
	}
	key, err := parseRetryKey(strings.TrimSpace(keyText))
	if err != nil {
		return RetryRule{}, fmt.Errorf("retry rule %q: %w", s, err)
	}
	p, err := ParseRetryPolicy(strings.TrimSpace(policyText), random)
	if err != nil {
		return RetryRule{}, fmt.Errorf("retry rule %q: %w", s, err)
	}
	return RetryRule{Key: key, Policy: p}, nil
}

func parseRetryKey(s string) (RetryKey, error) {
	if s == "default" {
		return RetryKey{}, nil
	}
	typ, mode, hasMode := strings.Cut(s, ".")
	k := RetryKey{GatewayType: GatewayType(typ)}
	if !k.GatewayType.Known() {
		return RetryKey{}, fmt.Errorf("key %q: gateway type %q is not one of sms, push (or use default)", s, typ)
	}
	if hasMode {
		k.Mode = Mode(mode)
		if k.Mode != ModeRealtime && k.Mode != ModeBatch {
			return RetryKey{}, fmt.Errorf("key %q: mode %q is not one of realtime, batch", s, mode)
		}
	}
	return k, nil
}

// ParseRetryPolicy reads the POLICY part of a retry rule.
func ParseRetryPolicy(s string, random Random) (RetryPolicy, error) {
	name, params, _ := strings.Cut(s, ":")
	values, err := parseParams(params)
	if err != nil {
		return nil, fmt.Errorf("policy %q: %w", s, err)
	}
	switch name {
	case "fixed":
		d := DefaultRetryDelay
		for k, v := range values {
			if k != "delay" {
				return nil, fmt.Errorf("policy %q: unknown parameter %q (fixed takes delay)", s, k)
			}
			if d, err = parseDuration(k, v); err != nil {
				return nil, fmt.Errorf("policy %q: %w", s, err)
			}
			if d <= 0 {
				return nil, fmt.Errorf("policy %q: delay must be positive, got %s", s, d)
			}
		}
		return FixedDelay(d), nil
	case "exponential":
		e := Exponential{Base: DefaultExponentialBase, Factor: DefaultExponentialFactor,
			Max: DefaultExponentialMax, Jitter: JitterFull, Random: random}
		for k, v := range values {
			switch k {
			case "base":
				e.Base, err = parseDuration(k, v)
			case "max":
				e.Max, err = parseDuration(k, v)
			case "factor":
				e.Factor, err = strconv.ParseFloat(v, 64)
				if err != nil {
					err = fmt.Errorf("factor %q is not a number", v)
				}
			case "jitter":
				e.Jitter = Jitter(v)
			default:
				err = fmt.Errorf("unknown parameter %q (exponential takes base, factor, max, jitter)", k)
			}
			if err != nil {
				return nil, fmt.Errorf("policy %q: %w", s, err)
			}
		}
		if err := e.Validate(); err != nil {
			return nil, fmt.Errorf("policy %q: %w", s, err)
		}
		return e, nil
	default:
		return nil, fmt.Errorf("policy %q: unknown policy %q (want fixed or exponential)", s, name)
	}
}

// parseParams reads "k=v,k=v"; an empty string has no parameters.
func parseParams(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("parameter %q: want name=value", part)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("parameter %q is given twice", k)
		}
		out[k] = v
	}
	return out, nil
}

func parseDuration(name, v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a duration like 500ms or 1m", name, v)
	}
	return d, nil
}
