package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/gatewaysim"
	"github.com/submissionmanager/submission-manager/core"
)

// envPrefix starts the environment variable of every flag: --sms-listen is
// also GATEWAY_SIM_SMS_LISTEN. A flag on the command line wins.
const envPrefix = "GATEWAY_SIM_"

// options are the binary's settings after flags and environment.
type options struct {
	smsListen   string
	pushListen  string
	latency     time.Duration
	jitter      time.Duration
	acceptRatio float64
	reasons     string
	mode        string
	scriptFile  string
	logLevel    slog.Level
	logFormat   string
	lookup      bool
}

// parseOptions reads flags, then fills every flag not given on the command
// line from its environment variable, validating both the same way.
func parseOptions(args []string, getenv func(string) string, usage io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("gateway-sim", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&o.smsListen, "sms-listen", "127.0.0.1:8080", "listen address of the sms gateway")
	fs.StringVar(&o.pushListen, "push-listen", "127.0.0.1:8081", "listen address of the push gateway")
	fs.DurationVar(&o.latency, "latency", 0, "delay before every answer, such as 5ms")
	fs.DurationVar(&o.jitter, "latency-jitter", 0, "extra delay drawn uniformly from [0, jitter]")
	fs.Float64Var(&o.acceptRatio, "accept-ratio", 1, "share of unscripted submissions accepted, from 0 to 1")
	fs.StringVar(&o.reasons, "reasons", "provider_failure=1", "rejection reason mix, such as provider_failure=0.5,invalid_recipient=0.5")
	fs.StringVar(&o.mode, "mode", string(gatewaysim.ModeNormal), "answer mode of unscripted submissions (normal, hang, http_503, ...)")
	fs.StringVar(&o.scriptFile, "script", "", `JSON file of scripted answers: {"reference": ["provider_failure", "accepted"]}`)
	fs.BoolVar(&o.lookup, "lookup", true, "serve the optional lookup GET /v1/submissions/{reference}; false answers it 404")
	fs.TextVar(&o.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: gateway-sim [flags]\n\nServes simulated sms and push gateways. "+
			"Every flag can also be set as %s<FLAG> (for example %sSMS_LISTEN).\n\n", envPrefix, envPrefix)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		env := envName(f.Name)
		if v := getenv(env); v != "" && !given[f.Name] {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			}
		}
	})
	if o.acceptRatio < 0 || o.acceptRatio > 1 {
		errs = append(errs, fmt.Errorf("accept ratio %v is outside [0, 1]", o.acceptRatio))
	}
	if o.logFormat != "text" && o.logFormat != "json" {
		errs = append(errs, fmt.Errorf("log format %q is neither text nor json", o.logFormat))
	}
	return o, errors.Join(errs...)
}

func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// simConfig turns the options into the simulator's Config, reading the
// script file if one is named.
func (o options) simConfig(logger *slog.Logger) (gatewaysim.Config, error) {
	reasons, err := gatewaysim.ParseReasons(o.reasons)
	if err != nil {
		return gatewaysim.Config{}, err
	}
	mode, err := gatewaysim.ParseMode(o.mode)
	if err != nil {
		return gatewaysim.Config{}, err
	}
	cfg := gatewaysim.Config{
		Listen:        map[core.GatewayType]string{core.GatewaySMS: o.smsListen, core.GatewayPush: o.pushListen},
		Latency:       o.latency,
		LatencyJitter: o.jitter,
		RejectRatio:   1 - o.acceptRatio,
		Reasons:       reasons,
		Mode:          mode,
		Logger:        logger,
		NoLookup:      !o.lookup,
	}
	if o.scriptFile != "" {
		data, err := os.ReadFile(o.scriptFile)
		if err != nil {
			return gatewaysim.Config{}, fmt.Errorf("read script file: %w", err)
		}
		if cfg.Scripts, err = gatewaysim.ParseScripts(data); err != nil {
			return gatewaysim.Config{}, fmt.Errorf("script file %s: %w", o.scriptFile, err)
		}
	}
	return cfg, nil
}

func (o options) logger(w io.Writer) *slog.Logger {
	hopts := &slog.HandlerOptions{Level: o.logLevel}
	if o.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, hopts))
	}
	return slog.New(slog.NewTextHandler(w, hopts))
}
