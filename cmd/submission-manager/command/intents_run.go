package command

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/api/submission"
)

// listQuery is what `intents list` asks for.
type listQuery struct {
	filter submission.Filter
	limit  int
	cursor string
}

// maxPage is the largest page the API serves.
const maxPage = 500

// listed is `intents list --json`: the API's page shape, so a script
// continues with nextCursor as it would against the API.
type listed struct {
	Intents    []client.Intent `json:"intents"`
	NextCursor *string         `json:"nextCursor,omitempty"`
}

// list prints up to q.limit intents newest first. Pages are sized so that
// the last one ends exactly at the limit: its nextCursor then continues
// right after the last intent printed, and --cursor takes it from there.
func (c *clientCmd) list(ctx context.Context, q listQuery) error {
	sm, err := c.client()
	if err != nil {
		return err
	}
	f := q.filter
	out, cursor := listed{Intents: []client.Intent{}}, q.cursor
	for len(out.Intents) < q.limit {
		f.PageSize = min(q.limit-len(out.Intents), maxPage)
		page, next, err := sm.ListPage(ctx, f, cursor)
		if err != nil {
			return explained("listing intents", err)
		}
		out.Intents = append(out.Intents, page...)
		out.NextCursor = nil
		if next == "" {
			break
		}
		out.NextCursor, cursor = &next, next
	}
	if c.json {
		return c.printJSON(out)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INTENT ID\tTARGET\tSTATUS\tCREATED\tATTEMPTS\tOUTCOME\tLINK")
	for _, in := range out.Intents {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", in.IntentId, in.SubmissionTarget, statusText(in),
			in.CreatedAt.UTC().Format(time.RFC3339), len(in.Attempts), outcomeText(in), linkText(in))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if out.NextCursor != nil {
		fmt.Fprintf(c.stderr, "more intents match: repeat the command with --cursor %s for the next ones, or raise --limit (%d)\n", *out.NextCursor, q.limit)
	}
	return nil
}

// get prints one intent: what it is, its contract snapshot, its payload
// and its attempt timeline.
func (c *clientCmd) get(ctx context.Context, id string) error {
	sm, err := c.client()
	if err != nil {
		return err
	}
	in, err := sm.Get(ctx, id)
	if err != nil {
		return explained("reading intent "+id, err)
	}
	if c.json {
		return c.printJSON(in)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "intent\t%s\ntarget\t%s\nstatus\t%s\ncreated\t%s\n", in.IntentId, in.SubmissionTarget,
		in.Status, in.CreatedAt.UTC().Format(time.RFC3339Nano))
	if in.NotBefore != nil {
		fmt.Fprintf(tw, "not before\t%s\n", in.NotBefore.UTC().Format(time.RFC3339Nano))
	}
	if o := outcomeText(in); o != "" {
		fmt.Fprintf(tw, "outcome\t%s\n", o)
	}
	if in.PossiblyAccepted != nil && *in.PossiblyAccepted {
		fmt.Fprintln(tw, "possibly accepted\tyes: the gateway may have accepted an attempt whose answer was lost; check with it before resending")
	}
	if acceptedAfterDeadline(in) {
		message := ""
		if in.AcceptedMessageId != nil {
			message = " (message " + *in.AcceptedMessageId + ")"
		}
		fmt.Fprintf(tw, "accepted after deadline\tyes%s: the gateway accepted an attempt after the acceptance deadline and may deliver it; "+
			"resending could deliver it twice\n", message)
	}
	if l := linkText(in); l != "" {
		fmt.Fprintf(tw, "link\t%s\n", l)
	}
	fmt.Fprintf(tw, "contract\t%s\n", contractText(in.Contract))
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "\npayload\n%s\n", indentedJSON(in.Payload))
	tw = tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\n#\tLEADER\tEPOCH\tSTARTED\tTOOK\tSENT\tOUTCOME OR ERROR")
	for _, a := range in.Attempts {
		took := "in flight"
		if a.FinishedAt != nil {
			took = a.FinishedAt.Sub(a.StartedAt).Round(time.Millisecond).String()
		}
		holder, epoch := "-", "-"
		if a.HolderId != nil {
			holder = *a.HolderId
		}
		if a.LeaseEpoch != nil {
			epoch = fmt.Sprint(*a.LeaseEpoch)
		}
		result := ""
		if a.Outcome != nil {
			result = string(a.Outcome.Status)
			if a.Outcome.Reason != nil {
				result += ": " + *a.Outcome.Reason
			}
		}
		if a.Error != nil {
			result = *a.Error
		}
		sent := "no"
		if a.Sent {
			sent = "yes"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", a.Number, holder, epoch, a.StartedAt.UTC().Format(time.RFC3339Nano), took, sent, result)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printEvents(c.stdout, in)
}

// printEvents prints the intent's operator actions, when it has any.
func printEvents(w io.Writer, in client.Intent) error {
	if in.Events == nil || len(*in.Events) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nOPERATOR ACTION\tAT\tTHROUGH\tROLE\tSESSION")
	for _, e := range *in.Events {
		session := "-"
		if e.Session != nil {
			session = *e.Session
		}
		fmt.Fprintf(tw, "%d %s\t%s\t%s\t%s\t%s\n", e.Number, e.Action, e.At.UTC().Format(time.RFC3339Nano), e.Surface, e.Role, session)
	}
	return tw.Flush()
}

// contractText is a contract snapshot on one line: gateway type, mode,
// policy with its bound, and the terminal outcomes.
func contractText(k client.Contract) string {
	policy := string(k.Policy)
	switch {
	case k.MaxAcceptanceSeconds != nil:
		policy += fmt.Sprintf(" (accepted within %ds)", *k.MaxAcceptanceSeconds)
	case k.MaxAttempts != nil:
		policy += fmt.Sprintf(" (at most %d attempts)", *k.MaxAttempts)
	}
	terminal := "none"
	if len(k.TerminalOutcomes) > 0 {
		terminal = strings.Join(k.TerminalOutcomes, ", ")
	}
	return fmt.Sprintf("%s %s, %s, terminal outcomes: %s", k.GatewayType, k.Mode, policy, terminal)
}

// indentedJSON pretty-prints a payload, indented under its heading; an
// absent payload (a service older than this command) says so.
func indentedJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "  (not shown by this service)"
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "  ", "  "); err != nil {
		return "  " + string(raw)
	}
	return "  " + b.String()
}

