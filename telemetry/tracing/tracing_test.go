package tracing_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
	"github.com/codeport/codeport/telemetry/tracing"
)

// newExporter is a tracer provider that exports each span, synchronously,
// to an in-memory exporter as it ends.
func newExporter(t *testing.T) (*sdktrace.TracerProvider, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp, exp
}

func attr(s tracetest.SpanStub, key attribute.Key) attribute.Value {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

// find returns the spans named name (and of the kind, when not unspecified).
func find(spans tracetest.SpanStubs, name string, kind trace.SpanKind) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name && (kind == trace.SpanKindUnspecified || s.SpanKind == kind) {
			out = append(out, s)
		}
	}
	return out
}

func one(t *testing.T, spans tracetest.SpanStubs, name string, kind trace.SpanKind) tracetest.SpanStub {
	t.Helper()
	found := find(spans, name, kind)
	if len(found) != 1 {
		var names []string
		for _, s := range spans {
			names = append(names, s.Name+"/"+s.SpanKind.String())
		}
		t.Fatalf("%d spans %q of kind %v, want 1; spans: %v", len(found), name, kind, names)
	}
	return found[0]
}

func TestCallSpansOverTheWasmAdapter(t *testing.T) {
	tp, exp := newExporter(t)
	p := wasmtest.New(t, nil, port.WithObserver(tracing.NewObserver(tp)))
	ctx := context.Background()
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ok, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('ab' * 3)", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	failed, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import sys; sys.stderr.write('x'); raise SystemExit(3)"})
	if err != nil || failed.ReturnCode != 3 {
		t.Fatalf("SystemExit(3): %+v, %v", failed, err)
	}
	slow, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "while True: pass", Timeout: time.Second})
	if err != nil || slow.Outcome != port.OutcomeTimedOut {
		t.Fatalf("endless loop: %+v, %v", slow, err)
	}
	if _, err := p.Execute(ctx, "no-such-session", port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "true"}); !errors.Is(err, port.ErrSessionNotFound) {
		t.Fatalf("unknown session: %v", err)
	}

	spans := exp.GetSpans()
	create := one(t, spans, "create_session", trace.SpanKindInternal)
	if attr(create, tracing.AttrAdapter).AsString() != "wasm" || attr(create, tracing.AttrSessionID).AsString() != s.ID {
		t.Errorf("create_session attributes %v", create.Attributes)
	}
	execs := find(spans, "execute", trace.SpanKindInternal)
	if len(execs) != 4 {
		t.Fatalf("%d execute spans, want 4", len(execs))
	}
	for i, want := range []struct {
		res     port.Result
		timeout int64
	}{{ok, 20000}, {failed, 0}, {slow, 1000}} {
		sp := execs[i]
		checks := []struct {
			key  attribute.Key
			got  any
			want any
		}{
			{tracing.AttrAdapter, attr(sp, tracing.AttrAdapter).AsString(), "wasm"},
			{tracing.AttrSessionID, attr(sp, tracing.AttrSessionID).AsString(), s.ID},
			{tracing.AttrTool, attr(sp, tracing.AttrTool).AsString(), "code_execution"},
			{tracing.AttrOutcome, attr(sp, tracing.AttrOutcome).AsString(), string(want.res.Outcome)},
			{tracing.AttrReturnCode, attr(sp, tracing.AttrReturnCode).AsInt64(), int64(want.res.ReturnCode)},
			{tracing.AttrStateLost, attr(sp, tracing.AttrStateLost).AsBool(), want.res.StateLost},
			{tracing.AttrOutputBytes, attr(sp, tracing.AttrOutputBytes).AsInt64(), int64(len(want.res.Stdout) + len(want.res.Stderr))},
		}
		if want.timeout > 0 {
			checks = append(checks, struct {
				key  attribute.Key
				got  any
				want any
			}{tracing.AttrTimeoutMS, attr(sp, tracing.AttrTimeoutMS).AsInt64(), want.timeout})
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Errorf("execution %d: %s = %v, want %v", i, c.key, c.got, c.want)
			}
		}
		if d := attr(sp, tracing.AttrDurationMS).AsFloat64(); d <= 0 {
			t.Errorf("execution %d: duration %v", i, d)
		}
		if sp.Status.Code == codes.Error {
			t.Errorf("execution %d: a program's own failure marked the span failed", i)
		}
	}
	if !ok.StateLost && attr(execs[0], tracing.AttrOutputBytes).AsInt64() != int64(len("ababab\n")) {
		t.Errorf("output bytes %d", attr(execs[0], tracing.AttrOutputBytes).AsInt64())
	}
	refused := execs[3]
	if refused.Status.Code != codes.Error || attr(refused, tracing.AttrErrorCode).AsString() != "session_not_found" {
		t.Errorf("refused call: status %v, attributes %v", refused.Status, refused.Attributes)
	}
}

