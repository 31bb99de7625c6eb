package console

import (
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

type bulkData struct {
	Status, Target string
	IDs            []string
	Limit          int
	// Scanned is how many listed intents were looked at to find IDs.
	Scanned int
	// Doubtful counts the candidates left out because the gateway may
	// already have delivered them (core.DeliveryRisk: accepted after the
	// deadline, or possibly accepted): resubmitting those in bulk could
	// deliver a message twice, so each needs an operator's look, and
	// confirmation, of its own.
	Doubtful int
	Results  []bulkResult
	BackURL  string
}

type bulkResult struct {
	IntentID, ResubmittedAs, Error string
	Created                        bool
}

// bulkCandidates lists up to the bulk limit of ended intents of the filter
// that have no resubmission yet, reading at most ten times that many.
func (c *Console) bulkCandidates(r *http.Request, status core.IntentStatus, target string) (bulkData, error) {
	d := bulkData{Status: string(status), Target: target, Limit: c.cfg.BulkLimit}
	p := ports.ListIntentsParams{Status: status, SubmissionTarget: target, Limit: 100}
	for len(d.IDs) < c.cfg.BulkLimit && d.Scanned < 10*c.cfg.BulkLimit {
		page, err := c.cfg.Service.ListIntents(r.Context(), p)
		if err != nil {
			return d, err
		}
		for _, in := range page.Intents {
			d.Scanned++
			switch {
			case !in.Status.Terminal() || in.ResubmittedAs != "" || len(d.IDs) >= c.cfg.BulkLimit:
			case core.DeliveryRisk(in) != nil:
				d.Doubtful++
			default:
				d.IDs = append(d.IDs, in.IntentID)
			}
		}
		if page.Next == nil {
			break
		}
		p.Before = page.Next
	}
	return d, nil
}

// bulkConfirm shows how many intents a bulk resubmission would act on and
// asks for confirmation.
func (c *Console) bulkConfirm(w http.ResponseWriter, r *http.Request, ss session) {
	q := r.URL.Query()
	status := core.IntentStatus(q.Get("status"))
	p := page{Title: "Bulk resubmission", Session: ss}
	if !status.Valid() || !status.Terminal() {
		p.Error = "Choose an ended status (accepted, rejected or exhausted) to resubmit in bulk."
		c.render(w, r, http.StatusBadRequest, "bulk", withData(p, bulkData{}))
		return
	}
	d, err := c.bulkCandidates(r, status, q.Get("target"))
	if err != nil {
		c.failure(w, r, ss, "listing intents to resubmit", err)
		return
	}
	d.BackURL = "/ui/intents?" + q.Encode()
	c.render(w, r, http.StatusOK, "bulk", withData(p, d))
}

// bulkResubmit resubmits the confirmed intents, at most the bulk limit. It
// never acknowledges a delivery risk, so the service refuses any intent
// the gateway may already have delivered even if the form names it.
func (c *Console) bulkResubmit(w http.ResponseWriter, r *http.Request, ss session) {
	ids := r.PostForm["id"]
	p := page{Title: "Bulk resubmission", Session: ss}
	if len(ids) == 0 || len(ids) > c.cfg.BulkLimit {
		p.Error = fmt.Sprintf("A bulk resubmission acts on 1 to %d intents; this one named %d.", c.cfg.BulkLimit, len(ids))
		c.render(w, r, http.StatusBadRequest, "bulk", withData(p, bulkData{}))
		return
	}
	d := bulkData{Limit: c.cfg.BulkLimit, BackURL: "/ui/intents"}
	created := 0
	for _, id := range ids {
		res, err := c.cfg.Operator.ResubmitIntent(r.Context(), ports.ResubmitIntentParams{IntentID: id})
		br := bulkResult{IntentID: id}
		if err != nil {
			br.Error = describe(err)
		} else {
			br.ResubmittedAs, br.Created = res.Intent.IntentID, res.Created
			if res.Created {
				created++
			}
		}
		d.Results = append(d.Results, br)
	}
	c.log.Info("console bulk resubmission", "asked", len(ids), "created", created)
	p.Notice = fmt.Sprintf("Resubmitted %d of %d intents.", created, len(ids))
	c.render(w, r, http.StatusOK, "bulk", withData(p, d))
}
