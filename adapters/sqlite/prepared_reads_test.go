package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/submissionmanager/submission-manager/core"
)

// TestFirstReadsPrepareWithoutDeadlock starts many more concurrent reads than
// the read pool has connections on a fresh database, so the first of them
// prepares the read statements while the others queue for connections. A
// read that held its connection while waiting for the statements would
// deadlock the pool; every read must come back with the intent.
func TestFirstReadsPrepareWithoutDeadlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	db, err := Open(context.Background(), Config{Path: path, Logger: discardLogger(), ReadConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background(), MigrateUp); err != nil {
		t.Fatal(err)
	}
	store := db.Store()
	if _, err := store.CreateIntent(t.Context(), core.NewIntent("intent-1", testContract(), []byte(`{}`), testTime)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			in, err := store.GetIntent(t.Context(), "intent-1")
			if err == nil && in.IntentID != "intent-1" {
				err = core.ErrIntentNotFound
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("GetIntent: %v", err)
		}
	}
	if db.prepared.Load() == nil {
		t.Fatal("the read statements were not prepared")
	}
}
