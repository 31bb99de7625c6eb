package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
)

// TestRunNowOnStores runs the operator's actions on the real service, a
// leader and an API-only instance on one database, per store: an intent
// scheduled an hour ahead and made due now is attempted by the leader at
// once; a paused gateway still holds such an intent (the leader defers it,
// no call is made) until it is resumed; a cancel ends a scheduled intent
// and the leader never attempts it.
func TestRunNowOnStores(t *testing.T) {
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			leader, other, sim := startLeaderAndAPIOnly(t, s)
			t.Run("MadeDueOnAnotherInstance", func(t *testing.T) { testRunNowAttempted(t, other.api, "due-elsewhere") })
			t.Run("PausedGatewayHoldsIt", func(t *testing.T) { testRunNowPaused(t, leader, other, sim) })
			t.Run("CancelledIsNeverAttempted", func(t *testing.T) { testCancelScheduled(t, other.api, sim) })
			t.Run("MadeDueOnTheLeader", func(t *testing.T) {
				// The leader keeps the state of the intents it created (and
				// of those it deferred or retried) in its known-intent
				// cache; the refresh's row, whose next_due_at the run now
				// moved, replaces the cached due time
				// (app/executor/schedule.go, noteRow).
				testRunNowAttempted(t, leader.api, "due-on-leader")
			})
		})
	}
}

// startLeaderAndAPIOnly starts a leader and an API-only instance on one
// new database of s, with the standard targets and no keys.
func startLeaderAndAPIOnly(t *testing.T, s store) (leader, other service, sim *gatewaysim.Simulator) {
	t.Helper()
	sim = startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, standardTargets(sim))
	cfg := testConfig(dir, registry)
	s.database(t)(&cfg)
	cfg.HolderID = "leader"
	leader = startService(t, cfg)
	haPoll(t, "the first instance leading", func() bool { return strings.HasPrefix(readyz(t, leader.api), "mode=leader") })
	apiOnly := cfg
	apiOnly.HolderID, apiOnly.APIOnly, apiOnly.Migrate = "api-only", true, false
	return leader, startService(t, apiOnly), sim
}

// submitLater creates an intent whose first attempt is due in an hour.
func submitLater(t *testing.T, api *client.ClientWithResponses, id, target string) time.Time {
	t.Helper()
	notBefore := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	res, err := api.SubmitIntentWithResponse(context.Background(), nil, client.SubmitIntentJSONRequestBody{
		IntentId: id, SubmissionTarget: target, Payload: json.RawMessage(`{"to":"+15550100"}`), NotBefore: &notBefore,
	})
	if err != nil || res.JSON201 == nil {
		t.Fatalf("submitting %s: %v %s", id, err, res.Body)
	}
	return notBefore
}

// runNow asks for the action through api and returns the intent answered.
func runNow(t *testing.T, api *client.ClientWithResponses, id string) client.Intent {
	t.Helper()
	res, err := api.RunIntentNowWithResponse(context.Background(), id, client.IntentActionRequest{})
	if err != nil || res.JSON200 == nil {
		t.Fatalf("run now %s: %v %d %s", id, err, res.StatusCode(), res.Body)
	}
	return *res.JSON200
}

// testRunNowAttempted: the intent made due is attempted by the leader and
// accepted, long before its notBefore, and its history shows the action.
func testRunNowAttempted(t *testing.T, api *client.ClientWithResponses, id string) {
	notBefore := submitLater(t, api, id, "sms.realtime")
	answered := runNow(t, api, id)
	if answered.Status != client.IntentStatusPending || answered.Events == nil || len(*answered.Events) != 1 ||
		(*answered.Events)[0].Action != client.EventActionRunNow || (*answered.Events)[0].Surface != client.EventSurfaceAPI {
		t.Fatalf("run now answered %+v", answered)
	}
	in := waitTerminal(t, api, id)
	if in.Status != client.IntentStatusAccepted || len(in.Attempts) != 1 || !in.Attempts[0].StartedAt.Before(notBefore.Add(-50*time.Minute)) {
		t.Fatalf("%s after run now: %s with attempts %+v (notBefore %s)", id, in.Status, in.Attempts, notBefore)
	}
	if in.Attempts[0].HolderId == nil || *in.Attempts[0].HolderId != "leader" {
		t.Errorf("%s attempted by %v, want the leader", id, in.Attempts[0].HolderId)
	}
}

