package e2e

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// exportedSpan is one span as an OTLP collector received it, with the ids
// in the hex spelling of a traceparent.
type exportedSpan struct {
	traceID, spanID, parentID string
	name                      string
	kind                      tracev1.Span_SpanKind
	failed                    bool
	// attrs are the span's attributes, each value spelled as a string.
	attrs map[string]string
	// instance is the service.instance.id of the process that exported it.
	instance string
}

// otlpCollector is an OpenTelemetry collector on loopback: it takes
// OTLP/HTTP protobuf exports at POST /v1/traces, as a real collector does,
// and keeps every span it was sent.
type otlpCollector struct {
	url string
	mu  sync.Mutex
	// spans is every span received, in order of arrival.
	spans []exportedSpan
	// changed is closed, and replaced, whenever spans arrive, so that a
	// test waits for them without sleeping.
	changed chan struct{}
}

// startCollector starts a collector for one test; it stops when the test
// ends.
func startCollector(t *testing.T) *otlpCollector {
	t.Helper()
	c := &otlpCollector{changed: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(c.export))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// export serves one export request, refusing anything that is not an
// OTLP protobuf export to /v1/traces, as the exporter must send.
func (c *otlpCollector) export(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if err == nil {
		err = proto.Unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, "unreadable export: "+err.Error(), http.StatusBadRequest)
		return
	}
	var got []exportedSpan
	for _, rs := range req.GetResourceSpans() {
		instance := attributes(rs.GetResource().GetAttributes())["service.instance.id"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				got = append(got, exportedSpan{
					traceID:  hex.EncodeToString(s.GetTraceId()),
					spanID:   hex.EncodeToString(s.GetSpanId()),
					parentID: hex.EncodeToString(s.GetParentSpanId()),
					name:     s.GetName(),
					kind:     s.GetKind(),
					failed:   s.GetStatus().GetCode() == tracev1.Status_STATUS_CODE_ERROR,
					attrs:    attributes(s.GetAttributes()),
					instance: instance,
				})
			}
		}
	}
	c.mu.Lock()
	c.spans = append(c.spans, got...)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// attributes spells OTLP attributes as strings.
func attributes(kvs []*commonv1.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *commonv1.AnyValue_StringValue:
			out[kv.GetKey()] = v.StringValue
		case *commonv1.AnyValue_IntValue:
			out[kv.GetKey()] = strconv.FormatInt(v.IntValue, 10)
		case *commonv1.AnyValue_BoolValue:
			out[kv.GetKey()] = strconv.FormatBool(v.BoolValue)
		default:
			out[kv.GetKey()] = kv.GetValue().String()
		}
	}
	return out
}

// received returns the spans of trace received so far.
func (c *otlpCollector) received(traceID string) []exportedSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []exportedSpan
	for _, s := range c.spans {
		if s.traceID == traceID {
			out = append(out, s)
		}
	}
	return out
}

// waitFor waits until the spans of trace received satisfy done, and
// returns them; it fails the test after terminalWait. The exporter sends
// a batch every second, so spans arrive while the service runs.
func (c *otlpCollector) waitFor(t *testing.T, traceID, what string, done func([]exportedSpan) bool) []exportedSpan {
	t.Helper()
	deadline := time.NewTimer(terminalWait)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		changed := c.changed
		c.mu.Unlock()
		spans := c.received(traceID)
		if done(spans) {
			return spans
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("the collector did not receive %s of trace %s within %s; it has %s", what, traceID, terminalWait, describeSpans(spans))
		}
	}
}

// describeSpans lists spans for a failure message.
func describeSpans(spans []exportedSpan) string {
	out := ""
	for _, s := range spans {
		out += "\n  " + s.name + " span " + s.spanID + " parent " + s.parentID + " of " + s.instance
	}
	if out == "" {
		return "no span"
	}
	return out
}
