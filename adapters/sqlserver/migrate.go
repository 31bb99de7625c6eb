package sqlserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/pressly/goose/v3"
)

// Migrate moves the schema: "up" applies every pending migration, "down"
// rolls back the latest one, "status" logs each migration's state. Up and
// down hold an exclusive sp_getapplock for the whole run, so instances that
// start together with --migrate serialise instead of racing.
func (db *DB) Migrate(ctx context.Context, direction string) error {
	switch direction {
	case "up":
		results, err := db.migrator.Up(ctx)
		db.logResults(ctx, results)
		if err != nil {
			return fmt.Errorf("sqlserver: migrate up: %w", err)
		}
		return nil
	case "down":
		result, err := db.migrator.Down(ctx)
		if result != nil {
			db.logResults(ctx, []*goose.MigrationResult{result})
		}
		if errors.Is(err, goose.ErrNoNextVersion) {
			return fmt.Errorf("sqlserver: migrate down: no migration is applied")
		}
		if err != nil {
			return fmt.Errorf("sqlserver: migrate down: %w", err)
		}
		return nil
	case "status":
		states, err := db.MigrationStatus(ctx)
		if err != nil {
			return err
		}
		for _, s := range states {
			db.log.InfoContext(ctx, "migration", "version", s.Source.Version, "source", s.Source.Path,
				"applied", s.State == goose.StateApplied, "applied_at", s.AppliedAt)
		}
		return nil
	default:
		return fmt.Errorf("sqlserver: unknown migration direction %q (want up, down or status)", direction)
	}
}

// MigrationStatus lists every embedded migration and whether it is applied.
func (db *DB) MigrationStatus(ctx context.Context) ([]*goose.MigrationStatus, error) {
	statuses, err := db.migrator.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("sqlserver: migration status: %w", err)
	}
	return statuses, nil
}

func (db *DB) logResults(ctx context.Context, results []*goose.MigrationResult) {
	for _, r := range results {
		if r == nil || r.Source == nil {
			continue
		}
		db.log.InfoContext(ctx, "migration applied", "version", r.Source.Version, "source", r.Source.Path,
			"direction", r.Direction, "duration", r.Duration, "error", r.Error)
	}
}