// testRunNowPaused: with its gateway paused, an intent made due is
// deferred by the leader (counted as deferred for the pause) and the
// gateway gets no call; once resumed, it is attempted and accepted.
func testRunNowPaused(t *testing.T, leader, other service, sim *gatewaysim.Simulator) {
	ctx := context.Background()
	push := client.GatewayType("push")
	if res, err := other.api.PauseGatewayWithResponse(ctx, client.GatewaySelector{GatewayType: &push}); err != nil || res.JSON200 == nil {
		t.Fatalf("pause: %v %s", err, res.Body)
	}
	waitPausesRead(t, leader.srv.URL(), 1)
	const id = "held-by-pause"
	submitLater(t, other.api, id, "push.oneshot")
	url := sim.URL(core.GatewayPush)
	before := deferredFor(t, leader.srv.URL(), url)
	calls := sim.Stats().Total
	runNow(t, other.api, id)
	haPoll(t, "the leader deferring the intent made due behind the pause", func() bool {
		return deferredFor(t, leader.srv.URL(), url) > before
	})
	if in := getIntent(t, other.api, id); in.Status != client.IntentStatusPending || len(in.Attempts) != 0 {
		t.Fatalf("behind the pause the intent is %s with %d attempts", in.Status, len(in.Attempts))
	}
	if n := sim.Stats().Total; n != calls {
		t.Fatalf("the paused gateway received %d calls", n-calls)
	}
	if res, err := other.api.ResumeGatewayWithResponse(ctx, client.GatewaySelector{GatewayType: &push}); err != nil || res.JSON200 == nil {
		t.Fatalf("resume: %v %s", err, res.Body)
	}
	if in := waitTerminal(t, other.api, id); in.Status != client.IntentStatusAccepted || len(in.Attempts) != 1 {
		t.Fatalf("after the resume: %s with %d attempts", in.Status, len(in.Attempts))
	}
}

// deferredAttempts reads the leader's count of attempts deferred because
// their gateway was paused, per gateway URL.
var deferredAttempts = regexp.MustCompile(`(?m)^submission_manager_attempts_deferred_total\{([^}]*)\} ([0-9.e+]+)$`)

// deferredFor is the leader's count of attempts deferred for a pause of
// the gateway at url.
func deferredFor(t *testing.T, baseURL, url string) float64 {
	t.Helper()
	code, body, err := haGet(baseURL + "/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %v", code, err)
	}
	total := 0.0
	for _, m := range deferredAttempts.FindAllStringSubmatch(body, -1) {
		if strings.Contains(m[1], fmt.Sprintf("%q", url)) && strings.Contains(m[1], `reason="paused"`) {
			n, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
	}
	return total
}

// testCancelScheduled: a cancelled intent ends exhausted (cancelled) at
// once; made due afterwards it is refused, and the gateway never sees it.
func testCancelScheduled(t *testing.T, api *client.ClientWithResponses, sim *gatewaysim.Simulator) {
	const id = "cancelled-before-due"
	submitLater(t, api, id, "sms.realtime")
	res, err := api.CancelIntentWithResponse(context.Background(), id, client.IntentActionRequest{})
	if err != nil || res.JSON200 == nil || res.JSON200.Status != client.IntentStatusExhausted ||
		res.JSON200.ExhaustedReason == nil || *res.JSON200.ExhaustedReason != client.Cancelled {
		t.Fatalf("cancel: %v %d %s", err, res.StatusCode(), res.Body)
	}
	ran, err := api.RunIntentNowWithResponse(context.Background(), id, client.IntentActionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	problemOf(t, ran.StatusCode(), ran.HTTPResponse.Header.Get("Content-Type"), ran.Body, http.StatusConflict, "intent-ended")
	if in := getIntent(t, api, id); len(in.Attempts) != 0 || in.Events == nil || len(*in.Events) != 1 {
		t.Fatalf("the cancelled intent has attempts %+v and events %+v", in.Attempts, in.Events)
	}
	if n := sim.Reference(id).Submissions; n != 0 {
		t.Fatalf("the gateway was called %d times for the cancelled intent", n)
	}
}
