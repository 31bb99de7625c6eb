package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
)

// writeFunc is one caller's write. It runs inside a transaction shared with
// other callers' writes and must not keep anything from it but its result.
type writeFunc func(ctx context.Context, tx *writeTx) error

// writeTx is a write's view of its batch's transaction: the prepared
// queries, and the stamps that order changes.
type writeTx struct {
	*sqlitedb.Queries
	tx   *sql.Tx // for statements sqlc cannot generate (batch.go)
	rows rowInserts
	now  func() time.Time
	last int64 // the newest stamp of the transaction, once known
	read bool  // whether last was read from the database
}

// Stamp returns the last_modified_at of a row the write inserts or updates:
// the writer's clock to the millisecond (as SQLite's own "now" reads it), or
// one nanosecond past the newest stamp in the database or in this
// transaction when that is later. The newest stamp is read once, inside the
// transaction, which BEGIN IMMEDIATE keeps free of other writers, of this
// process or another; so stamps increase strictly in commit order, which is
// what the leader's refresh cursor relies on.
func (t *writeTx) Stamp(ctx context.Context) (int64, error) {
	if !t.read {
		last, err := t.MaxModifiedAt(ctx)
		if err != nil {
			return 0, err
		}
		t.last, t.read = last, true
	}
	t.last = max(t.now().UnixMilli()*int64(time.Millisecond), t.last+1)
	return t.last, nil
}
