package tracingenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// DefaultServiceName is the service.name of the spans unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES names another.
const DefaultServiceName = "codeport"

// The exporters OTEL_TRACES_EXPORTER may name.
const (
	ExporterOTLP    = "otlp"
	ExporterConsole = "console"
	ExporterNone    = "none"
)

// The protocols OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL may name.
const (
	ProtocolGRPC         = "grpc"
	ProtocolHTTPProtobuf = "http/protobuf"
)

// Tracing is the tracer provider the environment asks for, or none. Its
// methods are safe on a Tracing that is off.
type Tracing struct {
	sdk       *sdktrace.TracerProvider
	exporters []string
	protocol  string
}

// Config is what New reads besides the environment.
type Config struct {
	// Getenv reads a variable; nil reads none (tracing is then off). The
	// SDK and its exporters read their own settings (endpoint, headers,
	// timeouts, batching, sampling, resource) from the process
	// environment, as the OpenTelemetry specification has them do.
	Getenv func(string) string
	// Console receives the spans of the console exporter; nil discards
	// them.
	Console io.Writer
}

// New builds the tracer provider the OTEL_* variables ask for:
//
//   - off, with no exporter, no goroutine and no cost, when
//     OTEL_SDK_DISABLED is true, when OTEL_TRACES_EXPORTER is none, or
//     when none of OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_ENDPOINT and
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set;
//   - OTEL_TRACES_EXPORTER is a comma-separated list of otlp and console
//     (otlp when only an endpoint is set);
//   - otlp speaks the protocol of OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
//     OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (the default) or grpc;
//   - the spans' resource is service.name "codeport", overridden by
//     OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
//
// Any other value is an error that names the variable, so a typo stops
// the program at start-up rather than losing its traces. Nothing is
// contacted: exporters connect when they first export. The caller shuts
// the result down.
func New(ctx context.Context, cfg Config) (*Tracing, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	exporters, protocol, err := Resolve(getenv)
	if err != nil || len(exporters) == 0 {
		return &Tracing{}, err
	}
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", DefaultServiceName)),
		// Later detectors win: the environment overrides the default.
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	for _, name := range exporters {
		var exp sdktrace.SpanExporter
		switch {
		case name == ExporterConsole:
			w := cfg.Console
			if w == nil {
				w = io.Discard
			}
			exp, err = stdouttrace.New(stdouttrace.WithWriter(w))
		case protocol == ProtocolGRPC:
			exp, err = otlptracegrpc.New(ctx)
		default:
			exp, err = otlptracehttp.New(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("trace exporter %s: %w", name, err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	return &Tracing{sdk: sdktrace.NewTracerProvider(opts...), exporters: exporters, protocol: protocol}, nil
}

// Resolve reads the variables that decide whether and how to export, and
// checks them: the exporters (none when tracing is off) and, when otlp is
// one, its protocol.
func Resolve(getenv func(string) string) (exporters []string, protocol string, err error) {
	if v := strings.TrimSpace(getenv("OTEL_SDK_DISABLED")); strings.EqualFold(v, "true") {
		return nil, "", nil
	}
	endpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	tracesEndpoint := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
	list := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	switch {
	case list != "":
		for e := range strings.SplitSeq(list, ",") {
			e = strings.ToLower(strings.TrimSpace(e))
			switch e {
			case ExporterOTLP, ExporterConsole:
				if !slices.Contains(exporters, e) {
					exporters = append(exporters, e)
				}
			case ExporterNone:
				if list != ExporterNone {
					return nil, "", fmt.Errorf("OTEL_TRACES_EXPORTER %q: none cannot be combined with other exporters", list)
				}
				return nil, "", nil
			default:
				return nil, "", fmt.Errorf("OTEL_TRACES_EXPORTER %q: unknown exporter %q (want otlp, console or none)", list, e)
			}
		}
	case endpoint != "" || tracesEndpoint != "":
		exporters = []string{ExporterOTLP}
	default:
		return nil, "", nil
	}
	if !slices.Contains(exporters, ExporterOTLP) {
		return exporters, "", nil
	}
	for _, v := range []struct{ name, value string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", endpoint},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", tracesEndpoint},
	} {
		if err := checkEndpoint(v.value); err != nil {
			return nil, "", fmt.Errorf("%s %q: %w", v.name, v.value, err)
		}
	}
	name := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	protocol = strings.TrimSpace(getenv(name))
	if protocol == "" {
		name = "OTEL_EXPORTER_OTLP_PROTOCOL"
		protocol = strings.TrimSpace(getenv(name))
	}
	switch protocol {
	case "":
		protocol = ProtocolHTTPProtobuf
	case ProtocolGRPC, ProtocolHTTPProtobuf:
	case "http/json":
		return nil, "", fmt.Errorf("%s %q: not supported (want grpc or http/protobuf)", name, protocol)
	default:
		return nil, "", fmt.Errorf("%s %q: unknown protocol (want grpc or http/protobuf)", name, protocol)
	}
	return exporters, protocol, nil
}

// checkEndpoint refuses an endpoint the exporters would otherwise drop
// with no more than a log line: it must be an http or https URL with a
// host.
func checkEndpoint(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		return errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("want an http:// or https:// URL")
	case u.Host == "":
		return errors.New("the URL has no host")
	}
	return nil
}

// TracerProvider is the provider, or nil when tracing is off: pass it on
// as is (to binding.Options, server.WithTracerProvider), since a nil
// provider turns tracing off there too.
func (t *Tracing) TracerProvider() trace.TracerProvider {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk
}

// Exporters names the exporters in use, none when tracing is off.
func (t *Tracing) Exporters() []string {
	if t == nil {
		return nil
	}
	return slices.Clone(t.exporters)
}

// Protocol is the OTLP protocol in use, "" without an otlp exporter.
func (t *Tracing) Protocol() string {
	if t == nil {
		return ""
	}
	return t.protocol
}

// Shutdown flushes the spans not yet exported and stops the exporters,
// within ctx's deadline. It does nothing when tracing is off.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}

// WorkerEnv picks from environ ("NAME=value" entries, as os.Environ gives)
// the OTEL_* ones, for processes this one starts to export their own spans
// the same way: nil unless tracing exports over OTLP. A console exporter
// is not passed on, since a worker's standard streams are not a console.
func (t *Tracing) WorkerEnv(environ []string) []string {
	if t == nil || !slices.Contains(t.exporters, ExporterOTLP) {
		return nil
	}
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(name, "OTEL_") && name != "OTEL_TRACES_EXPORTER" {
			out = append(out, kv)
		}
	}
	return append(out, "OTEL_TRACES_EXPORTER="+ExporterOTLP)
}
