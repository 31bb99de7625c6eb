package gatewaysim

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/submissionmanager/submission-manager/api/gatewayapi"
	"github.com/submissionmanager/submission-manager/core"
)

// maxRequestBytes bounds a submission body; a larger one is rejected with
// invalid_request, as a real gateway would refuse it.
const maxRequestBytes = 1 << 20

// gateway is one simulated gateway of one type: the protocol and the
// control endpoints on one listener, with its own memory of references.
type gateway struct {
	gatewayType core.GatewayType
	behaviour   behaviour
	state       *registry
	mode        atomic.Value // Mode
	outage      outage
	messageSeq  atomic.Uint64
	// done is closed when the simulator closes, so that hanging and waiting
	// submissions end and the server can shut down.
	done   <-chan struct{}
	waker  *waker
	logger *slog.Logger
}

var _ gatewayapi.ServerInterface = (*gateway)(nil)

func newGateway(t core.GatewayType, b behaviour, done <-chan struct{}, wk *waker, logger *slog.Logger) *gateway {
	g := &gateway{gatewayType: t, behaviour: b, state: newRegistry(), done: done, waker: wk, logger: logger}
	g.mode.Store(b.mode)
	g.state.reset(b.scripts)
	return g
}

// handler routes the protocol and the control endpoints.
func (g *gateway) handler() http.Handler {
	return gatewayapi.HandlerWithOptions(g, gatewayapi.StdHTTPServerOptions{
		ErrorHandlerFunc: func(w http.ResponseWriter, _ *http.Request, err error) {
			writeJSON(w, http.StatusBadRequest, gatewayapi.ControlError{Error: err.Error()})
		},
	})
}

func (g *gateway) currentMode() Mode { return g.mode.Load().(Mode) }

func (g *gateway) setMode(m Mode) {
	g.mode.Store(m)
	g.logger.Info("gateway simulator mode set", "gateway_type", g.gatewayType, "mode", m)
}

// stats is the registry's counts with the outage's.
func (g *gateway) stats(only string) Stats {
	st := g.state.stats(only)
	st.Outage = g.outage.stats()
	return st
}

func (g *gateway) reset() {
	g.mode.Store(g.behaviour.mode)
	g.outage.set(false, "")
	g.state.reset(g.behaviour.scripts)
	g.logger.Info("gateway simulator reset", "gateway_type", g.gatewayType)
}

func (g *gateway) nextMessageID() string {
	return "sim-" + string(g.gatewayType) + "-" + strconv.FormatUint(g.messageSeq.Add(1), 10)
}

// traceParentOf is a call's traceparent header as received, for the
// reference's memory: several header lines joined with commas, as HTTP
// combines them, and empty when there is none. The simulator does not
// judge it, since showing what a caller sent is the point.
func traceParentOf(r *http.Request) string {
	return strings.Join(r.Header.Values("traceparent"), ",")
}

// Submit serves POST /v1/submissions: it decides the answer under the
// reference's shard lock, then waits out the latency with no lock held.
func (g *gateway) Submit(w http.ResponseWriter, r *http.Request) {
	req, ok, readErr := readSubmission(w, r)
	if readErr != nil {
		return // the client went away mid-request: nobody to answer
	}
	if fault, down := g.outage.take(); down {
		g.state.outageFault()
		g.write(w, r, answer{fault: fault})
		return
	}
	traceParent := traceParentOf(r)
	var a answer
	if ok {
		accept, reason := g.behaviour.draw()
		a = g.state.decide(req.Reference, req.Payload, traceParent, g.currentMode(), accept, reason, g.nextMessageID)
	} else {
		a = g.state.malformed(req.Reference, traceParent)
	}
	if !g.wait(r, g.behaviour.delay()) {
		return
	}
	g.write(w, r, a)
}

// readSubmission reads a submission body. ok is false for a body a real
// gateway would refuse as invalid_request (too large, not JSON, no
// reference, no payload); err is set only when the body could not be read.
func readSubmission(w http.ResponseWriter, r *http.Request) (req gatewayapi.SubmissionRequest, ok bool, err error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if errors.As(err, new(*http.MaxBytesError)) {
		return req, false, nil
	}
	if err != nil {
		return req, false, err
	}
	if json.Unmarshal(body, &req) != nil {
		return req, false, nil
	}
	return req, req.Reference != "" && len(req.Payload) > 0, nil
}

// wait sleeps d unless the client leaves or the simulator closes first; it
// reports whether the answer should still be written.
func (g *gateway) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	due, cancel := g.waker.after(d)
	defer cancel()
	select {
	case <-due:
		return true
	case <-r.Context().Done():
		return false
	case <-g.done:
		abort()
		return false
	}
}

// abort ends a submission cut short by Close without any answer: returning
// from the handler would send an empty 200, which is not what a gateway
// that goes away does.
func abort() { panic(http.ErrAbortHandler) }

