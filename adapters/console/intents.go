package console

import (
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strconv"

	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

type intentsData struct {
	listFilter
	Statuses []core.IntentStatus
	Targets  []string
	Rows     []intentRow
	// NextURL and PrevURL continue the listing toward older and newer
	// intents; FirstURL restarts it.
	NextURL, PrevURL, FirstURL string
	// BulkURL opens the bulk resubmission of this filter; set for ended
	// statuses only.
	BulkURL string
	// Actions are what a selection of rows offers (bulkActions).
	Actions   []bulkAction
	DeadView  bool
	PageSize  int
	Continued bool
}

// intents lists intents newest first with the API's filters and search,
// paged both ways. The search box q goes to the intent it names exactly,
// and otherwise lists the intents whose intentId starts with it.
func (c *Console) intents(w http.ResponseWriter, r *http.Request, ss session) {
	q := r.URL.Query()
	p := page{Title: "Intents", Session: ss}
	f := filterOf(q)
	if id := q.Get("q"); id != "" {
		if _, err := c.cfg.Service.GetIntent(r.Context(), id); err == nil {
			http.Redirect(w, r, "/ui/intents/"+url.PathEscape(id), http.StatusSeeOther)
			return
		} else if !errors.Is(err, core.ErrIntentNotFound) {
			c.failure(w, r, ss, "finding the intent", err)
			return
		}
		p.Notice = "No intent has the intentId " + id + "; these are the intents whose intentId starts with it."
		f.Prefix = id
	}
	d := intentsData{listFilter: f, Statuses: statuses, PageSize: c.cfg.PageSize, Actions: bulkActions}
	for _, t := range c.cfg.Service.Targets() {
		d.Targets = append(d.Targets, t.SubmissionTarget)
	}
	// The list pages through the service, never through the HTTP API, with
	// the same cursors: a refused one is a field error like the service's.
	params, err := f.params(c.cfg.PageSize)
	var res ports.IntentPage
	if s := q.Get(ports.CursorField); s != "" && err == nil {
		var cursor ports.IntentCursor
		cursor, err = ports.DecodeCursor(s)
		params = cursor.Continue(params)
	}
	if err == nil {
		res, err = c.cfg.Service.ListIntents(r.Context(), params)
	}
	if msg, ok := fieldRefusal(err); ok {
		p.Error = msg
		c.render(w, r, http.StatusBadRequest, "intents", withData(p, d))
		return
	}
	if err != nil {
		c.failure(w, r, ss, "listing intents", err)
		return
	}
	d.Rows, d.Continued = rowsOf(res.Intents), params.Before != nil || params.After != nil
	filter := f.values()
	d.FirstURL = "/ui/intents?" + filter.Encode()
	pageURL := func(cursor string) string {
		v := f.values()
		v.Set(ports.CursorField, cursor)
		return "/ui/intents?" + v.Encode()
	}
	if res.Next != nil {
		d.NextURL = pageURL(ports.EncodeCursor(*res.Next))
	}
	if res.Prev != nil {
		d.PrevURL = pageURL(ports.EncodePrevCursor(*res.Prev))
	}
	// A bulk resubmission never takes an intent the gateway may already
	// have delivered, so it is not offered on a list of only those.
	if st := core.IntentStatus(f.Status); st.Valid() && st.Terminal() && !f.PossiblyAccepted && !f.AcceptedAfterDeadline {
		d.BulkURL = "/ui/bulk-resubmit?" + filter.Encode()
	}
	d.DeadView = f.Status == string(core.StatusExhausted) || f.Status == string(core.StatusRejected)
	c.render(w, r, http.StatusOK, "intents", withData(p, d))
}

func withData(p page, d any) page {
	p.Data = d
	return p
}

type intentData struct {
	Intent   core.Intent
	Payload  prettyView
	Contract string
	Ended    bool
	// DeliveryRisk says why the gateway may already have delivered the
	// intent's message (core.DeliveryRisk), empty when it cannot have: the
	// resubmission form then asks the operator to acknowledge it.
	DeliveryRisk string
	// InFlight tells that the intent's latest attempt is open: a cancel
	// would be refused until it finished.
	InFlight bool
	// PayloadURL downloads the payload as stored.
	PayloadURL string
	// PayloadBytes is the stored payload's size.
	PayloadBytes int
}

// pathIntent reads the intent the path names, or answers that it cannot.
func (c *Console) pathIntent(w http.ResponseWriter, r *http.Request, ss session) (core.Intent, bool) {
	id := r.PathValue("id")
	in, err := c.cfg.Service.GetIntent(r.Context(), id)
	if errors.Is(err, core.ErrIntentNotFound) {
		c.render(w, r, http.StatusNotFound, "error", page{Title: "Not found", Error: "No intent has the intentId " + id + ".", Session: ss})
		return core.Intent{}, false
	}
	if err != nil {
		c.failure(w, r, ss, "reading the intent", err)
		return core.Intent{}, false
	}
	return in, true
}

// intent shows one intent: contract snapshot, payload, attempt timeline.
func (c *Console) intent(w http.ResponseWriter, r *http.Request, ss session) {
	in, ok := c.pathIntent(w, r, ss)
	if !ok {
		return
	}
	id := in.IntentID
	contract, _ := json.MarshalIndent(in.Contract, "", "  ")
	d := intentData{Intent: in, Payload: prettyJSON(in.Payload), Contract: string(contract), Ended: in.Status.Terminal(),
		PayloadURL: "/ui/payloads/" + url.PathEscape(id), PayloadBytes: len(in.Payload)}
	if risk := core.DeliveryRisk(in); risk != nil {
		d.DeliveryRisk = risk.Error()
	}
	if last, ok := in.LastAttempt(); ok && !last.Finished() {
		d.InFlight = true
	}
	c.render(w, r, http.StatusOK, "intent", page{Title: "Intent " + id, Session: ss, Data: d})
}

// payload serves an intent's payload exactly as stored, as a download: the
// pretty view is bounded (prettyJSON), the download never is, and a browser
// saves it instead of rendering it.
func (c *Console) payload(w http.ResponseWriter, r *http.Request, ss session) {
	in, ok := c.pathIntent(w, r, ss)
	if !ok {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "payload.json"}))
	h.Set("Content-Length", strconv.Itoa(len(in.Payload)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(in.Payload)
}
