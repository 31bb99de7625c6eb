package command

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/submissionmanager/submission-manager/ports"
)

func TestTracingFlags(t *testing.T) {
	cfg, err := parseServeConfig(nil, envOf(nil), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Tracing.OTLPEndpoint != "" || cfg.Tracing.SampleRatio != 1 {
		t.Errorf("tracing defaults %+v, want off with a ratio of 1", cfg.Tracing)
	}
	cfg, err = parseServeConfig([]string{"--trace-sample-ratio", "0.25"},
		envOf(map[string]string{"SUBMISSION_OTLP_ENDPOINT": "http://otel-collector:4318"}), &bytes.Buffer{})
	if err != nil || cfg.Tracing.OTLPEndpoint != "http://otel-collector:4318" || cfg.Tracing.SampleRatio != 0.25 {
		t.Fatalf("tracing flags: %+v, %v", cfg.Tracing, err)
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--otlp-endpoint", "otel-collector:4318"}, "--otlp-endpoint"},
		{[]string{"--otlp-endpoint", "http://user:pw@otel-collector:4318"}, "--otlp-endpoint"},
		{[]string{"--trace-sample-ratio", "1.5"}, "--trace-sample-ratio"},
		{[]string{"--otlp-endpoint", "http://c:4318", "--trace-sample-ratio", "-1"}, "--trace-sample-ratio"},
	} {
		if _, err := parseServeConfig(c.args, envOf(nil), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%q: %v, want a refusal naming %s", c.args, err, c.flag)
		}
	}
}

// traceCollector is an OTLP/HTTP receiver on loopback that keeps the names
// and trace-ids of the spans it is sent.
type traceCollector struct {
	mu    sync.Mutex
	spans []string // "name trace-id"
}

func (c *traceCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil || r.URL.Path != "/v1/traces" {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, s.GetName()+" "+hex.EncodeToString(s.GetTraceId()))
			}
		}
	}
	w.WriteHeader(http.StatusOK)
}

// TestTracingOnExportsTheSubmission starts an instance with
// --otlp-endpoint and submits in a client's trace: the submission's span
// reaches the collector in that trace, at the latest when the instance
// shuts down. Without the flag the instance runs no exporter.
func TestTracingOnExportsTheSubmission(t *testing.T) {
	col := &traceCollector{}
	collector := httptest.NewServer(col)
	defer collector.Close()

	cfg := DefaultServeConfig()
	cfg.Registry = filepath.Join("..", "..", "..", "config", "submission_targets.json")
	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "sm.db")
	cfg.Listen = "127.0.0.1:0"
	cfg.APIOnly = true
	untraced, err := Start(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if _, nop := untraced.tracing.tracer.(ports.NopTracer); !nop || untraced.tracing.exporter != nil {
		t.Errorf("without --otlp-endpoint the instance runs %T", untraced.tracing.tracer)
	}
	_ = untraced.Shutdown(context.Background())

	cfg.Database = "sqlite:" + filepath.Join(t.TempDir(), "sm.db")
	cfg.Tracing.OTLPEndpoint = collector.URL
	srv, err := Start(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	const clientTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL()+"/v1/intents",
		strings.NewReader(`{"intentId":"traced-1","submissionTarget":"sms.realtime","payload":{"to":"+1","text":"hi"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", clientTrace)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %s", resp.Status)
	}
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	want := "intent submit " + clientTrace[3:35]
	found := false
	for _, s := range col.spans {
		found = found || s == want
	}
	if !found {
		t.Errorf("the collector got spans %q, want %q", col.spans, want)
	}
}
