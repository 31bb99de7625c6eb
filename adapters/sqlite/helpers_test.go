package sqlite

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"
)

// openTestDB opens a migrated database in a fresh file under t.TempDir and
// closes it when the test ends.
func openTestDB(t testing.TB) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "store.db"))
}

// openAt opens and migrates the database at path, closing it at cleanup.
func openAt(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), Config{Path: path, Logger: discardLogger()})
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background(), MigrateUp); err != nil {
		t.Fatalf("Migrate up: %v", err)
	}
	return db
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// testTime has nanoseconds, which the store must keep.
var testTime = time.Date(2026, 5, 17, 8, 30, 15, 123456789, time.UTC)

// queueReached waits until length (of a writer queue) reaches n and reports
// whether it did within ten seconds. Nothing signals a send landing in a
// channel, so it looks again every millisecond; a caller holding the
// writer's batch releases it before failing.
func queueReached(n int, length func() int) bool {
	deadline := time.Now().Add(10 * time.Second)
	for length() < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}
