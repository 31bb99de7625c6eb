package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/submissionmanager/submission-manager/adapters/sqlite/internal/sqlitedb"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// CreateIntents inserts every intent whose intentId is free as one write of
// the group committer: one transaction, one commit (shared with whatever
// other writes join the batch), so a batch submission costs one fsync. It
// reads which intentIds are taken and inserts the rest with multi-row
// statements, inside the write transaction that BEGIN IMMEDIATE keeps free
// of every other writer, so nothing can take an intentId in between. A
// taken intentId is read back and returned unjudged; a later occurrence of
// an intentId in the call gets its first occurrence's intent, not created.
// Any failure fails the whole write, so nothing of the call is stored.
func (s *store) CreateIntents(ctx context.Context, intents []core.Intent) ([]ports.CreateIntentResult, error) {
	rows := make([]sqlitedb.InsertIntentParams, len(intents))
	for i, intent := range intents {
		if intent.NextDueAt.IsZero() {
			return nil, fmt.Errorf("sqlite: create intents: %q: a pending intent needs NextDueAt", intent.IntentID)
		}
		var err error
		if rows[i], err = insertIntentParams(intent); err != nil {
			return nil, err
		}
	}
	out := make([]ports.CreateIntentResult, len(intents))
	err := s.db.write(ctx, "create intents", func(ctx context.Context, q *writeTx) error {
		// The first occurrence of each intentId in the call.
		first := make(map[string]int, len(rows))
		unique := make([]string, 0, len(rows))
		for i := range rows {
			if _, ok := first[rows[i].IntentID]; !ok {
				first[rows[i].IntentID] = i
				unique = append(unique, rows[i].IntentID)
			}
		}
		takenIDs, err := q.TakenIntentIDs(ctx, unique)
		if err != nil {
			return err
		}
		taken := make(map[string]*core.Intent, len(takenIDs))
		for _, id := range takenIDs {
			taken[id] = nil
		}
		fresh := make([]int, 0, len(unique))
		for _, id := range unique {
			if _, ok := taken[id]; ok {
				continue
			}
			i := first[id]
			if rows[i].LastModifiedAt, err = q.Stamp(ctx); err != nil {
				return err
			}
			fresh = append(fresh, i)
		}
		if err := insertIntentRows(ctx, q, rows, fresh); err != nil {
			return err
		}
		for i := range rows {
			id := rows[i].IntentID
			j := first[id]
			if existing, ok := taken[id]; ok {
				if existing == nil {
					// Taken before the call: read the row that holds it.
					in, err := readIntent(ctx, q.Queries, id)
					if err != nil {
						return err
					}
					existing = &in
					taken[id] = existing
				}
				out[i] = ports.CreateIntentResult{Intent: *existing}
				continue
			}
			// Created by this call, here or at its first occurrence.
			out[i] = ports.CreateIntentResult{Intent: createdIntent(intents[j], rows[j]), Created: i == j}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rowInsertSizes are the row counts of the multi-row inserts, largest
// first: a batch is inserted as a sum of them (100 rows: 64+16+16+4), so a
// handful of prepared statements serve every batch size, each parsed once.
var rowInsertSizes = []int{256, 64, 16, 4, 1}

// rowInserts holds the prepared multi-row inserts by row count.
type rowInserts map[int]*sql.Stmt

func (r rowInserts) close() error {
	var errs []error
	for _, st := range r {
		errs = append(errs, st.Close())
	}
	return errors.Join(errs...)
}

// rowInsertSQL inserts n intents with one statement (11 parameters a row).
func rowInsertSQL(n int) string {
	var q strings.Builder
	q.WriteString(`INSERT INTO submission_intents (intent_id, submission_target, payload, contract, gateway_type, mode, status, created_at, next_due_at, attempt_count, last_modified_at, not_before, trace_parent) VALUES `)
	for k := range n {
		if k > 0 {
			q.WriteByte(',')
		}
		q.WriteString(`(?,?,?,?,?,?,'pending',?,?,0,?,?,?)`)
	}
	return q.String()
}

// prepareRowInserts prepares the multi-row inserts on the writer
// connection, outside any transaction; nil (each statement then parsed per
// use) when the schema is not there yet.
func prepareRowInserts(ctx context.Context, db *sql.DB) rowInserts {
	r := rowInserts{}
	for _, n := range rowInsertSizes {
		st, err := db.PrepareContext(ctx, rowInsertSQL(n))
		if err != nil {
			_ = r.close()
			return nil
		}
		r[n] = st
	}
	return r
}

// insertStmt returns the n-row insert for this transaction.
func (t *writeTx) insertStmt(ctx context.Context, n int) (*sql.Stmt, error) {
	if st, ok := t.rows[n]; ok {
		return t.tx.StmtContext(ctx, st), nil
	}
	return t.tx.PrepareContext(ctx, rowInsertSQL(n))
}

// insertIntentRows inserts rows[i] for every i in which with multi-row
// INSERT statements: a few statements per batch instead of one per intent,
// which is most of what a batch saves on the single writer. The caller
// checked inside the same write transaction that every intentId is free;
// a conflict anyway fails the statement, and with it the whole write.
// Hand-written because sqlc cannot generate a VALUES list of variable
// length.
func insertIntentRows(ctx context.Context, q *writeTx, rows []sqlitedb.InsertIntentParams, which []int) error {
	args := make([]any, 0, 11*rowInsertSizes[0])
	for _, size := range rowInsertSizes {
		for len(which) >= size {
			st, err := q.insertStmt(ctx, size)
			if err != nil {
				return err
			}
			args = args[:0]
			for _, i := range which[:size] {
				r := rows[i]
				args = append(args, r.IntentID, r.SubmissionTarget, r.Payload, r.Contract, r.GatewayType, r.Mode,
					r.CreatedAt, r.NextDueAt, r.LastModifiedAt, r.NotBefore, r.TraceParent)
			}
			if _, err := st.ExecContext(ctx, args...); err != nil {
				return err
			}
			which = which[size:]
		}
	}
	return nil
}

// createdIntent is what a later read of a just inserted row returns: UTC
// times without a monotonic reading, pending, no attempts yet.
func createdIntent(intent core.Intent, row sqlitedb.InsertIntentParams) core.Intent {
	created := intent
	created.CreatedAt = fromNanos(row.CreatedAt)
	created.NextDueAt = fromNullNanos(row.NextDueAt)
	created.NotBefore = fromNullNanos(row.NotBefore)
	created.TraceParent = row.TraceParent.String
	created.Status = core.StatusPending
	created.Contract = intent.Contract.Clone()
	created.AttemptCount = 0
	created.Attempts = nil
	created.FinalOutcome = nil
	created.ExhaustedReason = ""
	created.LastModifiedAt = fromNanos(row.LastModifiedAt)
	return created
}
