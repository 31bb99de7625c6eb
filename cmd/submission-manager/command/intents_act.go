package command

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"text/tabwriter"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/api/submission"
)

// acted is one operator action's result, as --json prints it: the intent's
// status afterwards (and its exhausted reason), or why it was refused.
type acted struct {
	IntentID        string `json:"intentId"`
	Status          string `json:"status,omitempty"`
	ExhaustedReason string `json:"exhaustedReason,omitempty"`
	Error           string `json:"error,omitempty"`
}

// intentAction is one of the operator's actions on pending intents.
type intentAction struct {
	name, synopsis, about string
	// what names the action in an error ("cancelling ID").
	what string
	// call sends the action for one intent and returns the intent the
	// service answered with (200), or nil with the answer.
	call func(ctx context.Context, api *client.ClientWithResponses, id string) (*client.Intent, *http.Response, []byte, error)
	// done says what happened to an intent the service answered with.
	done func(in client.Intent) string
}

var cancelAction = intentAction{
	name:     "cancel",
	synopsis: "intents cancel [flags] ID...",
	about: "Cancels pending intents: each ends exhausted (cancelled) and is never attempted again.\n" +
		"Refused while an attempt is in flight (retry once it finished) and for ended intents;\n" +
		"cancelling a cancelled intent is no error. Needs an operator key.",
	what: "cancelling",
	call: func(ctx context.Context, api *client.ClientWithResponses, id string) (*client.Intent, *http.Response, []byte, error) {
		res, err := api.CancelIntentWithResponse(ctx, id, client.IntentActionRequest{})
		if err != nil {
			return nil, nil, nil, err
		}
		return res.JSON200, res.HTTPResponse, res.Body, nil
	},
	done: func(in client.Intent) string { return "cancelled: " + string(in.Status) + " (" + outcomeText(in) + ")" },
}

var runNowAction = intentAction{
	name:     "run-now",
	synopsis: "intents run-now [flags] ID...",
	about: "Makes pending intents due now: the leader attempts each at its next schedule refresh,\n" +
		"still subject to the gateway's breaker, limits and pauses. An intent already due is\n" +
		"left as it is; an ended one is refused. Needs an operator key.",
	what: "running now",
	call: func(ctx context.Context, api *client.ClientWithResponses, id string) (*client.Intent, *http.Response, []byte, error) {
		res, err := api.RunIntentNowWithResponse(ctx, id, client.IntentActionRequest{})
		if err != nil {
			return nil, nil, nil, err
		}
		return res.JSON200, res.HTTPResponse, res.Body, nil
	},
	done: func(in client.Intent) string { return "due now: " + string(in.Status) },
}

// runIntentsAct runs `intents cancel|run-now ID...`: the action on each
// intent in order, one line (or --json item) per intent; it fails when any
// of them was refused.
func runIntentsAct(ctx context.Context, a intentAction, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	c := newClientCmd(a.synopsis, a.about, stdout, stderr)
	ids, err := c.parse(args, env)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return &usageError{msg: "intents " + a.name + " needs at least one intentId"}
	}
	sm, err := c.client()
	if err != nil {
		return err
	}
	results := make([]acted, 0, len(ids))
	lines := make([]string, 0, len(ids))
	failed := 0
	for _, id := range ids {
		r := acted{IntentID: id}
		in, res, body, err := a.call(ctx, sm.API(), id)
		switch {
		case err != nil:
			r.Error = explained(a.what+" "+id, err).Error()
		case in == nil:
			r.Error = explained(a.what+" "+id, submission.ProblemOf(res, body)).Error()
		default:
			r.Status = string(in.Status)
			if in.ExhaustedReason != nil {
				r.ExhaustedReason = string(*in.ExhaustedReason)
			}
		}
		line := "error: " + r.Error
		if r.Error == "" {
			line = a.done(*in)
		} else {
			failed++
		}
		results, lines = append(results, r), append(lines, line)
	}
	if c.json {
		if err := c.printJSON(results); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "INTENT ID\tRESULT")
		for i, r := range results {
			fmt.Fprintf(tw, "%s\t%s\n", r.IntentID, lines[i])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%s: %d of %d intents refused", a.name, failed, len(results))
	}
	return nil
}
