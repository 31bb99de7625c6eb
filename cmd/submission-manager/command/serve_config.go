package command

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/app/executor"
	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/app/watch"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// Defaults that let `submission-manager serve` start with no configuration
// at all: an embedded SQLite file, the example registry, loopback only.
const (
	DefaultDatabase        = "sqlite:data/submission-manager.db"
	DefaultRegistry        = "config/submission_targets.json"
	DefaultListen          = "127.0.0.1:8000"
	DefaultGatewayTimeout  = 10 * time.Second
	DefaultShutdownTimeout = 30 * time.Second
	DefaultPprofListen     = "127.0.0.1:6060"
	// DefaultWriteTimeout bounds a request from the end of its headers to
	// the end of its answer. It must outlast the longest answer the API
	// holds on purpose: a long poll waits at most 30 s by default, so 60 s
	// leaves 30 s to read the body and write the answer. Raise it with the
	// long-poll cap.
	DefaultWriteTimeout = time.Minute
)

// maxMaxBatch bounds --max-batch: at 4 KiB per intent, a batch body of
// 10,000 intents may already be 40 MiB, and 32 of them are held at once.
const maxMaxBatch = 10000

// ServeConfig is everything `serve` needs. Tests build one directly; the
// command fills it from flags and environment variables.
type ServeConfig struct {
	// Registry is the path of the submission target registry (JSON).
	Registry string
	// Database is "sqlite:PATH" or a "sqlserver://" URL.
	Database string
	// Migrate applies pending migrations at start. The embedded SQLite file
	// is always migrated; a shared SQL Server only when asked, because its
	// schema belongs to a deployment step, not to whichever instance starts
	// first.
	Migrate bool
	// Listen is the HTTP listen address; port 0 picks a free port.
	Listen string
	// RetryDelay is the wait between attempts of one intent.
	RetryDelay time.Duration
	// MaxInFlight bounds concurrent gateway calls of the leader.
	MaxInFlight int
	// ReserveAhead bounds the attempts the leader reserves ahead of a free
	// call slot; AsManyAsMaxInFlight (the default) takes MaxInFlight, 0
	// reserves none ahead.
	ReserveAhead int
	// APIOnly keeps this instance out of the leader election: it serves
	// the API only (an insert-only client, in River's terms), to scale
	// intake apart from execution or to keep a host from leading while it
	// is drained. The zero value competes for the lease, as every instance
	// should unless told otherwise.
	APIOnly bool
	// LeaseDuration, RenewInterval and AcquireInterval time the leader lease.
	LeaseDuration, RenewInterval, AcquireInterval time.Duration
	// ScheduleRefreshInterval is how often the leader reads intents other
	// instances changed.
	ScheduleRefreshInterval time.Duration
	// HolderID names this instance in the lease; empty means
	// hostname-pid-random.
	HolderID string
	// APIKeys, when not empty, are the bearer tokens clients use on /v1:
	// they submit and read.
	APIKeys []string
	// OperatorKeys are the operators' bearer tokens: everything clients
	// may do, plus resubmission, gateway controls and the console. With no
	// key of either kind the API and the console are open.
	OperatorKeys []string
	// MaxPayloadBytes bounds a submission's compacted payload.
	MaxPayloadBytes int64
	// MaxBatch caps the intents of one batch submission (and so the batch
	// body limit, 4 KiB per intent).
	MaxBatch int
	// MaxBodiesInFlight bounds the request bodies held in memory at once;
	// over it a request gets 503 with Retry-After before its body is read.
	MaxBodiesInFlight int
	// MaxBodyBytesInFlight bounds the bytes of request bodies held in
	// memory at once, so that a few large bodies cannot pin what the count
	// bound allows; over it a request gets 503 with Retry-After before its
	// body is read. It must hold the largest body (httpapi.LargestBody).
	MaxBodyBytesInFlight int64
	// WriteTimeout bounds one request from the end of its headers to the
	// end of its answer (net/http's Server.WriteTimeout).
	WriteTimeout time.Duration
	// GatewayTimeout bounds one gateway call.
	GatewayTimeout time.Duration
	// ShutdownTimeout bounds the drain after SIGTERM: in-flight requests and
	// in-flight attempts still unfinished then are abandoned.
	ShutdownTimeout time.Duration
	// MaxNotBefore caps how far ahead a submission's notBefore may be.
	MaxNotBefore time.Duration
	// MaxWait caps the wait a client may ask for with Prefer: wait=N.
	MaxWait time.Duration
	// MaxWaiters bounds the requests waiting at once on this instance;
	// over it a request answers at once.
	MaxWaiters int
	// Pprof serves net/http/pprof under /debug/pprof/ on PprofListen, a
	// listener of its own: never on the API's, which clients reach.
	Pprof bool
	// PprofListen is the profiling listen address (loopback by default).
	PprofListen string
	// LogLevel and LogFormat ("text" or "json") shape the logs on stderr.
	LogLevel  slog.Level
	LogFormat string
	// Protection is the gateway protection (protection_config.go).
	Protection ProtectionConfig
	// Access is the console's sessions and the throttle of unknown keys
	// (access_config.go).
	Access AccessConfig
	// Tracing is OpenTelemetry tracing, off by default (tracing_config.go).
	Tracing TracingConfig
}

