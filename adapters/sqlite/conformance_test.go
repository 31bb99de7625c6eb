package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/ports"
	"github.com/submissionmanager/submission-manager/ports/leasetest"
	"github.com/submissionmanager/submission-manager/ports/sessiontest"
	"github.com/submissionmanager/submission-manager/ports/storetest"
)

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return harness(t, filepath.Join(t.TempDir(), "store.db"))
	})
}

func TestSessionConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) ports.SessionStore {
		return openTestDB(t).Sessions()
	})
}

func TestLeaseConformance(t *testing.T) {
	leasetest.Run(t, func(t *testing.T) ports.LeaseStore {
		return openTestDB(t).Leases()
	})
}

// harness opens the database at path; Restart closes it and opens the same
// file again, as a restarted process would.
func harness(t *testing.T, path string) storetest.Harness {
	db := openAt(t, path)
	return storetest.Harness{
		Store:  db.Store(),
		Leases: db.Leases(),
		Restart: func(t *testing.T) storetest.Harness {
			if err := db.Close(); err != nil {
				t.Fatalf("closing before restart: %v", err)
			}
			return harness(t, path)
		},
		ShareLastModified: func(t *testing.T, intentIDs []string) {
			shareLastModified(t, db, intentIDs)
		},
	}
}

// shareLastModified gives the intents one change timestamp, later than every
// row's, the way the store itself computes it.
func shareLastModified(t *testing.T, db *DB, intentIDs []string) {
	ctx := context.Background()
	tx, err := db.writeDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var stamp int64
	err = tx.QueryRowContext(ctx, `SELECT MAX(CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000000,
		COALESCE((SELECT MAX(last_modified_at) FROM submission_intents), 0) + 1)`).Scan(&stamp)
	if err != nil {
		t.Fatal(err)
	}
	args := []any{stamp}
	for _, id := range intentIDs {
		args = append(args, id)
	}
	res, err := tx.ExecContext(ctx, `UPDATE submission_intents SET last_modified_at = ? WHERE intent_id IN (?`+
		strings.Repeat(", ?", len(intentIDs)-1)+`)`, args...)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != int64(len(intentIDs)) {
		t.Fatalf("shared the timestamp of %d intents, want %d", n, len(intentIDs))
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
