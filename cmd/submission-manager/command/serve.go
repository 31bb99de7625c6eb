package command

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/console"
	"github.com/submissionmanager/submission-manager/adapters/gateway"
	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/adapters/prometheus"
	"github.com/submissionmanager/submission-manager/adapters/sysclock"
	"github.com/submissionmanager/submission-manager/app/intake"
	"github.com/submissionmanager/submission-manager/app/leader"
	"github.com/submissionmanager/submission-manager/app/protection"
	"github.com/submissionmanager/submission-manager/app/watch"
	"github.com/submissionmanager/submission-manager/ports"
)

// Server is one running SubmissionManager instance: the HTTP API on its
// listener and the leader election that runs the executor while this
// instance holds the lease. It owns every goroutine it starts; Shutdown
// stops and waits for them.
type Server struct {
	log      *slog.Logger
	holderID string
	url      string
	db       database
	gateways []*gateway.Client
	// tracing is the instance's tracer; its exporter is flushed at exit.
	tracing tracing
	http    *http.Server
	// pprof serves profiling on its own listener; nil without --pprof.
	pprof    *http.Server
	pprofURL string

	stopLead context.CancelFunc
	leadDone chan struct{}
	// watcher wakes requests waiting for a final status; stopWatch and
	// watchDone stop its goroutine.
	watcher   *watch.Watcher
	stopWatch context.CancelFunc
	watchDone chan struct{}
	// failed delivers an error when serving HTTP stops by itself.
	failed chan error

	shutdownOnce sync.Once
	shutdownErr  error
}

// openServeDatabase is how Start opens its store; a test wraps what it
// returns to see the order in which Start warms and elects.
var openServeDatabase = openDatabase

// Start builds the instance from cfg and starts serving. It returns once the
// listener is bound (URL is usable at once) and the store is migrated where
// that is serve's job. ctx bounds the start-up only; the instance runs until
// Shutdown.
func Start(ctx context.Context, cfg ServeConfig, log *slog.Logger) (_ *Server, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	registry, err := loadRegistry(cfg.Registry)
	if err != nil {
		return nil, err
	}
	dbSpec, _ := ParseDatabase(cfg.Database) // checked by Validate
	db, err := openServeDatabase(ctx, dbSpec, log)
	if err != nil {
		return nil, err
	}
	s := &Server{log: log, db: db, leadDone: make(chan struct{}), watchDone: make(chan struct{}), failed: make(chan error, 1)}
	defer func() {
		if err != nil {
			s.closeResources()
		}
	}()
	// A database this process owns (the embedded file) is migrated at every
	// start; a shared one only when the operator asks.
	if db.OwnsSchema() || cfg.Migrate {
		if err := db.Migrate(ctx, "up"); err != nil {
			return nil, fmt.Errorf("--database %s: %w", dbSpec, err)
		}
	}
	s.holderID = cfg.HolderID
	if s.holderID == "" {
		s.holderID = defaultHolderID()
	}

	if s.tracing, err = cfg.Tracing.newTracing(ctx, s.holderID, log); err != nil {
		return nil, err
	}
	clock := sysclock.New()
	metrics := prometheus.New()
	warnWeakKeys(cfg, log)
	throttle, err := newAuthThrottle(cfg.Access, clock, metrics, log)
	if err != nil {
		return nil, err
	}
	// The console's rates are fed by the same events as Prometheus.
	activity := console.NewActivity(metrics, clock)
	// An API-only instance runs no executor: it has no gateway clients, no
	// elector, and nothing to tell about the intents it creates.
	var (
		exec       *execution
		notifier   intake.Notifier
		leadership ports.LeadershipReporter
	)
	if !cfg.APIOnly {
		// The console's activity wraps the base metrics and would hide the
		// gateway protection's: the executor gets both.
		execMetrics := executorMetrics{Metrics: activity, ProtectionMetrics: metrics}
		if exec, err = s.newExecution(cfg, clock, execMetrics, log); err != nil {
			return nil, err
		}
		notifier, leadership = exec.executor, exec.elector
	}
	service, err := intake.NewService(intake.ServiceConfig{
		Registry:        registry,
		Store:           db.Store(),
		Clock:           clock,
		Metrics:         activity,
		MaxPayloadBytes: int(cfg.MaxPayloadBytes),
		Notifier:        notifier,
		MaxNotBefore:    cfg.MaxNotBefore,
		MaxBatch:        cfg.MaxBatch,
		Tracer:          s.tracing.tracer,
	})
	if err != nil {
		return nil, err
	}
	// Every instance (leader, follower, API-only) watches the store for the
	// requests that wait for a final status.
	if s.watcher, err = watch.New(watch.Config{Store: db.Store(), Reader: service, Clock: clock, MaxWaiters: cfg.MaxWaiters, Logger: log}); err != nil {
		return nil, err
	}
	gwCfg := protection.GatewayServiceConfig{Targets: service.Targets, Pauses: db.Store(), Logger: log}
	if exec != nil {
		gwCfg.Executor = exec.executor
	}
	gateways, err := protection.NewGatewayService(gwCfg)
	if err != nil {
		return nil, err
	}
	fl, err := newFleet(db, s.holderID, cfg.APIOnly, leadership, service.Targets, clock, log)
	if err != nil {
		return nil, err
	}
	api, err := httpapi.New(httpapi.Config{
		Service:           service,
		Gateways:          gateways,
		Instances:         fl.directory,
		Leadership:        leadership,
		HolderID:          s.holderID,
		APIOnly:           cfg.APIOnly,
		APIKeys:           cfg.APIKeys,
		OperatorKeys:      cfg.OperatorKeys,
		Throttle:          throttle,
		MaxPayloadBytes:   cfg.MaxPayloadBytes,
		MaxBodiesInFlight: cfg.MaxBodiesInFlight,
		MaxBatch:          cfg.MaxBatch,
		Waiter:            s.watcher,
		MaxWait:           cfg.MaxWait,
		Logger:            log,

		MaxBodyBytesInFlight: cfg.MaxBodyBytesInFlight,
	})
	if err != nil {
		return nil, err
	}
	mountOperatorRoutes(api.Mux(), metrics)
	ui, err := console.New(console.Config{
		Service: service, Operator: service, Leadership: leadership, Activity: activity, Clock: clock,
		HolderID: s.holderID, APIOnly: cfg.APIOnly, OperatorKeys: cfg.OperatorKeys, ClientKeys: cfg.APIKeys, Logger: log,
		Gateways: gateways, History: fl.history, Instances: fl.directory,
		Sessions: db.Sessions(), Throttle: throttle, SessionTTL: cfg.Access.SessionTTL,
	})
	if err != nil {
		return nil, err
	}
	api.Mux().Handle("/ui/", ui)

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", cfg.Listen, err)
	}
	if cfg.Pprof {
		pln, err := net.Listen("tcp", cfg.PprofListen)
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("--pprof-listen %s: %w", cfg.PprofListen, err)
		}
		s.pprofURL = "http://" + pln.Addr().String()
		s.pprof = &http.Server{
			Handler:           pprofMux(),
			ReadHeaderTimeout: 10 * time.Second,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
		go s.serve(s.pprof, pln, s.pprofURL)
	}

	// The listener is bound, so nothing below fails the start. The leader
	// election starts once the executor's pool is warm, and the query
	// pool's warm-up once the election's first try has returned, so that
	// a new leader acquires on a quiet server and drains a backlog while
	// intake's connections warm (on Babelfish, seconds of the server's
	// CPU); requests are served once those are warm and the watcher has
	// placed its cursor, so that the first request may wait. Until then
	// connections queue on the listener.
	leadCtx, stopLead := context.WithCancel(context.WithoutCancel(ctx))
	s.stopLead = stopLead
	if exec != nil {
		s.warm(ctx, "executor", db.WarmExecution)
		go func() {
			defer close(s.leadDone)
			if err := exec.elector.Run(leadCtx, exec.executor.Lead); err != nil {
				log.Error("leader election stopped", "error", err)
			}
		}()
		s.awaitFirstTry(ctx, exec.elector.Tried())
	} else {
		close(s.leadDone)
	}
	s.warm(ctx, "queries", db.WarmQueries)
	if err := s.watcher.Prime(ctx); err != nil {
		log.WarnContext(ctx, "wait_watch_failed", "error", err.Error())
	}

	s.url = "http://" + ln.Addr().String()
	s.http = &http.Server{
		Handler:           metrics.Middleware(api.Mux(), api),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	go s.serve(s.http, ln, s.url)

	watchCtx, stopWatch := context.WithCancel(context.WithoutCancel(ctx))
	s.stopWatch = stopWatch
	// The heartbeat stops with the watcher, before the store closes, and
	// removes this instance's record on the way out.
	go func() {
		defer close(s.watchDone)
		runAll(watchCtx, func(ctx context.Context) {
			_ = s.watcher.Run(ctx) // it logs its own read failures
		}, fl.beat)
	}()
	log.Info("submission-manager serving", "url", s.url, "holder_id", s.holderID,
		"database", dbSpec.String(), "registry", cfg.Registry, "targets", registry.Len(),
		"api_only", cfg.APIOnly, "api_keys", len(cfg.APIKeys) > 0, "operator_keys", len(cfg.OperatorKeys) > 0, "pprof", s.pprofURL,
		"otlp_endpoint", cfg.Tracing.OTLPEndpoint)
	return s, nil
}

