package command

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// runMigrate runs `migrate up|down|status [--database …]`. The action may
// come before or after the flags.
func runMigrate(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	var action string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	fs := newFlagSet("migrate", "migrate up|down|status [flags]", stderr)
	database := fs.String("database", DefaultDatabase, "sqlite:PATH or sqlserver://user:pass@host/instance?database=name")
	var level slog.Level
	fs.TextVar(&level, "log-level", slog.LevelInfo, "debug, info, warn or error")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if action == "" && fs.NArg() == 1 {
		action = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return &usageError{msg: fmt.Sprintf("migrate takes one action, got extra arguments %q", fs.Args())}
	}
	switch action {
	case "up", "down", "status":
	default:
		return &usageError{msg: "usage: submission-manager migrate up|down|status [--database sqlite:PATH|sqlserver://...]"}
	}
	db, err := ParseDatabase(*database)
	if err != nil {
		return fmt.Errorf("--database: %w", err)
	}
	log := newLogger(stderr, level, "text")
	open := openExistingDatabase // status and down read what is there
	if action == "up" {
		open = openDatabase
	}
	store, err := open(ctx, db, log)
	if err != nil {
		return err
	}
	defer store.Close()
	if action == "status" {
		states, err := store.MigrationStatus(ctx)
		if err != nil {
			return err
		}
		for _, s := range states {
			fmt.Fprintln(stdout, migrationLine(s))
		}
		return nil
	}
	if err := store.Migrate(ctx, action); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrate %s: done on %s\n", action, db)
	return nil
}
