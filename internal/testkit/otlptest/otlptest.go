// Package otlptest receives OTLP trace exports on loopback, over HTTP
// (http/protobuf) or gRPC, for the tests of the programs that export them:
// a real collector's side of the wire, keeping what arrived.
//
//	r := otlptest.NewHTTP(t)
//	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", r.Endpoint)
//	... export ...
//	spans := r.WaitFor(t, func(s []otlptest.Span) bool { return len(s) > 0 })
package otlptest

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is a span as it arrived.
type Span struct {
	Name         string
	TraceID      string // hex
	SpanID       string // hex
	ParentSpanID string // hex, "" for a root
	// Resource and Attributes hold every attribute, its value as text.
	Resource   map[string]string
	Attributes map[string]string
}

// Receiver keeps the spans exported to it.
type Receiver struct {
	// Endpoint is the base URL to export to (OTEL_EXPORTER_OTLP_ENDPOINT).
	Endpoint string

	mu    sync.Mutex
	spans []Span
}

// NewHTTP receives OTLP over HTTP (POST /v1/traces, protobuf) until t ends.
func NewHTTP(t testing.TB) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
			http.NotFound(w, req)
			return
		}
		b, err := io.ReadAll(io.LimitReader(req.Body, 64<<20))
		var msg coltrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&msg)
		out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	r.Endpoint = srv.URL
	return r
}

// NewGRPC receives OTLP over gRPC until t ends.
func NewGRPC(t testing.TB) *Receiver {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &Receiver{Endpoint: "http://" + ln.Addr().String()}
	s := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(s, grpcService{r: r})
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ln) }()
	t.Cleanup(func() { s.Stop(); <-done })
	return r
}

type grpcService struct {
	coltrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (g grpcService) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	g.r.add(req)
	return &coltrace.ExportTraceServiceResponse{}, nil
}

func (r *Receiver) add(msg *coltrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range msg.GetResourceSpans() {
		res := values(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r.spans = append(r.spans, Span{
					Name:         sp.GetName(),
					TraceID:      hex.EncodeToString(sp.GetTraceId()),
					SpanID:       hex.EncodeToString(sp.GetSpanId()),
					ParentSpanID: hex.EncodeToString(sp.GetParentSpanId()),
					Resource:     res,
					Attributes:   values(sp.GetAttributes()),
				})
			}
		}
	}
}

func values(kvs []*commonpb.KeyValue) map[string]string {
	m := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			m[kv.GetKey()] = v.GetStringValue()
		default:
			m[kv.GetKey()] = v.String()
		}
	}
	return m
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// WaitFor returns the spans received once done reports true of them; it
// fails t if that takes more than a minute (spans are exported in
// batches, on the exporter's schedule).
func (r *Receiver) WaitFor(t testing.TB, done func([]Span) bool) []Span {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		spans := r.Spans()
		if done(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for spans; got %d: %+v", len(spans), spans)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
