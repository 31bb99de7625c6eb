package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path"

	"github.com/pressly/goose/v3"

	"github.com/submissionmanager/submission-manager/db/migrations"
)

// Migration directions accepted by Migrate.
const (
	MigrateUp     = "up"
	MigrateDown   = "down"
	MigrateStatus = "status"
)

// Migrate moves the schema with the goose migrations embedded in the binary:
// "up" applies every pending one, "down" rolls back the latest one, and
// "status" logs each migration's state (MigrationStatus returns them). Up
// and down hold the file's migration lock for the whole run, so instances
// that start together on a new file migrate one after the other.
func (db *DB) Migrate(ctx context.Context, direction string) error {
	if direction == MigrateStatus {
		return db.logStatus(ctx)
	}
	return db.withMigrationLock(ctx, func() error { return db.migrate(ctx, direction) })
}

func (db *DB) migrate(ctx context.Context, direction string) error {
	p, err := db.migrator()
	if err != nil {
		return err
	}
	switch direction {
	case MigrateUp:
		results, err := p.Up(ctx)
		for _, r := range results {
			db.log.Info("migration applied", "migration", path.Base(r.Source.Path), "duration", r.Duration)
		}
		if err != nil {
			return fmt.Errorf("sqlite: migrate up: %w", err)
		}
		return nil
	case MigrateDown:
		r, err := p.Down(ctx)
		if errors.Is(err, goose.ErrNoNextVersion) {
			return fmt.Errorf("sqlite: migrate down: no migration is applied")
		}
		if err != nil {
			return fmt.Errorf("sqlite: migrate down: %w", err)
		}
		db.log.Info("migration rolled back", "migration", path.Base(r.Source.Path), "duration", r.Duration)
		return nil
	default:
		return fmt.Errorf("sqlite: migrate: unknown direction %q (want %q, %q or %q)",
			direction, MigrateUp, MigrateDown, MigrateStatus)
	}
}

func (db *DB) logStatus(ctx context.Context) error {
	states, err := db.MigrationStatus(ctx)
	if err != nil {
		return err
	}
	for _, s := range states {
		db.log.Info("migration status", "migration", path.Base(s.Source.Path),
			"applied", s.State == goose.StateApplied, "applied_at", s.AppliedAt)
	}
	return nil
}

// MigrationStatus lists every embedded migration in version order with
// whether and when this database applied it. It holds the migration lock,
// so it never reports a migration another process is half-way through.
func (db *DB) MigrationStatus(ctx context.Context) (statuses []*goose.MigrationStatus, err error) {
	p, err := db.migrator()
	if err != nil {
		return nil, err
	}
	err = db.withMigrationLock(ctx, func() error {
		statuses, err = p.Status(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: migration status: %w", err)
	}
	return statuses, nil
}

// migrator runs goose on the writer connection, so migrations queue behind
// (and never race) the store's own writes. Its callers hold the migration
// lock (fileLock), so they never race another process's migrations either.
func (db *DB) migrator() (*goose.Provider, error) {
	p, err := goose.NewProvider(goose.DialectSQLite3, db.writeDB, migrations.SQLite(),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return nil, fmt.Errorf("sqlite: loading migrations: %w", err)
	}
	return p, nil
}
