package command

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/submissionmanager/submission-manager/api/client"
)

// APIKeyEnv holds the key the intents commands send. A key is read from the
// environment only, never from a flag, so it stays out of shell history and
// process listings.
const APIKeyEnv = "SUBMISSION_API_KEY"

const intentsUsage = `usage: submission-manager intents <list|get|resubmit> [flags] [intentId...]

  intents list [--status S] [--target T] [--limit N]   newest first
  intents get ID                                        one intent with its attempts
  intents resubmit ID [--new-id NEW]                    resubmit one ended intent
  intents resubmit --status S [--target T] [--max N] [--yes]
                                                        resubmit ended intents in bulk

Every subcommand takes --url (SUBMISSION_URL, default http://127.0.0.1:8000)
and --json; the key is read from SUBMISSION_API_KEY (an operator key for resubmit).
`

// intentsCmd is one run of an intents subcommand.
type intentsCmd struct {
	api    *client.ClientWithResponses
	json   bool
	stdout io.Writer
	stderr io.Writer
}

// runIntents dispatches `intents list|get|resubmit` over the Go SDK.
func runIntents(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, intentsUsage)
		if len(args) == 0 {
			return &silentError{code: ExitUsage}
		}
		return nil
	}
	sub, rest := args[0], args[1:]
	fs := newFlagSet("intents "+sub, "intents "+sub+" [flags] [intentId...]", stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, intentsUsage+"\nflags:\n")
		fs.PrintDefaults()
	}
	url := fs.String("url", "http://127.0.0.1:8000", "base URL of the submission-manager API")
	asJSON := fs.Bool("json", false, "print JSON for scripts instead of a table")
	status := fs.String("status", "", "list or bulk-resubmit only intents in this status")
	target := fs.String("target", "", "list or bulk-resubmit only intents of this submission target")
	limit := fs.Int("limit", 50, "list: how many intents to print")
	newID := fs.String("new-id", "", "resubmit: the new intent's intentId (default derived: ID~r1)")
	maxBulk := fs.Int("max", 100, "resubmit --status: at most this many intents")
	yes := fs.Bool("yes", false, "resubmit --status: act without asking (the count is printed first)")
	// Only --url comes from the environment (SUBMISSION_URL): a stray
	// SUBMISSION_YES or SUBMISSION_STATUS must never turn a command into a
	// bulk resubmission nobody typed.
	urlOnly := func(name string) (string, bool) {
		if name != EnvName("url") {
			return "", false
		}
		return env(name)
	}
	positional, err := parseInterleaved(fs, rest, urlOnly)
	if err != nil {
		return err
	}
	if *limit < 1 || *maxBulk < 1 {
		return &usageError{msg: "--limit and --max must be at least 1"}
	}
	key, _ := env(APIKeyEnv)
	api, err := client.NewClientWithResponses(strings.TrimRight(*url, "/"), client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		return nil
	}))
	if err != nil {
		return &usageError{msg: fmt.Sprintf("--url %q: %v", *url, err)}
	}
	c := &intentsCmd{api: api, json: *asJSON, stdout: stdout, stderr: stderr}
	switch sub {
	case "list":
		if len(positional) > 0 {
			return &usageError{msg: "intents list takes no intentId; use intents get ID"}
		}
		return c.list(ctx, *status, *target, *limit)
	case "get":
		if len(positional) != 1 {
			return &usageError{msg: "intents get takes exactly one intentId"}
		}
		return c.get(ctx, positional[0])
	case "resubmit":
		switch {
		case *status != "" && len(positional) > 0:
			return &usageError{msg: "intents resubmit takes either intentIds or --status, not both"}
		case *status != "":
			return c.bulk(ctx, *status, *target, *maxBulk, *yes)
		case len(positional) == 0:
			return &usageError{msg: "intents resubmit needs an intentId, or --status for a bulk resubmission"}
		case *newID != "" && len(positional) > 1:
			return &usageError{msg: "--new-id names one resubmission; give one intentId with it"}
		}
		return c.resubmit(ctx, positional, *newID)
	}
	return &usageError{msg: fmt.Sprintf("intents: unknown subcommand %q\n\n%s", sub, intentsUsage)}
}

// parseInterleaved lets flags follow the intentIds, as people type them.
func parseInterleaved(fs *flag.FlagSet, args []string, env LookupEnv) ([]string, error) {
	var positional []string
	for {
		if err := parseFlags(fs, args, env); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// apiError describes a non-success answer by its problem document.
func apiError(what string, status int, body []byte) error {
	var p client.Problem
	if json.Unmarshal(body, &p) == nil && p.Title != "" {
		msg := fmt.Sprintf("%s: %d %s", what, status, p.Title)
		if p.Detail != nil {
			msg += ": " + *p.Detail
		}
		return fmt.Errorf("%s", msg)
	}
	return fmt.Errorf("%s: HTTP %d: %s", what, status, strings.TrimSpace(string(body)))
}

func (c *intentsCmd) printJSON(v any) error { return printJSON(c.stdout, v) }
