package console

import (
	"context"
	"fmt"
	"net/http"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// bulkAction is one action an operator can take on many intents at once,
// from a selection in the list or from a whole filter. Every action is a
// row of bulkActions and goes through the same two steps: a confirmation
// that says how many of the intents it will act on (and why the others
// are left out), then the action on exactly those, each answered on its
// own. A new action is a new row.
type bulkAction struct {
	// Name is the action's form value.
	Name string
	// Verb and Done word the action and its result ("Resubmit",
	// "Resubmitted").
	Verb, Done string
	// LeftOut says why an intent, as read before the confirmation, would
	// not take the action, or "" when it would. It spares the operator a
	// confirmation that fails; the service still decides when acting.
	LeftOut func(in core.Intent) string
	// Apply acts on one intent through the operator service, as actor (the
	// console session's operator, which the intent's history records for
	// the actions that keep one).
	Apply func(ctx context.Context, op ports.OperatorService, actor core.Actor, intentID string) bulkResult
}

// bulkResult is what one intent's action came to.
type bulkResult struct {
	IntentID string
	// Changed is set when this action changed the intent (the count the
	// results page confirms); Note words the result and Link names an
	// intent it led to; Error is the refusal.
	Changed bool
	Note    string
	Link    string
	Error   string
}

// bulkActions are the actions a selection offers, in the menu's order.
var bulkActions = []bulkAction{resubmitAction, cancelAction}

// bulkActionNamed returns the action of a form's value.
func bulkActionNamed(name string) (bulkAction, bool) {
	for _, a := range bulkActions {
		if a.Name == name {
			return a, true
		}
	}
	return bulkAction{}, false
}

// bulkData is the bulk page: a confirmation (IDs) or the results.
type bulkData struct {
	Action bulkAction
	// Summary says what IDs are (of a filter or of a selection).
	Summary string
	IDs     []string
	Limit   int
	// LeftOut are the selected intents the action would not take, with the
	// reason; Doubtful counts the intents a filter's bulk resubmission left
	// out because the gateway may already have delivered them (see
	// bulkCandidates).
	LeftOut  []bulkResult
	Doubtful int
	Results  []bulkResult
	BackURL  string
}

// bulk confirms or applies an action to the intents of a form: without
// confirm=yes it reads each named intent and asks to confirm the action on
// those that would take it; with it, it acts on exactly the confirmed ones.
func (c *Console) bulk(w http.ResponseWriter, r *http.Request, ss session) {
	ids := r.PostForm["id"]
	p := page{Title: "Bulk action", Session: ss}
	action, ok := bulkActionNamed(r.PostFormValue("action"))
	switch {
	case !ok:
		p.Error = fmt.Sprintf("No bulk action is named %q.", r.PostFormValue("action"))
	case len(ids) == 0:
		p.Error = "Select the intents to act on first."
	case len(ids) > c.cfg.BulkLimit:
		p.Error = fmt.Sprintf("A bulk action acts on 1 to %d intents; this one named %d.", c.cfg.BulkLimit, len(ids))
	}
	if p.Error != "" {
		c.render(w, r, http.StatusBadRequest, "bulk", withData(p, bulkData{Limit: c.cfg.BulkLimit, BackURL: "/ui/intents"}))
		return
	}
	p.Title = action.Verb + " intents"
	d := bulkData{Action: action, Limit: c.cfg.BulkLimit, BackURL: "/ui/intents"}
	if r.PostFormValue("confirm") == "yes" {
		changed := 0
		for _, id := range ids {
			res := action.Apply(r.Context(), c.cfg.Operator, ss.actor(), id)
			res.IntentID = id
			if res.Changed {
				changed++
			}
			d.Results = append(d.Results, res)
		}
		c.log.Info("console bulk action", "action", action.Name, "asked", len(ids), "changed", changed)
		p.Notice = fmt.Sprintf("%s %d of %d intents.", action.Done, changed, len(ids))
		c.render(w, r, http.StatusOK, "bulk", withData(p, d))
		return
	}
	for _, id := range ids {
		in, err := c.cfg.Service.GetIntent(r.Context(), id)
		switch {
		case err != nil:
			d.LeftOut = append(d.LeftOut, bulkResult{IntentID: id, Error: describe(err)})
		case action.LeftOut(in) != "":
			d.LeftOut = append(d.LeftOut, bulkResult{IntentID: id, Error: action.LeftOut(in)})
		default:
			d.IDs = append(d.IDs, id)
		}
	}
	d.Summary = fmt.Sprintf("%d of the %d selected intents", len(d.IDs), len(ids))
	c.render(w, r, http.StatusOK, "bulk", withData(p, d))
}
