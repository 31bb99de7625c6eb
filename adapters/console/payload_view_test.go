package console_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/console"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/fakes/clocktest"
	"github.com/submissionmanager/submission-manager/fakes/memstore"
	"github.com/submissionmanager/submission-manager/ports"
)

// oneIntent serves one stored intent to the console and nothing else.
type oneIntent struct {
	ports.IntentService
	ports.OperatorService
	intent core.Intent
}

func (s oneIntent) GetIntent(_ context.Context, id string) (core.Intent, error) {
	if id != s.intent.IntentID {
		return core.Intent{}, core.ErrIntentNotFound
	}
	return s.intent, nil
}

// openConsole is an open console (no keys) showing in.
func openConsole(t *testing.T, in core.Intent) *console.Console {
	t.Helper()
	clk := clocktest.New(time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC))
	svc := oneIntent{intent: in}
	ui, err := console.New(console.Config{Service: svc, Operator: svc, Clock: clk, Sessions: memstore.New(clk)})
	if err != nil {
		t.Fatal(err)
	}
	return ui
}

// get serves one request and returns the answer and the bytes the whole
// process allocated meanwhile (the console runs no goroutine of its own).
func get(ui http.Handler, path string) (*httptest.ResponseRecorder, uint64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	w := httptest.NewRecorder()
	ui.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
	runtime.ReadMemStats(&after)
	return w, after.TotalAlloc - before.TotalAlloc
}

// TestDeeplyNestedPayloadViewIsBounded is the 20 KB payload of 9,999 nested
// arrays that made one intent page 200 MB and took the process from 41 MB
// to 888 MB: the page and everything allocated to render it stay within a
// small multiple of the payload (plus the view's fixed minimum), and the
// payload is one click away, whole, as a download.
func TestDeeplyNestedPayloadViewIsBounded(t *testing.T) {
	payload := []byte(strings.Repeat("[", 9999) + strings.Repeat("]", 9999))
	in := core.Intent{IntentID: "deep", SubmissionTarget: "sms.realtime", Status: core.StatusPending,
		CreatedAt: time.Date(2026, 2, 2, 11, 0, 0, 0, time.UTC), Payload: payload}
	ui := openConsole(t, in)

	const fixed = 1 << 20 // the page's own size and the view's 64 KiB minimum, with room
	w, allocated := get(ui, "/ui/intents/deep")
	if w.Code != http.StatusOK {
		t.Fatalf("intent page: %d", w.Code)
	}
	if limit := fixed + 10*len(payload); w.Body.Len() > limit {
		t.Errorf("the page is %d bytes for a %d-byte payload; want at most %d", w.Body.Len(), len(payload), limit)
	}
	if limit := uint64(fixed + 40*len(payload)); allocated > limit {
		t.Errorf("rendering the page allocated %d bytes for a %d-byte payload; want at most %d", allocated, len(payload), limit)
	}
	t.Logf("page %d bytes, %d bytes allocated, payload %d bytes", w.Body.Len(), allocated, len(payload))
	page := w.Body.String()
	if !strings.Contains(page, `href="/ui/payloads/deep"`) || !strings.Contains(page, "shown on one line") {
		t.Error("the page neither links the raw payload nor says that deep values are on one line")
	}

	w, _ = get(ui, "/ui/payloads/deep")
	if w.Code != http.StatusOK || w.Body.String() != string(payload) ||
		w.Header().Get("Content-Type") != "application/json" ||
		!strings.HasPrefix(w.Header().Get("Content-Disposition"), "attachment") {
		t.Fatalf("raw payload: %d, %s, %q, %d bytes", w.Code, w.Header().Get("Content-Type"),
			w.Header().Get("Content-Disposition"), w.Body.Len())
	}
	if w, _ := get(ui, "/ui/payloads/other"); w.Code != http.StatusNotFound {
		t.Fatalf("raw payload of an unknown intent: %d", w.Code)
	}
}
