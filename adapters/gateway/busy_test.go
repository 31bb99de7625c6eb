package gateway_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// A 429 or 503 with a Retry-After header is a busy gateway: the error says
// how long it asked callers to wait (ports.RetryAfter), keeps its kind, and
// is no lost answer. Other statuses, and these without a wait, are not.
func TestBusyGatewayAnswersCarryTheirRetryAfter(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, c := range []struct {
		status     int
		header     string
		wantBusy   bool
		atLeast    time.Duration
		atMost     time.Duration
		wantInText string
	}{
		{http.StatusTooManyRequests, "7", true, 7 * time.Second, 7 * time.Second, "(Retry-After: 7s)"},
		{http.StatusServiceUnavailable, "0", true, 0, 0, "(Retry-After: 0s)"},
		{http.StatusServiceUnavailable, date, true, 80 * time.Second, 90 * time.Second, "Retry-After"},
		{http.StatusTooManyRequests, "", false, 0, 0, ""},
		{http.StatusTooManyRequests, "soon", false, 0, 0, ""},
		{http.StatusInternalServerError, "7", false, 0, 0, ""},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if c.header != "" {
				w.Header().Set("Retry-After", c.header)
			}
			w.WriteHeader(c.status)
		}))
		client := newClient(t, core.GatewaySMS, gateway.Config{})
		_, err := client.Submit(t.Context(), params(core.GatewaySMS, srv.URL, "ref-1", `{}`))
		srv.Close()
		if gateway.KindOf(err) != gateway.KindHTTPStatus || !errors.Is(err, gateway.ErrHTTPStatus) || errors.Is(err, ports.ErrAnswerLost) {
			t.Errorf("%d %q: %v (kind %s), want an HTTP status error that is no lost answer", c.status, c.header, err, gateway.KindOf(err))
		}
		wait, busy := ports.RetryAfter(err)
		if busy != c.wantBusy || wait < c.atLeast || wait > c.atMost {
			t.Errorf("%d %q: RetryAfter = %v, %v; want busy=%v within [%v, %v]", c.status, c.header, wait, busy, c.wantBusy, c.atLeast, c.atMost)
		}
		if c.wantInText != "" && (err == nil || !strings.Contains(err.Error(), c.wantInText)) {
			t.Errorf("%d %q: error %q does not say %q", c.status, c.header, err, c.wantInText)
		}
	}
}
