package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/core"
)

// The outage test's scale is the issue's: 5,000 max_attempts intents, a
// gateway down for 20 s, and the breaker's defaults (open 5 s, doubling up
// to 15 s): it probes after 5 s and 15 s.
const (
	outageIntents         = 5000
	outageDeadlineIntents = 300
	outageLength          = 20 * time.Second
	outageMaxInFlight     = 8
	outageThreshold       = 5
	outageOpenFor         = 5 * time.Second
	outageMaxOpenFor      = 15 * time.Second
	// outageProbes bounds the probes during the outage: the breaker opens
	// within the first second and probes after 5 s and 15 s, so 2 fall
	// inside 20 s; one more for timing slack.
	outageProbes = 3
	// outageDeadline is the deadline target's maxAcceptanceSeconds: inside
	// the outage.
	outageDeadline = 8
)

// While the gateway is down, intents wait instead of spending their tries:
// no max_attempts intent exhausts, the gateway sees only the failures that
// opened the breaker, a handful of probes and each deadline intent's one
// last try, and everything is accepted once
// it is back. Deadline intents whose deadline falls inside the outage exhaust
// with deadline_exceeded, and none reaches the gateway after its deadline.
func TestGatewayOutageDefersInsteadOfExhausting(t *testing.T) {
	if testing.Short() {
		t.Skip("an outage of several seconds with 5,000 intents")
	}
	sim := startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	smsURL := sim.URL(core.GatewaySMS)
	writeRegistry(t, registry, []registryTarget{
		{"sms.batch3", "sms", smsURL, "batch", "max_attempts", 0, 3, smsTerminal},
		{"sms.short", "sms", smsURL, "realtime", "deadline", outageDeadline, 0, smsTerminal},
	})
	cfg := testConfig(dir, registry)
	cfg.MaxInFlight = outageMaxInFlight
	cfg.Protection.Breaker = true
	cfg.Protection.BreakerSettings = core.BreakerConfig{
		Threshold: outageThreshold, Window: 10 * time.Second, OpenFor: outageOpenFor, MaxOpenFor: outageMaxOpenFor,
	}
	svc := startService(t, cfg)

	if err := sim.SetOutage(true, ""); err != nil {
		t.Fatal(err)
	}
	outageStart := time.Now()
	submitMany(t, svc.api, "batch", "sms.batch3", outageIntents)
	submitMany(t, svc.api, "short", "sms.short", outageDeadlineIntents)
	// The deadline intents end inside the outage.
	waitNoPending(t, svc.api, "sms.short", outageLength)
	if time.Since(outageStart) < outageLength {
		// Let the outage run its full length before the gateway comes back.
		<-time.After(outageLength - time.Since(outageStart))
	}
	calls := sim.Stats().Outage.Calls
	if err := sim.SetOutage(false, ""); err != nil {
		t.Fatal(err)
	}
	probes := max(outageProbes, probesWithin(time.Since(outageStart))+1)
	// Each deadline intent has one last try, which the open breaker lets
	// through a second before its deadline (core.LastTry).
	maxCalls := int64(outageMaxInFlight + outageThreshold + probes + outageDeadlineIntents)
	t.Logf("the gateway received %d calls during the %s outage (bound %d)", calls, outageLength, maxCalls)
	if calls > maxCalls {
		t.Errorf("the gateway received %d calls during the outage, want at most %d "+
			"(%d in flight when the breaker opened, %d failures to open it, %d probes, %d last tries)",
			calls, maxCalls, outageMaxInFlight, outageThreshold, probes, outageDeadlineIntents)
	}

	waitNoPending(t, svc.api, "sms.batch3", 2*terminalWait)
	batch := listTarget(t, svc.api, "sms.batch3")
	if len(batch) != outageIntents {
		t.Fatalf("%d batch intents listed, want %d", len(batch), outageIntents)
	}
	for _, in := range batch {
		if in.Status != client.IntentStatusAccepted {
			body, _ := json.Marshal(in)
			t.Fatalf("a max_attempts intent did not survive the outage: %s", body)
		}
	}
	// The operator's view after the recovery: the breaker closed again.
	gws, err := svc.api.ListGatewaysWithResponse(context.Background())
	if err != nil || gws.JSON200 == nil || !gws.JSON200.Leader || len(gws.JSON200.Gateways) != 1 {
		t.Fatalf("GET /v1/gateways: %v %s", err, gws.Body)
	}
	if g := gws.JSON200.Gateways[0]; g.GatewayUrl != smsURL || g.Executor == nil || g.Executor.Breaker == nil ||
		*g.Executor.Breaker != "closed" || g.Executor.RecentCalls == 0 || len(g.Targets) != 2 {
		t.Fatalf("the gateway after the outage: %s", gws.Body)
	}
	for _, in := range listTarget(t, svc.api, "sms.short") {
		if in.Status != client.IntentStatusExhausted || in.ExhaustedReason == nil ||
			*in.ExhaustedReason != client.DeadlineExceeded {
			body, _ := json.Marshal(in)
			t.Fatalf("a deadline intent whose deadline fell inside the outage: %s", body)
		}
		deadline := in.CreatedAt.Add(outageDeadline * time.Second)
		for _, a := range in.Attempts {
			sent := a.Error == nil || *a.Error != executor.DeadlinePassedError
			if sent && !a.StartedAt.Before(deadline) {
				t.Fatalf("intent %s was attempted %s after its deadline", in.IntentId, a.StartedAt.Sub(deadline))
			}
		}
	}
}

// probesWithin counts the probe times of a breaker that opened at zero and
// failed every probe, up to d: on a slow machine the submissions may stretch
// the outage, and the bound follows the outage's real length.
func probesWithin(d time.Duration) int {
	n := 0
	for at, interval := outageOpenFor, outageOpenFor; at <= d; at += interval {
		n++
		interval = min(2*interval, outageMaxOpenFor)
	}
	return n
}

// submitMany creates n intents named prefix-i on target, 16 at a time.
func submitMany(t *testing.T, c *client.ClientWithResponses, prefix, target string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	ids := make(chan int)
	for range 16 {
		wg.Go(func() {
			for i := range ids {
				res, err := c.SubmitIntentWithResponse(context.Background(), nil, client.SubmitIntentJSONRequestBody{
					IntentId: fmt.Sprintf("%s-%05d", prefix, i), SubmissionTarget: target, Payload: json.RawMessage(`{}`),
				})
				if err == nil && res.StatusCode() != 201 {
					err = fmt.Errorf("submit %s-%d: %d %s", prefix, i, res.StatusCode(), res.Body)
				}
				if err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range n {
		ids <- i
	}
	close(ids)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// waitNoPending polls until the target has no pending intent.
func waitNoPending(t *testing.T, c *client.ClientWithResponses, target string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	pending, limit := client.IntentStatusPending, 1
	for {
		res, err := c.ListIntentsWithResponse(context.Background(), &client.ListIntentsParams{
			Status: &pending, SubmissionTarget: &target, Limit: &limit,
		})
		if err != nil || res.JSON200 == nil {
			t.Fatalf("list pending: %v", err)
		}
		if len(res.JSON200.Intents) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still has pending intents after %s, e.g. %s", target, within, res.JSON200.Intents[0].IntentId)
		}
		<-time.After(50 * time.Millisecond)
	}
}

func listTarget(t *testing.T, c *client.ClientWithResponses, target string) []client.Intent {
	t.Helper()
	limit := 500
	all, _ := listAll(t, c, client.ListIntentsParams{SubmissionTarget: &target, Limit: &limit})
	return all
}
