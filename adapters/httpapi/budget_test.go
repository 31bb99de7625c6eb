package httpapi_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/ports"
)

// holdingService holds every submission (single or batch) inside the
// service, so its body stays held by the API, until the test lets it go:
// entered receives one value per submission that arrived, and each value
// sent on release lets one go. Closing stop lets every one go, so that a
// failing test still shuts its server down.
type holdingService struct {
	answeringService
	entered chan struct{}
	release chan struct{}
	stop    chan struct{}
}

func newHoldingService() holdingService {
	return holdingService{entered: make(chan struct{}, 64), release: make(chan struct{}), stop: make(chan struct{})}
}

func (s holdingService) hold() {
	s.entered <- struct{}{}
	select {
	case <-s.release:
	case <-s.stop:
	}
}

func (s holdingService) SubmitIntent(ctx context.Context, p ports.SubmitIntentParams) (ports.SubmitIntentResult, error) {
	s.hold()
	return s.answeringService.SubmitIntent(ctx, p)
}

func (s holdingService) SubmitIntents(ctx context.Context, items []ports.SubmitIntentParams) ([]ports.SubmitIntentsItem, error) {
	s.hold()
	return s.answeringService.SubmitIntents(ctx, items)
}

// The budget tests' limits: a single body is read up to 2*1024+16384 =
// 18,432 bytes, a batch of 4 up to 34,816; the budget of 64 KiB holds four
// 16,000-byte bodies but not five, and batches may hold 32 KiB of it.
const (
	budgetPayloadBytes = 1024
	budgetBatch        = 4
	budgetBytes        = 64 << 10
)

func startBudgetAPI(t *testing.T, svc holdingService) string {
	t.Helper()
	srv, err := httpapi.New(httpapi.Config{Service: svc, MaxPayloadBytes: budgetPayloadBytes, MaxBatch: budgetBatch,
		MaxBodyBytesInFlight: budgetBytes, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(svc.stop) }) // runs first: Close waits for held requests
	return ts.URL
}

// paddedItem is a submission of exactly size bytes (an ignored member pads
// it).
func paddedItem(id string, size int) string {
	head := fmt.Sprintf(`{"intentId":%q,"submissionTarget":"t","payload":{},"pad":"`, id)
	return head + strings.Repeat("x", size-len(head)-2) + `"}`
}

type posted struct {
	status     int
	retryAfter string
}

