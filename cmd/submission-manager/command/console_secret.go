package command

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/submissionmanager/submission-manager/core"
)

const consoleUsage = "usage: submission-manager console rotate-secret [--database sqlite:PATH|sqlserver://...]"

// runConsole runs `console rotate-secret`: it replaces the console's session
// secret in the database with a new random one and ends every console
// session, on every instance, at once. Instances sign with the new secret
// within 30 seconds (at once when they see a cookie it signed). It is the
// lever to pull when a secret or a session may have leaked, and after
// removing an operator key. It never creates a database.
func runConsole(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	var action string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	fs := newFlagSet("console", "console rotate-secret [flags]", stderr)
	database := fs.String("database", DefaultDatabase, "sqlite:PATH or sqlserver://user:pass@host/instance?database=name")
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if action != "rotate-secret" || fs.NArg() > 0 {
		return &usageError{msg: consoleUsage}
	}
	spec, err := ParseDatabase(*database)
	if err != nil {
		return fmt.Errorf("--database: %w", err)
	}
	db, err := openExistingDatabase(ctx, spec, newLogger(stderr, slog.LevelWarn, "text"))
	if err != nil {
		return err
	}
	defer db.Close()
	key := make([]byte, core.SessionSecretBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	secret, err := db.Sessions().RotateSessionSecret(ctx, key)
	if err != nil {
		return fmt.Errorf("rotating the console's session secret on %s: %w", spec, err)
	}
	fmt.Fprintf(stdout, "console session secret rotated to generation %d on %s: every console session has ended; "+
		"instances sign with the new secret within 30s\n", secret.Generation, spec)
	return nil
}
