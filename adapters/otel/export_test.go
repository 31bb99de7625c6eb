package otel_test

import (
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/submissionmanager/submission-manager/adapters/otel"
	"github.com/submissionmanager/submission-manager/core"
	"github.com/submissionmanager/submission-manager/ports"
)

// collector is an OTLP/HTTP trace receiver on loopback: it decodes what
// the exporter posts and keeps the spans' names, trace-ids and resources.
type collector struct {
	mu       sync.Mutex
	paths    []string
	names    []string
	traceIDs []string
	services []string
	instance []string
}

func startCollector(t *testing.T) (*collector, string) {
	t.Helper()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &req)
		}
		if err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP protobuf export", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.paths = append(c.paths, r.Method+" "+r.URL.Path)
		for _, rs := range req.GetResourceSpans() {
			for _, kv := range rs.GetResource().GetAttributes() {
				switch kv.GetKey() {
				case "service.name":
					c.services = append(c.services, kv.GetValue().GetStringValue())
				case "service.instance.id":
					c.instance = append(c.instance, kv.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					c.names = append(c.names, s.GetName())
					c.traceIDs = append(c.traceIDs, hex.EncodeToString(s.GetTraceId()))
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

// TestSpansReachTheCollector: spans made through the port are exported
// over OTLP/HTTP to the endpoint's /v1/traces, with the process's
// resource, and Shutdown flushes what is still queued.
func TestSpansReachTheCollector(t *testing.T) {
	col, url := startCollector(t)
	exp, err := otel.New(t.Context(), otel.Config{Endpoint: url + "/otlp/", SampleRatio: 1, InstanceID: "sm-01"})
	if err != nil {
		t.Fatal(err)
	}
	submit := exp.Start(t.Context(), ports.SpanSubmit, ports.SpanSubject{TraceParent: clientTrace, IntentID: "order-1"})
	in := core.Intent{IntentID: "order-1", TraceParent: submit.TraceParent()}
	submit.End(ports.SpanEnd{Created: 1})
	exp.Start(t.Context(), ports.SpanGatewayCall, ports.AttemptSubject(in, 1)).End(ports.SpanEnd{})
	if err := exp.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.paths) == 0 || col.paths[0] != "POST /otlp/v1/traces" {
		t.Fatalf("the collector got %q, want POST /otlp/v1/traces", col.paths)
	}
	if strings.Join(col.names, ",") != "intent submit,gateway call" {
		t.Errorf("the collector got spans %q", col.names)
	}
	for _, id := range col.traceIDs {
		if id != clientTrace[3:35] {
			t.Errorf("a span of trace %s reached the collector, want the client's %s", id, clientTrace[3:35])
		}
	}
	if len(col.services) == 0 || col.services[0] != otel.ServiceName || len(col.instance) == 0 || col.instance[0] != "sm-01" {
		t.Errorf("resource service.name %q, service.instance.id %q", col.services, col.instance)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []otel.Config{
		{Endpoint: "http://collector:4318", SampleRatio: 1},
		{Endpoint: "https://collector.example/base", SampleRatio: 0},
	} {
		if err := cfg.Validate(); err != nil {
			t.Errorf("%+v refused: %v", cfg, err)
		}
	}
	for _, cfg := range []otel.Config{
		{Endpoint: "", SampleRatio: 1},
		{Endpoint: "collector:4318", SampleRatio: 1},
		{Endpoint: "grpc://collector:4317", SampleRatio: 1},
		{Endpoint: "http://user:secret@collector:4318", SampleRatio: 1},
		{Endpoint: "http://collector:4318?x=1", SampleRatio: 1},
		{Endpoint: "http://collector:4318", SampleRatio: 1.5},
		{Endpoint: "http://collector:4318", SampleRatio: -0.1},
	} {
		if err := cfg.Validate(); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// TestInvalidUTF8StillExports: what a client or a gateway sent may be any
// bytes, and OTLP's strings must be UTF-8, or the whole batch of spans
// fails to encode; such text is exported with its bad bytes replaced.
func TestInvalidUTF8StillExports(t *testing.T) {
	col, url := startCollector(t)
	exp, err := otel.New(t.Context(), otel.Config{Endpoint: url, SampleRatio: 1})
	if err != nil {
		t.Fatal(err)
	}
	bad := "order-\xff\xfe"
	exp.Start(t.Context(), ports.SpanSubmit, ports.SpanSubject{IntentID: bad, SubmissionTarget: bad}).
		End(ports.SpanEnd{Err: errors.New("gateway answered HTTP 500: " + bad)})
	exp.Start(t.Context(), ports.SpanSubmit, ports.SpanSubject{IntentID: bad}).
		End(ports.SpanEnd{Err: errors.New("refused " + bad), Refused: true})
	if err := exp.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.names) != 2 {
		t.Errorf("the collector got %d spans, want both", len(col.names))
	}
}
