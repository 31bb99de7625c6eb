package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

func lookup(t *testing.T, c *gateway.Client, url, ref string) (ports.LookupResult, error) {
	t.Helper()
	return c.Lookup(context.Background(), ports.LookupParams{GatewayType: core.GatewaySMS, GatewayURL: url, Reference: ref})
}

func TestLookupOnTheSimulator(t *testing.T) {
	sim := startSim(t, gatewaysim.Config{Scripts: map[string][]gatewaysim.Step{
		"rejected-once": {gatewaysim.Step(core.ReasonProviderFailure)},
		"faulted":       {"mode:http_503"},
		"hung-accepted": {"mode:accept_then_drop"},
	}})
	url := sim.URL(core.GatewaySMS)
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	ctx := context.Background()
	for _, ref := range []string{"accepted", "rejected-once", "faulted", "hung-accepted"} {
		_, _ = c.Submit(ctx, params(core.GatewaySMS, url, ref, `{}`))
	}
	given, _ := c.Submit(ctx, params(core.GatewaySMS, url, "accepted", `{}`))
	if given.Reason != core.ReasonDuplicateReference {
		t.Fatalf("second submission answered %+v, want a duplicate", given)
	}
	for _, tc := range []struct {
		ref    string
		answer core.LookupAnswer
		status core.OutcomeStatus
		reason string
	}{
		{"accepted", core.LookupKnown, core.OutcomeAccepted, ""},
		{"rejected-once", core.LookupKnown, core.OutcomeRejected, core.ReasonProviderFailure},
		{"faulted", core.LookupNeverReceived, "", ""},
		{"hung-accepted", core.LookupKnown, core.OutcomeAccepted, ""},
		{"never-sent", core.LookupNeverReceived, "", ""},
	} {
		res, err := lookup(t, c, url, tc.ref)
		if err != nil {
			t.Fatalf("%s: %v", tc.ref, err)
		}
		if res.Answer != tc.answer || res.Outcome.Status != tc.status || res.Outcome.Reason != tc.reason {
			t.Errorf("%s: lookup %+v, want answer %d %s %s", tc.ref, res, tc.answer, tc.status, tc.reason)
		}
	}
	if res, _ := lookup(t, c, url, "accepted"); res.Outcome.MessageID == "" {
		t.Error("the lookup of an acceptance lost its messageId")
	}
}

func TestLookupUnsupported(t *testing.T) {
	off := startSim(t, gatewaysim.Config{NoLookup: true})
	c := newClient(t, core.GatewaySMS, gateway.Config{})
	if res, err := lookup(t, c, off.URL(core.GatewaySMS), "x"); err == nil || res.Answer != core.LookupUnsupported {
		t.Fatalf("a simulator with the lookup off: %+v, %v; want unsupported with an error", res, err)
	}
	for name, h := range map[string]http.HandlerFunc{
		"405": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) },
		"501": func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotImplemented) },
		"200 without lookup": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"accepted"}`))
		},
		"200 unknown lookup": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"lookup":"maybe"}`))
		},
		"answered without answer": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"lookup":"answered"}`))
		},
		"answered with an invalid answer": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"lookup":"answered","answer":{"status":"rejected"}}`))
		},
		"not JSON": func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`<html>`)) },
	} {
		srv := httptest.NewServer(h)
		res, err := lookup(t, c, srv.URL, "x")
		srv.Close()
		if err == nil || res.Answer != core.LookupUnsupported {
			t.Errorf("%s: %+v, %v; want unsupported with an error", name, res, err)
		}
	}
}
