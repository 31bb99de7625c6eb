package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.SessionStore = (*store)(nil)

// Sessions returns the console's session store on this database.
func (db *DB) Sessions() ports.SessionStore { return &store{db: db} }

// SessionSecret reads the current secret, and only when there is none
// stores first, inside one write that reads back what it kept: every
// process on the file gets the secret the first one stored. See
// ports.SessionStore.
func (s *store) SessionSecret(ctx context.Context, first []byte) (core.SessionSecret, error) {
	if err := (core.SessionSecret{Generation: 1, Key: first}).Validate(); err != nil {
		return core.SessionSecret{}, err
	}
	row, err := s.db.reads.GetConsoleSecret(ctx)
	if err == nil {
		return core.SessionSecret{Generation: row.Generation, Key: row.Secret}, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return core.SessionSecret{}, mapError("read console secret", err)
	}
	err = s.db.writeSingle(ctx, "store console secret", func(ctx context.Context, q *writeTx) error {
		if err := q.InsertFirstConsoleSecret(ctx, sqlitedb.InsertFirstConsoleSecretParams{
			Secret: first, CreatedAt: nanos(q.now()),
		}); err != nil {
			return err
		}
		row, err = q.GetConsoleSecret(ctx)
		return err
	})
	if err != nil {
		return core.SessionSecret{}, err
	}
	return core.SessionSecret{Generation: row.Generation, Key: row.Secret}, nil
}

// RotateSessionSecret keeps key as the next generation, deletes the older
// ones and every session, in one write transaction. See ports.SessionStore.
func (s *store) RotateSessionSecret(ctx context.Context, key []byte) (core.SessionSecret, error) {
	if err := (core.SessionSecret{Generation: 1, Key: key}).Validate(); err != nil {
		return core.SessionSecret{}, err
	}
	var gen int64
	err := s.db.write(ctx, "rotate console secret", func(ctx context.Context, q *writeTx) error {
		var err error
		if gen, err = q.NextConsoleSecretGeneration(ctx); err != nil {
			return err
		}
		if err := q.InsertConsoleSecret(ctx, sqlitedb.InsertConsoleSecretParams{
			Generation: gen, Secret: key, CreatedAt: nanos(q.now()),
		}); err != nil {
			return err
		}
		if err := q.DeleteConsoleSecretsBefore(ctx, gen); err != nil {
			return err
		}
		return q.DeleteAllConsoleSessions(ctx)
	})
	if err != nil {
		return core.SessionSecret{}, err
	}
	return core.SessionSecret{Generation: gen, Key: key}, nil
}

// StartSession keeps a new session. See ports.SessionStore.
func (s *store) StartSession(ctx context.Context, cs core.ConsoleSession) error {
	if err := cs.Validate(); err != nil {
		return err
	}
	return s.db.writeSingle(ctx, "start console session", func(ctx context.Context, q *writeTx) error {
		n, err := q.InsertConsoleSession(ctx, sqlitedb.InsertConsoleSessionParams{
			SessionID: cs.ID[:], StartedAt: nanos(cs.StartedAt), ExpiresAt: nanos(cs.ExpiresAt),
		})
		if err == nil && n == 0 {
			return core.ErrSessionExists
		}
		return err
	})
}

// ConsoleSession reads a kept session. See ports.SessionStore.
func (s *store) ConsoleSession(ctx context.Context, id core.SessionID) (core.ConsoleSession, bool, error) {
	row, err := s.db.reads.GetConsoleSession(ctx, id[:])
	if errors.Is(err, sql.ErrNoRows) {
		return core.ConsoleSession{}, false, nil
	}
	if err != nil {
		return core.ConsoleSession{}, false, mapError("read console session", err)
	}
	return core.ConsoleSession{ID: id, StartedAt: fromNanos(row.StartedAt), ExpiresAt: fromNanos(row.ExpiresAt)}, true, nil
}

// EndSession deletes a session. See ports.SessionStore.
func (s *store) EndSession(ctx context.Context, id core.SessionID) (bool, error) {
	var n int64
	err := s.db.writeSingle(ctx, "end console session", func(ctx context.Context, q *writeTx) error {
		var err error
		n, err = q.DeleteConsoleSession(ctx, id[:])
		return err
	})
	return n > 0, err
}

// EndExpiredSessions deletes the sessions expired at now. See
// ports.SessionStore.
func (s *store) EndExpiredSessions(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.db.writeSingle(ctx, "end expired console sessions", func(ctx context.Context, q *writeTx) error {
		var err error
		n, err = q.DeleteExpiredConsoleSessions(ctx, nanos(now))
		return err
	})
	return n, err
}
