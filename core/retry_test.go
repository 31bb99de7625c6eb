package core

import (
	"strings"
	"testing"
	"time"
)

func TestExponentialWithoutJitterGrowsWithTriesUpToMax(t *testing.T) {
	e := Exponential{Base: time.Second, Factor: 2, Max: 10 * time.Second, Jitter: JitterNone}
	want := []time.Duration{time.Second, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	for tries, w := range want { // tries 0 counts as 1
		if got := e.Delay(tries); got != w {
			t.Errorf("Delay(%d) = %s, want %s", tries, got, w)
		}
	}
	if got := e.Delay(1 << 30); got != 10*time.Second {
		t.Errorf("Delay(huge) = %s, want the cap", got)
	}
}

func TestExponentialJitterStaysInItsRangeAndIsDeterministicWithASeed(t *testing.T) {
	for _, j := range []Jitter{JitterFull, JitterEqual} {
		a := Exponential{Base: time.Second, Factor: 2, Max: time.Minute, Jitter: j, Random: NewRandom(42)}
		b := Exponential{Base: time.Second, Factor: 2, Max: time.Minute, Jitter: j, Random: NewRandom(42)}
		distinct := map[time.Duration]bool{}
		for tries := 1; tries <= 12; tries++ {
			ceil := a.ceiling(tries)
			low := time.Duration(0)
			if j == JitterEqual {
				low = ceil / 2
			}
			got := a.Delay(tries)
			if got < low || got >= ceil+1 {
				t.Errorf("%s: Delay(%d) = %s, want in [%s, %s)", j, tries, got, low, ceil)
			}
			if other := b.Delay(tries); other != got {
				t.Errorf("%s: same seed gave %s and %s", j, got, other)
			}
			distinct[got] = true
		}
		if len(distinct) < 10 {
			t.Errorf("%s: only %d distinct delays in 12 tries: the jitter does not spread", j, len(distinct))
		}
	}
}

func TestRetryTablePicksTheMostSpecificRule(t *testing.T) {
	exp := Exponential{Base: time.Second, Factor: 2, Max: time.Minute, Jitter: JitterNone}
	table := NewRetryTable(
		RetryRule{Key: RetryKey{GatewayType: GatewaySMS}, Policy: exp},
		RetryRule{Key: RetryKey{GatewayType: GatewaySMS, Mode: ModeRealtime}, Policy: FixedDelay(time.Second)},
	)
	if got, ok := table.For(GatewaySMS, ModeRealtime).(FixedDelay); !ok || got != FixedDelay(time.Second) {
		t.Errorf("sms.realtime got %v", got)
	}
	if got, ok := table.For(GatewaySMS, ModeBatch).(Exponential); !ok || got.String() != exp.String() {
		t.Errorf("sms.batch got %v", got)
	}
	if got := table.For(GatewayPush, ModeBatch); got != FixedDelay(DefaultRetryDelay) {
		t.Errorf("push.batch got %v, want the unchanged default", got)
	}
	if got := (RetryTable{}).For(GatewayPush, ModeBatch); got != FixedDelay(DefaultRetryDelay) {
		t.Errorf("zero table got %v", got)
	}
	withDefault := NewRetryTable(RetryRule{Policy: FixedDelay(time.Second)})
	if got := withDefault.For(GatewayPush, ModeBatch); got != FixedDelay(time.Second) {
		t.Errorf("default rule got %v", got)
	}
}

func TestParseRetryRuleReadsTheOperatorSyntax(t *testing.T) {
	r, err := ParseRetryRule("sms=exponential:base=1s,max=60s,jitter=full", NewRandom(1))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := r.Policy.(Exponential)
	if !ok || r.Key != (RetryKey{GatewayType: GatewaySMS}) || e.Base != time.Second || e.Max != time.Minute ||
		e.Factor != 2 || e.Jitter != JitterFull || e.Random == nil {
		t.Fatalf("got %+v", r)
	}
	r, err = ParseRetryRule(" push.batch = fixed:delay=2s ", nil)
	if err != nil || r.Key != (RetryKey{GatewayPush, ModeBatch}) || r.Policy != FixedDelay(2*time.Second) {
		t.Fatalf("got %+v, %v", r, err)
	}
	r, err = ParseRetryRule("default=exponential:jitter=none,factor=3", nil)
	if err != nil || r.Key != (RetryKey{}) || r.Policy.(Exponential).Factor != 3 {
		t.Fatalf("got %+v, %v", r, err)
	}
	if r.Key.String() != "default" || (RetryKey{GatewaySMS, ModeBatch}).String() != "sms.batch" {
		t.Error("keys do not render as written")
	}
}

func TestParseRetryRuleNamesTheBadPart(t *testing.T) {
	cases := map[string]string{
		"sms":                                     "want KEY=POLICY",
		"fax=fixed":                               `gateway type "fax"`,
		"sms.slow=fixed":                          `mode "slow"`,
		"sms=linear":                              `unknown policy "linear"`,
		"sms=fixed:delay=soon":                    `delay "soon" is not a duration`,
		"sms=fixed:delay=-1s":                     "delay must be positive",
		"sms=fixed:base=1s":                       `unknown parameter "base"`,
		"sms=exponential:base=2s,max=1s":          "max (1s) must not be below base (2s)",
		"sms=exponential:jitter=half":             `jitter must be none, full or equal, got "half"`,
		"sms=exponential:factor=x":                `factor "x" is not a number`,
		"sms=exponential:factor=0.5":              "factor must be at least 1",
		"sms=exponential:base=1s,base=2s":         `"base" is given twice`,
		"sms=exponential:base":                    `parameter "base": want name=value`,
		"sms=exponential:cap=1s":                  `unknown parameter "cap"`,
		"push.realtime=exponential:jitter=full,x": `parameter "x"`,
	}
	for in, want := range cases {
		_, err := ParseRetryRule(in, NewRandom(1))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRetryRule(%q) = %v, want an error containing %q", in, err, want)
		}
	}
	if _, err := ParseRetryRule("sms=exponential:jitter=full", nil); err == nil || !strings.Contains(err.Error(), "random source") {
		t.Errorf("full jitter without a random source: %v", err)
	}
}
