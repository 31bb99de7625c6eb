package command

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/submissionmanager/submission-manager/adapters/otel"
	"github.com/submissionmanager/submission-manager/ports"
)

// TracingConfig is OpenTelemetry tracing. It is off unless an OTLP
// endpoint is named: then no part of the SDK runs and every span is a
// ports.NopTracer span, while the traceparent a client sends is still kept
// with its intent and sent on every gateway call of it. See
// docs/operations.md, "Tracing".
type TracingConfig struct {
	// OTLPEndpoint is the collector's OTLP/HTTP base URL; empty turns
	// tracing off.
	OTLPEndpoint string
	// SampleRatio is the share of new traces recorded (submissions that
	// came without a traceparent); every other span follows the sampling
	// decision of the trace it belongs to.
	SampleRatio float64
}

// DefaultTracingConfig: tracing off; when turned on, every new trace kept.
func DefaultTracingConfig() TracingConfig { return TracingConfig{SampleRatio: 1} }

// addTracingFlags registers the tracing flags on fs over c.
func addTracingFlags(fs *flag.FlagSet, c *TracingConfig) {
	fs.StringVar(&c.OTLPEndpoint, "otlp-endpoint", c.OTLPEndpoint,
		"OpenTelemetry collector's OTLP/HTTP base URL, e.g. http://otel-collector:4318 (spans go to its /v1/traces); unset, tracing is off")
	fs.Float64Var(&c.SampleRatio, "trace-sample-ratio", c.SampleRatio,
		"share of new traces recorded, 0 to 1 (with --otlp-endpoint); a submission's traceparent decides for its own trace")
}

// Validate checks the tracing settings; every message names its flag.
func (c TracingConfig) Validate() error {
	var errs []error
	if c.OTLPEndpoint != "" {
		if err := otel.CheckEndpoint(c.OTLPEndpoint); err != nil {
			errs = append(errs, fmt.Errorf("--otlp-endpoint: %w", err))
		}
	}
	if err := otel.CheckSampleRatio(c.SampleRatio); err != nil {
		errs = append(errs, fmt.Errorf("--trace-sample-ratio: %w", err))
	}
	return errors.Join(errs...)
}

// tracing is the tracer an instance runs with, and how to flush it.
type tracing struct {
	tracer ports.Tracer
	// exporter is nil when tracing is off.
	exporter *otel.Exporter
}

// tracingFlushTimeout bounds the export of the spans still queued at exit.
const tracingFlushTimeout = 5 * time.Second

// newTracing starts the OTLP exporter when tracing is on.
func (c TracingConfig) newTracing(ctx context.Context, holderID string, log *slog.Logger) (tracing, error) {
	if c.OTLPEndpoint == "" {
		return tracing{tracer: ports.NopTracer{}}, nil
	}
	exp, err := otel.New(ctx, otel.Config{
		Endpoint: c.OTLPEndpoint, SampleRatio: c.SampleRatio,
		ServiceVersion: moduleVersion(), InstanceID: holderID, Logger: log,
	})
	if err != nil {
		return tracing{}, fmt.Errorf("--otlp-endpoint %s: %w", c.OTLPEndpoint, err)
	}
	return tracing{tracer: exp, exporter: exp}, nil
}

// close exports the spans still queued and stops the exporter.
func (t tracing) close() error {
	if t.exporter == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
	defer cancel()
	if err := t.exporter.Shutdown(ctx); err != nil {
		return fmt.Errorf("flushing spans: %w", err)
	}
	return nil
}

// moduleVersion is the version the binary was built at, when the build
// recorded one.
func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return ""
}
