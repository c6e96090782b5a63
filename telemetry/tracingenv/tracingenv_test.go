package tracingenv_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/otlptest"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/telemetry/tracingenv"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		name      string
		env       map[string]string
		exporters []string
		protocol  string
		err       string // a substring of the error, "" for none
	}{
		{name: "nothing set is off"},
		{name: "unrelated variables are off", env: map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}},
		{name: "an endpoint is otlp over http/protobuf", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
			exporters: []string{"otlp"}, protocol: "http/protobuf"},
		{name: "a traces endpoint is otlp", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://collector/v1/traces"},
			exporters: []string{"otlp"}, protocol: "http/protobuf"},
		{name: "grpc", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
			exporters: []string{"otlp"}, protocol: "grpc"},
		{name: "the traces protocol wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"},
			exporters: []string{"otlp"}, protocol: "http/protobuf"},
		{name: "console", env: map[string]string{"OTEL_TRACES_EXPORTER": "console"}, exporters: []string{"console"}},
		{name: "a list", env: map[string]string{"OTEL_TRACES_EXPORTER": " OTLP , console,otlp"}, exporters: []string{"otlp", "console"}, protocol: "http/protobuf"},
		{name: "none is off", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}},
		{name: "disabled is off", env: map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}},
		{name: "disabled=false is not off", env: map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "console"}, exporters: []string{"console"}},
		{name: "an unknown exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER "zipkin": unknown exporter "zipkin"`},
		{name: "none with another", env: map[string]string{"OTEL_TRACES_EXPORTER": "none,console"}, err: "none cannot be combined"},
		{name: "an unknown protocol", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "thrift"}, err: `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL "thrift": unknown protocol`},
		{name: "http/json", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: "OTEL_EXPORTER_OTLP_PROTOCOL \"http/json\": not supported"},
		{name: "an endpoint without a scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"}, err: "OTEL_EXPORTER_OTLP_ENDPOINT \"collector:4317\""},
		{name: "an endpoint without a host", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http:///v1/traces"}, err: "has no host"},
	} {
		t.Run(c.name, func(t *testing.T) {
			exporters, protocol, err := tracingenv.Resolve(env(c.env))
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			case err != nil:
				t.Fatalf("error %v", err)
			}
			if !slices.Equal(exporters, c.exporters) || protocol != c.protocol {
				t.Errorf("exporters %q protocol %q, want %q %q", exporters, protocol, c.exporters, c.protocol)
			}
		})
	}
}

func TestOffStartsNothing(t *testing.T) {
	for _, e := range []map[string]string{nil, {"OTEL_TRACES_EXPORTER": "none"}, {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}} {
		tr, err := tracingenv.New(context.Background(), tracingenv.Config{Getenv: env(e)})
		if err != nil {
			t.Fatal(err)
		}
		if tr.TracerProvider() != nil || tr.Exporters() != nil || tr.WorkerEnv([]string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://x"}) != nil {
			t.Errorf("%v: tracing is on", e)
		}
		if err := tr.Shutdown(context.Background()); err != nil {
			t.Errorf("%v: Shutdown %v", e, err)
		}
	}
}

func TestABadValueIsAnError(t *testing.T) {
	tr, err := tracingenv.New(context.Background(), tracingenv.Config{Getenv: env(map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"})})
	if err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_EXPORTER") {
		t.Fatalf("got %v, %v", tr, err)
	}
}

// export makes one span with the provider the environment asks for and
// shuts it down, which flushes it.
func export(t *testing.T, name string) *tracingenv.Tracing {
	t.Helper()
	var console bytes.Buffer
	tr, err := tracingenv.New(context.Background(), tracingenv.Config{Getenv: os.Getenv, Console: &console})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.TracerProvider().Tracer("test").Start(context.Background(), name)
	span.End()
	ctx, cancel := testwait.Context(t)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	return tr
}

func TestOTLPOverHTTPAndGRPC(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(protocol, func(t *testing.T) {
			r := otlptest.NewHTTP(t)
			if protocol == "grpc" {
				r = otlptest.NewGRPC(t)
			}
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.Endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
			tr := export(t, "span-"+protocol)
			if tr.Protocol() != protocol {
				t.Errorf("protocol %q", tr.Protocol())
			}
			spans := r.Spans()
			if len(spans) != 1 || spans[0].Name != "span-"+protocol {
				t.Fatalf("received %+v", spans)
			}
			if got := spans[0].Resource["service.name"]; got != "codeport" {
				t.Errorf("service.name %q, want codeport", got)
			}
			if got := spans[0].Resource["deployment.environment"]; got != "test" {
				t.Errorf("OTEL_RESOURCE_ATTRIBUTES not applied: %v", spans[0].Resource)
			}
		})
	}
}

func TestServiceNameFromTheEnvironment(t *testing.T) {
	r := otlptest.NewHTTP(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", r.Endpoint+"/v1/traces")
	t.Setenv("OTEL_SERVICE_NAME", "gateway-7")
	export(t, "named")
	spans := r.Spans()
	if len(spans) != 1 || spans[0].Resource["service.name"] != "gateway-7" {
		t.Fatalf("received %+v", spans)
	}
}

func TestConsole(t *testing.T) {
	var console bytes.Buffer
	tr, err := tracingenv.New(context.Background(), tracingenv.Config{
		Getenv:  env(map[string]string{"OTEL_TRACES_EXPORTER": "console"}),
		Console: &console,
	})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.TracerProvider().Tracer("test").Start(context.Background(), "printed-span")
	span.End()
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(console.String(), `"Name":"printed-span"`) {
		t.Errorf("console got %q", console.String())
	}
	if tr.WorkerEnv([]string{"OTEL_TRACES_EXPORTER=console"}) != nil {
		t.Error("a console exporter was handed to workers")
	}
}

func TestWorkerEnv(t *testing.T) {
	tr, err := tracingenv.New(context.Background(), tracingenv.Config{Getenv: env(map[string]string{
		"OTEL_TRACES_EXPORTER": "otlp,console", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
	})})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	got := tr.WorkerEnv([]string{"HOME=/root", "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER=otlp,console", "OTEL_SERVICE_NAME=gw", "CODEPORT_AUTH_TOKEN=secret"})
	want := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_SERVICE_NAME=gw", "OTEL_TRACES_EXPORTER=otlp"}
	if !slices.Equal(got, want) {
		t.Errorf("worker env %q, want %q", got, want)
	}
}
