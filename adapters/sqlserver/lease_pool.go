package sqlserver

import (
	"context"
	"database/sql"

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
	leases := sql.OpenDB(cfg.connector(poolLeases, conns.queries))
	leases.SetMaxOpenConns(leaseConns)
	leases.SetMaxIdleConns(leaseConns)
	leases.SetConnMaxLifetime(cfg.ConnMaxLifetime)
	return leases
}

// inLeaseTx runs fn in one READ COMMITTED transaction on the lease pool,
// retried as a whole when it is chosen as a deadlock victim.
func (db *DB) inLeaseTx(ctx context.Context, fn func(tx *sql.Tx, q *sqlserverdb.Queries) error) error {
	return db.retryDeadlocks(ctx, func() error {
		return runTxOn(ctx, db.leases, sql.LevelReadCommitted, func(tx *sql.Tx) error { return fn(tx, db.leaseQ.WithTx(tx)) })
	})
}
