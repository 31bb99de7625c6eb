package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/core"
)

// pauseIntents is how many intents wait behind a paused gateway.
const pauseIntents = 20

// A pause over the HTTP API on the SQLite store: the gateway receives no
// call while it is paused, the intents wait with no attempt (their deferral
// is stored), pausing again keeps the first pause, and after the resume
// every intent is accepted with one attempt.
func TestGatewayPauseAndResumeOnSQLite(t *testing.T) {
	sim := startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, []registryTarget{
		{"sms.paused", "sms", sim.URL(core.GatewaySMS), "realtime", "max_attempts", 0, 3, smsTerminal},
	})
	cfg := testConfig(dir, registry)
	svc := startService(t, cfg)
	audit := openAuditDB(t, filepath.Join(dir, "submission-manager.db"))
	ctx := context.Background()

	sms := client.GatewayType("sms")
	first, err := svc.api.PauseGatewayWithResponse(ctx, client.GatewaySelector{GatewayType: &sms})
	if err != nil || first.JSON200 == nil || first.JSON200.PausedAt.IsZero() {
		t.Fatalf("POST /v1/gateways/pause: %v %d %s", err, first.StatusCode(), first.Body)
	}
	again, err := svc.api.PauseGatewayWithResponse(ctx, client.GatewaySelector{GatewayType: &sms})
	if err != nil || again.JSON200 == nil || !again.JSON200.PausedAt.Equal(first.JSON200.PausedAt) {
		t.Fatalf("pausing again must return the first pause (%s): %v %s", first.JSON200.PausedAt, err, again.Body)
	}

	// The leader reads the pauses at each schedule refresh; it has read this
	// one once its gauge shows it.
	waitPausesRead(t, svc.srv.URL(), 1)
	ids := submitPaused(t, svc.api, "paused", "sms.paused")
	waitDeferred(t, audit, ids, 0)
	if n := sim.Stats().Total; n != 0 {
		t.Fatalf("the paused gateway received %d calls", n)
	}
	if a := audit.attempts(t); len(a) != 0 {
		t.Fatalf("%d attempts recorded behind a paused gateway, e.g. %+v", len(a), a[0])
	}
	gws, err := svc.api.ListGatewaysWithResponse(ctx)
	if err != nil || gws.JSON200 == nil || len(gws.JSON200.Pauses) != 1 || len(gws.JSON200.Gateways) != 1 ||
		!gws.JSON200.Gateways[0].Paused {
		t.Fatalf("GET /v1/gateways while paused: %v %s", err, gws.Body)
	}

	resumed, err := svc.api.ResumeGatewayWithResponse(ctx, client.GatewaySelector{GatewayType: &sms})
	if err != nil || resumed.JSON200 == nil || !resumed.JSON200.WasPaused {
		t.Fatalf("POST /v1/gateways/resume: %v %d %s", err, resumed.StatusCode(), resumed.Body)
	}
	for id, in := range audit.waitTerminal(t, ids) {
		if in.Status != core.StatusAccepted || in.AttemptCount != 1 {
			t.Errorf("intent %s after the resume: %s with %d attempts, want accepted with 1", id, in.Status, in.AttemptCount)
		}
	}
}

