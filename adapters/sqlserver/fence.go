package sqlserver

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
)

// The fence. Every execution-state write applies only while its fence
// (lease name, holder, epoch) holds an unexpired lease in database time,
// and it must commit before a successor's epoch begins. Both are the lease
// lock's work, one mechanism on SQL Server 2022 and on Babelfish for
// PostgreSQL:
//
//   - A fenced transaction first takes the lease lock, an application lock
//     (sp_getapplock) named after the lease, in Shared mode and owned by the
//     transaction; then it checks the fence by reading the lease row.
//   - A takeover of an expired lease takes the same lock in IntentExclusive
//     mode before it moves the epoch (lease.go).
//   - Every instance holds the same lock in IntentShared mode for its
//     session, for as long as it runs (lease_pin.go), which Babelfish needs
//     to keep the lock's name.
//
// Shared locks are compatible with each other, so the fenced writes of one
// epoch run side by side. IntentExclusive conflicts with Shared, as
// Exclusive does, and with none of IntentShared and IntentExclusive, so the
// pins hold no takeover back and two takeovers meet only at the lease row.
// A takeover waits until every fenced transaction that passed its check
// has committed, and the fenced transactions that come after it queue
// behind it (both servers grant a lock request only after the incompatible
// requests queued before it) and then find the new epoch. A renewal takes
// no lease lock and changes only the lease row, which a fence check reads
// under READ COMMITTED (no lock past the read on SQL Server, none at all
// under Babelfish's MVCC), so a renewal never waits behind fenced writes,
// however many there are. On Babelfish sp_getapplock is a PostgreSQL
// advisory lock with the same modes, compatibility, owners and queueing.
// The store's tests prove each part on the server they run against:
// storetest's RenewalUnderFencedWrites and stale-epoch cases,
// TestTakeoverWaitsForFencedTransactions and TestLeaseLockKeepsItsName.

// lockNames names the application locks of one database: the lease locks
// and the migration lock. SQL Server keeps an application lock in the
// database of the session that takes it, Babelfish keeps them server-wide
// (every database of the server shares PostgreSQL's advisory locks: an
// Exclusive lock on a name in one database made the same name wait in
// another, measured on Babelfish 4.2). So every name carries its database's
// name, and two deployments on one Babelfish server, or two tests, neither
// fence nor serialise each other. The longest name (a 128-character database
// name and a 64-character lease name) stays within sp_getapplock's 255.
type lockNames struct {
	database string
}

// lease names the lease lock of leaseName.
func (n lockNames) lease(leaseName string) string {
	return "submission-manager/" + n.database + "/lease:" + leaseName
}

// migration names the lock that serialises the database's migrations.
func (n lockNames) migration() string {
	return "submission-manager/" + n.database + "/migrate"
}

// sharedLeaseLockSQL takes the lease lock in Shared mode for the rest of
// the transaction and answers sp_getapplock's status (0 or 1: granted; -1:
// timed out; -2: cancelled; -3: deadlock victim). $1 is the resource, $2
// the timeout in milliseconds. The mode is spelled out because
// sp_getapplock takes its mode as a literal best. A takeover takes the lock
// in IntentExclusive mode inside dbo.submission_acquire_lease (lease.go).
const sharedLeaseLockSQL = `DECLARE @status int;
EXEC @status = sp_getapplock @Resource = $1, @LockMode = 'Shared', @LockOwner = 'Transaction', @LockTimeout = $2;
SELECT @status;`

// engineSQL asks the server what it is. SERVERPROPERTY('Babelfish') is NULL
// on SQL Server and set on Babelfish for PostgreSQL, which speaks T-SQL and
// TDS on top of PostgreSQL.
// It also answers the database's name, which the application locks carry
// (lockNames).
const engineSQL = `SELECT CAST(SERVERPROPERTY('Babelfish') AS nvarchar(128)), DB_NAME();`

