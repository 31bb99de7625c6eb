package gatewaysim_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/gatewayapi"
	"github.com/submissionmanager/submission-manager/core"
)

func TestOutageFailsEveryCallAndCountsThemOverTheControlEndpoint(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	url := sim.URL(core.GatewaySMS)
	api, err := gatewayapi.NewClientWithResponses(url, gatewayapi.WithHTTPClient(c))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := sim.Script("scripted", gatewaysim.StepAccepted); err != nil {
		t.Fatal(err)
	}
	on, err := api.SetOutageWithResponse(ctx, gatewayapi.OutageRequest{On: true})
	if err != nil || on.StatusCode() != http.StatusNoContent {
		t.Fatalf("start outage: %v %s", err, on.Body)
	}
	for _, ref := range []string{"a", "b", "scripted"} {
		if r := submit(ctx, c, url, ref, `{}`); r.code != http.StatusServiceUnavailable {
			t.Fatalf("%s during the outage: code %d %s", ref, r.code, r.body)
		}
	}
	stats, err := api.GetStatsWithResponse(ctx, nil)
	if err != nil || stats.JSON200 == nil {
		t.Fatalf("stats: %v", err)
	}
	if o := stats.JSON200.Outage; !o.On || o.Calls != 3 || o.Mode == nil || *o.Mode != "http_503" {
		t.Fatalf("outage stats during the outage = %+v", o)
	}
	if st := sim.StatsOf(core.GatewayPush); st.Outage.On {
		t.Fatal("an outage set on the sms listener took the push gateway down")
	}

	off, err := api.SetOutageWithResponse(ctx, gatewayapi.OutageRequest{On: false})
	if err != nil || off.StatusCode() != http.StatusNoContent {
		t.Fatalf("end outage: %v %s", err, off.Body)
	}
	// The script was left untouched by the outage and is used now.
	if o := answerOf(t, submit(ctx, c, url, "scripted", `{}`)); o.Status != core.OutcomeAccepted {
		t.Fatalf("after the outage: %+v", o)
	}
	st := sim.StatsOf(core.GatewaySMS)
	if st.Outage.On || st.Outage.Calls != 3 || st.Total != 4 || st.Faults != 3 || st.Accepted != 1 {
		t.Fatalf("stats after the outage = %+v", st)
	}
	// A new outage counts from zero; drop closes the connection.
	if err := sim.SetOutage(true, gatewaysim.ModeDrop); err != nil {
		t.Fatal(err)
	}
	if r := submit(ctx, c, url, "a", `{}`); r.err == nil {
		t.Fatalf("drop outage answered %d", r.code)
	}
	if st := sim.Stats(); st.Outage.Calls != 1 || !st.Outage.On {
		t.Fatalf("second outage stats = %+v", st.Outage)
	}
	sim.Reset()
	if st := sim.StatsOf(core.GatewaySMS); st.Outage.On {
		t.Fatal("reset left the outage on")
	}
}

func TestOutageRefusesModesThatAcceptOrAnswer(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	api, err := gatewayapi.NewClientWithResponses(sim.URL(core.GatewaySMS), gatewayapi.WithHTTPClient(httpClient(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"normal", "accept_then_drop", "sleepy"} {
		r, err := api.SetOutageWithResponse(t.Context(), gatewayapi.OutageRequest{On: true, Mode: &m})
		if err != nil || r.StatusCode() != http.StatusBadRequest || r.JSON400 == nil || !strings.Contains(r.JSON400.Error, m) {
			t.Errorf("outage mode %s: %v %s", m, err, r.Body)
		}
	}
	if err := sim.SetOutage(true, gatewaysim.ModeNormal); err == nil {
		t.Error("SetOutage accepted normal")
	}
}
