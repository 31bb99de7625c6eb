// Command gateway-sim serves simulated sms and push gateways over the
// gateway protocol (api/gateway.yaml), for local runs (`make run`) and load
// tests. It is a thin shell around adapters/gatewaysim; see
// docs/gateway-protocol.md for its flags, modes, scripts and control
// endpoints. SIGINT or SIGTERM stops it cleanly.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "gateway-sim:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends. ready, when set, receives the running
// simulator, so tests can find its URLs.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready func(*gatewaysim.Simulator)) error {
	opts, err := parseOptions(args, getenv, stderr)
	if err != nil {
		return err
	}
	logger := opts.logger(stderr)
	cfg, err := opts.simConfig(logger)
	if err != nil {
		return err
	}
	sim, err := gatewaysim.Start(cfg)
	if err != nil {
		return err
	}
	if ready != nil {
		ready(sim)
	}
	<-ctx.Done()
	logger.Info("gateway simulator shutting down", "cause", context.Cause(ctx))
	return sim.Close()
}
