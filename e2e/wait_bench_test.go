package e2e

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlite"
	"github.com/submissionmanager/submission-manager/adapters/sysclock"
	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/app/watch"
	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// BenchmarkWaitWakeLatency measures how long after a terminal write a
// waiting request is woken, with the default watch interval, on a real
// SQLite file: on the leader (its watcher reads the handle that wrote) and
// on a follower (its watcher reads the file through a handle of its own, as
// another process would). Each iteration finishes waitLatencyIntents
// intents at random moments and reports the p50 and p99 latency.
// Run it with: go test -run '^$' -bench WaitWakeLatency -benchtime 1x ./e2e/
func BenchmarkWaitWakeLatency(b *testing.B) {
	const waitLatencyIntents = 300
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "wait.db")
	leaderDB := openBenchDB(b, path)
	followerDB := openBenchDB(b, path)
	clock := sysclock.New()
	lease, ok, err := leaderDB.Leases().Acquire(ctx, ports.AcquireLeaseParams{
		LeaseName: core.DefaultLeaseName, HolderID: "bench", Duration: time.Hour,
	})
	if err != nil || !ok {
		b.Fatalf("acquire: %v %v", ok, err)
	}
	watchers := map[string]*watch.Watcher{}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for role, db := range map[string]*sqlite.DB{"leader": leaderDB, "follower": followerDB} {
		armed := armingClock{Clock: clock, armed: make(chan struct{}, 1)}
		w, err := watch.New(watch.Config{Store: db.Store(), Reader: db.Store(), Clock: armed, MaxWaiters: 2 * waitLatencyIntents})
		if err != nil {
			b.Fatal(err)
		}
		watchers[role] = w
		wg.Go(func() { _ = w.Run(runCtx) })
		awaitRegisterable(b, role, w, armed.armed)
	}
	contract := core.Contract{SubmissionTarget: "sms.realtime", GatewayType: core.GatewaySMS, GatewayURL: "http://127.0.0.1:9",
		Mode: core.ModeRealtime, Policy: core.PolicyOneShot, TerminalOutcomes: []string{}}
	round := 0
	for b.Loop() {
		round++
		ids := make([]string, waitLatencyIntents)
		for i := range ids {
			ids[i] = fmt.Sprintf("wait-bench-%d-%d", round, i)
			if _, err := leaderDB.Store().CreateIntent(ctx, core.NewIntent(ids[i], contract, []byte(`{}`), clock.Now())); err != nil {
				b.Fatal(err)
			}
		}
		wrote := make([]time.Time, len(ids))
		woke := map[string][]time.Time{"leader": make([]time.Time, len(ids)), "follower": make([]time.Time, len(ids))}
		var waiting sync.WaitGroup
		for role, w := range watchers {
			for i, id := range ids {
				reg, ok := w.Register(id)
				if !ok {
					b.Fatalf("%s refused waiter %d", role, i)
				}
				waiting.Go(func() {
					defer reg.Done()
					reg.Wait(ctx, time.Minute)
					woke[role][i] = time.Now()
				})
			}
		}
		fence := lease.Fence()
		for i, id := range ids {
			time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond) // spread writes over the watch interval
			now := clock.Now()
			if err := leaderDB.Store().StartAttempt(ctx, ports.StartAttemptParams{Fence: fence, IntentID: id, Number: 1, StartedAt: now}); err != nil {
				b.Fatal(err)
			}
			o := &core.Outcome{Status: core.OutcomeAccepted}
			if err := leaderDB.Store().FinishAttempt(ctx, ports.FinishAttemptParams{Fence: fence, IntentID: id, Number: 1, FinishedAt: now,
				Outcome: o, Sent: true, Decision: core.Decision{Status: core.StatusAccepted, FinalOutcome: o}}); err != nil {
				b.Fatal(err)
			}
			wrote[i] = time.Now()
		}
		waiting.Wait()
		for _, role := range []string{"leader", "follower"} {
			lat := make([]time.Duration, len(ids))
			for i := range ids {
				lat[i] = woke[role][i].Sub(wrote[i])
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2])/1e6, role+"-p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100])/1e6, role+"-p99-ms")
		}
	}
}

// armingClock is a clock that signals on armed (without blocking) each time
// a timer is armed. A watcher arms the timer of its next read after each
// read, so a benchmark can wait for its first read without sleeping.
type armingClock struct {
	ports.Clock
	armed chan struct{}
}

func (c armingClock) NewTimer(d time.Duration) ports.Timer {
	c.signal()
	return c.Clock.NewTimer(d)
}

func (c armingClock) NewTimerAt(at time.Time) ports.Timer {
	c.signal()
	return c.Clock.NewTimerAt(at)
}

func (c armingClock) signal() {
	select {
	case c.armed <- struct{}{}:
	default: // a signal is pending already
	}
}

// awaitRegisterable waits until w admits waiters, which it does once its
// first read placed its cursor: it asks again each time the watcher armed a
// timer, and gives up after a minute.
func awaitRegisterable(b *testing.B, role string, w *watch.Watcher, armed <-chan struct{}) {
	b.Helper()
	bound := time.NewTimer(time.Minute)
	defer bound.Stop()
	for !registerable(w) {
		select {
		case <-armed:
		case <-bound.C:
			b.Fatalf("the %s's watcher admitted no waiter within a minute", role)
		}
	}
}

// registerable reports whether w admits waiters (its first read is done),
// registering and removing a probe.
func registerable(w *watch.Watcher) bool {
	reg, ok := w.Register("probe")
	if ok {
		reg.Done()
	}
	return ok
}

