// Command riverbench runs River, the Go job queue on PostgreSQL, through the
// same three shapes of work that `make bench` measures SubmissionManager on,
// so that the two can be compared as ratios from one run on one machine:
//
//   - intake: producers only (no worker runs), each insert one durable
//     transaction, as one intent is one HTTP request;
//   - backlog: a queue of jobs inserted beforehand is executed by 64
//     concurrent workers whose work takes a fixed time (the gateway call);
//   - mixed: producers and workers at once, timed until every job completed.
//
// A job's work is a timer by default. With --gateway-url it is what one of
// our attempts does instead: an HTTP POST to the gateway simulator, which
// answers after its latency, over a keep-alive pool of as many connections
// as workers; a River user building this service would write that worker.
//
// It lives in its own module so that the product's go.mod stays River-free.
// It prints one JSON object per phase on stdout.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// config is what a run is parameterised by; the defaults are the shape of
// work the comparison in docs/benchmarks.md uses.
type config struct {
	DSN           string
	Phase         string
	Count         int
	Producers     int
	Workers       int
	WorkTime      time.Duration
	FetchCooldown time.Duration
	PoolSize      int
	GatewayURL    string
	// Hold names a file the backlog phase creates once its jobs are in,
	// then waits until it is removed before its workers start, so that a
	// caller can read the database server's CPU time just before the
	// execution it times.
	Hold string
}

// result is one phase's figures.
type result struct {
	Phase     string  `json:"phase"`
	Jobs      int     `json:"jobs"`
	Seconds   float64 `json:"seconds"`
	PerSecond float64 `json:"perSecond"`
	P50Ms     float64 `json:"insertP50Ms,omitempty"`
	P99Ms     float64 `json:"insertP99Ms,omitempty"`
	River     string  `json:"river"`
	// ClientCPUMsPerJob is this process's CPU time (user and system) over
	// the timed part of the phase, per job: River's share of the work, as
	// the service's CPU per executed attempt is ours.
	ClientCPUMsPerJob float64 `json:"clientCpuMsPerJob"`
}

// riverVersion reads the River release this module pins (go.mod) from the
// binary's build information, so that the report cannot name another.
func riverVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/riverqueue/river" {
				return m.Version
			}
		}
	}
	return "unknown"
}

