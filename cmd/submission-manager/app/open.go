package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/submissionmanager/submission-manager/adapters/sqlite"
	"github.com/submissionmanager/submission-manager/adapters/sqlserver"
	"github.com/submissionmanager/submission-manager/ports"
)

// database is what the commands need of either store adapter; both satisfy
// it, so serve and migrate are written once.
type database interface {
	Store() ports.Store
	Leases() ports.LeaseStore
	Migrate(ctx context.Context, direction string) error
	// OwnsSchema is the adapter's word on who migrates its schema: true
	// when the database is this process's own (serve migrates it at every
	// start), false when a deployment step does (serve --migrate).
	OwnsSchema() bool
	Close() error
	// migrationLines renders `migrate status`, one migration a line.
	migrationLines(ctx context.Context) ([]string, error)
}

type sqliteDB struct{ *sqlite.DB }

func (d sqliteDB) migrationLines(ctx context.Context) ([]string, error) {
	states, err := d.MigrationStatus(ctx)
	return lines(states), err
}

type sqlserverDB struct{ *sqlserver.DB }

func (d sqlserverDB) migrationLines(ctx context.Context) ([]string, error) {
	states, err := d.MigrationStatus(ctx)
	return lines(states), err
}

func lines[S fmt.Stringer](states []S) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = s.String()
	}
	return out
}

// openDatabase opens the store a --database value names. A SQLite file's
// directory is created, so the zero-configuration default works in a fresh
// checkout.
func openDatabase(ctx context.Context, db Database, log *slog.Logger) (database, error) {
	switch db.Dialect {
	case DialectSQLite:
		if dir := filepath.Dir(db.Path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("--database %s: %w", db, err)
			}
		}
		d, err := sqlite.Open(ctx, sqlite.Config{Path: db.Path, Synchronous: db.Synchronous, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("--database %s: %w", db, err)
		}
		return sqliteDB{d}, nil
	case DialectSQLServer:
		d, err := sqlserver.Open(ctx, sqlserver.Config{DSN: db.DSN, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("--database %s: %w", db, err)
		}
		return sqlserverDB{d}, nil
	default:
		return nil, fmt.Errorf("--database: unsupported dialect %q", db.Dialect)
	}
}