// engine is what the opened database is, and the one thing the adapter does
// differently there. Open detects it once; docs/sqlserver.md explains it.
type engine struct {
	// babelfish is true on Babelfish for PostgreSQL.
	babelfish bool
	// lockingReadIsolation is the level of ListChanged and LatestChange.
	// On SQL Server it is REPEATABLE READ, because that level always reads
	// with locks, also in a database with READ_COMMITTED_SNAPSHOT on (Azure
	// SQL's default): a row-versioned scan would step over a change not yet
	// committed and return later, committed rows, and the leader would
	// advance its cursor past the uncommitted one. Babelfish refuses
	// REPEATABLE READ or makes it snapshot isolation, so there it is READ
	// COMMITTED, whose statement snapshot does not wait for writers either;
	// the leader's ChangeLookback (Store.Facts) re-reads the window in which
	// such a writer commits, as it does for every commit that lands out of
	// change-marker order.
	lockingReadIsolation sql.IsolationLevel
	// gathersStatistics is true where the adapter asks for the tables'
	// statistics itself as they grow (statistics.go): Babelfish, whose
	// planner has only what PostgreSQL's autovacuum gathers. SQL Server
	// creates and updates them when it compiles a statement.
	gathersStatistics bool
	// queryConns is the query pool's size when the configuration leaves it
	// unset (Config.MaxOpenConns). Babelfish's T-SQL parser learns the
	// grammar per backend process, so each connection costs about half a
	// second of the server's CPU at its first calls, which serve pays for
	// every connection before it serves, beside a new leader's first drain.
	// On a 2-core server six drained a fresh leader's backlog about an
	// eighth faster than ten and took in about as much beside execution,
	// where four took in an eighth less (docs/sqlserver.md, "Connections").
	// SQL Server compiles a statement once for every session, so there a
	// connection costs a login and ten keep more submissions' round trips
	// and commits under way.
	queryConns int
	// callItems is the most items one call of a fenced batch's procedure
	// carries; a longer batch is written as calls of that many, one after
	// another (attempts_batch.go). Zero is one call for any batch. On
	// Babelfish a read of the items' JSON (OPENJSON ... WITH, which each
	// call makes three to four times) builds every member of every item
	// as a string in memory the call holds to its end, and costs more per
	// item the more the call holds: a reservation and a result cost the
	// server 0.21 ms per attempt in calls of 64 items, 0.42-0.48 ms in
	// calls of 256-384, the sizes a fresh leader's drain made, and 0.26 in
	// calls of 32, where a call's fixed cost weighs more
	// (docs/sqlserver.md, "Calls of 64 items"). SQL Server streams
	// OPENJSON, so there a batch stays one round trip and one commit.
	callItems int
}

var (
	sqlServer = engine{lockingReadIsolation: sql.LevelRepeatableRead, queryConns: 10}
	babelfish = engine{babelfish: true, lockingReadIsolation: sql.LevelReadCommitted, gathersStatistics: true, queryConns: 6,
		callItems: 64}
)

// detectEngine asks the server which engine it is.
func detectEngine(ctx context.Context, db *sql.DB) (engine, lockNames, error) {
	var property sql.NullString
	var database string
	if err := db.QueryRowContext(ctx, engineSQL).Scan(&property, &database); err != nil {
		return engine{}, lockNames{}, fmt.Errorf("sqlserver: detect engine: %w", mapError(err))
	}
	return engineFor(property), lockNames{database: database}, nil
}

// engineFor reads SERVERPROPERTY('Babelfish').
func engineFor(property sql.NullString) engine {
	if property.Valid {
		return babelfish
	}
	return sqlServer
}

// inFencedTx runs fn in one fenced transaction, at READ COMMITTED on both
// servers (the lease lock, not the isolation level, orders fenced writes and
// takeovers): it takes the lease lock in Shared mode, checks the fence, and returns core.ErrFenced unless the
// fence's holder holds the lease at the fence's epoch, unexpired in
// database time.
func (s *store) inFencedTx(ctx context.Context, f core.Fence, fn func(q *sqlserverdb.Queries) error) error {
	if err := validateLeaseNames(f.LeaseName, f.HolderID); err != nil {
		return err
	}
	return s.inRawTx(ctx, func(tx *sql.Tx) error {
		if err := takeLeaseLock(ctx, tx, sharedLeaseLockSQL, s.db.locks.lease(f.LeaseName), s.db.cfg.LeaseLockTimeout); err != nil {
			return err
		}
		q := s.q.WithTx(tx)
		held, err := q.FenceHolds(ctx, sqlserverdb.FenceHoldsParams{
			LeaseName: f.LeaseName, HolderID: f.HolderID, LeaseEpoch: f.Epoch})
		if err != nil {
			return mapError(err)
		}
		if held == 0 {
			return core.ErrFenced
		}
		return fn(q)
	})
}

// lockTimeoutMillis is timeout as sp_getapplock's @LockTimeout takes it:
// int milliseconds, a longer wait capped at the largest, and never 0, with
// which Babelfish answers a conflict -999 rather than SQL Server's -1.
func lockTimeoutMillis(timeout time.Duration) int32 {
	return int32(min(max(timeout.Milliseconds(), 1), math.MaxInt32))
}

// takeLeaseLock takes the lease lock named resource (lockNames.lease) in the
// mode of lockSQL for the rest of tx, waiting at most timeout.
func takeLeaseLock(ctx context.Context, tx *sql.Tx, lockSQL, resource string, timeout time.Duration) error {
	var status int
	if err := tx.QueryRowContext(ctx, lockSQL, resource, lockTimeoutMillis(timeout)).Scan(&status); err != nil {
		return mapError(err)
	}
	if status < 0 {
		return fmt.Errorf("%w: sqlserver: lease lock %q not granted: %s", core.ErrStoreUnavailable, resource, appLockResult(status, timeout))
	}
	return nil
}
