package gatewaysim

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/submissionmanager/submission-manager/core"
)

// defaultListen is where a gateway type listens when Config.Listen does not
// name it: a free loopback port, so parallel tests never collide.
const defaultListen = "127.0.0.1:0"

// Simulator serves one simulated gateway per gateway type, each on its own
// listener. It is safe for concurrent use; Close stops it.
type Simulator struct {
	gateways map[core.GatewayType]*gateway
	servers  map[core.GatewayType]*http.Server
	urls     map[core.GatewayType]string
	done     chan struct{}
	// serving counts the Serve goroutines, which Close waits for.
	serving sync.WaitGroup
	// handlers tracks running handlers of both gateways for Close.
	handlers *handlerTracker
	// waker ends the gateways' simulated latencies (waker.go).
	waker     *waker
	closeOnce sync.Once
	closeErr  error
	logger    *slog.Logger
}

// Start listens for every gateway type and serves until Close. It returns
// once the listeners are bound, so the URLs are usable at once.
func Start(cfg Config) (*Simulator, error) {
	b, err := newBehaviour(cfg)
	if err != nil {
		return nil, fmt.Errorf("gateway simulator config: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Simulator{
		gateways: make(map[core.GatewayType]*gateway),
		servers:  make(map[core.GatewayType]*http.Server),
		urls:     make(map[core.GatewayType]string),
		done:     make(chan struct{}),
		handlers: newHandlerTracker(),
		logger:   logger,
	}
	listeners := make(map[core.GatewayType]net.Listener)
	for _, t := range core.GatewayTypes() {
		addr := cfg.Listen[t]
		if addr == "" {
			addr = defaultListen
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			for _, open := range listeners {
				_ = open.Close()
			}
			return nil, fmt.Errorf("gateway simulator for %s cannot listen on %s: %w", t, addr, err)
		}
		listeners[t] = ln
	}
	s.waker = newWaker(newKernelTimer())
	for t, ln := range listeners {
		g := newGateway(t, b, s.done, s.waker, logger)
		srv := &http.Server{
			Handler:           s.handlers.wrap(g.handler()),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
		}
		s.gateways[t], s.servers[t] = g, srv
		s.urls[t] = "http://" + ln.Addr().String()
		s.serving.Add(1)
		go func() {
			defer s.serving.Done()
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				logger.Error("gateway simulator stopped serving", "gateway_type", t, "err", err)
			}
		}()
		logger.Info("gateway simulator listening", "gateway_type", t, "url", s.urls[t],
			"latency", b.latency, "latency_jitter", b.jitter, "reject_ratio", b.rejectRatio, "mode", b.mode)
	}
	return s, nil
}

// URL returns the base URL of the gateway type's simulated gateway, to be
// used as a contract's gatewayUrl.
func (s *Simulator) URL(t core.GatewayType) string { return s.urls[t] }

// Stats returns the counts of both gateways merged.
func (s *Simulator) Stats() Stats {
	var all Stats
	for _, t := range core.GatewayTypes() {
		all.merge(s.gateways[t].stats(""))
	}
	return all
}

// StatsOf returns the counts of one gateway type's simulated gateway.
func (s *Simulator) StatsOf(t core.GatewayType) Stats {
	g, ok := s.gateways[t]
	if !ok {
		return Stats{References: map[string]ReferenceStats{}}
	}
	return g.stats("")
}

// Reference returns the counts of one reference over both gateways; it is
// cheap at any load.
func (s *Simulator) Reference(ref string) ReferenceStats {
	var all Stats
	for _, t := range core.GatewayTypes() {
		all.merge(s.gateways[t].state.stats(ref))
	}
	return all.References[ref]
}

// Script sets the next answers for a reference on both gateways, replacing
// any remaining script; each submission of the reference uses one step.
// References are intentIds, unique across gateway types, so one script
// serves whichever gateway the intent is routed to.
func (s *Simulator) Script(ref string, steps ...Step) error {
	if ref == "" {
		return errors.New("script needs a reference")
	}
	for _, step := range steps {
		if _, err := ParseStep(string(step)); err != nil {
			return err
		}
	}
	for _, g := range s.gateways {
		g.state.script(ref, steps)
	}
	return nil
}

// SetMode sets how both gateways answer unscripted submissions.
func (s *Simulator) SetMode(m Mode) error {
	if _, err := ParseMode(string(m)); err != nil {
		return err
	}
	for _, g := range s.gateways {
		g.setMode(m)
	}
	return nil
}

// Reset returns both gateways to their start: start mode and scripts, no
// remembered references, zero counts. Submissions in flight while it runs
// may be counted before or after the reset.
func (s *Simulator) Reset() {
	for _, g := range s.gateways {
		g.reset()
	}
}

// Close ends hanging and waiting submissions without an answer, closes the
// listeners and connections, and waits for the servers' goroutines and
// every running handler. It is safe to call more than once.
func (s *Simulator) Close() error {
	s.closeOnce.Do(func() {
		close(s.done)
		var errs []error
		for t, srv := range s.servers {
			// Not Shutdown: it waits up to 5 s for connections a client
			// opened but never used, and handlers end on done anyway.
			if err := srv.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close %s gateway simulator: %w", t, err))
			}
		}
		s.serving.Wait()
		s.handlers.closeAndWait()
		s.waker.close()
		s.closeErr = errors.Join(errs...)
		s.logger.Info("gateway simulator stopped")
	})
	return s.closeErr
}
