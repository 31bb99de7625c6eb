package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/submissionmanager/submission-manager/adapters/httpapi/internal/apigen"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// batchPath is the batch submission's route.
const batchPath = "/v1/intents/batch"

// batchItemBytes is what a batch's body limit grants each item it may hold,
// beyond room for one item with the largest payload: enough for the
// envelope and an SMS or push message. Clients with large payloads send
// smaller batches; the limit scales with the operator's cap on the count.
const batchItemBytes = 4 << 10

// batchBodyLimit is the most of a batch body the API reads.
func batchBodyLimit(maxPayloadBytes int64, maxBatch int) int64 {
	return bodyLimit(maxPayloadBytes) + int64(maxBatch)*batchItemBytes
}

// batchBodySlots is how many batch bodies may be held at once, in slots of
// their own: an eighth of the single bodies' (32 by default), so that batch
// bodies, about nine times larger at the default limits, take at most about
// the memory the single bodies may take, and a burst of batches never
// starves single submissions of slots.
func batchBodySlots(maxBodiesInFlight int) int { return max(1, maxBodiesInFlight/8) }

// batchHandler serves POST /v1/intents/batch by hand rather than through
// the generated strict server: a typed binding of the whole body, and the
// validator's check of the whole body, would refuse the batch for one bad
// item. Here the body is only required to be an object with an array of
// intents; each item then goes through what a single submission's body goes
// through (decodeSubmission, then the service) and gets its own answer from
// the one problem mapper. The service alone judges the batch's size, so
// every item goes to it, one this API could not read as its refusal.
type batchHandler struct {
	service ports.IntentService
	log     *slog.Logger
}

func newBatchHandler(service ports.IntentService, log *slog.Logger) *batchHandler {
	return &batchHandler{service: service, log: log}
}

func (h *batchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := r.Body.(*requestBody)
	if !ok { // readJSONBody runs first
		writeProblem(h.log, w, r, errBodyRequired)
		return
	}
	items, err := decodeBatch(body.data)
	if err != nil {
		writeProblem(h.log, w, r, err)
		return
	}
	params := make([]ports.SubmitIntentParams, len(items))
	traceParent := r.Header.Get(traceParentHeader) // one line at most (oneTraceParent)
	for i, raw := range items {
		if params[i], err = h.bind(raw); err != nil {
			params[i] = ports.SubmitIntentParams{Refused: err}
		}
		params[i].TraceParent = traceParent
	}
	answers, err := h.service.SubmitIntents(r.Context(), params)
	if err != nil {
		writeProblem(h.log, w, r, err)
		return
	}
	results := make([]apigen.IntentBatchResult, len(items))
	for i, a := range answers {
		switch {
		case a.Err != nil:
			results[i] = h.refused(r, a.Err)
		case a.Result.Created:
			results[i] = apigen.IntentBatchResult{Status: http.StatusCreated, Intent: ptr(intentFromCore(a.Result.Intent))}
		default:
			results[i] = apigen.IntentBatchResult{Status: http.StatusOK, Intent: ptr(intentFromCore(a.Result.Intent))}
		}
	}
	out, err := json.Marshal(apigen.IntentBatchResults{Results: results})
	if err != nil {
		writeProblem(h.log, w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// decodeBatch reads a batch body, already checked to be one valid JSON
// document, in one pass as decodeSubmission reads a single one: each item
// is the slice of body that holds it, read later by decodeSubmission, so
// one bad item cannot spoil the reading of the others. The batch as a
// whole is refused when the body is not an object, or its intents member
// is missing, given twice or not an array. Other members are ignored.
func decodeBatch(body []byte) ([]json.RawMessage, error) {
	var (
		items []json.RawMessage
		seen  bool
	)
	s := scanner{b: body}
	if s.skipSpace(); !s.next('{') {
		return nil, errNotAnObject
	}
	for s.skipSpace(); !s.next('}'); s.skipSpace() {
		rawKey, ok := s.stringToken()
		if !ok {
			return nil, errNotAnObject
		}
		key, err := unquote(rawKey)
		if err != nil {
			return nil, errNotAnObject
		}
		if s.skipSpace(); !s.next(':') {
			return nil, errNotAnObject
		}
		s.skipSpace()
		switch {
		case key != "intents":
			if _, ok := s.value(); !ok {
				return nil, errNotAnObject
			}
		case seen:
			return nil, &core.FieldError{Field: key, Message: "must be given once"}
		case !s.next('['):
			return nil, &core.FieldError{Field: key, Message: "must be a JSON array"}
		default:
			seen = true
			items = []json.RawMessage{}
			for s.skipSpace(); !s.next(']'); s.skipSpace() {
				item, ok := s.value()
				if !ok {
					return nil, errNotAnObject
				}
				items = append(items, item)
				if s.skipSpace(); !s.next(',') && (s.i >= len(s.b) || s.b[s.i] != ']') {
					return nil, errNotAnObject
				}
			}
		}
		if s.skipSpace(); !s.next(',') && (s.i >= len(s.b) || s.b[s.i] != '}') {
			return nil, errNotAnObject
		}
	}
	if !seen {
		return nil, &core.FieldError{Field: "intents", Message: "is required"}
	}
	return items, nil
}

// bind reads one item exactly as a single submission's body is read.
func (h *batchHandler) bind(raw json.RawMessage) (ports.SubmitIntentParams, error) {
	req, err := decodeSubmission(raw)
	if err != nil {
		return ports.SubmitIntentParams{}, err
	}
	return ports.SubmitIntentParams{
		IntentID:         req.IntentId,
		SubmissionTarget: req.SubmissionTarget,
		Payload:          req.Payload,
		NotBefore:        deref(req.NotBefore),
	}, nil
}

// refused is an item's problem document, as problemFor makes it for the
// same error on a single submission. Server-side failures are logged.
func (h *batchHandler) refused(r *http.Request, err error) apigen.IntentBatchResult {
	p := problemFor(err)
	p.body.Instance = ptr(r.URL.Path)
	if p.body.Status >= http.StatusInternalServerError {
		h.log.ErrorContext(r.Context(), "batch item failed", "path", r.URL.Path, "status", p.body.Status, "error", err)
	}
	return apigen.IntentBatchResult{Status: p.body.Status, Problem: &p.body}
}