// AsManyAsMaxInFlight, as --reserve-ahead, reserves as many attempts ahead
// as --max-in-flight allows calls.
const AsManyAsMaxInFlight = -1

// executorReserveAhead translates --reserve-ahead into the engine's terms,
// where zero means its default (MaxInFlight).
func (c ServeConfig) executorReserveAhead() int {
	switch c.ReserveAhead {
	case AsManyAsMaxInFlight:
		return 0
	case 0:
		return executor.NoReserveAhead
	default:
		return c.ReserveAhead
	}
}

// DefaultServeConfig returns the zero-configuration defaults.
func DefaultServeConfig() ServeConfig {
	return ServeConfig{
		Registry:                DefaultRegistry,
		Database:                DefaultDatabase,
		Listen:                  DefaultListen,
		RetryDelay:              core.DefaultRetryDelay,
		MaxInFlight:             executor.DefaultMaxInFlight,
		ReserveAhead:            AsManyAsMaxInFlight,
		LeaseDuration:           leader.DefaultLeaseDuration,
		RenewInterval:           leader.DefaultRenewInterval,
		AcquireInterval:         leader.DefaultAcquireInterval,
		ScheduleRefreshInterval: executor.DefaultRefreshInterval,
		MaxPayloadBytes:         core.DefaultMaxPayloadBytes,
		MaxBatch:                ports.DefaultMaxBatch,
		MaxBodiesInFlight:       httpapi.DefaultMaxBodiesInFlight,
		MaxBodyBytesInFlight:    httpapi.DefaultMaxBodyBytesInFlight,
		WriteTimeout:            DefaultWriteTimeout,
		PprofListen:             DefaultPprofListen,
		GatewayTimeout:          DefaultGatewayTimeout,
		ShutdownTimeout:         DefaultShutdownTimeout,
		MaxNotBefore:            core.DefaultMaxNotBefore,
		MaxWait:                 httpapi.DefaultMaxWait,
		MaxWaiters:              watch.DefaultMaxWaiters,
		LogLevel:                slog.LevelInfo,
		LogFormat:               "text",
		Protection:              DefaultProtectionConfig(),
		Access:                  DefaultAccessConfig(),
		Tracing:                 DefaultTracingConfig(),
	}
}

