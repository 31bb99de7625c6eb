package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// resubmit resubmits one ended intent and shows the new one. The form's
// acknowledgeDeliveryRisk box is the operator's confirmation, on the
// intent's own page, that its message may be delivered twice; the service
// refuses such an intent without it.
func (c *Console) resubmit(w http.ResponseWriter, r *http.Request, ss session) {
	id := r.PostFormValue("id")
	res, err := c.cfg.Operator.ResubmitIntent(r.Context(), ports.ResubmitIntentParams{IntentID: id, NewIntentID: r.PostFormValue("newId"),
		AcknowledgeDeliveryRisk: r.PostFormValue("acknowledgeDeliveryRisk") == "true"})
	if err != nil {
		c.render(w, r, statusOf(err), "error", page{Title: "Not resubmitted", Session: ss,
			Error: fmt.Sprintf("Intent %s was not resubmitted: %s.", id, describe(err))})
		return
	}
	c.log.Info("console resubmission", "intent_id", id, "resubmitted_as", res.Intent.IntentID, "created", res.Created)
	http.Redirect(w, r, "/ui/intents/"+url.PathEscape(res.Intent.IntentID), http.StatusSeeOther)
}

// statusOf and describe turn a service error into the console's answer.
func statusOf(err error) int {
	var field *core.FieldError
	switch {
	case errors.Is(err, core.ErrIntentNotFound):
		return http.StatusNotFound
	case errors.Is(err, core.ErrIntentNotEnded), errors.Is(err, core.ErrResubmissionIDTaken), errors.Is(err, core.ErrDeliveryRisk),
		errors.Is(err, core.ErrIntentEnded), errors.Is(err, core.ErrAttemptInFlight):
		return http.StatusConflict
	case errors.As(err, &field), errors.Is(err, core.ErrUnknownTarget):
		return http.StatusUnprocessableEntity
	case errors.Is(err, core.ErrStoreUnavailable):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func describe(err error) string {
	switch {
	case errors.Is(err, core.ErrIntentNotFound):
		return "no intent has this intentId"
	case errors.Is(err, core.ErrIntentNotEnded):
		return "it is still pending; only ended intents can be resubmitted"
	case errors.Is(err, core.ErrResubmissionIDTaken):
		return "the new intentId names another intent; choose another"
	case errors.Is(err, core.ErrDeliveryRisk):
		return err.Error() + "; resubmitting could deliver it twice: check with the gateway, then confirm the risk on the intent's page"
	case errors.Is(err, core.ErrIntentEnded):
		return "it has ended; only a pending intent can be cancelled or run now"
	case errors.Is(err, core.ErrAttemptInFlight):
		return "an attempt is in flight; its result must be recorded first, so try again once it finished"
	}
	return err.Error()
}

// resubmitAction resubmits each selected ended intent that has no
// resubmission yet. It never acknowledges a delivery risk: an intent the
// gateway may already have delivered is left out (resubmitLeftOut), and
// should the form name one all the same, the service refuses it.
var resubmitAction = bulkAction{
	Name: "resubmit", Verb: "Resubmit", Done: "Resubmitted",
	LeftOut: func(in core.Intent) string {
		reason, _ := resubmitLeftOut(in)
		return reason
	},
	Apply: func(ctx context.Context, op ports.OperatorService, _ core.Actor, id string) bulkResult {
		res, err := op.ResubmitIntent(ctx, ports.ResubmitIntentParams{IntentID: id})
		switch {
		case err != nil:
			return bulkResult{Error: describe(err)}
		case res.Created:
			return bulkResult{Changed: true, Note: "resubmitted as", Link: res.Intent.IntentID}
		}
		return bulkResult{Note: "already resubmitted as", Link: res.Intent.IntentID}
	},
}

// resubmitLeftOut says why a bulk resubmission leaves an intent out, or ""
// when it takes it; risky tells that the reason is core.DeliveryRisk (the
// gateway may already have delivered the message, so resubmitting it in
// bulk could deliver it twice: each needs an operator's look, and the
// risk confirmed, on its own page), which a filter's confirmation counts.
func resubmitLeftOut(in core.Intent) (reason string, risky bool) {
	switch {
	case !in.Status.Terminal():
		return describe(core.ErrIntentNotEnded), false
	case in.ResubmittedAs != "":
		return "already resubmitted as " + in.ResubmittedAs, false
	}
	if err := core.DeliveryRisk(in); err != nil {
		return describe(err), true
	}
	return "", false
}

// bulkCandidates lists up to the bulk limit of the filter's intents that a
// resubmission takes, reading at most ten times that many, and counts the
// ones it left out for their delivery risk.
func (c *Console) bulkCandidates(r *http.Request, p ports.ListIntentsParams) (bulkData, int, error) {
	d := bulkData{Action: resubmitAction, Limit: c.cfg.BulkLimit}
	scanned := 0
	p.Limit = 100
	for len(d.IDs) < c.cfg.BulkLimit && scanned < 10*c.cfg.BulkLimit {
		page, err := c.cfg.Service.ListIntents(r.Context(), p)
		if err != nil {
			return d, scanned, err
		}
		for _, in := range page.Intents {
			scanned++
			if len(d.IDs) >= c.cfg.BulkLimit {
				continue
			}
			switch reason, risky := resubmitLeftOut(in); {
			case risky:
				d.Doubtful++
			case reason == "":
				d.IDs = append(d.IDs, in.IntentID)
			}
		}
		if page.Next == nil {
			break
		}
		p = ports.IntentCursor{Position: *page.Next}.Continue(p)
	}
	return d, scanned, nil
}

// bulkConfirm shows how many intents of a filter a bulk resubmission would
// act on and asks for confirmation; the form goes to bulk.
func (c *Console) bulkConfirm(w http.ResponseWriter, r *http.Request, ss session) {
	q := r.URL.Query()
	f := filterOf(q)
	// A bulk resubmission never takes an intent the gateway may already
	// have delivered, so filtering on those facts would find none.
	f.PossiblyAccepted, f.AcceptedAfterDeadline = false, false
	status := core.IntentStatus(f.Status)
	p := page{Title: "Bulk resubmission", Session: ss}
	if !status.Valid() || !status.Terminal() {
		p.Error = "Choose an ended status (accepted, rejected or exhausted) to resubmit in bulk."
		c.render(w, r, http.StatusBadRequest, "bulk", withData(p, bulkData{Limit: c.cfg.BulkLimit}))
		return
	}
	params, err := f.params(100)
	if err == nil {
		var d bulkData
		var scanned int
		d, scanned, err = c.bulkCandidates(r, params)
		if err == nil {
			d.Summary = fmt.Sprintf("%d %s intent(s)", len(d.IDs), status)
			if f.Target != "" {
				d.Summary += " of " + f.Target
			}
			d.Summary += fmt.Sprintf(" without a resubmission (looked at %d; at most %d per confirmation)", scanned, c.cfg.BulkLimit)
			d.BackURL = "/ui/intents?" + q.Encode()
			c.render(w, r, http.StatusOK, "bulk", withData(p, d))
			return
		}
	}
	if msg, ok := fieldRefusal(err); ok {
		p.Error = msg
		c.render(w, r, http.StatusBadRequest, "bulk", withData(p, bulkData{Limit: c.cfg.BulkLimit}))
		return
	}
	c.failure(w, r, ss, "listing intents to resubmit", err)
}
