// Command submission-manager runs SubmissionManager: `serve` for the service,
// `migrate` for the database schema, `targets validate` for registry files.
// Everything but signal handling and the process exit lives in package command,
// where tests can reach it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/submissionmanager/submission-manager/cmd/submission-manager/command"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// Once the first signal started the drain, a second one ends the
	// process at once (the default action), for an operator who cannot wait.
	go func() {
		<-ctx.Done()
		stop()
	}()
	code := command.Main(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
