package command

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Shutdown stops the instance: it stops accepting connections and drains
// in-flight requests while the executor stops starting attempts and records
// the results of those in flight. What is still running when ctx ends is
// abandoned: its requests are cut and its attempts stay recorded as started,
// for the next leader to close. The store is closed last. Safe to call more
// than once; later calls return the first result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdownOnce.Do(func() { s.shutdownErr = s.shutdown(ctx) })
	return s.shutdownErr
}

// abandonGrace bounds the wait for the executor after the shutdown timeout,
// before the store is closed: long enough to record cut attempts and
// release the lease, short enough that a stuck store cannot hang the exit.
const abandonGrace = 5 * time.Second

func (s *Server) shutdown(ctx context.Context) error {
	s.log.Info("submission-manager shutting down", "holder_id", s.holderID)
	// Waiting requests answer now, with their intents as they stand, so
	// that they do not hold the HTTP drain; then the watcher stops.
	s.watcher.Close()
	s.stopWatch()
	<-s.watchDone
	httpDone := make(chan error, 1)
	go func() { httpDone <- s.http.Shutdown(ctx) }()
	if s.pprof != nil {
		// A profile in progress is cut: it is not work to drain.
		_ = s.pprof.Close()
	}
	s.stopLead()
	var errs []error
	select {
	case <-s.leadDone:
	case <-ctx.Done():
		errs = append(errs, errors.New("the executor did not stop in time: in-flight attempts abandoned"))
		// The executor is still ending its drain; give it a moment to
		// record its attempts and release the lease before the store it
		// writes to is closed under it.
		select {
		case <-s.leadDone:
		case <-time.After(abandonGrace):
		}
	}
	if err := <-httpDone; err != nil {
		_ = s.http.Close()
		errs = append(errs, fmt.Errorf("draining HTTP requests: %w", err))
	}
	if err := s.closeResources(); err != nil {
		errs = append(errs, err)
	}
	err := errors.Join(errs...)
	if err != nil {
		s.log.Warn("submission-manager stopped with abandoned work", "error", err)
	} else {
		s.log.Info("submission-manager stopped")
	}
	return err
}

// closeResources releases what Start opened. The spans still queued are
// exported last, so that they include the drain's.
func (s *Server) closeResources() error {
	for _, g := range s.gateways {
		g.Close()
	}
	return errors.Join(s.db.Close(), s.tracing.close())
}
