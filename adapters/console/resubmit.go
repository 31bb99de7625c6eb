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

// resubmit resubmits one ended intent and shows the new one.
func (c *Console) resubmit(w http.ResponseWriter, r *http.Request, ss session) {
	id := r.PostFormValue("id")
	res, err := c.cfg.Operator.ResubmitIntent(r.Context(), ports.ResubmitIntentParams{IntentID: id, NewIntentID: r.PostFormValue("newId")})
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
	case errors.Is(err, core.ErrIntentNotEnded), errors.Is(err, core.ErrResubmissionIDTaken):
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
	}
	return err.Error()
}

// resubmitAction resubmits each selected ended intent that has no
// resubmission yet. A possibly accepted intent is left out: resubmitting
// it in bulk could deliver a message twice, so it needs an operator's look
// of its own (its page still offers the resubmission).
var resubmitAction = bulkAction{
	Name: "resubmit", Verb: "Resubmit", Done: "Resubmitted",
	LeftOut: func(in core.Intent) string {
		switch {
		case !in.Status.Terminal():
			return describe(core.ErrIntentNotEnded)
		case in.ResubmittedAs != "":
			return "already resubmitted as " + in.ResubmittedAs
		case in.PossiblyAccepted:
			return "possibly accepted: the gateway may have accepted an earlier attempt whose answer was lost; check with it and resubmit it from its own page"
		}
		return ""
	},
	Apply: func(ctx context.Context, op ports.OperatorService, id string) bulkResult {
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

// bulkCandidates lists up to the bulk limit of the filter's intents that a
// resubmission takes, reading at most ten times that many, and counts the
// possibly accepted ones it left out.
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
			switch {
			case len(d.IDs) >= c.cfg.BulkLimit:
			case in.PossiblyAccepted && in.Status.Terminal() && in.ResubmittedAs == "":
				d.Doubtful++
			case resubmitAction.LeftOut(in) == "":
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
	f.PossiblyAccepted = false // a bulk resubmission never takes possibly accepted intents
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
