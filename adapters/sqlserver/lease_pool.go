package sqlserver

import (
	"context"
	"database/sql"
	"errors"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
)

// leaseConns is the size of the lease operations' own pool. Acquire, renew,
// release and read of the lease never wait for a connection behind intake
// or execution traffic: with one shared pool, a slow database turns the
// wait for a connection into a lost lease (every renewal timing out while
// requests hold the pool), and each loss leaves attempts in doubt. Two
// connections cover a renewal overlapping a read of the lease.
const leaseConns = 2

// openLeasePool opens the lease operations' pool on the queries' connector.
func openLeasePool(conns connectors, cfg Config) *sql.DB {
	leases := sql.OpenDB(conns.queries)
	leases.SetMaxOpenConns(leaseConns)
	leases.SetMaxIdleConns(leaseConns)
	leases.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	return leases
}

// inLeaseTx is inTx on the lease pool.
func (db *DB) inLeaseTx(ctx context.Context, isolation sql.IsolationLevel, fn func(q *sqlserverdb.Queries) error) error {
	var err error
	for range deadlockRetries + 1 {
		err = runTxOn(ctx, db.leases, db.leaseQ, isolation, fn)
		if !errors.Is(err, errDeadlock) || ctx.Err() != nil {
			return err
		}
		db.log.DebugContext(ctx, "lease transaction chosen as deadlock victim; retrying", "error", err)
	}
	return err
}

func runTxOn(ctx context.Context, pool *sql.DB, q *sqlserverdb.Queries, isolation sql.IsolationLevel, fn func(q *sqlserverdb.Queries) error) error {
	tx, err := pool.BeginTx(ctx, &sql.TxOptions{Isolation: isolation})
	if err != nil {
		return mapError(err)
	}
	if err := fn(q.WithTx(tx)); err != nil {
		_ = tx.Rollback()
		return err
	}
	return mapError(tx.Commit())
}
