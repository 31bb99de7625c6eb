package sqlserver

import (
	"context"

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
