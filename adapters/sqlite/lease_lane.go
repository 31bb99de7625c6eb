package sqlite

import "context"

// doLease runs a lease write (acquire, renew, release) on the writer ahead
// of every queued intake and execution write: the writer takes it before
// its next batch and commits it alone, so it waits at most for the batch in
// progress, never for the queue. A lease write queued behind request
// traffic on a slow disk is a lost lease, and each loss leaves attempts in
// doubt. It is not a separate connection because SQLite's lock is not
// fair: a second writer connection polls for the lock while the group
// committer, busy under load, takes it again microseconds after each
// commit, and can starve it.
func (db *DB) doLease(ctx context.Context, op string, fn writeFunc) error {
	return db.writer.submit(ctx, db.writer.leaseOps, op, oneStatement, fn)
}
