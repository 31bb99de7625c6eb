package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

func wait(n string) *string { return &n }

// submitWaiting submits a scheduled intent with Prefer: wait.
func submitWaiting(t *testing.T, c *client.ClientWithResponses, id string, notBefore time.Time, prefer string) *client.SubmitIntentResponse {
	t.Helper()
	res, err := c.SubmitIntentWithResponse(context.Background(), &client.SubmitIntentParams{Prefer: wait(prefer)},
		client.SubmitIntentJSONRequestBody{IntentId: id, SubmissionTarget: "sms.realtime", Payload: []byte(`{"to":"+15550100"}`), NotBefore: &notBefore})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// getWaiting reads an intent with Prefer: wait.
func getWaiting(t *testing.T, c *client.ClientWithResponses, id, prefer string) *client.GetIntentResponse {
	t.Helper()
	res, err := c.GetIntentWithResponse(context.Background(), id, &client.GetIntentParams{Prefer: wait(prefer)})
	if err != nil {
		t.Error(err)
		return nil
	}
	return res
}

// testWaitOnAnAPIOnlyInstanceWakesWhenTheLeaderFinishes submits a scheduled
// intent to an API-only instance with Prefer: wait: the answer comes when
// the leader, another instance, has accepted it, as the API-only instance
// learns from the store.
func testWaitOnAnAPIOnlyInstanceWakesWhenTheLeaderFinishes(t *testing.T, s store) {
	leader, apiOnly := startPair(t, s, func(c *command.ServeConfig) { c.APIOnly = true })
	notBefore := time.Now().Add(time.Second).UTC().Truncate(time.Microsecond)
	res := submitWaiting(t, apiOnly.api, "waited-1", notBefore, "wait=20")
	if res.StatusCode() != 201 || res.JSON201 == nil {
		t.Fatalf("submit with wait: %d %s", res.StatusCode(), res.Body)
	}
	in := *res.JSON201
	if in.Status != client.IntentStatusAccepted || len(in.Attempts) != 1 {
		t.Fatalf("answer %s, want the accepted intent", res.Body)
	}
	if got := res.HTTPResponse.Header.Get("Preference-Applied"); got != "wait=20" {
		t.Errorf("Preference-Applied %q, want wait=20", got)
	}
	if in.NotBefore == nil || !in.NotBefore.Equal(notBefore) || in.Attempts[0].StartedAt.Before(notBefore) {
		t.Errorf("notBefore %v, first attempt at %v: want the attempt at or after notBefore %v", in.NotBefore, in.Attempts[0].StartedAt, notBefore)
	}
	// The leader shows the same intent.
	if got := getIntent(t, leader.api, "waited-1"); got.Status != client.IntentStatusAccepted {
		t.Errorf("the leader shows %s", got.Status)
	}
}

// testWaitOnAFollowerWakesWhenTheLeaderFinishes reads, with Prefer: wait, a
// scheduled intent on the instance that does not lead.
func testWaitOnAFollowerWakesWhenTheLeaderFinishes(t *testing.T, s store) {
	leader, follower := startPair(t, s, func(c *command.ServeConfig) { c.HolderID = "follower" })
	if got := readyz(t, follower.api); !strings.HasPrefix(got, "mode=follower") {
		t.Fatalf("the second instance is not a follower: %q", got)
	}
	notBefore := time.Now().Add(time.Second)
	if res := submitWaiting(t, leader.api, "waited-2", notBefore, ""); res.StatusCode() != 201 {
		t.Fatalf("submit: %d %s", res.StatusCode(), res.Body)
	}
	res := getWaiting(t, follower.api, "waited-2", "wait=20")
	if res.JSON200 == nil || res.JSON200.Status != client.IntentStatusAccepted {
		t.Fatalf("GET with wait on the follower: %d %s, want the accepted intent", res.StatusCode(), res.Body)
	}
	if got := res.HTTPResponse.Header.Get("Preference-Applied"); got != "wait=20" {
		t.Errorf("Preference-Applied %q, want wait=20", got)
	}
}

// TestShutdownAnswersWaitingRequests holds a request waiting on an intent
// scheduled an hour ahead, shuts the instance down, and expects the
// request answered with the pending intent and the shutdown not held by it.
func TestShutdownAnswersWaitingRequests(t *testing.T) {
	svc, _ := startStandard(t)
	if res := submitWaiting(t, svc.api, "held", time.Now().Add(time.Hour), ""); res.StatusCode() != 201 {
		t.Fatalf("submit: %d %s", res.StatusCode(), res.Body)
	}
	answered := make(chan *client.GetIntentResponse, 1)
	go func() { answered <- getWaiting(t, svc.api, "held", "wait=30") }()
	deadline := time.Now().Add(terminalWait)
	for svc.srv.Waiters() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the request never registered as a waiter")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The wait (30 s) outlasts the shutdown budget (15 s): a held request
	// would make Shutdown fail.
	stopService(t, svc.srv)
	res := <-answered
	if res == nil || res.JSON200 == nil || res.JSON200.Status != client.IntentStatusPending {
		t.Fatalf("the waiting request got %+v, want the pending intent", res)
	}
	if got := res.HTTPResponse.Header.Get("Preference-Applied"); got != "wait=30" {
		t.Errorf("Preference-Applied %q, want wait=30", got)
	}
}

// startPair starts a leader on a new database of s, waits until it leads,
// and then a second instance on the same database, tuned by tune.
func startPair(t *testing.T, s store, tune func(*command.ServeConfig)) (leader, other service) {
	t.Helper()
	sim := startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, standardTargets(sim))
	cfg := testConfig(dir, registry)
	s.database(t)(&cfg)
	cfg.HolderID = "leader"
	leader = startService(t, cfg)
	deadline := time.Now().Add(terminalWait)
	for !strings.HasPrefix(readyz(t, leader.api), "mode=leader") {
		if time.Now().After(deadline) {
			t.Fatal("the first instance never led")
		}
		time.Sleep(cfg.AcquireInterval)
	}
	otherCfg := cfg
	tune(&otherCfg)
	if otherCfg.HolderID == "leader" {
		otherCfg.HolderID = "second"
	}
	return leader, startService(t, otherCfg)
}
