package gatewaysim_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/gatewayapi"
	"github.com/submissionmanager/submission-manager/core"
)

// submitTraced posts a submission of ref with one header line per
// traceparent given (none for no header).
func submitTraced(t *testing.T, c *http.Client, baseURL, ref, body string, traceParents ...string) {
	t.Helper()
	if body == "" {
		body = `{"reference":` + quote(ref) + `,"payload":{}}`
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, baseURL+"/v1/submissions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for _, tp := range traceParents {
		req.Header.Add("traceparent", tp)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("submission of %q answered %d", ref, resp.StatusCode)
	}
}

const (
	traceA = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	traceB = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
)

// TestTraceParentOfTheLatestSubmissionIsRecorded: each reference shows
// the traceparent header of its latest submission as received, in Go and
// in GET /stats, so a test or an operator can see in which trace a
// gateway was called; a submission without one clears it.
func TestTraceParentOfTheLatestSubmissionIsRecorded(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	sms := sim.URL(core.GatewaySMS)

	submitTraced(t, c, sms, "traced", "", traceA)
	if got := sim.Reference("traced").LastTraceParent; got != traceA {
		t.Fatalf("after a submission in trace A: LastTraceParent %q, want %q", got, traceA)
	}
	submitTraced(t, c, sms, "traced", "", traceB)
	if got := sim.Reference("traced").LastTraceParent; got != traceB {
		t.Fatalf("after a submission in trace B: LastTraceParent %q, want the latest %q", got, traceB)
	}
	api, err := gatewayapi.NewClientWithResponses(sms, gatewayapi.WithHTTPClient(c))
	if err != nil {
		t.Fatal(err)
	}
	if got := statsOf(t, api, "traced").LastTraceParent; got != traceB {
		t.Fatalf("GET /stats: lastTraceParent %q, want %q", got, traceB)
	}
	if got := sim.Stats().References["traced"].LastTraceParent; got != traceB {
		t.Fatalf("merged stats: LastTraceParent %q, want %q", got, traceB)
	}

	submitTraced(t, c, sms, "traced", "")
	if got := sim.Reference("traced").LastTraceParent; got != "" {
		t.Fatalf("after a submission without traceparent: LastTraceParent %q, want none", got)
	}
	if got := statsOf(t, api, "traced").LastTraceParent; got != "" {
		t.Fatalf("GET /stats after a submission without traceparent: lastTraceParent %q, want none", got)
	}
}

// TestTraceParentIsRecordedAsReceived: the simulator does not judge the
// header: a malformed value, several lines, and the header of a submission
// it refused as invalid_request are all shown as they came, since showing
// what a caller got wrong is the point.
func TestTraceParentIsRecordedAsReceived(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	push := sim.URL(core.GatewayPush)

	submitTraced(t, c, push, "twice", "", traceA, traceB)
	if got, want := sim.Reference("twice").LastTraceParent, traceA+","+traceB; got != want {
		t.Errorf("two header lines: LastTraceParent %q, want %q", got, want)
	}
	submitTraced(t, c, push, "upper", "", strings.ToUpper(traceA))
	if got := sim.Reference("upper").LastTraceParent; got != strings.ToUpper(traceA) {
		t.Errorf("a malformed header: LastTraceParent %q, want it as sent", got)
	}
	submitTraced(t, c, push, "no-payload", `{"reference":"no-payload"}`, traceA)
	if rs := sim.Reference("no-payload"); rs.Rejected != 1 || rs.LastTraceParent != traceA {
		t.Errorf("a refused submission: %+v, want one rejection in trace A", rs)
	}
}

func statsOf(t *testing.T, api *gatewayapi.ClientWithResponses, ref string) gatewayapi.ReferenceStats {
	t.Helper()
	res, err := api.GetStatsWithResponse(t.Context(), &gatewayapi.GetStatsParams{Reference: &ref})
	if err != nil {
		t.Fatalf("GET /stats?reference=%s: %v", ref, err)
	}
	if res.JSON200 == nil {
		t.Fatalf("GET /stats?reference=%s: %d %s", ref, res.StatusCode(), res.Body)
	}
	return res.JSON200.References[ref]
}

// TestLookupsAreCountedWithTheirTraceParent: each reference counts its
// lookups and shows the traceparent header of the latest, apart from its
// submissions', so a test can see that a caller resolving an attempt in
// doubt asked in the attempt's trace; a reference never submitted shows
// its lookups too.
func TestLookupsAreCountedWithTheirTraceParent(t *testing.T) {
	sim := start(t, gatewaysim.Config{})
	c := httpClient(t)
	sms := sim.URL(core.GatewaySMS)
	lookUp := func(ref string, traceParents ...string) gatewayapi.LookupAnswerLookup {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, sms+"/v1/submissions/"+ref, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range traceParents {
			req.Header.Add("traceparent", tp)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var ans gatewayapi.LookupAnswer
		if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("lookup of %q: %d %v", ref, resp.StatusCode, err)
		}
		return ans.Lookup
	}

	submitTraced(t, c, sms, "known", "", traceA)
	if got := lookUp("known", traceB); got != gatewayapi.Answered {
		t.Fatalf("lookup of a submitted reference: %q, want answered", got)
	}
	if rs := sim.Reference("known"); rs.Lookups != 1 || rs.LastLookupTraceParent != traceB || rs.LastTraceParent != traceA || rs.Submissions != 1 {
		t.Fatalf("after a lookup in trace B of a submission in trace A: %+v", rs)
	}
	api, err := gatewayapi.NewClientWithResponses(sms, gatewayapi.WithHTTPClient(c))
	if err != nil {
		t.Fatal(err)
	}
	if rs := statsOf(t, api, "known"); rs.Lookups != 1 || rs.LastLookupTraceParent != traceB {
		t.Fatalf("GET /stats: lookups %d, lastLookupTraceParent %q; want 1 and %q", rs.Lookups, rs.LastLookupTraceParent, traceB)
	}

	if got := lookUp("unknown", traceA); got != gatewayapi.NeverReceived {
		t.Fatalf("lookup of a reference never submitted: %q, want never_received", got)
	}
	lookUp("unknown")
	if rs := sim.Stats().References["unknown"]; rs.Lookups != 2 || rs.Submissions != 0 || rs.LastLookupTraceParent != "" {
		t.Fatalf("after two lookups of a reference never submitted, the second without traceparent: %+v", rs)
	}
}
