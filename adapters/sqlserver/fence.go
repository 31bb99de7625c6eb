package sqlserver

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/submissionmanager/submission-manager/adapters/sqlserver/internal/sqlserverdb"
	"github.com/submissionmanager/submission-manager/core"
)

// engineSQL asks the server what it is. SERVERPROPERTY('Babelfish') is NULL
// on SQL Server and set on Babelfish for PostgreSQL, which speaks T-SQL and
// TDS on top of PostgreSQL and so runs this adapter's SQL with PostgreSQL's
// locking underneath.
const engineSQL = `SELECT CAST(SERVERPROPERTY('Babelfish') AS nvarchar(128));`

// engine is what the opened database is, and how its fenced writes and
// locking reads must run there. Open detects it once; docs/sqlserver.md
// explains both choices.
type engine struct {
	// babelfish is true on Babelfish for PostgreSQL.
	babelfish bool
	// fencedIsolation is the isolation level of every execution-state write.
	fencedIsolation sql.IsolationLevel
	// lockingReadIsolation is the level of ListChanged and LatestChange.
	lockingReadIsolation sql.IsolationLevel
}

// sqlServer is SQL Server.
//
// A fenced write first checks the fence (FenceHolds) and then changes the
// intent and attempt rows. Under READ COMMITTED the shared lock taken by the
// check is released as soon as the row is read, so a follower's acquire
// could take the expired lease over between the check and the commit, and
// a former leader's write would land after its successor's epoch began.
// Under REPEATABLE READ the shared lock on the lease row is held until
// commit: the acquire (an UPDATE of that row) waits for the fenced write to
// finish, and a write that passed the check commits while its lease is
// still the current one. Shared locks are compatible, so concurrent fenced
// writes hold them together and cost each other nothing. SERIALIZABLE would
// add range locks that nothing here needs: the lease row always exists once
// a fence does.
//
// ListChanged and LatestChange read under REPEATABLE READ because that
// level always reads with locks, also in a database with
// READ_COMMITTED_SNAPSHOT on (Azure SQL's default): a row-versioned scan
// would step over a change not yet committed and return later, committed
// rows, and the leader would advance its cursor past the uncommitted one.
var sqlServer = engine{
	fencedIsolation:      sql.LevelRepeatableRead,
	lockingReadIsolation: sql.LevelRepeatableRead,
}

// babelfish is Babelfish for PostgreSQL.
//
// Babelfish refuses REPEATABLE READ unless the server setting
// babelfishpg_tsql.isolation_level_repeatable_read is pg_isolation, and
// then it is PostgreSQL's snapshot isolation: reads take no shared locks,
// so the SQL Server reasoning above does not carry over and a takeover
// could commit between a write's fence check and its commit. Fenced writes
// run under READ COMMITTED instead and check the fence with LockFence, a
// no-op UPDATE of the lease row guarded by holder, epoch and expiry: its row
// lock lasts until commit and conflicts with the takeover's UPDATE, which
// waits, so a write that passed the check commits while its lease is still
// the current one. The cost: row locks exclude each other, so fenced writes
// of one lease run one at a time (at most one commit latency each), where
// SQL Server runs them side by side; and each one writes a new version of
// the lease row (PostgreSQL's MVCC), which vacuum reclaims.
//
// Reads run under READ COMMITTED, whose statement snapshot does not wait
// for in-flight writers; the leader's ChangeLookback (Store.Facts) re-reads
// the window in which such a writer commits, as it does for every commit
// that lands out of change-marker order.
var babelfish = engine{
	babelfish:            true,
	fencedIsolation:      sql.LevelReadCommitted,
	lockingReadIsolation: sql.LevelReadCommitted,
}

// detectEngine asks the server which engine it is.
func detectEngine(ctx context.Context, db *sql.DB) (engine, error) {
	var property sql.NullString
	if err := db.QueryRowContext(ctx, engineSQL).Scan(&property); err != nil {
		return engine{}, fmt.Errorf("sqlserver: detect engine: %w", mapError(err))
	}
	return engineFor(property), nil
}

// engineFor reads SERVERPROPERTY('Babelfish').
func engineFor(property sql.NullString) engine {
	if property.Valid {
		return babelfish
	}
	return sqlServer
}

// checkFence returns core.ErrFenced unless the fence's holder holds the
// lease at the fence's epoch, unexpired in database time. Called first in a
// fenced transaction (at e.fencedIsolation), it also takes the lease-row
// lock described above, so every fenced transaction locks the lease row
// before any intent row.
func (e engine) checkFence(ctx context.Context, q *sqlserverdb.Queries, f core.Fence) error {
	if err := validateLeaseNames(f.LeaseName, f.HolderID); err != nil {
		return err
	}
	check := q.FenceHolds
	if e.babelfish {
		check = func(ctx context.Context, p sqlserverdb.FenceHoldsParams) (int64, error) {
			return q.LockFence(ctx, sqlserverdb.LockFenceParams(p))
		}
	}
	held, err := check(ctx, sqlserverdb.FenceHoldsParams{
		LeaseName: f.LeaseName, HolderID: f.HolderID, LeaseEpoch: f.Epoch})
	if err != nil {
		return mapError(err)
	}
	if held == 0 {
		return core.ErrFenced
	}
	return nil
}
