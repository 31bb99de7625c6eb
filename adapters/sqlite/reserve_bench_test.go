package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
)

// reserveBatch is how many reservations share one write transaction in the
// benchmarks below: about what the group committer gathers while the
// executor runs 64 calls at once.
const reserveBatch = 64

// The two benchmarks below are why StartAttempt stays one statement pair per
// attempt on SQLite: they reserve reserveBatch attempts in one transaction,
// first with the store's own prepared statements once per intent, then with
// one set-based UPDATE (the intents from a VALUES list, the verdicts from
// RETURNING) and one INSERT … SELECT, both prepared. On SQLite the set-based
// pair is not cheaper: the cost is each row's B-tree and index work, which a
// set-based statement does as well, not the statement's overhead, which an
// embedded engine without round trips barely has (docs/sqlserver.md says
// why SQL Server differs).
//
//	go test -run '^$' -bench Reserve -benchtime 200x ./adapters/sqlite/

func BenchmarkReservePerIntent(b *testing.B) {
	db, f := openReserveBench(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := db.write(context.Background(), "reserve", func(ctx context.Context, q *writeTx) error {
			for k := range reserveBatch {
				id := fmt.Sprintf("intent-%09d", i*reserveBatch+k)
				stamp, err := q.Stamp(ctx)
				if err != nil {
					return err
				}
				n, err := q.StartAttempt(ctx, sqlitedb.StartAttemptParams{LastModifiedAt: stamp, IntentID: id,
					AttemptNumber: 1, LeaseName: f.LeaseName, HolderID: f.HolderID, LeaseEpoch: f.Epoch})
				if err != nil || n != 1 {
					return fmt.Errorf("start %s: %d rows, %v", id, n, err)
				}
				if err := q.InsertAttempt(ctx, sqlitedb.InsertAttemptParams{IntentID: id, AttemptNumber: 1,
					HolderID: f.HolderID, LeaseEpoch: f.Epoch, StartedAt: 1}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*reserveBatch), "ns/reservation")
}

func BenchmarkReserveSetBased(b *testing.B) {
	db, f := openReserveBench(b)
	rows := make([]string, reserveBatch)
	for k := range rows {
		rows[k] = fmt.Sprintf("(?%d, ?%d, ?%d)", 5+3*k, 6+3*k, 7+3*k)
	}
	values := strings.Join(rows, ", ")
	start := prepareReserve(b, db, `WITH r(i, n, m) AS MATERIALIZED (VALUES `+values+`)
UPDATE submission_intents SET attempt_count = attempt_count + 1, last_modified_at = r.m
FROM r
WHERE submission_intents.intent_id = r.i AND submission_intents.status = 'pending'
  AND submission_intents.attempt_count = r.n - 1
  AND NOT EXISTS (SELECT 1 FROM submission_attempts AS a WHERE a.intent_id = r.i AND a.attempt_number = r.n)
  AND EXISTS (SELECT 1 FROM submission_manager_leases AS l
    WHERE l.lease_name = ?1 AND l.holder_id = ?2 AND l.lease_epoch = ?3
      AND l.expires_at > CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000)
RETURNING submission_intents.intent_id`)
	insert := prepareReserve(b, db, `WITH r(i, n, m) AS (VALUES `+values+`)
INSERT INTO submission_attempts (intent_id, attempt_number, holder_id, lease_epoch, started_at, sent)
SELECT r.i, r.n, ?2, ?3, ?4, 1 FROM r WHERE ?1 IS NOT NULL`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := db.write(context.Background(), "reserve", func(ctx context.Context, q *writeTx) error {
			args := []any{f.LeaseName, f.HolderID, f.Epoch, int64(1)}
			for k := range reserveBatch {
				stamp, err := q.Stamp(ctx)
				if err != nil {
					return err
				}
				args = append(args, fmt.Sprintf("intent-%09d", i*reserveBatch+k), 1, stamp)
			}
			started, err := q.tx.StmtContext(ctx, start).QueryContext(ctx, args...)
			if err != nil {
				return err
			}
			n := 0
			for ; started.Next(); n++ {
			}
			if err := started.Close(); err != nil || n != reserveBatch {
				return fmt.Errorf("started %d of %d: %v", n, reserveBatch, err)
			}
			_, err = q.tx.StmtContext(ctx, insert).ExecContext(ctx, args...)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*reserveBatch), "ns/reservation")
}

// openReserveBench opens a database with enough pending intents for every
// iteration and a lease to fence the reservations with.
func openReserveBench(b *testing.B) (*DB, core.Fence) {
	b.Helper()
	db := openBenchDB(b)
	fillPending(b, db, (b.N+1)*reserveBatch)
	return db, benchFence(b, db)
}

func prepareReserve(b *testing.B, db *DB, query string) *sql.Stmt {
	b.Helper()
	st, err := db.writeDB.Prepare(query)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st
}
