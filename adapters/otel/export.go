package otel

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	otelapi "go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The batching of exported spans. At full speed the leader makes three
// spans per attempt (several thousand attempts a second), so spans leave
// in large batches, often; a queue that is full drops spans rather than
// slow an attempt down (the SDK counts what it dropped), and a sample
// ratio below 1 is the way to trace a busy service completely enough.
const (
	maxQueueSize       = 16384
	maxExportBatchSize = 2048
	batchTimeout       = time.Second
	// maxAttributeLength bounds a string attribute (an intentId is at most
	// 255 characters; an error message quoting a gateway's answer may be
	// longer): spans stay small whatever a client or a gateway sent.
	maxAttributeLength = 1024
)

// Config says where spans go and which traces are kept.
type Config struct {
	// Endpoint is the collector's OTLP/HTTP base URL, such as
	// "http://otel-collector:4318": spans are posted to its /v1/traces,
	// as OTEL_EXPORTER_OTLP_ENDPOINT means. http:// sends them in the
	// clear, https:// over TLS. Required.
	Endpoint string
	// SampleRatio is the share of new traces (submissions that came
	// without a traceparent) that are recorded, from 0 to 1. Every other
	// span follows its parent's sampling decision.
	SampleRatio float64
	// ServiceVersion and InstanceID describe this process in the spans'
	// resource (service.version, service.instance.id: the lease holder id).
	ServiceVersion, InstanceID string
	// Logger receives the exporter's failures (a collector that is down);
	// nil means slog.Default().
	Logger *slog.Logger
}

// ServiceName is the service.name of every span's resource.
const ServiceName = "submission-manager"

// Validate checks the configuration.
func (c Config) Validate() error {
	return errors.Join(CheckEndpoint(c.Endpoint), CheckSampleRatio(c.SampleRatio))
}

// CheckEndpoint says whether endpoint can be Config.Endpoint.
func CheckEndpoint(endpoint string) error {
	_, err := tracesURL(endpoint)
	return err
}

// CheckSampleRatio says whether ratio can be Config.SampleRatio.
func CheckSampleRatio(ratio float64) error {
	if ratio < 0 || ratio > 1 || ratio != ratio {
		return fmt.Errorf("the sample ratio must be between 0 and 1, got %v", ratio)
	}
	return nil
}

// tracesURL is the URL spans are posted to: /v1/traces under the endpoint.
func tracesURL(endpoint string) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("the OTLP endpoint %q must be an http:// or https:// base URL without credentials, query or fragment, such as http://otel-collector:4318", endpoint)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/traces"
	u.RawPath = ""
	return u.String(), nil
}

// Exporter is a Tracer whose spans are exported over OTLP/HTTP. Shut it
// down at exit: that flushes the spans still queued.
type Exporter struct {
	*Tracer
	provider *sdktrace.TracerProvider
}

// New starts the OTLP exporter and the SDK's tracer provider behind a
// Tracer. It connects to nothing until the first batch of spans is due,
// so a collector that is not up yet delays no start; export failures are
// logged and the spans of that batch are lost, never the service's work.
// The standard OTEL_EXPORTER_OTLP_HEADERS (a collector's credentials),
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES variables apply.
func New(ctx context.Context, cfg Config) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	endpoint, _ := tracesURL(cfg.Endpoint) // checked by Validate
	exporter, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(endpoint))
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter: %w", err)
	}
	res, err := newResource(cfg)
	if err != nil {
		return nil, err
	}
	log := cmp.Or(cfg.Logger, slog.Default())
	// The SDK reports export failures through the process-wide handler;
	// this is the only OpenTelemetry user in the process.
	otelapi.SetErrorHandler(otelapi.ErrorHandlerFunc(func(err error) {
		log.Warn("trace_export_failed", "endpoint", endpoint, "error", err.Error())
	}))
	limits := sdktrace.NewSpanLimits()
	limits.AttributeValueLengthLimit = maxAttributeLength
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanLimits(limits),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.SampleRatio))),
		sdktrace.WithBatcher(exporter,
			sdktrace.WithMaxQueueSize(maxQueueSize),
			sdktrace.WithMaxExportBatchSize(maxExportBatchSize),
			sdktrace.WithBatchTimeout(batchTimeout)),
	)
	return &Exporter{Tracer: NewTracer(provider), provider: provider}, nil
}

// newResource describes this process: the SDK's defaults, then the
// service's name, version and instance, then what the standard
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES variables say, which win.
func newResource(cfg Config) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", ServiceName)}
	if cfg.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", cfg.ServiceVersion))
	}
	if cfg.InstanceID != "" {
		attrs = append(attrs, attribute.String("service.instance.id", cfg.InstanceID))
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attrs...))
	if err == nil {
		res, err = resource.Merge(res, resource.Environment())
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP resource: %w", err)
	}
	return res, nil
}

// Shutdown exports the spans still queued, within ctx, and stops the
// exporter. Spans started afterwards are dropped.
func (e *Exporter) Shutdown(ctx context.Context) error {
	return e.provider.Shutdown(ctx)
}