// A pause survives a leader failover: two instances on one SQLite file, the
// gateway paused through the follower, the leader SIGKILLed; the successor
// reads the stored pause before its first call, so the gateway still
// receives nothing and the intents keep waiting (the successor stores their
// next deferral itself). After the resume they are all accepted.
func TestHAPauseSurvivesLeaderFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binaries and fails a leader over")
	}
	dir := t.TempDir()
	haBuild(t, dir, "./cmd/submission-manager", "./cmd/gateway-sim")
	smsAddr, pushAddr := haFreeAddr(t), haFreeAddr(t)
	sim := haStartProcess(t, dir, "gateway-sim", filepath.Join(dir, "gateway-sim"), []string{
		"--sms-listen", smsAddr, "--push-listen", pushAddr, "--log-format", "json",
	}, nil)
	haWaitHTTP(t, sim, "http://"+smsAddr+"/stats")
	registry := filepath.Join(dir, "targets.json")
	writeMPRegistry(t, registry, "http://"+smsAddr, "http://"+pushAddr)
	dbPath := filepath.Join(dir, "ha.db")
	c := &mpCluster{t: t, dir: dir, bin: filepath.Join(dir, "submission-manager"), registry: registry, dbPath: dbPath,
		instances: map[string]*mpInstance{}}
	c.start("sm-01")
	c.start("sm-02")
	c.audit = openAuditDB(t, dbPath)
	leader, epoch, _ := c.waitLeader("", 1)
	follower := map[string]string{"sm-01": "sm-02", "sm-02": "sm-01"}[leader]

	haPost(t, "http://"+c.instances[follower].addr+"/v1/gateways/pause", `{"gatewayType":"sms"}`, http.StatusOK)
	api, err := client.NewClientWithResponses("http://" + c.instances[follower].addr)
	if err != nil {
		t.Fatal(err)
	}
	waitPausesRead(t, "http://"+c.instances[leader].addr, 1)
	ids := submitPaused(t, api, "failover", "sms.ha")
	waitDeferred(t, c.audit, ids, 0)

	c.instances[leader].proc.kill(t)
	next, nextEpoch, acquired := c.waitLeader(leader, epoch+1)
	// Every intent deferred again, by the successor, after it took over.
	waitDeferred(t, c.audit, ids, acquired.UnixNano())
	if stats := mpStats(t, "http://"+smsAddr); stats.Total != 0 {
		t.Fatalf("the paused gateway received %d calls across the failover", stats.Total)
	}
	if a := c.audit.attempts(t); len(a) != 0 {
		t.Fatalf("%d attempts recorded behind a paused gateway, e.g. %+v", len(a), a[0])
	}

	haPost(t, "http://"+c.instances[next].addr+"/v1/gateways/resume", `{"gatewayType":"sms"}`, http.StatusOK)
	for id, in := range c.audit.waitTerminal(t, ids) {
		if in.Status != core.StatusAccepted || in.AttemptCount != 1 {
			t.Errorf("intent %s after the resume: %s with %d attempts, want accepted with 1", id, in.Status, in.AttemptCount)
		}
	}
	for _, a := range c.audit.attempts(t) {
		if a.HolderID != next || a.Epoch != nextEpoch {
			t.Errorf("attempt %s#%d made by %s@%d, want the successor %s@%d", a.IntentID, a.Number, a.HolderID, a.Epoch, next, nextEpoch)
		}
	}
}

// submitPaused creates pauseIntents intents named prefix-i on target.
func submitPaused(t *testing.T, api *client.ClientWithResponses, prefix, target string) []string {
	t.Helper()
	ids := make([]string, pauseIntents)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%02d", prefix, i)
		res, err := api.SubmitIntentWithResponse(context.Background(), nil, client.SubmitIntentJSONRequestBody{
			IntentId: ids[i], SubmissionTarget: target, Payload: json.RawMessage(`{}`),
		})
		if err != nil || res.StatusCode() != http.StatusCreated {
			t.Fatalf("submit %s: %v %s", ids[i], err, res.Body)
		}
	}
	return ids
}

// waitDeferred waits until every intent is pending with no attempt and a
// stored deferral (a next due time past its creation) written after since
// (Unix nanoseconds): the leader met the pause and wrote it down.
func waitDeferred(t *testing.T, a *auditDB, ids []string, since int64) {
	t.Helper()
	defer func() {
		if t.Failed() {
			dumpIntents(t, a)
		}
	}()
	haPoll(t, fmt.Sprintf("%d intents deferred after %d", len(ids), since), func() bool {
		var n int
		err := a.db.QueryRowContext(context.Background(), `
			SELECT COUNT(*) FROM submission_intents
			WHERE status = 'pending' AND attempt_count = 0 AND next_due_at > created_at AND last_modified_at > ?`,
			since).Scan(&n)
		if err != nil {
			t.Fatalf("counting deferred intents: %v", err)
		}
		return n == len(ids)
	})
}

// dumpIntents logs every intent's row, for a failing wait.
func dumpIntents(t *testing.T, a *auditDB) {
	rows, err := a.db.QueryContext(context.Background(),
		`SELECT intent_id, status, attempt_count, created_at, next_due_at, last_modified_at FROM submission_intents`)
	if err != nil {
		t.Logf("dump: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var id, st string
		var n, c int64
		var due, lm any
		_ = rows.Scan(&id, &st, &n, &c, &due, &lm)
		t.Logf("%s %s %d created=%d due=%v lm=%v", id, st, n, c, due, lm)
	}
}

// waitPausesRead waits until the leader at baseURL reports n pauses in
// force as it last read them from the store.
func waitPausesRead(t *testing.T, baseURL string, n int) {
	t.Helper()
	want := fmt.Sprintf("submission_manager_gateways_paused %d\n", n)
	haPoll(t, "the leader reading "+strings.TrimSpace(want), func() bool {
		code, body, err := haGet(baseURL + "/metrics")
		return err == nil && code == http.StatusOK && strings.Contains(body, want)
	})
}

// haPost posts a JSON body and checks the status.
func haPost(t *testing.T, url, body string, want int) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	res, err := c.Post(url, "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != want {
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		t.Fatalf("POST %s: %d %s, want %d", url, res.StatusCode, b.String(), want)
	}
}
