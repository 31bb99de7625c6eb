package command

import (
	"bytes"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

func TestAccessFlags(t *testing.T) {
	def, err := parseServeConfig(nil, envOf(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if def.Access.SessionTTL != 8*time.Hour || def.Access.Throttle.Burst != core.DefaultAuthFailureBurst ||
		def.Access.Throttle.Interval != core.DefaultAuthFailureInterval || len(def.Access.TrustedProxies) != 0 {
		t.Fatalf("defaults: %+v", def.Access)
	}
	cfg, err := parseServeConfig([]string{"--console-session-ttl", "1h", "--auth-failure-burst", "0"}, envOf(map[string]string{
		"SUBMISSION_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.1,fd00::/8", "SUBMISSION_AUTH_FAILURE_INTERVAL": "1m",
	}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.0.2.1/32"), netip.MustParsePrefix("fd00::/8")}
	if cfg.Access.SessionTTL != time.Hour || !cfg.Access.Throttle.Off() || cfg.Access.Throttle.Interval != time.Minute ||
		!slices.Equal(cfg.Access.TrustedProxies, want) {
		t.Fatalf("parsed: %+v", cfg.Access)
	}
	for flag, args := range map[string][]string{
		"--trusted-proxies":       {"--trusted-proxies", "10.0.0.0/8,haproxy"},
		"--console-session-ttl":   {"--console-session-ttl", "10s"},
		"--auth-failure-burst":    {"--auth-failure-burst", "-1"},
		"--auth-failure-interval": {"--auth-failure-interval", "0s"},
	} {
		var stderr bytes.Buffer
		_, err := parseServeConfig(args, envOf(nil), &stderr)
		if err == nil || !strings.Contains(err.Error()+stderr.String(), flag) {
			t.Errorf("%q: %v %s; want a refusal naming %s", args, err, stderr.String(), flag)
		}
	}
}
