package sqlserver

import (
	"context"
	"database/sql"
	"errors"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
)

// deadlockRetries is how many times a transaction chosen as a deadlock
// victim runs again. SQL Server rolled it back entirely, so a rerun is safe.
const deadlockRetries = 3

// inTx runs fn in one transaction at the given isolation level on the
// store's pool and commits it, retrying the whole transaction
// when SQL Server picks it as a deadlock victim. fn returns errors already
// mapped by mapError or core errors; any error rolls the transaction back.
//
// Every transaction names its isolation level explicitly: go-mssqldb sets it
// for the session, and although SQL Server 2014 and later reset it when a
// pooled connection is reused, code here never relies on the level a
// previous user of the connection left behind.
func (s *store) inTx(ctx context.Context, isolation sql.IsolationLevel, fn func(q *sqlserverdb.Queries) error) error {
	return s.db.retryDeadlocks(ctx, func() error {
		return runTxOn(ctx, s.pool, isolation, func(tx *sql.Tx) error { return fn(s.q.WithTx(tx)) })
	})
}

// inRawTx is inTx at READ COMMITTED for statements sqlc cannot generate:
// fn gets the transaction itself.
func (s *store) inRawTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return s.db.retryDeadlocks(ctx, func() error {
		return runTxOn(ctx, s.pool, sql.LevelReadCommitted, fn)
	})
}

// retryDeadlocks runs a transaction again while SQL Server chooses it as a
// deadlock victim, up to deadlockRetries times.
func (db *DB) retryDeadlocks(ctx context.Context, run func() error) error {
	var err error
	for range deadlockRetries + 1 {
		err = run()
		if !errors.Is(err, errDeadlock) || ctx.Err() != nil {
			return err
		}
		db.log.DebugContext(ctx, "transaction chosen as deadlock victim; retrying", "error", err)
	}
	return err
}

// runTxOn runs fn in one transaction on pool and commits it.
func runTxOn(ctx context.Context, pool *sql.DB, isolation sql.IsolationLevel, fn func(tx *sql.Tx) error) error {
	tx, err := pool.BeginTx(ctx, &sql.TxOptions{Isolation: isolation})
	if err != nil {
		return mapError(err)
	}
	if err := fn(tx); err != nil {
		// A deadlock victim's transaction is already gone on the server, so
		// the rollback error (if any) adds nothing.
		_ = tx.Rollback()
		return err
	}
	return mapError(tx.Commit())
}
