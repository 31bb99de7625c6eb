package prometheus

import (
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/ports"
)

func TestAuthEventsAppearInExposition(t *testing.T) {
	m := New()
	m.AuthFailed(ports.SurfaceAPI)
	m.AuthFailed(ports.SurfaceAPI)
	m.AuthFailed(ports.SurfaceConsole)
	m.AuthThrottled(ports.SurfaceConsole)
	text := scrape(t, m)
	for _, want := range []string{
		`submission_manager_auth_failures_total{surface="api"} 2`,
		`submission_manager_auth_failures_total{surface="console"} 1`,
		`submission_manager_auth_throttled_total{surface="console"} 1`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
}
