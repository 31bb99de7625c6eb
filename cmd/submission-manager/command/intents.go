package command

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/api/submission"
)

const intentsUsage = `usage: submission-manager intents <list|get|resubmit|cancel|run-now> [flags] [intentId...]

  list [--status S] [--target T] [--id-prefix P] [--created-from T] [--created-before T]
       [--last-result R] [--limit N] [--cursor C]          intents, newest first
  get ID                                                    one intent: payload, contract, attempts
  resubmit ID... [--new-id NEW] [--acknowledge-delivery-risk]
                                                            resubmit ended intents
  resubmit --status S [--target T] [--max N] [--yes]        resubmit ended intents in bulk
  cancel ID...                                              cancel pending intents
  run-now ID...                                             make pending intents due now

Every subcommand takes --url (SUBMISSION_URL, default http://127.0.0.1:8000),
--api-key (SUBMISSION_API_KEY; an operator key to resubmit, cancel or run now) and --json.
Run "submission-manager intents <subcommand> -h" for its flags.
`

// statusChoices are the values of --status.
var statusChoices = []string{
	string(client.IntentStatusPending), string(client.IntentStatusAccepted),
	string(client.IntentStatusRejected), string(client.IntentStatusExhausted),
}

// runIntents dispatches `intents list|get|resubmit|cancel|run-now` over the
// Go client.
func runIntents(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "help" {
		fmt.Fprint(stderr, intentsUsage)
		if len(args) > 0 && isHelp(args[0]) {
			return nil
		}
		return &usageError{msg: "intents needs a subcommand: list, get, resubmit, cancel or run-now"}
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "list":
		return runIntentsList(ctx, rest, env, stdout, stderr)
	case "get":
		return runIntentsGet(ctx, rest, env, stdout, stderr)
	case "resubmit":
		return runIntentsResubmit(ctx, rest, env, stdout, stderr)
	case "cancel":
		return runIntentsAct(ctx, cancelAction, rest, env, stdout, stderr)
	case "run-now":
		return runIntentsAct(ctx, runNowAction, rest, env, stdout, stderr)
	}
	return &usageError{msg: fmt.Sprintf("unknown intents subcommand %q: want list, get, resubmit, cancel or run-now", sub)}
}

// isHelp reports whether arg asks for the usage.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// runIntentsList runs `intents list`: one page of up to --limit intents,
// and, when more match, how to get the next ones.
func runIntentsList(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	c := newClientCmd("intents list [flags]", "Lists intents, newest first.", stdout, stderr)
	status := &choiceFlag{choices: statusChoices}
	c.fs.Var(status, "status", "only intents in this status: "+strings.Join(statusChoices, ", "))
	target := c.fs.String("target", "", "only intents of this submission target")
	possibly := c.fs.Bool("possibly-accepted", false, "only intents flagged possiblyAccepted")
	late := c.fs.Bool("accepted-after-deadline", false, "only intents the gateway accepted after their deadline (flagged acceptedAfterDeadline)")
	prefix := c.fs.String("id-prefix", "", "only intents whose intentId starts with this text (letter case counts, no wildcards)")
	from, before := &instantFlag{now: time.Now}, &instantFlag{now: time.Now}
	c.fs.Var(from, "created-from", "only intents created at or after this time: RFC 3339, or how long ago (24h)")
	c.fs.Var(before, "created-before", "only intents created before this time: RFC 3339, or how long ago (1h)")
	lastResult := c.fs.String("last-result", "", "only intents whose latest attempt has this text in its outcome or error,\nignoring case (invalid_recipient, timeout)")
	limit := c.fs.Int("limit", 50, "how many intents to print")
	cursor := c.fs.String("cursor", "", "start after the intents printed before (the cursor a previous list printed)")
	positional, err := c.parse(args, env)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return &usageError{msg: "intents list takes no intentId; use intents get ID"}
	}
	switch {
	case *limit < 1:
		return &usageError{msg: fmt.Sprintf("--limit must be at least 1, got %d", *limit)}
	case !from.value.IsZero() && !before.value.IsZero() && !before.value.After(from.value):
		return &usageError{msg: fmt.Sprintf("--created-before (%s) must be later than --created-from (%s)", before, from)}
	}
	f := submission.Filter{Status: client.IntentStatus(status.value), SubmissionTarget: *target,
		PossiblyAccepted: *possibly, AcceptedAfterDeadline: *late, IntentIDPrefix: *prefix,
		CreatedFrom: from.value, CreatedBefore: before.value, LastResult: *lastResult}
	return c.list(ctx, listQuery{filter: f, limit: *limit, cursor: *cursor})
}

// runIntentsGet runs `intents get ID`.
func runIntentsGet(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	c := newClientCmd("intents get [flags] ID", "Prints one intent: status, contract, payload and every attempt.", stdout, stderr)
	positional, err := c.parse(args, env)
	if err != nil {
		return err
	}
	if len(positional) != 1 {
		return &usageError{msg: "intents get takes exactly one intentId"}
	}
	return c.get(ctx, positional[0])
}

// runIntentsResubmit runs `intents resubmit`, by id or in bulk by status.
func runIntentsResubmit(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	c := newClientCmd("intents resubmit [flags] [ID...]",
		"Resubmits ended intents as new intents: the ones named, or in bulk every ended intent\n"+
			"of --status (and --target) without a resubmission yet. Needs an operator key.", stdout, stderr)
	newID := c.fs.String("new-id", "", "the new intent's intentId, for one ID (default derived: ID~r1)")
	status := &choiceFlag{choices: statusChoices[1:]}
	c.fs.Var(status, "status", "bulk: resubmit ended intents in this status: "+strings.Join(statusChoices[1:], ", "))
	target := c.fs.String("target", "", "bulk: only intents of this submission target")
	maxBulk := c.fs.Int("max", 100, "bulk: resubmit at most this many intents")
	yes := c.fs.Bool("yes", false, "bulk: act without asking (the count is printed first)")
	acknowledge := c.fs.Bool("acknowledge-delivery-risk", false,
		"resubmit the named intents even if the gateway may already have delivered their message\n"+
			"(acceptedAfterDeadline or possiblyAccepted): it may then be delivered twice; never in bulk")
	positional, err := c.parse(args, env)
	if err != nil {
		return err
	}
	switch {
	case *maxBulk < 1:
		return &usageError{msg: fmt.Sprintf("--max must be at least 1, got %d", *maxBulk)}
	case status.value != "" && len(positional) > 0:
		return &usageError{msg: "intents resubmit takes either intentIds or --status, not both"}
	case status.value != "" && *acknowledge:
		return &usageError{msg: "--acknowledge-delivery-risk is for intents named by id, after checking each with the gateway; a bulk resubmission never takes them"}
	case status.value != "":
		return c.bulk(ctx, status.value, *target, *maxBulk, *yes)
	case len(positional) == 0:
		return &usageError{msg: "intents resubmit needs an intentId, or --status for a bulk resubmission"}
	case *newID != "" && len(positional) > 1:
		return &usageError{msg: "--new-id names one resubmission; give one intentId with it"}
	}
	return c.resubmit(ctx, positional, *newID, *acknowledge)
}
