// Command loadgen measures a running SubmissionManager from the outside,
// through the generated Go SDK, the way a client service would use it: it
// submits intents at a given concurrency (or rate), waits for them to finish,
// and reports intake throughput and latency, end-to-end execution throughput,
// first-attempt lateness and how many intents ended in each status.
//
// It shares its host with the service in `make bench`, so it spends as
// little CPU as it can: request bodies are built once but for the intentId,
// and the SDK sends them through a lean HTTP/1.1 doer (doer.go) instead of
// net/http's Transport, which roughly halves the generator's CPU per intent.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"syscall"
	"time"
)

// config is everything a run is parameterised by.
type config struct {
	URL         string
	APIKey      string
	Target      string
	Count       int
	Concurrency int
	// Batch, above 1, sends the intents in batches of this many through
	// POST /v1/intents/batch.
	Batch        int
	Rate         float64
	PayloadBytes int
	Wait         bool
	WaitTimeout  time.Duration
	RunID        string
	JSON         bool
	// AwaitDrain submits nothing: it waits (up to WaitTimeout) until the
	// service holds no pending intent and reports how long that took, to
	// time the execution of a backlog submitted before.
	AwaitDrain bool
	// DrainPoll is how often AwaitDrain asks whether an intent is still
	// pending. Each ask is a listing the service reads from its store, so
	// an observer asking fast spends the server's CPU the drain it times
	// would have used; a caller that reads the drain's end from the store
	// asks slowly.
	DrainPoll time.Duration
	// CPUProfile, when set, is where the generator writes its own CPU
	// profile, to check that it is not what limits a run on a shared host.
	CPUProfile string
}

const usageHeader = `usage: loadgen [flags]

Submits intents to a running SubmissionManager through the Go SDK, waits for
them to finish, and reports intake and execution throughput, latency and how
many intents ended in each status. Exits 1 when the run failed, a submission
failed or an intent did not finish in time, 2 on bad flags.

With --await-drain it submits nothing: it waits until the service holds no
pending intent (polling every 20 ms, retrying while the service starts) and
reports the seconds that took, from its own start.

flags:
`

func main() {
	// The generator shares the host with the service it measures; collecting
	// garbage less often (it holds little) leaves the service more CPU.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := realMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// realMain runs loadgen with args (without the program name) and returns the
// exit code: 0 on success and for -h/--help, 1 when the run failed or left
// errors or unfinished intents, 2 for bad flags.
func realMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0 // the flag package printed the usage
	}
	if err != nil {
		fmt.Fprintln(stderr, "loadgen:", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			fmt.Fprintln(stderr, "loadgen: --cpuprofile:", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "loadgen: --cpuprofile:", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}

	if cfg.AwaitDrain {
		return drainMain(ctx, cfg, stdout, stderr)
	}
	rep, err := run(ctx, cfg, logger)
	if err != nil {
		fmt.Fprintln(stderr, "loadgen:", err)
		return 1
	}
	if cfg.JSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		rep.writeText(stdout)
	}
	if rep.IntakeErrors > 0 || rep.Unfinished > 0 {
		return 1
	}
	return 0
}

// parseFlags reads the command line; usage and flag errors go to output.
// -h or --help returns flag.ErrHelp after printing the usage.
func parseFlags(args []string, output io.Writer) (config, error) {
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() {
		fmt.Fprint(output, usageHeader)
		fs.PrintDefaults()
	}
	cfg := config{}
	fs.StringVar(&cfg.URL, "url", envOr("SUBMISSION_URL", "http://127.0.0.1:8000"), "base URL of the service (env SUBMISSION_URL)")
	fs.StringVar(&cfg.APIKey, "api-key", os.Getenv("SUBMISSION_API_KEY"), "bearer API key, if the service requires one (env SUBMISSION_API_KEY)")
	fs.StringVar(&cfg.Target, "target", "sms.realtime", "submissionTarget of every intent")
	fs.IntVar(&cfg.Count, "count", 20000, "number of intents to submit")
	fs.IntVar(&cfg.Concurrency, "concurrency", 64, "concurrent clients")
	fs.IntVar(&cfg.Batch, "batch", 1, "intents per request: above 1, sent through POST /v1/intents/batch")
	fs.Float64Var(&cfg.Rate, "rate", 0, "intents per second across all clients (0: as fast as the clients go)")
	fs.IntVar(&cfg.PayloadBytes, "payload-bytes", 128, "approximate size of each payload")
	fs.BoolVar(&cfg.Wait, "wait", true, "wait for every intent to reach a terminal status and report execution figures")
	fs.DurationVar(&cfg.WaitTimeout, "wait-timeout", 5*time.Minute, "how long to wait for execution to finish")
	fs.StringVar(&cfg.RunID, "run-id", fmt.Sprintf("load-%d", time.Now().UnixNano()), "prefix of the intentIds of this run")
	fs.BoolVar(&cfg.JSON, "json", false, "print the report as JSON")
	fs.BoolVar(&cfg.AwaitDrain, "await-drain", false, "submit nothing; wait until no intent is pending (up to --wait-timeout) and report how long that took")
	fs.DurationVar(&cfg.DrainPoll, "drain-poll", drainPoll, "with --await-drain, how often to ask whether an intent is still pending")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write the generator's own CPU profile to this file")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch {
	case cfg.Count < 1:
		return cfg, fmt.Errorf("--count must be at least 1, got %d", cfg.Count)
	case cfg.Concurrency < 1:
		return cfg, fmt.Errorf("--concurrency must be at least 1, got %d", cfg.Concurrency)
	case cfg.Batch < 1:
		return cfg, fmt.Errorf("--batch must be at least 1, got %d", cfg.Batch)
	case cfg.Rate < 0:
		return cfg, fmt.Errorf("--rate must not be negative, got %v", cfg.Rate)
	case cfg.PayloadBytes < 16:
		return cfg, fmt.Errorf("--payload-bytes must be at least 16, got %d", cfg.PayloadBytes)
	case cfg.WaitTimeout <= 0:
		return cfg, fmt.Errorf("--wait-timeout must be positive, got %v", cfg.WaitTimeout)
	case cfg.DrainPoll <= 0:
		return cfg, fmt.Errorf("--drain-poll must be positive, got %v", cfg.DrainPoll)
	}
	return cfg, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
