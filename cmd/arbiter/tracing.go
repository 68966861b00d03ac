package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/voicearbiter/arbiter/internal/buildinfo"
)

// Tracing is configured by the standard OpenTelemetry environment variables, and off
// unless one of them asks for an exporter:
//
//   - OTEL_TRACES_EXPORTER: otlp, console (spans as JSON on stdout), both
//     ("otlp,console"), or none. Unset: otlp when an OTLP endpoint is set
//     (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), else none:
//     unlike the specification's default (otlp), an arbiter with no OTEL_* variable
//     exports nothing and runs no tracer at all.
//   - OTEL_SDK_DISABLED=true turns it off whatever the rest says.
//   - OTEL_EXPORTER_OTLP_PROTOCOL (or _TRACES_PROTOCOL): http/protobuf (the default,
//     port 4318) or grpc (port 4317). The exporters read the rest themselves:
//     OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT, _HEADERS, _TIMEOUT, _COMPRESSION,
//     _CERTIFICATE, _CLIENT_CERTIFICATE, _CLIENT_KEY, _INSECURE.
//   - OTEL_SERVICE_NAME (default: arbiter) and OTEL_RESOURCE_ATTRIBUTES name the
//     service; service.version is the build's version.
//   - The SDK reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (default
//     parentbased_always_on: a caller's sampled flag is followed, and a request
//     without trace context is sampled), OTEL_BSP_* (the batch span processor) and
//     OTEL_SPAN_*_LIMIT.
//
// Incoming W3C trace context (traceparent, tracestate) and baggage are accepted either
// way (server.Propagator); OTEL_PROPAGATORS is not read.

// tracing is the tracer provider serve runs with: nil when tracing is off.
type tracing struct {
	tp        *sdktrace.TracerProvider
	exporters []string
}

// newTracing reads the OTEL_* variables from getenv and builds the tracer provider
// they ask for (nil tp when off), exporting spans to stdout for console. Export
// errors are logged at warn. Errors: an exporter or protocol it does not know.
func newTracing(ctx context.Context, getenv func(string) string, stdout io.Writer, log *slog.Logger) (*tracing, error) {
	exporters, err := tracesExporters(getenv)
	if err != nil || len(exporters) == 0 {
		return &tracing{}, err
	}
	opts := []sdktrace.TracerProviderOption{}
	for _, name := range exporters {
		var exp sdktrace.SpanExporter
		switch name {
		case "otlp":
			exp, err = otlpExporter(ctx, getenv)
		case "console":
			exp, err = stdouttrace.New(stdouttrace.WithWriter(stdout))
		}
		if err != nil {
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER %s: %w", name, err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "arbiter"), attribute.String("service.version", buildinfo.Get().Version)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES: over the defaults
	)
	if err != nil {
		log.Warn("opentelemetry resource", "err", err) // partial: still usable
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("opentelemetry", "err", err) }))
	tp := sdktrace.NewTracerProvider(append(opts, sdktrace.WithResource(res))...)
	return &tracing{tp: tp, exporters: exporters}, nil
}

// tracesExporters are the exporters the environment asks for (none: tracing off).
func tracesExporters(getenv func(string) string) ([]string, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	v := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	if v == "" {
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
			return []string{"otlp"}, nil
		}
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(v, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		switch name {
		case "none":
			return nil, nil
		case "otlp", "console":
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		default:
			return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: %q is not otlp, console or none", name)
		}
	}
	return out, nil
}

// otlpExporter is the OTLP exporter of OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL; it reads
// its endpoint, headers, TLS and timeouts from the environment itself. It does not
// connect until the first export.
func otlpExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	proto := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if proto == "" {
		proto = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch proto {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	}
	return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: %q is not http/protobuf or grpc", proto)
}

// shutdown flushes the spans still batched and stops the exporters, within ctx.
func (t *tracing) shutdown(ctx context.Context) error {
	if t == nil || t.tp == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// name says what serve traces to, for its first log line: "off", or the exporters.
func (t *tracing) name() string {
	if t == nil || t.tp == nil {
		return "off"
	}
	return strings.Join(t.exporters, ",")
}
