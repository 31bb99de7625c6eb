package command

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/submissionmanager/submission-manager/api/client"
	"github.com/submissionmanager/submission-manager/api/submission"
)

// resubmitted is one resubmission's result, as --json prints it.
type resubmitted struct {
	IntentID      string `json:"intentId"`
	ResubmittedAs string `json:"resubmittedAs,omitempty"`
	Created       bool   `json:"created"`
	Error         string `json:"error,omitempty"`
}

// resubmitOne resubmits one intent; acknowledge confirms the delivery risk
// of an intent the gateway may already have delivered (never in bulk).
func resubmitOne(ctx context.Context, sm *submission.Client, id, newID string, acknowledge bool) resubmitted {
	body := client.ResubmissionRequest{}
	if newID != "" {
		body.IntentId = &newID
	}
	if acknowledge {
		body.AcknowledgeDeliveryRisk = &acknowledge
	}
	res, err := sm.API().ResubmitIntentWithResponse(ctx, id, body)
	switch {
	case err != nil:
		return resubmitted{IntentID: id, Error: err.Error()}
	case res.JSON201 != nil:
		return resubmitted{IntentID: id, ResubmittedAs: res.JSON201.IntentId, Created: true}
	case res.JSON200 != nil:
		return resubmitted{IntentID: id, ResubmittedAs: res.JSON200.IntentId}
	}
	problem := submission.ProblemOf(res.HTTPResponse, res.Body)
	if submission.IsProblem(problem, submission.TypeDeliveryRisk) {
		return resubmitted{IntentID: id, Error: fmt.Sprintf("resubmitting %s: %v (check with the gateway; to send it again all the same, "+
			"rerun with --acknowledge-delivery-risk)", id, problem)}
	}
	return resubmitted{IntentID: id, Error: explained("resubmitting "+id, problem).Error()}
}

// resubmit resubmits the named intents; acknowledge confirms the delivery
// risk of those the gateway may already have delivered.
func (c *clientCmd) resubmit(ctx context.Context, ids []string, newID string, acknowledge bool) error {
	sm, err := c.client()
	if err != nil {
		return err
	}
	return c.report(c.each(ctx, sm, ids, newID, acknowledge, false))
}

// bulk resubmits ended intents of a filter that have no resubmission yet,
// after printing how many; without --yes it stops there. It never takes an
// intent flagged possiblyAccepted or acceptedAfterDeadline: the gateway may
// have its message, so resubmitting it in bulk could deliver it twice
// (resubmit such an intent by its id with --acknowledge-delivery-risk,
// after checking with the gateway); the service would refuse it anyway.
func (c *clientCmd) bulk(ctx context.Context, status, target string, limit int, yes bool) error {
	sm, err := c.client()
	if err != nil {
		return err
	}
	doubtful := 0
	var ids []string
	for in, err := range sm.List(ctx, submission.Filter{Status: client.IntentStatus(status), SubmissionTarget: target, PageSize: min(limit, maxPage)}) {
		if err != nil {
			return explained("listing intents", err)
		}
		switch {
		case in.ResubmittedAs != nil:
		case (in.PossiblyAccepted != nil && *in.PossiblyAccepted) || acceptedAfterDeadline(in):
			doubtful++
		default:
			ids = append(ids, in.IntentId)
		}
		if len(ids) == limit {
			break
		}
	}
	fmt.Fprintf(c.stderr, "%d %s intent(s) without a resubmission (at most --max %d)\n", len(ids), status, limit)
	if doubtful > 0 {
		fmt.Fprintf(c.stderr, "%d intent(s) the gateway may already have delivered left out (acceptedAfterDeadline or possiblyAccepted): "+
			"check with it and resubmit them by id with --acknowledge-delivery-risk\n", doubtful)
	}
	if !yes {
		fmt.Fprintln(c.stderr, "nothing resubmitted: rerun with --yes to resubmit them")
		return &silentError{code: ExitError}
	}
	return c.report(c.each(ctx, sm, ids, "", false, true))
}

// each resubmits ids in order, drawing a progress bar on stderr in bulk.
func (c *clientCmd) each(ctx context.Context, sm *submission.Client, ids []string, newID string, acknowledge, progress bool) []resubmitted {
	out := make([]resubmitted, 0, len(ids))
	for i, id := range ids {
		out = append(out, resubmitOne(ctx, sm, id, newID, acknowledge))
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

func (c *clientCmd) report(results []resubmitted) error {
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
