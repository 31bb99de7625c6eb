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

// inTx runs fn in one transaction at the given isolation level and commits
// it, retrying the whole transaction when SQL Server picks it as a deadlock
// victim. fn returns errors already mapped by mapError or core errors; any
// error rolls the transaction back.
//
// Every transaction names its isolation level explicitly: go-mssqldb sets it
// for the session, and although SQL Server 2014 and later reset it when a
// pooled connection is reused, code here never relies on the level a
// previous user of the connection left behind.
func (db *DB) inTx(ctx context.Context, isolation sql.IsolationLevel, fn func(q *sqlserverdb.Queries) error) error {
	var err error
	for range deadlockRetries + 1 {
		err = db.runTx(ctx, isolation, fn)
		if !errors.Is(err, errDeadlock) || ctx.Err() != nil {
			return err
		}
		db.log.DebugContext(ctx, "transaction chosen as deadlock victim; retrying", "error", err)
	}
	return err
}

func (db *DB) runTx(ctx context.Context, isolation sql.IsolationLevel, fn func(q *sqlserverdb.Queries) error) error {
	tx, err := db.queries.BeginTx(ctx, &sql.TxOptions{Isolation: isolation})
	if err != nil {
		return mapError(err)
	}
	if err := fn(db.q.WithTx(tx)); err != nil {
		// A deadlock victim's transaction is already gone on the server, so
		// the rollback error (if any) adds nothing.
		_ = tx.Rollback()
		return err
	}
	return mapError(tx.Commit())
}
