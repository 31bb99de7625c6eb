package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// pauseBook is a gateway operator over a map, standing in for the engine's
// GatewayService (adapters may not import the application).
type pauseBook struct {
	pauses map[string]core.GatewayPause
}

var _ ports.GatewayOperator = (*pauseBook)(nil)

func (b *pauseBook) Gateways(context.Context) (ports.GatewayOverview, error) {
	o := ports.GatewayOverview{Leader: true, Gateways: []ports.GatewayStatus{{
		GatewayURL: "http://sms.test", GatewayType: core.GatewaySMS, Targets: []string{"sms.realtime"},
		Executor: &ports.GatewayExecution{Breaker: core.BreakerOpen, ProbeAt: time.Unix(100, 0).UTC(),
			MaxInFlight: 4, Rate: 2.5, Burst: 5, RecentCalls: 10, RecentFailures: 7},
	}}}
	for _, p := range b.pauses {
		o.Pauses = append(o.Pauses, p)
		o.Gateways[0].Paused = o.Gateways[0].Paused || p.Matches("http://sms.test", core.GatewaySMS)
	}
	return o, nil
}

func (b *pauseBook) PauseGateway(_ context.Context, t core.GatewayType, url string) (core.GatewayPause, error) {
	if err := core.ValidateGatewaySelector(t, url); err != nil {
		return core.GatewayPause{}, err
	}
	p := core.GatewayPause{GatewayType: t, GatewayURL: url, PausedAt: time.Unix(50, 0).UTC()}
	b.pauses[p.Key()] = p
	return p, nil
}

func (b *pauseBook) ResumeGateway(_ context.Context, t core.GatewayType, url string) (bool, error) {
	if err := core.ValidateGatewaySelector(t, url); err != nil {
		return false, err
	}
	k := core.GatewayPause{GatewayType: t, GatewayURL: url}.Key()
	_, ok := b.pauses[k]
	delete(b.pauses, k)
	return ok, nil
}

func TestGatewayRoutesTranslateThePort(t *testing.T) {
	c := start(t, httpapi.Config{Gateways: &pauseBook{pauses: map[string]core.GatewayPause{}}})
	ctx := context.Background()
	sms := client.GatewayType("sms")
	p, err := c.PauseGatewayWithResponse(ctx, client.GatewaySelector{GatewayType: &sms})
	if err != nil || p.JSON200 == nil || *p.JSON200.GatewayType != sms || p.JSON200.GatewayUrl != nil {
		t.Fatalf("pause: %v %s", err, p.Body)
	}
	l, err := c.ListGatewaysWithResponse(ctx)
	if err != nil || l.JSON200 == nil {
		t.Fatalf("list: %v %s", err, l.Body)
	}
	g := l.JSON200.Gateways[0]
	if !l.JSON200.Leader || !g.Paused || len(l.JSON200.Pauses) != 1 || g.Executor == nil ||
		*g.Executor.Breaker != "open" || *g.Executor.Rate != 2.5 || g.Executor.RecentFailures != 7 {
		t.Fatalf("list = %s", l.Body)
	}
	r, err := c.ResumeGatewayWithResponse(ctx, client.GatewaySelector{GatewayType: &sms})
	if err != nil || r.JSON200 == nil || !r.JSON200.WasPaused {
		t.Fatalf("resume: %v %s", err, r.Body)
	}
}

func TestGatewayRoutesRefuseBadSelectorsNamingTheField(t *testing.T) {
	c := start(t, httpapi.Config{Gateways: &pauseBook{pauses: map[string]core.GatewayPause{}}})
	ctx := context.Background()
	for body, field := range map[string]string{
		`{}`:                        "gatewayType",
		`{"gatewayUrl":"ftp://gw"}`: "gatewayUrl",
		`{"gatewayType":"fax"}`:     "gatewayType",
		`{"gatewayType":"sms","gatewayUrl":"http://x"}`: "gatewayUrl",
	} {
		res, err := c.PauseGatewayWithBodyWithResponse(ctx, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		p := problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 422, "invalid-field")
		if got := invalidField(t, p); got != field {
			t.Errorf("%s: invalid field %q, want %q", body, got, field)
		}
	}
}

func TestGatewayRoutesWithoutAnOperatorAreNotAvailable(t *testing.T) {
	c := start(t, httpapi.Config{})
	res, err := c.ListGatewaysWithResponse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	problem(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 501, "not-available")
}
