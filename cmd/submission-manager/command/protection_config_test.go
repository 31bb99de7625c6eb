package command

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/core"
)

func TestProtectionDefaultsTurnTheBreakerOn(t *testing.T) {
	cfg, err := parseServeConfig(nil, envOf(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Protection.executorProtection(cfg.RetryDelay, nil)
	if p.Breaker == nil || *p.Breaker != core.DefaultBreakerConfig() || len(p.Limits) != 0 {
		t.Fatalf("default protection = %+v", p)
	}
	if got := p.Retry.For(core.GatewaySMS, core.ModeRealtime); got != core.FixedDelay(core.DefaultRetryDelay) {
		t.Fatalf("default retry = %v, want the unchanged fixed 5 s", got)
	}
	off, err := parseServeConfig([]string{"--breaker=false"}, envOf(nil), &bytes.Buffer{})
	if err != nil || off.Protection.executorProtection(time.Second, nil).Breaker != nil {
		t.Fatalf("--breaker=false: %v %+v", err, off.Protection)
	}
}

func TestProtectionFlagsAndEnvironment(t *testing.T) {
	cfg, err := parseServeConfig([]string{
		"--retry", "sms=exponential:base=1s,max=60s,jitter=full",
		"--retry", "push.batch=fixed:delay=10s",
		"--breaker-threshold", "3", "--breaker-open", "2s", "--breaker-max-open", "20s",
		"--breaker-failure-reasons", "provider_failure",
		"--gateway-limit", "http://127.0.0.1:8080=max-in-flight=8,rate=100,burst=20",
	}, envOf(map[string]string{
		"SUBMISSION_GATEWAY_LIMIT": "ignored: the flag wins",
		"SUBMISSION_RETRY_DELAY":   "2s",
	}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Protection.executorProtection(cfg.RetryDelay, nil)
	if e, ok := p.Retry.For(core.GatewaySMS, core.ModeBatch).(core.Exponential); !ok || e.Max != time.Minute {
		t.Fatalf("sms retry = %v", p.Retry.For(core.GatewaySMS, core.ModeBatch))
	}
	if got := p.Retry.For(core.GatewayPush, core.ModeBatch); got != core.FixedDelay(10*time.Second) {
		t.Fatalf("push.batch retry = %v", got)
	}
	if got := p.Retry.For(core.GatewayPush, core.ModeRealtime); got != core.FixedDelay(2*time.Second) {
		t.Fatalf("push.realtime retry = %v, want --retry-delay", got)
	}
	if b := *p.Breaker; b.Threshold != 3 || b.OpenFor != 2*time.Second || b.MaxOpenFor != 20*time.Second || b.Window != core.DefaultBreakerWindow {
		t.Fatalf("breaker = %+v", b)
	}
	want := protection.GatewayLimit{GatewayURL: "http://127.0.0.1:8080", MaxInFlight: 8, Rate: 100, Burst: 20}
	if len(p.Limits) != 1 || p.Limits[0] != want || p.FailureReasons[0] != "provider_failure" {
		t.Fatalf("limits = %+v, reasons = %v", p.Limits, p.FailureReasons)
	}

	env, err := parseServeConfig(nil, envOf(map[string]string{
		"SUBMISSION_RETRY":         "sms=fixed:delay=1s; push=exponential:jitter=none",
		"SUBMISSION_GATEWAY_LIMIT": "sms=max-in-flight=4;push=rate=50",
	}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if len(env.Protection.Retry) != 2 || len(env.Protection.Limits) != 2 || env.Protection.Limits[1].Burst != 50 {
		t.Fatalf("from the environment: %+v", env.Protection)
	}
}

func TestBadProtectionValuesNameTheFlag(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"bad retry", []string{"--retry", "sms=exponential:jitter=half"}, nil, []string{"-retry", "jitter"}},
		{"bad retry env", nil, map[string]string{"SUBMISSION_RETRY": "fax=fixed"}, []string{"SUBMISSION_RETRY", "fax"}},
		{"zero threshold", []string{"--breaker-threshold", "0"}, nil, []string{"--breaker-threshold"}},
		{"max below open", []string{"--breaker-open", "10s", "--breaker-max-open", "5s"}, nil, []string{"--breaker-max-open", "--breaker-open"}},
		{"unknown reason", []string{"--breaker-failure-reasons", "bad_luck"}, nil, []string{"--breaker-failure-reasons", "bad_luck"}},
		{"limit key", []string{"--gateway-limit", "fax=rate=1"}, nil, []string{"-gateway-limit", "fax"}},
		{"limit param", []string{"--gateway-limit", "sms=speed=1"}, nil, []string{"-gateway-limit", "speed"}},
		{"limit nothing", []string{"--gateway-limit", "sms=max-in-flight=0"}, nil, []string{"--gateway-limit", "limits nothing"}},
		{"zero retry-after", []string{"--gateway-max-retry-after", "0s"}, nil, []string{"--gateway-max-retry-after"}},
		{"retry-after env", nil, map[string]string{"SUBMISSION_GATEWAY_MAX_RETRY_AFTER": "-1s"}, []string{"--gateway-max-retry-after"}},
		{"limit twice", []string{"--gateway-limit", "sms=rate=1", "--gateway-limit", "sms=rate=2"}, nil, []string{"--gateway-limit", "twice"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			_, err := parseServeConfig(tc.args, envOf(tc.env), &stderr)
			var use *usageError
			var silent *silentError
			if !errors.As(err, &use) && !errors.As(err, &silent) {
				t.Fatalf("got %v, want a usage error", err)
			}
			msg := err.Error()
			if silent != nil { // the flag package printed the message
				msg = strings.SplitN(stderr.String(), "\n", 2)[0]
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
}