// post sends a body to path, with its Content-Length unless chunked, and
// reports the answer on the returned channel.
func post(t *testing.T, url, body string, chunked bool) <-chan posted {
	done := make(chan posted, 1)
	go func() {
		var r io.Reader = strings.NewReader(body)
		if chunked {
			r = io.MultiReader(r) // a reader of unknown length: sent chunked
		}
		req, err := http.NewRequest(http.MethodPost, url, r)
		if err != nil {
			t.Error(err)
			done <- posted{}
			return
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Error(err)
			done <- posted{}
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		done <- posted{status: res.StatusCode, retryAfter: res.Header.Get("Retry-After")}
	}()
	return done
}

// expectHeld checks that a request reached the service (and is held
// there) rather than being answered.
func expectHeld(t *testing.T, svc holdingService, done <-chan posted, what string) {
	t.Helper()
	select {
	case <-svc.entered:
	case got := <-done:
		t.Fatalf("%s was answered %+v; want it admitted", what, got)
	}
}

// releaseAll lets every held request go, then collects their answers in
// order. A release goes to whichever held request takes it first, not to a
// chosen one, so waiting for one request's answer after each release hung
// whenever another took that release (once in a full parallel run).
func releaseAll(svc holdingService, held []<-chan posted) []posted {
	for range held {
		svc.release <- struct{}{}
	}
	out := make([]posted, len(held))
	for i, done := range held {
		out[i] = <-done
	}
	return out
}

// expectBusy checks that a request is refused 503 with Retry-After without
// reaching the service: it must answer before anything enters the service.
func expectBusy(t *testing.T, svc holdingService, done <-chan posted, what string) {
	t.Helper()
	select {
	case <-svc.entered:
		t.Fatalf("%s was admitted; want 503 server-busy", what)
	case got := <-done:
		if got.status != http.StatusServiceUnavailable || got.retryAfter == "" {
			t.Fatalf("%s: %+v, want 503 with Retry-After", what, got)
		}
	}
}

// TestBodyBytesInFlightAreBounded holds bodies inside the service over real
// HTTP: four 16,000-byte submissions fit the 64 KiB budget, a fifth is
// refused at once with 503 and Retry-After though body slots are free (the
// count bound alone admitted it), and once the held bodies are let go the
// budget takes bodies again.
func TestBodyBytesInFlightAreBounded(t *testing.T) {
	svc := newHoldingService()
	url := startBudgetAPI(t, svc) + "/v1/intents"
	var held []<-chan posted
	for i := range 4 {
		held = append(held, post(t, url, paddedItem(fmt.Sprint("held-", i), 16000), false))
		expectHeld(t, svc, held[i], "a 16,000-byte body within the budget")
	}
	expectBusy(t, svc, post(t, url, paddedItem("fifth", 16000), false), "a fifth 16,000-byte body")
	for _, got := range releaseAll(svc, held) {
		if got.status != http.StatusCreated {
			t.Fatalf("a held submission: %+v, want 201", got)
		}
	}
	done := post(t, url, paddedItem("after", 16000), false)
	expectHeld(t, svc, done, "a body after the others were let go")
	svc.release <- struct{}{}
	if got := <-done; got.status != http.StatusCreated {
		t.Fatalf("after the held bodies were let go: %+v, want 201", got)
	}
}

// TestBatchBodiesHoldAtMostHalfTheBudget: one batch is always admitted, a
// second that would take batches past half the budget is refused, and a
// single submission still finds room.
func TestBatchBodiesHoldAtMostHalfTheBudget(t *testing.T) {
	svc := newHoldingService()
	base := startBudgetAPI(t, svc)
	batch := func(prefix string) string {
		items := make([]string, budgetBatch)
		for i := range items {
			items[i] = paddedItem(fmt.Sprint(prefix, i), 5000)
		}
		return `{"intents":[` + strings.Join(items, ",") + `]}`
	}
	first := post(t, base+"/v1/intents/batch", batch("a"), false)
	expectHeld(t, svc, first, "the first batch")
	expectBusy(t, svc, post(t, base+"/v1/intents/batch", batch("b"), false), "a second 20,000-byte batch")
	single := post(t, base+"/v1/intents", paddedItem("single", 16000), false)
	expectHeld(t, svc, single, "a single submission beside a held batch")
	for _, got := range releaseAll(svc, []<-chan posted{first, single}) {
		if got.status != http.StatusOK && got.status != http.StatusCreated {
			t.Fatalf("a held submission: %+v", got)
		}
	}
}

// TestChunkedBodiesAreChargedTheirSizeOnceRead: a body without
// Content-Length is charged its body limit (18,432 bytes) while it is read,
// then only what it holds, so six small chunked bodies are held at once
// where six full charges would not fit.
func TestChunkedBodiesAreChargedTheirSizeOnceRead(t *testing.T) {
	svc := newHoldingService()
	url := startBudgetAPI(t, svc) + "/v1/intents"
	var held []<-chan posted
	for i := range 6 {
		held = append(held, post(t, url, paddedItem(fmt.Sprint("chunked-", i), 200), true))
		expectHeld(t, svc, held[i], "a small chunked body")
	}
	for _, got := range releaseAll(svc, held) {
		if got.status != http.StatusCreated {
			t.Fatalf("a held chunked submission: %+v, want 201", got)
		}
	}
}

func TestBodyBudgetMustHoldTheLargestBody(t *testing.T) {
	largest := httpapi.LargestBody(budgetPayloadBytes, budgetBatch)
	if largest != 34816 {
		t.Fatalf("LargestBody = %d, want a batch's limit, 34816", largest)
	}
	for _, budget := range []int64{largest - 1, -1} {
		_, err := httpapi.New(httpapi.Config{Service: answeringService{}, MaxPayloadBytes: budgetPayloadBytes, MaxBatch: budgetBatch,
			MaxBodyBytesInFlight: budget})
		if err == nil {
			t.Errorf("a budget of %d bytes was taken; the largest body is %d", budget, largest)
		}
	}
	if _, err := httpapi.New(httpapi.Config{Service: answeringService{}, MaxPayloadBytes: budgetPayloadBytes, MaxBatch: budgetBatch,
		MaxBodyBytesInFlight: largest}); err != nil {
		t.Errorf("a budget of exactly the largest body: %v", err)
	}
}