// serve runs srv on ln until Shutdown; a listener that breaks on its own
// fails the instance.
func (s *Server) serve(srv *http.Server, ln net.Listener, url string) {
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		select {
		case s.failed <- fmt.Errorf("serving HTTP on %s: %w", url, err):
		default: // the first failure is enough to stop the instance
		}
	}
}

// URL is the base URL the API answers on, e.g. "http://127.0.0.1:8000".
func (s *Server) URL() string { return s.url }

// Waiters returns how many requests wait for a final status on this
// instance now.
func (s *Server) Waiters() int { return s.watcher.Waiters() }

// PprofURL is the base URL of the profiling listener, or "" without --pprof.
func (s *Server) PprofURL() string { return s.pprofURL }

// HolderID is this instance's name in the lease.
func (s *Server) HolderID() string { return s.holderID }

// Failed delivers an error if serving HTTP stops on its own (the listener
// broke); the serve command then shuts down and exits non-zero.
func (s *Server) Failed() <-chan error { return s.failed }

// runServe runs `serve` until ctx ends (SIGINT or SIGTERM), then drains
// within --shutdown-timeout and returns nil: a requested stop is a success
// even when it had to abandon in-flight work, which the next leader closes.
func runServe(ctx context.Context, args []string, env LookupEnv, stderr io.Writer) error {
	cfg, err := parseServeConfig(args, env, stderr)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	defer startGCFloor(env, gcRetuneEvery, log)()
	srv, err := Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	var failed error
	select {
	case <-ctx.Done():
	case failed = <-srv.Failed():
		log.Error("submission-manager failed", "error", failed)
	}
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	_ = srv.Shutdown(stopCtx) // logged; abandoned work is not a failed stop
	return failed
}

// defaultHolderID is the spec's hostname-pid-random.
func defaultHolderID() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return leader.DefaultHolderID(host, os.Getpid(), hex.EncodeToString(b[:]))
}