// statusText is the status, marked when the gateway may already have the
// intent's message (the facts beside the status).
func statusText(in client.Intent) string {
	s := string(in.Status)
	if acceptedAfterDeadline(in) {
		s += " (accepted after deadline)"
	}
	if in.PossiblyAccepted != nil && *in.PossiblyAccepted {
		s += " (possibly accepted)"
	}
	return s
}

// acceptedAfterDeadline reports whether the gateway accepted the intent
// after its deadline.
func acceptedAfterDeadline(in client.Intent) bool {
	return in.AcceptedAfterDeadline != nil && *in.AcceptedAfterDeadline
}

func outcomeText(in client.Intent) string {
	switch {
	case in.FinalOutcome != nil && in.FinalOutcome.Reason != nil:
		return string(in.FinalOutcome.Status) + ": " + *in.FinalOutcome.Reason
	case in.FinalOutcome != nil:
		return string(in.FinalOutcome.Status)
	case in.ExhaustedReason != nil:
		return string(*in.ExhaustedReason)
	}
	return ""
}

func linkText(in client.Intent) string {
	var parts []string
	if in.ResubmittedFrom != nil {
		parts = append(parts, "from "+*in.ResubmittedFrom)
	}
	if in.ResubmittedAs != nil {
		parts = append(parts, "as "+*in.ResubmittedAs)
	}
	return strings.Join(parts, ", ")
}

func ptrOf[T any](v T) *T { return &v }
