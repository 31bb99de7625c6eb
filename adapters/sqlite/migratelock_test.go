package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestMigrationLockSerialisesMigrators shows the lock itself: while one
// migrator holds the lock file, another open of the same database cannot
// migrate (it gives up after its lock timeout, here at once) and changes
// nothing; once the lock is released it migrates.
func TestMigrationLockSerialisesMigrators(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lock.db")
	db, err := Open(ctx, Config{Path: path, MigrationLockTimeout: time.Nanosecond, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	held := newFileLock(path, time.Minute)
	if err := held.lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, MigrateUp); !errors.Is(err, errMigrationLockHeld) {
		t.Fatalf("migrate up while another migrator holds the lock: %v, want %v", err, errMigrationLockHeld)
	}
	if got := tables(t, db); len(got) != 0 {
		t.Fatalf("the refused migrator created %v", got)
	}
	if err := held.unlock(); err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx, MigrateUp); err != nil {
		t.Fatalf("migrate up after the lock was released: %v", err)
	}
	assertApplied(t, db, true)
}

// TestConcurrentFirstMigrations opens one new file from four goroutines,
// each with its own connections (as four processes would), and migrates
// from all of them at once, in several rounds: every migrator succeeds and
// every migration is applied once.
func TestConcurrentFirstMigrations(t *testing.T) {
	const migrators, rounds = 4, 25
	ctx := context.Background()
	for range rounds {
		path := filepath.Join(t.TempDir(), "first.db")
		dbs := make([]*DB, migrators)
		for i := range dbs {
			db, err := Open(ctx, Config{Path: path, Logger: discardLogger()})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			dbs[i] = db
		}
		start := make(chan struct{})
		errs := make([]error, migrators)
		var wg sync.WaitGroup
		for i, db := range dbs {
			wg.Go(func() {
				<-start
				errs[i] = db.Migrate(ctx, MigrateUp)
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("concurrent first migrations: %v", err)
		}
		assertApplied(t, dbs[0], true)
	}
}

// TestConcurrentFirstOpens opens one new file from sixteen goroutines at
// once, each with its own connections (as processes starting together
// would), in twenty rounds. Every open succeeds: turning a new
// file's journal into WAL takes an exclusive lock for which SQLite runs no
// busy handler, so unguarded concurrent first opens fail with "database is
// locked" now and then.
func TestConcurrentFirstOpens(t *testing.T) {
	const openers, rounds = 16, 20
	ctx := context.Background()
	for range rounds {
		path := filepath.Join(t.TempDir(), "first.db")
		start := make(chan struct{})
		errs := make([]error, openers)
		var wg sync.WaitGroup
		for i := range openers {
			wg.Go(func() {
				<-start
				db, err := Open(ctx, Config{Path: path, Logger: discardLogger()})
				if err != nil {
					errs[i] = err
					return
				}
				errs[i] = db.Close()
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("concurrent first opens: %v", err)
		}
	}
}

// TestOpenMustExistCreatesNothing: a reading command's open of a missing
// file fails and leaves no file behind.
func TestOpenMustExistCreatesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "typo.db")
	_, err := Open(context.Background(), Config{Path: path, MustExist: true, Logger: discardLogger()})
	if !errors.Is(err, ErrNoDatabase) {
		t.Fatalf("Open(MustExist) of a missing file: %v, want ErrNoDatabase", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("Open(MustExist) created %s", path)
	}
}
