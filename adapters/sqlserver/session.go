package sqlserver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.SessionStore = (*store)(nil)

// Sessions returns the console's session store on this database.
func (db *DB) Sessions() ports.SessionStore { return db.storeOn(db.queries) }

// secretAttempts bounds SessionSecret's read-insert-read loop: only a
// store emptied between the insert and the read sends it round again.
const secretAttempts = 3

// rotationAttempts bounds RotateSessionSecret's runs. Concurrent rotations
// read the same latest generation and insert the next; the primary key lets
// one of them win per round and the others run again, so n rotations at
// once need at most n rounds. Rotations are an operator's rare command.
const rotationAttempts = 10

// SessionSecret reads the current secret and, only when there is none,
// inserts first as generation 1: instances that find none at once all
// insert, the primary key keeps the first, and the others read it. See
// ports.SessionStore.
func (s *store) SessionSecret(ctx context.Context, first []byte) (core.SessionSecret, error) {
	if err := (core.SessionSecret{Generation: 1, Key: first}).Validate(); err != nil {
		return core.SessionSecret{}, err
	}
	for range secretAttempts {
		row, err := s.q.GetConsoleSecret(ctx)
		if err == nil {
			return core.SessionSecret{Generation: row.Generation, Key: row.Secret}, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return core.SessionSecret{}, mapError(err)
		}
		if err := mapError(s.q.InsertFirstConsoleSecret(ctx, first)); err != nil && !errors.Is(err, errDuplicateKey) {
			return core.SessionSecret{}, err
		}
	}
	return core.SessionSecret{}, fmt.Errorf("sqlserver: console secret: %w: rotated away %d times while being read",
		core.ErrStoreUnavailable, secretAttempts)
}

// RotateSessionSecret keeps key as the next generation, deletes the older
// ones and every session, in one transaction; a rotation that lost the
// generation to a concurrent one runs again. See ports.SessionStore.
func (s *store) RotateSessionSecret(ctx context.Context, key []byte) (core.SessionSecret, error) {
	if err := (core.SessionSecret{Generation: 1, Key: key}).Validate(); err != nil {
		return core.SessionSecret{}, err
	}
	var gen int64
	rotate := func(q *sqlserverdb.Queries) error {
		var err error
		if gen, err = q.NextConsoleSecretGeneration(ctx); err != nil {
			return mapError(err)
		}
		if err := q.InsertConsoleSecret(ctx, sqlserverdb.InsertConsoleSecretParams{Generation: gen, Secret: key}); err != nil {
			return mapError(err)
		}
		if err := q.DeleteConsoleSecretsBefore(ctx, gen); err != nil {
			return mapError(err)
		}
		return mapError(q.DeleteAllConsoleSessions(ctx))
	}
	var err error
	for range rotationAttempts {
		err = s.inTx(ctx, sql.LevelReadCommitted, rotate)
		if !errors.Is(err, errDuplicateKey) {
			break
		}
	}
	if err != nil {
		return core.SessionSecret{}, err
	}
	return core.SessionSecret{Generation: gen, Key: key}, nil
}

// StartSession keeps a new session; the primary key refuses a kept ID. See
// ports.SessionStore.
func (s *store) StartSession(ctx context.Context, cs core.ConsoleSession) error {
	if err := cs.Validate(); err != nil {
		return err
	}
	err := mapError(s.q.InsertConsoleSession(ctx, sqlserverdb.InsertConsoleSessionParams{
		SessionID: cs.ID[:], StartedAt: dbTime(cs.StartedAt), ExpiresAt: dbTime(cs.ExpiresAt),
	}))
	if errors.Is(err, errDuplicateKey) {
		return core.ErrSessionExists
	}
	return err
}

// ConsoleSession reads a kept session. See ports.SessionStore.
func (s *store) ConsoleSession(ctx context.Context, id core.SessionID) (core.ConsoleSession, bool, error) {
	row, err := s.q.GetConsoleSession(ctx, id[:])
	if errors.Is(err, sql.ErrNoRows) {
		return core.ConsoleSession{}, false, nil
	}
	if err != nil {
		return core.ConsoleSession{}, false, mapError(err)
	}
	return core.ConsoleSession{ID: id, StartedAt: row.StartedAt.UTC(), ExpiresAt: row.ExpiresAt.UTC()}, true, nil
}

// EndSession deletes a session. See ports.SessionStore.
func (s *store) EndSession(ctx context.Context, id core.SessionID) (bool, error) {
	n, err := s.q.DeleteConsoleSession(ctx, id[:])
	if err != nil {
		return false, mapError(err)
	}
	return n > 0, nil
}

// EndExpiredSessions deletes the sessions expired at now. See
// ports.SessionStore.
func (s *store) EndExpiredSessions(ctx context.Context, now time.Time) (int64, error) {
	n, err := s.q.DeleteExpiredConsoleSessions(ctx, dbTime(now))
	if err != nil {
		return 0, mapError(err)
	}
	return n, nil
}
