package sqlserver

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// insertIntentsSQL inserts a batch of intents in one set-based statement:
// the rows travel as one JSON array (no 2,100-parameter limit, one plan for
// every batch size), OPENJSON ... WITH types each column, and the binary
// payload travels as base64, which OPENJSON decodes for a varbinary column.
// OPENJSON's columns have the database's default collation; the derived
// table gives the keys the key columns' collation, or comparing them fails
// with Msg 468 on a database whose default is not Latin1_General_100_BIN2.
// NOT EXISTS skips the intentIds already stored; OUTPUT names the rows this
// statement inserted. Under READ COMMITTED two sessions can both pass NOT
// EXISTS for one intentId: the primary key then fails one statement with
// 2627 and CreateIntents runs its transaction again. Hand-written because
// sqlc cannot parse WITH or OUTPUT; TestHandWrittenSQLIsTSQL parses it.
const insertIntentsSQL = `INSERT INTO submission_intents (
    intent_id, submission_target, payload, contract, gateway_type, mode,
    status, created_at, next_due_at, attempt_count, last_modified_at, not_before)
OUTPUT inserted.intent_id
SELECT j.intent_id, j.submission_target, j.payload, j.contract, j.gateway_type, j.mode,
       'pending', j.created_at, j.next_due_at, 0, SYSUTCDATETIME(), j.not_before
FROM (
    SELECT w.intent_id COLLATE Latin1_General_100_BIN2 AS intent_id,
           w.submission_target COLLATE Latin1_General_100_BIN2 AS submission_target,
           w.payload, w.contract, w.gateway_type, w.mode, w.created_at, w.next_due_at, w.not_before
    FROM OPENJSON(CAST($1 AS nvarchar(max))) WITH (
        intent_id nvarchar(255) '$.intentId',
        submission_target nvarchar(255) '$.submissionTarget',
        payload varbinary(max) '$.payload',
        contract nvarchar(max) '$.contract',
        gateway_type varchar(16) '$.gatewayType',
        mode varchar(16) '$.mode',
        created_at datetime2(7) '$.createdAt',
        next_due_at datetime2(7) '$.nextDueAt',
        not_before datetime2(7) '$.notBefore'
    ) AS w
) AS j
WHERE NOT EXISTS (
    SELECT 1 FROM submission_intents AS s WHERE s.intent_id = j.intent_id)`

// batchRow is one element of insertIntentsSQL's JSON array.
type batchRow struct {
	IntentID         string `json:"intentId"`
	SubmissionTarget string `json:"submissionTarget"`
	Payload          []byte `json:"payload"` // base64 in JSON
	Contract         string `json:"contract"`
	GatewayType      string `json:"gatewayType"`
	Mode             string `json:"mode"`
	CreatedAt        string `json:"createdAt"`
	NextDueAt        string `json:"nextDueAt"`
	// NotBefore is absent (SQL NULL) when the submission set none.
	NotBefore string `json:"notBefore,omitempty"`
}

// datetime2JSON writes a UTC time as OPENJSON converts it to datetime2(7)
// (ISO 8601 without an offset, 100 ns precision).
func datetime2JSON(t time.Time) string {
	return t.UTC().Truncate(100 * time.Nanosecond).Format("2006-01-02T15:04:05.9999999")
}

// nullDatetime2JSON is datetime2JSON for a nullable column: NULL is absent.
func nullDatetime2JSON(t sql.NullTime) string {
	if !t.Valid {
		return ""
	}
	return datetime2JSON(t.Time)
}

// sqlKey is an intentId as SQL Server's equality sees it: trailing spaces
// do not count.
func sqlKey(id string) string { return strings.TrimRight(id, " ") }