// parseServeConfig reads serve's flags and their environment variables over
// the defaults and checks the result.
func parseServeConfig(args []string, env LookupEnv, stderr io.Writer) (ServeConfig, error) {
	cfg := DefaultServeConfig()
	fs := newFlagSet("serve", "serve [flags]", stderr)
	fs.StringVar(&cfg.Registry, "registry", cfg.Registry, "submission target registry file (JSON)")
	fs.StringVar(&cfg.Database, "database", cfg.Database, "sqlite:PATH[?synchronous=normal] or sqlserver://user:pass@host/instance?database=name")
	fs.BoolVar(&cfg.Migrate, "migrate", cfg.Migrate, "apply pending SQL Server migrations at start (SQLite is always migrated)")
	fs.StringVar(&cfg.Listen, "listen", cfg.Listen, "HTTP listen address")
	fs.DurationVar(&cfg.RetryDelay, "retry-delay", cfg.RetryDelay, "wait between attempts of one intent")
	fs.IntVar(&cfg.MaxInFlight, "max-in-flight", cfg.MaxInFlight, "concurrent gateway calls of the leader")
	fs.IntVar(&cfg.ReserveAhead, "reserve-ahead", cfg.ReserveAhead,
		"attempts the leader reserves (durably) ahead of a free call slot, so a reservation's commit is not part of a call's cycle; 0 reserves none ahead, -1 as many as --max-in-flight")
	fs.BoolVar(&cfg.APIOnly, "api-only", cfg.APIOnly, "serve the API only: never compete for the leader lease, never execute attempts")
	fs.DurationVar(&cfg.LeaseDuration, "lease-duration", cfg.LeaseDuration, "how long an acquired or renewed leader lease lasts")
	fs.DurationVar(&cfg.RenewInterval, "renew-interval", cfg.RenewInterval, "how often the leader renews its lease (below --lease-duration)")
	fs.DurationVar(&cfg.AcquireInterval, "acquire-interval", cfg.AcquireInterval, "how often a follower tries to take the lease")
	fs.DurationVar(&cfg.ScheduleRefreshInterval, "schedule-refresh-interval", cfg.ScheduleRefreshInterval, "how often the leader reads intents changed by other instances")
	fs.StringVar(&cfg.HolderID, "holder-id", cfg.HolderID, "this instance's name in the lease (default hostname-pid-random)")
	fs.Var((*listFlag)(&cfg.APIKeys), "api-keys", "comma-separated client keys (submit, read); when set, /v1 requires Authorization: Bearer <key> (a list with no key is refused)")
	fs.Var((*listFlag)(&cfg.OperatorKeys), "operator-keys", "comma-separated operator keys: also the console, resubmission and gateway controls (a list with no key is refused)")
	fs.Int64Var(&cfg.MaxPayloadBytes, "max-payload-bytes", cfg.MaxPayloadBytes, "largest accepted payload, in bytes of compacted JSON")
	fs.IntVar(&cfg.MaxBatch, "max-batch", cfg.MaxBatch, "most intents in one POST /v1/intents/batch (the batch body limit scales with it)")
	fs.IntVar(&cfg.MaxBodiesInFlight, "max-bodies-in-flight", cfg.MaxBodiesInFlight, "request bodies held in memory at once; beyond, 503 with Retry-After")
	fs.Int64Var(&cfg.MaxBodyBytesInFlight, "max-body-bytes-in-flight", cfg.MaxBodyBytesInFlight, "bytes of request bodies held in memory at once (batches at most half); beyond, 503 with Retry-After")
	fs.DurationVar(&cfg.WriteTimeout, "write-timeout", cfg.WriteTimeout, "bound on one request from its headers to the end of its answer (keep above the long-poll cap)")
	fs.DurationVar(&cfg.GatewayTimeout, "gateway-timeout", cfg.GatewayTimeout, "bound on one gateway call")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "drain time after SIGTERM before in-flight work is abandoned")
	fs.DurationVar(&cfg.MaxNotBefore, "max-not-before", cfg.MaxNotBefore, "how far ahead a submission's notBefore may schedule its first attempt")
	fs.DurationVar(&cfg.MaxWait, "max-wait", cfg.MaxWait, "longest wait a client may ask for with Prefer: wait=N")
	fs.IntVar(&cfg.MaxWaiters, "max-waiters", cfg.MaxWaiters, "requests waiting at once with Prefer: wait on this instance; more answer at once")
	fs.BoolVar(&cfg.Pprof, "pprof", cfg.Pprof, "serve net/http/pprof under /debug/pprof/ on --pprof-listen")
	fs.StringVar(&cfg.PprofListen, "pprof-listen", cfg.PprofListen, "profiling listen address, apart from the API's (with --pprof)")
	fs.TextVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info, warn or error")
	format := &choiceFlag{value: cfg.LogFormat, choices: []string{"text", "json"}}
	fs.Var(format, "log-format", "text or json")
	addProtectionFlags(fs, &cfg.Protection)
	addAccessFlags(fs, &cfg.Access)
	addTracingFlags(fs, &cfg.Tracing)
	if err := parseFlags(fs, args, env); err != nil {
		return ServeConfig{}, err
	}
	if fs.NArg() > 0 {
		return ServeConfig{}, &usageError{msg: fmt.Sprintf("serve takes no arguments, got %q", fs.Args())}
	}
	if given(fs, "api-keys") && len(cfg.APIKeys) == 0 {
		// "--api-keys ," or an empty SUBMISSION_API_KEYS would otherwise
		// serve /v1 to anyone while the operator believes it guarded.
		return ServeConfig{}, &usageError{msg: fmt.Sprintf("--api-keys (%s) lists no key; give at least one, or leave it unset to serve /v1 without keys",
			EnvName("api-keys"))}
	}
	if given(fs, "operator-keys") && len(cfg.OperatorKeys) == 0 {
		return ServeConfig{}, &usageError{msg: fmt.Sprintf("--operator-keys (%s) lists no key; give at least one, or leave it unset to run without operator keys",
			EnvName("operator-keys"))}
	}
	cfg.LogFormat = format.value
	if err := cfg.Validate(); err != nil {
		return ServeConfig{}, &usageError{msg: err.Error()}
	}
	return cfg, nil
}

