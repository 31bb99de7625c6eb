package memstore

import (
	"bytes"
	"context"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.SessionStore = (*Store)(nil)

// sessionState is the console's secret and sessions, behind the store's
// one lock like everything else.
type sessionState struct {
	secret   core.SessionSecret
	sessions map[core.SessionID]core.ConsoleSession
}

// SessionSecret returns the secret, keeping first when there is none. See
// ports.SessionStore.
func (s *Store) SessionSecret(ctx context.Context, first []byte) (core.SessionSecret, error) {
	if err := ctxErr(ctx); err != nil {
		return core.SessionSecret{}, err
	}
	candidate := core.SessionSecret{Generation: 1, Key: bytes.Clone(first)}
	if err := candidate.Validate(); err != nil {
		return core.SessionSecret{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.console.secret.Generation == 0 {
		s.console.secret = candidate
	}
	return cloneSecret(s.console.secret), nil
}

// RotateSessionSecret moves to the next generation and ends every session.
// See ports.SessionStore.
func (s *Store) RotateSessionSecret(ctx context.Context, key []byte) (core.SessionSecret, error) {
	if err := ctxErr(ctx); err != nil {
		return core.SessionSecret{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := core.SessionSecret{Generation: s.console.secret.Generation + 1, Key: bytes.Clone(key)}
	if err := next.Validate(); err != nil {
		return core.SessionSecret{}, err
	}
	s.console.secret = next
	clear(s.console.sessions)
	return cloneSecret(next), nil
}

// StartSession keeps a new session. See ports.SessionStore.
func (s *Store) StartSession(ctx context.Context, cs core.ConsoleSession) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := cs.Validate(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.console.sessions == nil {
		s.console.sessions = map[core.SessionID]core.ConsoleSession{}
	}
	if _, ok := s.console.sessions[cs.ID]; ok {
		return core.ErrSessionExists
	}
	s.console.sessions[cs.ID] = cs
	return nil
}

// ConsoleSession returns a kept session. See ports.SessionStore.
func (s *Store) ConsoleSession(ctx context.Context, id core.SessionID) (core.ConsoleSession, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return core.ConsoleSession{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, ok := s.console.sessions[id]
	return cs, ok, nil
}

// EndSession deletes a session. See ports.SessionStore.
func (s *Store) EndSession(ctx context.Context, id core.SessionID) (bool, error) {
	if err := ctxErr(ctx); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.console.sessions[id]
	delete(s.console.sessions, id)
	return ok, nil
}

// EndExpiredSessions deletes the sessions expired at now. See
// ports.SessionStore.
func (s *Store) EndExpiredSessions(ctx context.Context, now time.Time) (int64, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for id, cs := range s.console.sessions {
		if !cs.ExpiresAt.After(now) {
			delete(s.console.sessions, id)
			n++
		}
	}
	return n, nil
}

func cloneSecret(s core.SessionSecret) core.SessionSecret {
	s.Key = bytes.Clone(s.Key)
	return s
}
