// Package command is the submission-manager command: flag and environment
// parsing, and the wiring of core, ports and adapters into a running
// service. It is a package rather than main so tests can start the real
// service in-process (Start) and run commands as a user would (Main).
package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit codes of Main.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

const usage = `usage: submission-manager <command> [arguments]

commands:
  serve                        run the service (HTTP API and, while leader, the executor)
  migrate up|down|status       apply, roll back one, or list database migrations
  targets validate FILE        check a submission target registry, listing every problem
  intents list|get|resubmit    read and resubmit intents over the HTTP API
  gateways list|pause|resume   show the gateways' protection state; pause or resume a gateway
  console rotate-secret        new console session secret; ends every console session

Run "submission-manager <command> -h" for a command's flags. serve's and
migrate's flags can also be set by their environment variable,
SUBMISSION_<FLAG_IN_UPPER_SNAKE>, e.g. SUBMISSION_DATABASE for --database; the
HTTP API's clients (intents, gateways) read only --url and --api-key from
SUBMISSION_URL and SUBMISSION_API_KEY.
`

// Main runs the command line args (without the program name) and returns the
// process exit code. ctx ends at SIGINT or SIGTERM; serve then drains and
// returns ExitOK.
func Main(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		err = runServe(ctx, rest, env, stderr)
	case "migrate":
		err = runMigrate(ctx, rest, env, stdout, stderr)
	case "targets":
		err = runTargets(rest, stdout, stderr)
	case "intents":
		err = runIntents(ctx, rest, env, stdout, stderr)
	case "gateways":
		err = runGateways(ctx, rest, env, stdout, stderr)
	case "console":
		err = runConsole(ctx, rest, env, stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return ExitOK
	default:
		fmt.Fprintf(stderr, "submission-manager: unknown command %q\n\n%s", cmd, usage)
		return ExitUsage
	}
	return exitCode(err, stderr)
}

// usageError is a command line the command cannot run; it exits with
// ExitUsage, the convention for "you called me wrong".
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// silentError carries an exit code whose explanation was already printed.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func exitCode(err error, stderr io.Writer) int {
	var (
		use    *usageError
		silent *silentError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &silent):
		return silent.code
	case errors.As(err, &use):
		fmt.Fprintf(stderr, "submission-manager: %v\n", err)
		return ExitUsage
	default:
		fmt.Fprintf(stderr, "submission-manager: %v\n", err)
		return ExitError
	}
}