// Validate checks the values flags cannot check alone. Every message names
// the flag to fix.
func (c ServeConfig) Validate() error {
	var errs []error
	positive := func(flag string, d time.Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be positive, got %s", flag, d))
		}
	}
	positive("retry-delay", c.RetryDelay)
	positive("lease-duration", c.LeaseDuration)
	positive("renew-interval", c.RenewInterval)
	positive("acquire-interval", c.AcquireInterval)
	positive("schedule-refresh-interval", c.ScheduleRefreshInterval)
	positive("gateway-timeout", c.GatewayTimeout)
	positive("shutdown-timeout", c.ShutdownTimeout)
	positive("write-timeout", c.WriteTimeout)
	positive("max-not-before", c.MaxNotBefore)
	if c.MaxWait < time.Second {
		errs = append(errs, fmt.Errorf("--max-wait must be at least 1s (waits are whole seconds), got %s", c.MaxWait))
	}
	if c.MaxWaiters < 1 {
		errs = append(errs, fmt.Errorf("--max-waiters must be at least 1, got %d", c.MaxWaiters))
	}
	if c.MaxWait >= c.WriteTimeout && c.WriteTimeout > 0 {
		errs = append(errs, fmt.Errorf("--max-wait (%s) must be shorter than --write-timeout (%s), which bounds every answer", c.MaxWait, c.WriteTimeout))
	}
	if c.RenewInterval > 0 && c.LeaseDuration > 0 && c.RenewInterval >= c.LeaseDuration {
		errs = append(errs, fmt.Errorf("--renew-interval (%s) must be shorter than --lease-duration (%s)", c.RenewInterval, c.LeaseDuration))
	}
	if c.MaxInFlight < 1 {
		errs = append(errs, fmt.Errorf("--max-in-flight must be at least 1, got %d", c.MaxInFlight))
	}
	if c.ReserveAhead < AsManyAsMaxInFlight {
		errs = append(errs, fmt.Errorf("--reserve-ahead must be a count, 0 for none or -1 for as many as --max-in-flight; got %d", c.ReserveAhead))
	}
	if c.MaxBodiesInFlight < 1 {
		errs = append(errs, fmt.Errorf("--max-bodies-in-flight must be at least 1, got %d", c.MaxBodiesInFlight))
	}
	if c.Pprof && c.PprofListen == "" {
		errs = append(errs, errors.New("--pprof-listen must name an address when --pprof is on"))
	}
	if c.MaxPayloadBytes < 1 {
		errs = append(errs, fmt.Errorf("--max-payload-bytes must be at least 1, got %d", c.MaxPayloadBytes))
	}
	if c.MaxBatch < 1 || c.MaxBatch > maxMaxBatch {
		errs = append(errs, fmt.Errorf("--max-batch must be between 1 and %d, got %d", maxMaxBatch, c.MaxBatch))
	} else if largest := httpapi.LargestBody(c.MaxPayloadBytes, c.MaxBatch); c.MaxPayloadBytes >= 1 && c.MaxBodyBytesInFlight < largest {
		errs = append(errs, fmt.Errorf("--max-body-bytes-in-flight must hold the largest request body, %d bytes (a batch at --max-payload-bytes and --max-batch), got %d",
			largest, c.MaxBodyBytesInFlight))
	}
	if len(c.HolderID) > 128 {
		errs = append(errs, fmt.Errorf("--holder-id is %d bytes; the lease row holds at most 128", len(c.HolderID)))
	}
	if c.Registry == "" {
		errs = append(errs, errors.New("--registry must name a file"))
	}
	if c.Listen == "" {
		errs = append(errs, errors.New("--listen must name an address"))
	}
	if _, err := ParseDatabase(c.Database); err != nil {
		errs = append(errs, fmt.Errorf("--database: %w", err))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("--log-format must be text or json, got %q", c.LogFormat))
	}
	if err := c.Protection.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Access.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Tracing.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

var _ flag.Value = (*listFlag)(nil)
