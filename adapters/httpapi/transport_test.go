package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/httpapi"
	"github.com/submissionmanager/submission-manager/core"
)

// levelRecorder remembers the levels of the records logged.
type levelRecorder struct {
	mu     sync.Mutex
	levels []slog.Level
	msgs   []string
}

func (h *levelRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *levelRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.levels = append(h.levels, r.Level)
	h.msgs = append(h.msgs, r.Message)
	return nil
}
func (h *levelRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *levelRecorder) WithGroup(string) slog.Handler      { return h }

func (h *levelRecorder) maxLevel() slog.Level {
	h.mu.Lock()
	defer h.mu.Unlock()
	maxLevel := slog.LevelDebug
	for _, l := range h.levels {
		maxLevel = max(maxLevel, l)
	}
	return maxLevel
}

// rawExchange writes request bytes on a fresh connection and reads the
// response.
func rawExchange(t *testing.T, addr, request string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestClientTransportFaultsAreTheClients checks that a body the client
// fails to deliver (broken chunked framing, or slower than the read
// timeout) is a 4xx logged at debug, not a 500 logged as a server error.
func TestClientTransportFaultsAreTheClients(t *testing.T) {
	rec := &levelRecorder{}
	srv, err := httpapi.New(httpapi.Config{Service: &storingService{intents: map[string]core.Intent{}}, Logger: slog.New(rec)})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv)
	// The timeout only has to pass while the client holds its body back;
	// the test waits for the answer whatever the timeout.
	ts.Config.ReadTimeout = 200 * time.Millisecond
	ts.Start()
	t.Cleanup(ts.Close)
	addr := ts.Listener.Addr().String()
	head := "POST /v1/intents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"

	res := rawExchange(t, addr, head+"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n")
	body, _ := io.ReadAll(res.Body)
	problem(t, res.StatusCode, res.Header.Get("Content-Type"), body, 400, "malformed-request")

	res = rawExchange(t, addr, head+"Content-Length: 100\r\n\r\n{\"intentId\":")
	body, _ = io.ReadAll(res.Body)
	problem(t, res.StatusCode, res.Header.Get("Content-Type"), body, 408, "request-timeout")

	if l := rec.maxLevel(); l > slog.LevelDebug {
		t.Fatalf("a client's transport fault was logged at %s: %v", l, rec.msgs)
	}
}
