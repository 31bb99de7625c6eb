package prometheus

import (
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
)

func TestProtectionEventsAppearInExposition(t *testing.T) {
	m := New()
	const url = "http://127.0.0.1:8080"
	m.BreakerTransition(url, core.BreakerClosed, core.BreakerOpen)
	m.AttemptDeferred(url, "breaker_open")
	m.AttemptDeferred(url, "breaker_open")
	m.CallLimited(url, "rate")
	m.GatewaysPaused(2)
	text := scrape(t, m)
	for _, want := range []string{
		`submission_manager_gateway_breaker_state{gateway_url="http://127.0.0.1:8080",state="open"} 1`,
		`submission_manager_gateway_breaker_state{gateway_url="http://127.0.0.1:8080",state="closed"} 0`,
		`submission_manager_gateway_breaker_transitions_total{from="closed",gateway_url="http://127.0.0.1:8080",to="open"} 1`,
		`submission_manager_attempts_deferred_total{gateway_url="http://127.0.0.1:8080",reason="breaker_open"} 2`,
		`submission_manager_gateway_calls_limited_total{gateway_url="http://127.0.0.1:8080",limit="rate"} 1`,
		`submission_manager_gateways_paused 2`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	m.BreakerTransition(url, core.BreakerHalfOpen, core.BreakerClosed)
	if text := scrape(t, m); !strings.Contains(text, `submission_manager_gateway_breaker_state{gateway_url="http://127.0.0.1:8080",state="closed"} 1`) {
		t.Error("state gauge did not follow the transition to closed")
	}
}