func TestANilProviderTracesNothing(t *testing.T) {
	o := tracing.NewObserver(nil)
	ctx := context.Background()
	c := &port.Call{Op: port.OpExecute, Started: time.Now()}
	if got := o.StartCall(ctx, c); got != ctx {
		t.Error("a nil provider's observer changed the context")
	}
	o.EndCall(ctx, c) // nothing to end, and no panic
}

// twoCodeports is a client's port on codeport A, whose remote adapter
// forwards to codeport B, which runs the wasm adapter. Each traces into
// an exporter of its own, so only the wire can join their traces.
type twoCodeports struct {
	client     *port.Port
	expA, expB *tracetest.InMemoryExporter
	srvA, srvB *httptest.Server
}

func newTwoCodeports(t *testing.T) *twoCodeports {
	t.Helper()
	tpA, expA := newExporter(t)
	tpB, expB := newExporter(t)
	b := wasmtest.New(t, nil, port.WithObserver(tracing.NewObserver(tpB)))
	srvB := httptest.NewServer(server.NewHandler(b, server.WithTracerProvider(tpB)))
	t.Cleanup(srvB.Close)
	a, err := httpadapter.New(httpadapter.NewConfig(srvB.URL).WithTracerProvider(tpA), port.WithObserver(tracing.NewObserver(tpA)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	srvA := httptest.NewServer(server.NewHandler(a, server.WithTracerProvider(tpA)))
	t.Cleanup(srvA.Close)
	client, err := httpadapter.New(httpadapter.NewConfig(srvA.URL))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return &twoCodeports{client: client, expA: expA, expB: expB, srvA: srvA, srvB: srvB}
}

// spans waits for every request to have been answered (so every span
// has ended) and returns the spans of A and of B.
func (c *twoCodeports) spans() (a, b tracetest.SpanStubs) {
	c.srvA.Close()
	c.srvB.Close()
	return c.expA.GetSpans(), c.expB.GetSpans()
}

// TestTraceCrossesIntoASecondCodeport: the spans B records continue the
// trace of A's request, under A's client span for the call.
func TestTraceCrossesIntoASecondCodeport(t *testing.T) {
	c := newTwoCodeports(t)
	ctx := context.Background()
	s, err := c.client.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.client.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"}); err != nil {
		t.Fatal(err)
	}
	a, b := c.spans()
	for _, route := range []struct{ route, op string }{{"POST /sessions", "create_session"}, {"POST /sessions/{id}/exec", "execute"}} {
		t.Run(route.op, func(t *testing.T) {
			serverA := one(t, a, route.route, trace.SpanKindServer)
			callA := one(t, a, route.op, trace.SpanKindInternal)
			clientA := one(t, a, route.route, trace.SpanKindClient)
			serverB := one(t, b, route.route, trace.SpanKindServer)
			callB := one(t, b, route.op, trace.SpanKindInternal)
			traceID := serverA.SpanContext.TraceID()
			chain := []struct {
				name          string
				span, parent  tracetest.SpanStub
				remote        bool
				wantedAdapter string
			}{
				{"A's call under A's request", callA, serverA, false, "http"},
				{"A's client span under A's call", clientA, callA, false, ""},
				{"B's request under A's client span", serverB, clientA, true, ""},
				{"B's call under B's request", callB, serverB, false, "wasm"},
			}
			for _, l := range chain {
				if l.span.SpanContext.TraceID() != traceID {
					t.Errorf("%s: trace %s, want %s", l.name, l.span.SpanContext.TraceID(), traceID)
				}
				if l.span.Parent.SpanID() != l.parent.SpanContext.SpanID() || l.span.Parent.IsRemote() != l.remote {
					t.Errorf("%s: parent %s (remote %v), want %s (remote %v)", l.name,
						l.span.Parent.SpanID(), l.span.Parent.IsRemote(), l.parent.SpanContext.SpanID(), l.remote)
				}
				if l.wantedAdapter != "" && attr(l.span, tracing.AttrAdapter).AsString() != l.wantedAdapter {
					t.Errorf("%s: adapter %q", l.name, attr(l.span, tracing.AttrAdapter).AsString())
				}
			}
			if serverA.Parent.IsValid() {
				t.Errorf("A's request span has a parent %s: its client sent no trace", serverA.Parent.SpanID())
			}
		})
	}
}

// TestSpansHoldNoCodeOutputPathsOrContents drives every kind of call with
// marked code, commands, editor text, paths and file contents through
// both codeports, and looks for the marks in everything every span
// records: name, attributes, events, links and status.
func TestSpansHoldNoCodeOutputPathsOrContents(t *testing.T) {
	c := newTwoCodeports(t)
	ctx := context.Background()
	s, err := c.client.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	marks := []string{"CODEMARK7f3a", "OUTMARK9c2e", "BASHCMD4a1", "BASHOUT5e7", "dirmark5b1", "filemark8d4", "CONTENTMARK2e6", "editmark3c9", "EDITTEXT1d2", "ERRMARK6b0"}
	calls := []port.ExecuteRequest{
		{Tool: port.ToolCodeExecution, Code: "# CODEMARK7f3a\nprint('OUT' + 'MARK9c2e')"},
		{Tool: port.ToolCodeExecution, Code: "raise ValueError('ERR' + 'MARK6b0')"},
		{Tool: port.ToolBashCodeExecution, Command: "echo BASHCMD4a1 >/dev/null; echo BASH''OUT5e7"},
		{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorCreate, Path: "editmark3c9.py", FileText: ptr("EDITTEXT1d2\n")}},
		{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorView, Path: "editmark3c9.py"}},
	}
	for _, req := range calls {
		res, err := c.client.Execute(ctx, s.ID, req)
		if err != nil {
			t.Fatalf("%s: %v", req.Tool, err)
		}
		if req.Tool == port.ToolCodeExecution && !strings.Contains(res.Stdout+res.Stderr, "MARK") {
			t.Fatalf("the marked output did not come back: %+v", res)
		}
	}
	// Streamed output (Server-Sent Events through both traced handlers).
	var streamed strings.Builder
	res, err := c.client.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code:     "import sys\nfor i in range(3):\n    print('OUT' + 'MARK9c2e', i); sys.stdout.flush()",
		OnOutput: func(_ port.Stream, b []byte) { streamed.Write(b) }})
	if err != nil || streamed.String() != res.Stdout || !strings.Contains(res.Stdout, "OUTMARK9c2e 2") {
		t.Fatalf("streamed %q, result %+v, %v", streamed.String(), res, err)
	}
	path := "dirmark5b1/filemark8d4.txt"
	if _, err := c.client.PutFile(ctx, s.ID, path, strings.NewReader("CONTENTMARK2e6")); err != nil {
		t.Fatal(err)
	}
	rc, _, err := c.client.GetFile(ctx, s.ID, path)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(rc); string(b) != "CONTENTMARK2e6" {
		t.Fatalf("read back %q", b)
	}
	_ = rc.Close()
	if _, err := c.client.ListFiles(ctx, s.ID, "dirmark5b1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.client.GetFile(ctx, s.ID, "dirmark5b1/missing-filemark8d4"); !errors.Is(err, port.ErrFileNotFound) {
		t.Fatalf("missing file: %v", err)
	}
	if err := c.client.DestroySession(ctx, s.ID); err != nil {
		t.Fatal(err)
	}

	a, b := c.spans()
	if len(a) == 0 || len(b) == 0 {
		t.Fatalf("%d spans in A, %d in B", len(a), len(b))
	}
	for side, spans := range map[string]tracetest.SpanStubs{"A": a, "B": b} {
		for _, sp := range spans {
			for _, text := range recorded(sp) {
				for _, m := range marks {
					if strings.Contains(strings.ToLower(text), strings.ToLower(m)) {
						t.Errorf("%s's span %q records %q: %q", side, sp.Name, m, text)
					}
				}
			}
		}
	}
}

// recorded is every string a span carries.
func recorded(s tracetest.SpanStub) []string {
	out := []string{s.Name, s.Status.Description}
	kvs := func(list []attribute.KeyValue) {
		for _, kv := range list {
			out = append(out, string(kv.Key), kv.Value.String())
		}
	}
	kvs(s.Attributes)
	for _, e := range s.Events {
		out = append(out, e.Name)
		kvs(e.Attributes)
	}
	for _, l := range s.Links {
		kvs(l.Attributes)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
