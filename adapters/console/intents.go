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
	Status, Target string
	// PossiblyAccepted narrows the list to intents the gateway may have
	// accepted although their answer was lost.
	PossiblyAccepted bool
	Statuses         []core.IntentStatus
	Targets          []string
	Intents          []core.Intent
	// NextURL continues the listing; FirstURL restarts it.
	NextURL, FirstURL string
	// BulkURL opens the bulk resubmission of this filter; set for ended
	// statuses only.
	BulkURL   string
	DeadView  bool
	PageSize  int
	Continued bool
}

// intents lists intents newest first with the API's filters, and finds one
// by intentId.
func (c *Console) intents(w http.ResponseWriter, r *http.Request, ss session) {
	q := r.URL.Query()
	if id := q.Get("q"); id != "" {
		if _, err := c.cfg.Service.GetIntent(r.Context(), id); err == nil {
			http.Redirect(w, r, "/ui/intents/"+url.PathEscape(id), http.StatusSeeOther)
			return
		} else if !errors.Is(err, core.ErrIntentNotFound) {
			c.failure(w, r, ss, "finding the intent", err)
			return
		}
	}
	d := intentsData{Status: q.Get("status"), Target: q.Get("target"), PossiblyAccepted: q.Get("possiblyAccepted") == "true",
		Statuses: statuses, PageSize: c.cfg.PageSize}
	for _, t := range c.cfg.Service.Targets() {
		d.Targets = append(d.Targets, t.SubmissionTarget)
	}
	p := page{Title: "Intents", Session: ss}
	if id := q.Get("q"); id != "" {
		p.Notice = "No intent has the intentId " + id + "."
	}
	params := ports.ListIntentsParams{Status: core.IntentStatus(d.Status), SubmissionTarget: d.Target,
		PossiblyAccepted: d.PossiblyAccepted, Limit: c.cfg.PageSize}
	// The list pages through the service, never through the HTTP API, with
	// the same cursors: a refused one is a field error like the service's.
	var res ports.IntentPage
	var err error
	if s := q.Get(ports.CursorField); s != "" {
		var cursor ports.IntentCursor
		cursor, err = ports.DecodeCursor(s)
		params = cursor.Continue(params)
	}
	if err == nil {
		res, err = c.cfg.Service.ListIntents(r.Context(), params)
	}
	var field *core.FieldError
	if errors.As(err, &field) {
		p.Error = field.Field + ": " + field.Message
		c.render(w, r, http.StatusBadRequest, "intents", withData(p, d))
		return
	}
	if err != nil {
		c.failure(w, r, ss, "listing intents", err)
		return
	}
	d.Intents, d.Continued = res.Intents, params.Before != nil || params.After != nil
	filter := url.Values{}
	if d.Status != "" {
		filter.Set("status", d.Status)
	}
	if d.Target != "" {
		filter.Set("target", d.Target)
	}
	bulkFilter := filter.Encode() // a bulk resubmission never takes possibly accepted intents
	if d.PossiblyAccepted {
		filter.Set("possiblyAccepted", "true")
	}
	d.FirstURL = "/ui/intents?" + filter.Encode()
	if res.Next != nil {
		next := url.Values{ports.CursorField: {ports.EncodeCursor(*res.Next)}}
		for k, v := range filter {
			next[k] = v
		}
		d.NextURL = "/ui/intents?" + next.Encode()
	}
	if st := core.IntentStatus(d.Status); st.Valid() && st.Terminal() && !d.PossiblyAccepted {
		d.BulkURL = "/ui/bulk-resubmit?" + bulkFilter
	}
	d.DeadView = d.Status == string(core.StatusExhausted) || d.Status == string(core.StatusRejected)
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
