package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// migrationLockSuffix names the lock file beside the database, as SQLite
// names its own -wal and -shm files. The file stays after a run: removing a
// lock file while another process may be opening it would let two
// processes lock two different files.
const migrationLockSuffix = "-migrate.lock"

// migrationLockPoll is how often a migrator waiting for another process's
// migration asks for the lock again. Migrations of an embedded file take
// milliseconds, so a short poll costs nothing and ends the wait promptly.
const migrationLockPoll = 20 * time.Millisecond

// fileLock serialises migrations of one SQLite file across processes, the
// part sp_getapplock plays on SQL Server: an exclusive flock(2) on a file
// beside the database, held for a whole Migrate or MigrationStatus, so from
// goose's first look at the version table to its last applied migration,
// and for the writer's first connect, which may turn a new file's journal
// into WAL (see Open). Instances started together on a new file thus open
// and migrate one after the other, and the later ones find nothing
// pending. It wraps the goose calls rather than being goose's session
// locker, because goose's Up asks whether anything is pending (creating its
// version table) before it takes a session lock, and that unguarded step
// races too. SQLite's own locks cannot do this: a write lock held for the
// whole run on one connection would shut out the very connection goose
// migrates through. The kernel drops the lock with the process, so a
// crashed migrator never leaves it held, and flock locks of separate opens
// conflict even within one process.
type fileLock struct {
	path    string
	timeout time.Duration
	file    *os.File
}

func newFileLock(dbPath string, timeout time.Duration) *fileLock {
	return &fileLock{path: dbPath + migrationLockSuffix, timeout: timeout}
}

// errMigrationLockHeld reports a migration lock another process kept for
// longer than the lock timeout.
var errMigrationLockHeld = errors.New("another process is migrating this database")

// lock waits up to the lock timeout for the lock file.
func (l *fileLock) lock(ctx context.Context) error {
	f, err := os.OpenFile(l.path, os.O_RDONLY|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("sqlite: migration lock: %w", err)
	}
	deadline := time.Now().Add(l.timeout)
	for {
		locked, err := tryLockFile(f)
		if err != nil {
			f.Close()
			return fmt.Errorf("sqlite: migration lock %s: %w", l.path, err)
		}
		if locked {
			l.file = f
			return nil
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return fmt.Errorf("sqlite: migration lock %s: %w (waited %v)", l.path, errMigrationLockHeld, l.timeout)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return fmt.Errorf("sqlite: migration lock %s: %w", l.path, ctx.Err())
		case <-time.After(migrationLockPoll):
		}
	}
}

// unlock releases the lock; closing the file releases it too.
func (l *fileLock) unlock() error {
	if l.file == nil {
		return nil
	}
	err := unlockFile(l.file)
	err = errors.Join(err, l.file.Close())
	l.file = nil
	if err != nil {
		return fmt.Errorf("sqlite: release migration lock %s: %w", l.path, err)
	}
	return nil
}

// withMigrationLock runs fn holding the database's migration lock.
func (db *DB) withMigrationLock(ctx context.Context, fn func() error) error {
	return withFileLock(ctx, db.cfg.Path, db.cfg.MigrationLockTimeout, fn)
}

// withFileLock runs fn holding the migration lock of the database at dbPath.
func withFileLock(ctx context.Context, dbPath string, timeout time.Duration, fn func() error) error {
	l := newFileLock(dbPath, timeout)
	if err := l.lock(ctx); err != nil {
		return err
	}
	return errors.Join(fn(), l.unlock())
}