// write sends an outcome or produces a fault.
func (g *gateway) write(w http.ResponseWriter, r *http.Request, a answer) {
	if a.fault == "" {
		ans := gatewayapi.SubmissionAnswer{Status: gatewayapi.SubmissionAnswerStatus(a.outcome.Status)}
		if a.outcome.Reason != "" {
			ans.Reason = &a.outcome.Reason
		}
		if a.outcome.MessageID != "" {
			ans.MessageId = &a.outcome.MessageID
		}
		writeJSON(w, http.StatusOK, ans)
		return
	}
	if code, ok := a.fault.httpStatus(); ok {
		writeJSON(w, code, gatewayapi.ControlError{Error: "simulated HTTP " + strconv.Itoa(code)})
		return
	}
	switch a.fault {
	case ModeHang, ModeAcceptThenHang:
		select {
		case <-r.Context().Done():
		case <-g.done:
			abort()
		}
	case ModeDrop, ModeAcceptThenDrop:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			g.logger.Error("gateway simulator cannot drop the connection", "err", err)
			return
		}
		_ = conn.Close()
	case ModeNotJSON:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, "<html><body>502 Bad Gateway</body></html>")
	case ModeEmptyBody:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
	case ModeNotObject:
		writeRaw(w, `["accepted"]`)
	case ModeNoStatus:
		writeRaw(w, `{"messageId":"`+g.nextMessageID()+`"}`)
	case ModeUnknownStatus:
		writeRaw(w, `{"status":"queued"}`)
	case ModeNoReason:
		writeRaw(w, `{"status":"rejected"}`)
	case ModeReasonNotString:
		writeRaw(w, `{"status":"rejected","reason":42}`)
	case ModeOversized:
		writeRaw(w, `{"status":"accepted","padding":"`+string(oversizedPadding)+`"}`)
	}
}

// oversizedPadding makes an answer far larger than any client should read.
var oversizedPadding = func() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'x'
	}
	return b
}()

func writeRaw(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // payloads are reported byte for byte
	_ = enc.Encode(v)
}

// GetStats serves GET /stats.
func (g *gateway) GetStats(w http.ResponseWriter, _ *http.Request, params gatewayapi.GetStatsParams) {
	only := ""
	if params.Reference != nil {
		only = *params.Reference
	}
	writeJSON(w, http.StatusOK, toAPIStats(g.stats(only)))
}

// PutScript serves PUT /control/script/{reference}.
func (g *gateway) PutScript(w http.ResponseWriter, r *http.Request, ref string) {
	var raw gatewayapi.PutScriptJSONBody
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		writeJSON(w, http.StatusBadRequest, gatewayapi.ControlError{Error: "script must be a JSON list of steps: " + err.Error()})
		return
	}
	steps, err := ParseSteps(raw)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, gatewayapi.ControlError{Error: err.Error()})
		return
	}
	g.state.script(ref, steps)
	g.logger.Info("gateway simulator script set", "gateway_type", g.gatewayType, "reference", ref, "steps", raw)
	w.WriteHeader(http.StatusNoContent)
}

// SetMode serves POST /control/mode.
func (g *gateway) SetMode(w http.ResponseWriter, r *http.Request) {
	var req gatewayapi.ModeRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, gatewayapi.ControlError{Error: "mode request must be {\"mode\": \"...\"}: " + err.Error()})
		return
	}
	m, err := ParseMode(req.Mode)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, gatewayapi.ControlError{Error: err.Error()})
		return
	}
	g.setMode(m)
	w.WriteHeader(http.StatusNoContent)
}

// Reset serves POST /control/reset.
func (g *gateway) Reset(w http.ResponseWriter, _ *http.Request) {
	g.reset()
	w.WriteHeader(http.StatusNoContent)
}

func toAPIStats(s Stats) gatewayapi.Stats {
	out := gatewayapi.Stats{
		Total:      s.Total,
		Accepted:   s.Accepted,
		Rejected:   s.Rejected,
		Duplicates: s.Duplicates,
		Faults:     s.Faults,
		References: make(map[string]gatewayapi.ReferenceStats, len(s.References)),
		Outage:     toAPIOutage(s.Outage),
	}
	for ref, rs := range s.References {
		out.References[ref] = gatewayapi.ReferenceStats{
			Submissions:           rs.Submissions,
			Accepted:              rs.Accepted,
			Rejected:              rs.Rejected,
			Duplicates:            rs.Duplicates,
			Faults:                rs.Faults,
			LastPayload:           rs.LastPayload,
			LastTraceParent:       rs.LastTraceParent,
			Lookups:               rs.Lookups,
			LastLookupTraceParent: rs.LastLookupTraceParent,
		}
	}
	return out
}
