package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// cancel cancels one pending intent and shows it again.
func (c *Console) cancel(w http.ResponseWriter, r *http.Request, ss session) {
	c.intervene(w, r, ss, "cancelled", c.cfg.Operator.CancelIntent)
}

// runNow makes one pending intent due now and shows it again.
func (c *Console) runNow(w http.ResponseWriter, r *http.Request, ss session) {
	c.intervene(w, r, ss, "made due now", c.cfg.Operator.RunNow)
}

// intervene runs an operator action on the intent the form names, as the
// session's operator, and sends the browser back to the intent, whose
// history now shows the action (or, for a repeat, shows it unchanged).
func (c *Console) intervene(w http.ResponseWriter, r *http.Request, ss session, done string,
	act func(context.Context, ports.IntentActionParams) (ports.IntentActionResult, error)) {
	id := r.PostFormValue("id")
	res, err := act(r.Context(), ports.IntentActionParams{IntentID: id, Actor: ss.actor()})
	if err != nil {
		c.render(w, r, statusOf(err), "error", page{Title: "Not done", Session: ss,
			Error: fmt.Sprintf("Intent %s was not %s: %s.", id, done, describe(err))})
		return
	}
	c.log.Info("console intent action", "intent_id", id, "action", done, "applied", res.Applied,
		"session", ss.actor().Session)
	http.Redirect(w, r, "/ui/intents/"+url.PathEscape(id), http.StatusSeeOther)
}

// actor is who acts through this session, as the intent's history records
// it: the console, the operator's role (none on an open console, where
// nobody signs in) and the session's tag, never its token.
func (ss session) actor() core.Actor {
	role := core.RoleNone
	if ss.Operator {
		role = core.RoleOperator
	}
	return core.Actor{Surface: ports.SurfaceConsole, Role: role, Session: core.SessionTag(ss.id())}
}

// cancelAction cancels each selected pending intent, as the intent's page
// does, one conditional write each. An ended intent is left out, and so is
// one whose latest attempt is in flight, which the store would refuse
// until its result is recorded; the service still decides when acting.
var cancelAction = bulkAction{
	Name: "cancel", Verb: "Cancel", Done: "Cancelled",
	LeftOut: func(in core.Intent) string {
		switch {
		case in.Status == core.StatusExhausted && in.ExhaustedReason == core.ExhaustedCancelled:
			return "already cancelled"
		case in.Status.Terminal():
			return describe(core.ErrIntentEnded)
		}
		if last, ok := in.LastAttempt(); ok && !last.Finished() {
			return describe(core.ErrAttemptInFlight)
		}
		return ""
	},
	Apply: func(ctx context.Context, op ports.OperatorService, actor core.Actor, id string) bulkResult {
		res, err := op.CancelIntent(ctx, ports.IntentActionParams{IntentID: id, Actor: actor})
		switch {
		case err != nil:
			return bulkResult{Error: describe(err)}
		case res.Applied:
			return bulkResult{Changed: true, Note: "cancelled"}
		}
		return bulkResult{Note: "already cancelled"}
	},
}
