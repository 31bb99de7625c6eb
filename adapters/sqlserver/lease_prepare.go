package sqlserver

import (
	"context"
	"database/sql"

	"github.com/submissionmanager/submission-manager/ports"
)

var _ ports.TakeoverPreparer = (*leaseStore)(nil)

// rehearsalLeaseName names no lease: the rehearsal's lock and UPDATE are
// on it, so they wait for nobody, nobody waits for them, and the UPDATE
// finds no row.
const rehearsalLeaseName = "submission-manager-takeover-rehearsal"

// PrepareTakeover rehearses a takeover on the lease pool: the same
// procedure with its takeover's transaction, lease lock and conditional
// UPDATE, on a lease name no row has, so it writes nothing and contends with
// nothing. A follower's lease connection otherwise runs the procedure for
// the first time in its takeover, which on Babelfish costs 0.2 to 0.8 s
// there (a quiet and a busy 2-core machine) against 1 to 12 ms warm; the
// lease pool hands out its most recently used connection first, and a
// follower uses it one call at a time, so the takeover runs on the
// connection just rehearsed.
func (l *leaseStore) PrepareTakeover(ctx context.Context, _ string) error {
	_, _, _, err := l.acquireExisting(ctx, rehearsalLeaseName, "rehearsal", 0, true)
	return err
}

// keepTakeoverWarm rehearses the takeover from a follower's acquire that
// found the lease held by another instance far from its expiry
// (farFromExpiry), once per warm-up period (warmEvery: a lease connection
// that its pool recycled is warm again within a third of its lifetime).
// The elector rehearses only while it waits for an expiry that is near,
// and a follower of a live leader first waits so at that leader's crash:
// its lease connection then compiled the procedure on Babelfish in the
// takeover's own path, both followers at once: 0.2 s on a quiet 2-core
// machine, 0.8 s beside four busy backends and two busy shell loops,
// against 1 to 12 ms on a connection that had run it (docs/sqlserver.md,
// "Round trips and statements"). With half the lease left, the rehearsal
// ends long before the expiry. Its failure costs a log line: the elector
// rehearses again before the takeover.
func (l *leaseStore) keepTakeoverWarm(ctx context.Context) {
	if !l.db.rehearsed.due(l.db.warmEvery()) {
		return
	}
	if err := l.PrepareTakeover(ctx, ""); err != nil {
		l.db.log.WarnContext(ctx, "the takeover was not rehearsed", "err", err)
	}
}

// warmLeases readies the lease's connections before the elector's first
// try (WarmExecution): it opens the pin's session with the rehearsal's lock
// pinned, rehearses the takeover, and rehearses the creation of a lease
// (createLease on the rehearsal's name, in a transaction it rolls back),
// one call after the other so that they run on one lease connection, the
// one the pool then hands the acquire. An instance's first acquire
// otherwise logged in to both and ran its statements there for the first
// time, after the executor's warm-up rather than beside it: on Babelfish a
// first start on a new database took the lease 0.6 to 0.8 s after that
// warm-up, and 5 ms after this one (this 2-core machine).
func (db *DB) warmLeases(ctx context.Context) error {
	if err := db.pin.hold(ctx, rehearsalLeaseName); err != nil {
		return err
	}
	if err := (&leaseStore{db: db}).PrepareTakeover(ctx, ""); err != nil {
		return err
	}
	tx, err := db.leases.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return mapError(err)
	}
	defer func() { _ = tx.Rollback() }()
	_, err = createLease(ctx, db.leaseQ.WithTx(tx), rehearsalLeaseName, "rehearsal", 0)
	return err
}
