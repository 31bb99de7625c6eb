package command

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/submissionmanager/submission-manager/adapters/sqlite"
	"github.com/submissionmanager/submission-manager/adapters/sqlserver"
	"github.com/submissionmanager/submission-manager/ports"
)

// database is what the commands need of either store adapter; both satisfy
// it, so serve and migrate are written once.
type database interface {
	Store() ports.Store
	// ExecutorStore is the store the executor and its gateway protection
	// use: Store over connections that requests never hold, where the
	// adapter keeps such connections.
	ExecutorStore() ports.Store
	Leases() ports.LeaseStore
	// Sessions keeps the console's session secret and sessions.
	Sessions() ports.SessionStore
	Migrate(ctx context.Context, direction string) error
	// MigrationStatus lists the embedded migrations and whether each is
	// applied, for `migrate status`.
	MigrationStatus(ctx context.Context) ([]*goose.MigrationStatus, error)
	// OwnsSchema is the adapter's word on who migrates its schema: true
	// when the database is this process's own (serve migrates it at every
	// start), false when a deployment step does (serve --migrate).
	OwnsSchema() bool
	// WarmExecution readies what the store keeps for an executor before
	// the elector starts, and WarmQueries the pool that requests use
	// before the listener serves, each as far as the store needs it (an
	// API-only instance never calls WarmExecution).
	WarmExecution(ctx context.Context) error
	WarmQueries(ctx context.Context) error
	Close() error
}

// migrationLine renders one migration's state for `migrate status`, the
// same way for every dialect.
func migrationLine(s *goose.MigrationStatus) string {
	name := path.Base(s.Source.Path)
	if s.State != goose.StateApplied {
		return fmt.Sprintf("%05d  pending                        %s", s.Source.Version, name)
	}
	return fmt.Sprintf("%05d  applied %s  %s", s.Source.Version, s.AppliedAt.UTC().Format(time.RFC3339), name)
}

// openDatabase opens the store a --database value names, creating a
// missing SQLite file and its directory, so the zero-configuration default
// works in a fresh checkout. Only serve and `migrate up` create a database.
func openDatabase(ctx context.Context, db Database, log *slog.Logger) (database, error) {
	return openStore(ctx, db, log, true)
}

// openExistingDatabase opens the store a --database value names only if it
// exists: a command that reads a database (or changes one that must already
// be there) never creates one from a mistyped path.
func openExistingDatabase(ctx context.Context, db Database, log *slog.Logger) (database, error) {
	return openStore(ctx, db, log, false)
}

func openStore(ctx context.Context, db Database, log *slog.Logger, create bool) (database, error) {
	switch db.Dialect {
	case DialectSQLite:
		if dir := filepath.Dir(db.Path); create && dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("--database %s: %w", db, err)
			}
		}
		d, err := sqlite.Open(ctx, sqlite.Config{Path: db.Path, Synchronous: db.Synchronous, MustExist: !create, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("--database %s: %w", db, err)
		}
		return d, nil
	case DialectSQLServer:
		d, err := sqlserver.Open(ctx, sqlserver.Config{DSN: db.DSN, MaxOpenConns: db.PoolMaxConns, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("--database %s: %w", db, err)
		}
		return d, nil
	default:
		return nil, fmt.Errorf("--database: unsupported dialect %q", db.Dialect)
	}
}