// CreateIntents inserts a batch with one set-based statement and reads the
// batch's rows back, in one transaction: one commit for the whole batch,
// and nothing of it stored when anything fails. Each intentId is sent once
// (the first occurrence, as SQL Server compares keys); a later occurrence
// gets the first one's row with Created=false, as a taken intentId does.
// An intent the schema cannot hold is Refused and claims nothing.
func (s *store) CreateIntents(ctx context.Context, intents []core.Intent) ([]ports.CreateIntentResult, error) {
	out := make([]ports.CreateIntentResult, len(intents))
	first := make(map[string]int, len(intents)) // sqlKey -> first item sent
	var rows []batchRow
	for i, intent := range intents {
		params, err := insertIntentParams(intent)
		var field *core.FieldError
		switch {
		case errors.As(err, &field):
			out[i].Refused = err
			continue
		case err != nil:
			return nil, err
		}
		key := sqlKey(intent.IntentID)
		if _, ok := first[key]; ok {
			continue
		}
		first[key] = i
		rows = append(rows, batchRow{
			IntentID:         params.IntentID,
			SubmissionTarget: params.SubmissionTarget,
			Payload:          params.Payload,
			Contract:         params.Contract,
			GatewayType:      params.GatewayType,
			Mode:             params.Mode,
			CreatedAt:        datetime2JSON(params.CreatedAt),
			NextDueAt:        datetime2JSON(params.NextDueAt),
			NotBefore:        nullDatetime2JSON(params.NotBefore),
		})
	}
	if len(rows) == 0 {
		return out, nil
	}
	rowsJSON, err := json.Marshal(rows)
	if err != nil {
		return nil, fmt.Errorf("sqlserver: encode batch: %w", err)
	}
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.IntentID
	}
	idsJSON, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("sqlserver: encode batch ids: %w", err)
	}
	var (
		created map[string]bool
		stored  map[string]core.Intent
	)
	for range createAttempts {
		created, stored, err = s.insertBatch(ctx, string(rowsJSON), string(idsJSON))
		if !errors.Is(err, errDuplicateKey) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	var taken []core.Intent
	for key, in := range stored {
		if !created[in.IntentID] {
			taken = append(taken, stored[key])
		}
	}
	if err := s.attachDetails(ctx, taken); err != nil {
		return nil, err
	}
	for _, in := range taken {
		stored[sqlKey(in.IntentID)] = in
	}
	for i, intent := range intents {
		if out[i].Refused != nil {
			continue
		}
		key := sqlKey(intent.IntentID)
		in, ok := stored[key]
		if !ok {
			return nil, fmt.Errorf("%w: intent %q: neither inserted nor found", core.ErrStoreUnavailable, intent.IntentID)
		}
		out[i] = ports.CreateIntentResult{Intent: in, Created: first[key] == i && created[in.IntentID]}
	}
	return out, nil
}

// insertBatch runs the insert and the read-back in one READ COMMITTED
// transaction, retried as a whole when it is chosen as a deadlock victim.
// It returns the intentIds it inserted and every row of the batch by key.
func (s *store) insertBatch(ctx context.Context, rowsJSON, idsJSON string) (map[string]bool, map[string]core.Intent, error) {
	var (
		created map[string]bool
		stored  map[string]core.Intent
	)
	err := s.db.inRawTx(ctx, func(tx *sql.Tx) error {
		created = make(map[string]bool)
		stored = make(map[string]core.Intent)
		res, err := tx.QueryContext(ctx, insertIntentsSQL, rowsJSON)
		if err != nil {
			return mapError(err)
		}
		for res.Next() {
			var id string
			if err := res.Scan(&id); err != nil {
				res.Close()
				return mapError(err)
			}
			created[id] = true
		}
		if err := res.Close(); err != nil {
			return mapError(err)
		}
		if err := res.Err(); err != nil {
			return mapError(err)
		}
		got, err := s.db.q.WithTx(tx).ListIntentsOf(ctx, idsJSON)
		if err != nil {
			return mapError(err)
		}
		for _, r := range got {
			in, err := intentFromRow(intentRow(r))
			if err != nil {
				return err
			}
			stored[sqlKey(in.IntentID)] = in
		}
		return nil
	})
	return created, stored, err
}