func main() {
	var cfg config
	flag.StringVar(&cfg.DSN, "dsn", os.Getenv("RIVERBENCH_DSN"), "PostgreSQL connection string (env RIVERBENCH_DSN)")
	flag.StringVar(&cfg.Phase, "phase", "intake", "intake, backlog or mixed")
	flag.IntVar(&cfg.Count, "count", 20000, "jobs in the phase")
	flag.IntVar(&cfg.Producers, "producers", 64, "concurrent producers (intake, mixed)")
	flag.IntVar(&cfg.Workers, "workers", 64, "concurrent workers (backlog, mixed)")
	flag.DurationVar(&cfg.WorkTime, "work-time", 5*time.Millisecond, "time one job's work takes")
	flag.DurationVar(&cfg.FetchCooldown, "fetch-cooldown", 5*time.Millisecond, "River's FetchCooldown (its best setting here)")
	flag.IntVar(&cfg.PoolSize, "pool", 80, "PostgreSQL connections")
	flag.StringVar(&cfg.GatewayURL, "gateway-url", "", "when set, a job's work is a POST to this gateway simulator instead of a timer")
	flag.StringVar(&cfg.Hold, "hold", "", "backlog: create this file once the jobs are in and wait until it is removed before executing them")
	flag.Parse()
	if cfg.DSN == "" {
		fmt.Fprintln(os.Stderr, "riverbench: --dsn (or RIVERBENCH_DSN) is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "riverbench:", err)
		os.Exit(1)
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

// sendArgs stands for one submission.
type sendArgs struct {
	N int `json:"n"`
}

func (sendArgs) Kind() string { return "send" }

// sendWorker spends the gateway's time, as an attempt waits for its call:
// a timer, or with a gateway client a call to the gateway simulator.
type sendWorker struct {
	river.WorkerDefaults[sendArgs]
	workTime time.Duration
	gateway  *gatewayClient
}

func (w *sendWorker) Work(ctx context.Context, job *river.Job[sendArgs]) error {
	if w.gateway != nil {
		return w.gateway.submit(ctx, job.ID, job.Args.N)
	}
	t := time.NewTimer(w.workTime)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// gatewayClient posts one submission per job to the gateway simulator, with
// the transport settings of SubmissionManager's gateway client: HTTP/1.1,
// keep-alive, one connection per concurrent worker.
type gatewayClient struct {
	url  string
	http *http.Client
}

func newGatewayClient(base string, conns int) *gatewayClient {
	return &gatewayClient{
		url: strings.TrimSuffix(base, "/") + "/v1/submissions",
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxConnsPerHost:     conns,
			MaxIdleConnsPerHost: conns,
			IdleConnTimeout:     90 * time.Second,
		}},
	}
}

// submit makes the call and fails the job unless the gateway accepted it.
func (g *gatewayClient) submit(ctx context.Context, jobID int64, n int) error {
	body := fmt.Sprintf(`{"reference":"river-%d","payload":{"to":"+4915112345678","text":"job %d"}}`, jobID, n)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := g.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return err
	}
	var a struct {
		Status string `json:"status"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(answer, &a) != nil || a.Status != "accepted" {
		return fmt.Errorf("gateway answered %d: %.200s", resp.StatusCode, answer)
	}
	return nil
}

func run(ctx context.Context, cfg config) (result, error) {
	pcfg, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return result{}, err
	}
	pcfg.MaxConns = int32(cfg.PoolSize)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return result{}, err
	}
	defer pool.Close()
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		return result{}, err
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return result{}, fmt.Errorf("migrate: %w", err)
	}
	if _, err := pool.Exec(ctx, "TRUNCATE river_job"); err != nil {
		return result{}, err
	}
	workers := river.NewWorkers()
	worker := &sendWorker{workTime: cfg.WorkTime}
	if cfg.GatewayURL != "" {
		worker.gateway = newGatewayClient(cfg.GatewayURL, cfg.Workers)
	}
	river.AddWorker(workers, worker)
	client, err := river.NewClient(driver, &river.Config{
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:           workers,
		FetchCooldown:     cfg.FetchCooldown,
		FetchPollInterval: max(cfg.FetchCooldown, 50*time.Millisecond),
	})
	if err != nil {
		return result{}, err
	}
	res := result{Phase: cfg.Phase, Jobs: cfg.Count, River: riverVersion()}
	// timed runs the phase's measured part and records its wall and CPU time.
	timed := func(part func() error) error {
		start, cpu := time.Now(), cpuTime()
		if err := part(); err != nil {
			return err
		}
		res.Seconds, res.ClientCPUMsPerJob = time.Since(start).Seconds(), perJob(cpuTime()-cpu, cfg.Count)
		return nil
	}
	switch cfg.Phase {
	case "intake":
		var lat []time.Duration
		if err := timed(func() (err error) {
			lat, err = produce(ctx, client, cfg)
			return err
		}); err != nil {
			return res, err
		}
		res.P50Ms, res.P99Ms = percentile(lat, 0.50), percentile(lat, 0.99)
	case "backlog":
		if _, err := produce(ctx, client, cfg); err != nil {
			return res, err
		}
		if err := hold(ctx, cfg.Hold); err != nil {
			return res, err
		}
		if err := timed(func() error { return executeAll(ctx, client, cfg.Count, nil) }); err != nil {
			return res, err
		}
	case "mixed":
		if err := timed(func() error {
			return executeAll(ctx, client, cfg.Count, func() error {
				_, err := produce(ctx, client, cfg)
				return err
			})
		}); err != nil {
			return res, err
		}
	default:
		return res, fmt.Errorf("unknown phase %q (intake, backlog or mixed)", cfg.Phase)
	}
	res.PerSecond = float64(cfg.Count) / res.Seconds
	return res, nil
}

// hold creates path, when one is given, and returns once it is gone: the
// caller reads what it measures meanwhile and then removes it.
func hold(ctx context.Context, path string) error {
	if path == "" {
		return nil
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		return err
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perJob is d in milliseconds per one of n jobs.
func perJob(d time.Duration, n int) float64 {
	return float64(d) / float64(time.Millisecond) / float64(max(n, 1))
}

// produce inserts cfg.Count jobs from cfg.Producers goroutines, one durable
// insert each, and returns every insert's latency.
func produce(ctx context.Context, client *river.Client[pgx.Tx], cfg config) ([]time.Duration, error) {
	var next atomic.Int64
	lat := make([]time.Duration, cfg.Count)
	errs := make(chan error, cfg.Producers)
	var wg sync.WaitGroup
	for range cfg.Producers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= cfg.Count {
					return
				}
				t := time.Now()
				if _, err := client.Insert(ctx, sendArgs{N: i}, nil); err != nil {
					errs <- err
					return
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	close(errs)
	return lat, errors.Join(collect(errs)...)
}

// executeAll starts the client's workers, runs also (when given) beside
// them, and returns once count jobs completed: River reports a completion
// after the completer has written it.
func executeAll(ctx context.Context, client *river.Client[pgx.Tx], count int, also func() error) error {
	completed, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	if err := client.Start(ctx); err != nil {
		return err
	}
	defer func() {
		stopCtx, done := context.WithTimeout(context.Background(), 10*time.Second)
		defer done()
		_ = client.Stop(stopCtx)
	}()
	alsoErr := make(chan error, 1)
	if also != nil {
		go func() { alsoErr <- also() }()
	} else {
		alsoErr <- nil
	}
	timeout := time.NewTimer(10 * time.Minute)
	defer timeout.Stop()
	for done := 0; done < count; {
		select {
		case ev := <-completed:
			if ev.Kind != river.EventKindJobCompleted {
				return fmt.Errorf("job %d failed", ev.Job.ID)
			}
			done++
		case err := <-alsoErr:
			if err != nil {
				return err
			}
			alsoErr = nil
		case <-timeout.C:
			return fmt.Errorf("jobs did not complete within 10 minutes: %d of %d completed", done, count)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if alsoErr != nil {
		return <-alsoErr
	}
	return nil
}

func collect(ch <-chan error) []error {
	var out []error
	for err := range ch {
		out = append(out, err)
	}
	return out
}

func percentile(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[min(len(s)-1, int(p*float64(len(s))))].Microseconds()) / 1000
}
