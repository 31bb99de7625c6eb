package command

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/submissionmanager/submission-manager/api/client"
)

// list prints up to limit intents newest first, paging by cursor.
func (c *intentsCmd) list(ctx context.Context, status, target string, limit int) error {
	intents, err := c.collect(ctx, status, target, limit, func(client.Intent) bool { return true })
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(intents)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INTENT ID\tTARGET\tSTATUS\tCREATED\tATTEMPTS\tOUTCOME\tLINK")
	for _, in := range intents {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", in.IntentId, in.SubmissionTarget, in.Status,
			in.CreatedAt.UTC().Format(time.RFC3339), len(in.Attempts), outcomeText(in), linkText(in))
	}
	return tw.Flush()
}

// collect pages through the listing until it has limit intents that keep.
func (c *intentsCmd) collect(ctx context.Context, status, target string, limit int, keep func(client.Intent) bool) ([]client.Intent, error) {
	params := client.ListIntentsParams{Limit: ptrOf(min(limit, 100))}
	if status != "" {
		params.Status = ptrOf(client.IntentStatus(status))
	}
	if target != "" {
		params.SubmissionTarget = &target
	}
	var out []client.Intent
	for len(out) < limit {
		res, err := c.api.ListIntentsWithResponse(ctx, &params)
		if err != nil {
			return nil, err
		}
		if res.JSON200 == nil {
			return nil, apiError("listing intents", res.StatusCode(), res.Body)
		}
		for _, in := range res.JSON200.Intents {
			if len(out) < limit && keep(in) {
				out = append(out, in)
			}
		}
		if res.JSON200.NextCursor == nil {
			break
		}
		params.Cursor = res.JSON200.NextCursor
	}
	return out, nil
}

// get prints one intent and its attempt timeline.
func (c *intentsCmd) get(ctx context.Context, id string) error {
	res, err := c.api.GetIntentWithResponse(ctx, id, nil)
	if err != nil {
		return err
	}
	if res.JSON200 == nil {
		return apiError("reading intent "+id, res.StatusCode(), res.Body)
	}
	in := *res.JSON200
	if c.json {
		return c.printJSON(in)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "intent\t%s\ntarget\t%s\nstatus\t%s\ncreated\t%s\noutcome\t%s\n", in.IntentId, in.SubmissionTarget,
		in.Status, in.CreatedAt.UTC().Format(time.RFC3339Nano), outcomeText(in))
	if l := linkText(in); l != "" {
		fmt.Fprintf(tw, "link\t%s\n", l)
	}
	fmt.Fprintln(tw, "\n#\tLEADER\tEPOCH\tSTARTED\tTOOK\tOUTCOME OR ERROR")
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
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", a.Number, holder, epoch, a.StartedAt.UTC().Format(time.RFC3339Nano), took, result)
	}
	return tw.Flush()
}

// resubmitted is one resubmission's result, as --json prints it.
type resubmitted struct {
	IntentID      string `json:"intentId"`
	ResubmittedAs string `json:"resubmittedAs,omitempty"`
	Created       bool   `json:"created"`
	Error         string `json:"error,omitempty"`
}

func (c *intentsCmd) resubmitOne(ctx context.Context, id, newID string) resubmitted {
	body := client.ResubmissionRequest{}
	if newID != "" {
		body.IntentId = &newID
	}
	res, err := c.api.ResubmitIntentWithResponse(ctx, id, body)
	switch {
	case err != nil:
		return resubmitted{IntentID: id, Error: err.Error()}
	case res.JSON201 != nil:
		return resubmitted{IntentID: id, ResubmittedAs: res.JSON201.IntentId, Created: true}
	case res.JSON200 != nil:
		return resubmitted{IntentID: id, ResubmittedAs: res.JSON200.IntentId}
	}
	return resubmitted{IntentID: id, Error: apiError("resubmitting "+id, res.StatusCode(), res.Body).Error()}
}

// resubmit resubmits the named intents.
func (c *intentsCmd) resubmit(ctx context.Context, ids []string, newID string) error {
	return c.report(c.each(ctx, ids, newID, false))
}

// bulk resubmits ended intents of a filter that have no resubmission yet,
// after printing how many; without --yes it stops there. It never takes an
// intent flagged possiblyAccepted: the gateway may have accepted it, so
// resubmitting it in bulk could deliver its message twice (resubmit such an
// intent by its id, after checking with the gateway).
func (c *intentsCmd) bulk(ctx context.Context, status, target string, limit int, yes bool) error {
	if status == string(client.IntentStatusPending) {
		return &usageError{msg: "--status pending: only ended intents (accepted, rejected, exhausted) can be resubmitted"}
	}
	doubtful := 0
	intents, err := c.collect(ctx, status, target, limit, func(in client.Intent) bool {
		if in.PossiblyAccepted != nil && *in.PossiblyAccepted {
			doubtful++
			return false
		}
		return in.ResubmittedAs == nil
	})
	if err != nil {
		return err
	}
	ids := make([]string, len(intents))
	for i, in := range intents {
		ids[i] = in.IntentId
	}
	fmt.Fprintf(c.stderr, "%d %s intent(s) without a resubmission (at most --max %d)\n", len(ids), status, limit)
	if doubtful > 0 {
		fmt.Fprintf(c.stderr, "%d possibly accepted intent(s) left out: the gateway may have accepted them; check with it and resubmit them by id\n", doubtful)
	}
	if !yes {
		fmt.Fprintln(c.stderr, "nothing resubmitted: rerun with --yes to resubmit them")
		return &silentError{code: ExitError}
	}
	return c.report(c.each(ctx, ids, "", true))
}

// each resubmits ids in order, drawing a progress bar on stderr in bulk.
func (c *intentsCmd) each(ctx context.Context, ids []string, newID string, progress bool) []resubmitted {
	out := make([]resubmitted, 0, len(ids))
	for i, id := range ids {
		out = append(out, c.resubmitOne(ctx, id, newID))
		if progress {
			fmt.Fprintf(c.stderr, "\r%s %d/%d", progressBar(i+1, len(ids), 30), i+1, len(ids))
		}
	}
	if progress && len(ids) > 0 {
		fmt.Fprintln(c.stderr)
	}
	return out
}

// progressBar draws done of total as [####......].
func progressBar(done, total, width int) string {
	filled := width
	if total > 0 {
		filled = done * width / total
	}
	return "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "]"
}

func (c *intentsCmd) report(results []resubmitted) error {
	failed := 0
	for _, r := range results {
		if r.Error != "" {
			failed++
		}
	}
	if c.json {
		if err := c.printJSON(results); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "INTENT ID\tRESULT")
		for _, r := range results {
			switch {
			case r.Error != "":
				fmt.Fprintf(tw, "%s\terror: %s\n", r.IntentID, r.Error)
			case r.Created:
				fmt.Fprintf(tw, "%s\tresubmitted as %s\n", r.IntentID, r.ResubmittedAs)
			default:
				fmt.Fprintf(tw, "%s\talready resubmitted as %s\n", r.IntentID, r.ResubmittedAs)
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d resubmissions failed", failed, len(results))
	}
	return nil
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