func openBenchDB(b *testing.B, path string) *sqlite.DB {
	b.Helper()
	db, err := sqlite.Open(context.Background(), sqlite.Config{Path: path})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	if err := db.Migrate(context.Background(), "up"); err != nil {
		b.Fatal(err)
	}
	return db
}

// waitersHeld is the figure: 10,000 requests waiting at once.
const waitersHeld = 10_000

// BenchmarkWaiters10k holds 10,000 requests waiting (Prefer: wait=30) on
// one real instance and reports what they cost it: heap and goroutine
// stacks, per waiter and in all, and the goroutines (one per request, the
// request's own). The clients run in a child process (this test binary,
// TestWaitBenchClient), because one process cannot hold both ends of
// 10,000 connections under the usual open-file limit. The instance's
// shutdown then answers every waiter; its time is reported too.
// Run it with: go test -run '^$' -bench Waiters10k -benchtime 1x ./e2e/
func BenchmarkWaiters10k(b *testing.B) {
	const intents = 1000
	dir := b.TempDir()
	registry := filepath.Join(dir, "targets.json")
	data := `{"targets":[{"submissionTarget":"sms.realtime","gatewayType":"sms","gatewayUrl":"http://127.0.0.1:9",` +
		`"mode":"realtime","policy":"one_shot","terminalOutcomes":[]}]}`
	if err := os.WriteFile(registry, []byte(data), 0o600); err != nil {
		b.Fatal(err)
	}
	cfg := testConfig(dir, registry)
	cfg.MaxWaiters = 2 * waitersHeld
	cfg.ShutdownTimeout = time.Minute
	for b.Loop() {
		srv, err := command.Start(context.Background(), cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		api, err := client.NewClientWithResponses(srv.URL())
		if err != nil {
			b.Fatal(err)
		}
		later := time.Now().Add(time.Hour)
		for i := range intents {
			res, err := api.SubmitIntentWithResponse(context.Background(), nil, client.SubmitIntentJSONRequestBody{
				IntentId: fmt.Sprintf("held-%d", i), SubmissionTarget: "sms.realtime", Payload: []byte(`{}`), NotBefore: &later})
			if err != nil || res.StatusCode() != 201 {
				b.Fatalf("submit %d: %v %v", i, err, res.Status())
			}
		}
		api.ClientInterface.(*client.Client).Client.(*http.Client).CloseIdleConnections()
		var before runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		goroutines := runtime.NumGoroutine()

		child := exec.Command(os.Args[0], "-test.run=^TestWaitBenchClient$", "-test.count=1")
		child.Env = append(os.Environ(), "WAIT_BENCH_URL="+srv.URL(), fmt.Sprintf("WAIT_BENCH_WAITERS=%d", waitersHeld),
			fmt.Sprintf("WAIT_BENCH_INTENTS=%d", intents))
		var out strings.Builder
		child.Stdout, child.Stderr = &out, &out
		if err := child.Start(); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for srv.Waiters() < waitersHeld {
			if time.Now().After(deadline) {
				_ = child.Process.Kill()
				b.Fatalf("only %d waiters after a minute; client: %s", srv.Waiters(), out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		var held runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&held)
		heldGoroutines := runtime.NumGoroutine() - goroutines
		cost := float64(held.HeapInuse+held.StackInuse) - float64(before.HeapInuse+before.StackInuse)

		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err = srv.Shutdown(ctx)
		cancel()
		shutdown := time.Since(start)
		if err != nil {
			b.Fatalf("shutdown: %v", err)
		}
		if err := child.Wait(); err != nil {
			b.Fatalf("client: %v: %s", err, out.String())
		}
		b.ReportMetric(cost/(1<<20), "held-MB")
		b.ReportMetric(cost/waitersHeld/1024, "KB/waiter")
		b.ReportMetric((float64(held.StackInuse)-float64(before.StackInuse))/waitersHeld/1024, "stack-KB/waiter")
		b.ReportMetric(float64(heldGoroutines), "goroutines")
		b.ReportMetric(shutdown.Seconds()*1000, "shutdown-ms")
	}
}

// TestWaitBenchClient is BenchmarkWaiters10k's client process; it skips
// unless the benchmark started it. It holds WAIT_BENCH_WAITERS requests
// with Prefer: wait=30 over as many connections and checks that every one
// is answered 200 with Preference-Applied.
func TestWaitBenchClient(t *testing.T) {
	url := os.Getenv("WAIT_BENCH_URL")
	if url == "" {
		t.Skip("run by BenchmarkWaiters10k only")
	}
	waiters, _ := strconv.Atoi(os.Getenv("WAIT_BENCH_WAITERS"))
	intents, _ := strconv.Atoi(os.Getenv("WAIT_BENCH_INTENTS"))
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: -1, DisableKeepAlives: true}}
	var wg sync.WaitGroup
	errs := make(chan error, waiters)
	for i := range waiters {
		wg.Go(func() {
			req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/v1/intents/held-%d", url, i%intents), nil)
			if err != nil {
				errs <- err
				return
			}
			req.Header.Set("Prefer", "wait=30")
			res, err := hc.Do(req)
			if err != nil {
				errs <- err
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
			if res.StatusCode != 200 || res.Header.Get("Preference-Applied") != "wait=30" {
				errs <- fmt.Errorf("%d, Preference-Applied %q", res.StatusCode, res.Header.Get("Preference-Applied"))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
