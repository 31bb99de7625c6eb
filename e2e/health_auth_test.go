package e2e

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

func TestAPIKeysOnAndOff(t *testing.T) {
	sim := startSimulator(t)
	dir := t.TempDir()
	registry := filepath.Join(dir, "targets.json")
	writeRegistry(t, registry, standardTargets(sim))
	cfg := testConfig(dir, registry)
	cfg.APIKeys = []string{"key-one", "key-two"}
	anonymous := startService(t, cfg)
	ctx := context.Background()

	res := submit(t, anonymous.api, "auth-1", "sms.realtime", `{}`)
	problemOf(t, res.StatusCode(), res.HTTPResponse.Header.Get("Content-Type"), res.Body, 401, "unauthorized")
	wrong, err := client.NewClientWithResponses(anonymous.srv.URL(), client.WithAPIKey("key-three"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := wrong.ListTargetsWithResponse(ctx); err != nil || got.StatusCode() != 401 {
		t.Fatalf("a wrong key: %v %v", got.StatusCode(), err)
	}
	for _, key := range cfg.APIKeys {
		authed, err := client.NewClientWithResponses(anonymous.srv.URL(), client.WithAPIKey(key))
		if err != nil {
			t.Fatal(err)
		}
		id := "auth-" + key
		mustCreate(t, authed, id, "sms.realtime", `{}`)
		if in := waitTerminal(t, authed, id); in.Status != client.IntentStatusAccepted {
			t.Fatalf("with %s: %+v", key, in)
		}
	}
	// Health stays open for load balancers.
	for _, get := range []func(context.Context, ...client.RequestEditorFn) (*http.Response, error){
		anonymous.api.Healthz, anonymous.api.Readyz,
	} {
		r, err := get(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != 200 {
			t.Fatalf("a health endpoint needs a key: %d", r.StatusCode)
		}
	}

	// Without keys the same API is open.
	open, _ := startStandard(t)
	mustCreate(t, open.api, "auth-off", "sms.realtime", `{}`)
}

var leaderLine = regexp.MustCompile(`^mode=leader holder_id=(\S+) lease_epoch=(\d+) lease_expires_at=(\S+)$`)

func TestHealthAndReadinessBodies(t *testing.T) {
	svc, _ := startStandard(t, func(c *command.ServeConfig) { c.HolderID = "sm-e2e-01" })
	ctx := context.Background()
	health, err := svc.api.HealthzWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if health.StatusCode() != 200 || string(health.Body) != "ok" {
		t.Fatalf("healthz: %d %q", health.StatusCode(), health.Body)
	}
	// The only instance becomes leader; until then it reports follower.
	var line string
	deadline := time.Now().Add(terminalWait)
	for {
		ready, err := svc.api.ReadyzWithResponse(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ready.StatusCode() != 200 {
			t.Fatalf("readyz: %d", ready.StatusCode())
		}
		line = string(ready.Body)
		if strings.HasPrefix(line, "mode=leader") {
			break
		}
		if line != "mode=follower holder_id=sm-e2e-01" {
			t.Fatalf("a follower reported %q", line)
		}
		if time.Now().After(deadline) {
			t.Fatalf("not leader within %s: %q", terminalWait, line)
		}
		time.Sleep(10 * time.Millisecond)
	}
	m := leaderLine.FindStringSubmatch(line)
	if m == nil || m[1] != "sm-e2e-01" || m[2] != "1" {
		t.Fatalf("readyz %q, want the leader line of sm-e2e-01 at epoch 1", line)
	}
	expires, err := time.Parse(time.RFC3339, m[3])
	if err != nil || expires.Before(time.Now().Add(-time.Second)) || expires.After(time.Now().Add(10*time.Second)) {
		t.Fatalf("lease_expires_at %q is not about now + the 5s lease: %v", m[3], err)
	}
}

func TestMetricsAndPprofMounts(t *testing.T) {
	svc, _ := startStandard(t, func(c *command.ServeConfig) { c.Pprof = true; c.PprofListen = "127.0.0.1:0"; c.APIKeys = []string{"k"} })
	get := func(path string) (int, string) {
		base := svc.srv.URL()
		if strings.HasPrefix(path, "/debug/") {
			base = svc.srv.PprofURL()
		}
		r, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(b)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "go_goroutines") {
		t.Fatalf("/metrics: %d", code)
	}
	if code, _ := get("/debug/pprof/"); code != 200 {
		t.Fatalf("/debug/pprof/ with --pprof, on --pprof-listen: %d", code)
	}
	if svc.srv.PprofURL() == svc.srv.URL() {
		t.Fatal("profiling shares the API's listener")
	}
	// Never on the API's listener, with or without --pprof.
	r, err := http.Get(svc.srv.URL() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Fatalf("/debug/pprof/ on the API listener with --pprof: %d, want 404", r.StatusCode)
	}
	off, _ := startStandard(t)
	if off.srv.PprofURL() != "" {
		t.Fatalf("without --pprof a profiling listener is open at %s", off.srv.PprofURL())
	}
	r, err = http.Get(off.srv.URL() + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 404 {
		t.Fatalf("/debug/pprof/ without --pprof: %d, want 404", r.StatusCode)
	}
}
