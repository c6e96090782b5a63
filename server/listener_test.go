package server_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/internal/testkit/metrictest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// A Guard applies the tenants as the handler's routes do: Handler lets a
// request through with its caller, or refuses it as they would; Port
// keeps each caller to its own sessions and limits.
func TestGuardAppliesTenants(t *testing.T) {
	ts, err := server.NewTenants(server.TenantsConfig{Tenants: defaultTenants()}) // a: 2 sessions, burst 2
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	g := server.NewGuard(server.WithTenants(ts), server.WithBearerToken("op-token"), server.WithMaxRequestBytes(100))

	callers := map[string]server.Caller{}
	srv := httptest.NewServer(g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := server.CallerOf(r.Context())
		if !ok {
			t.Error("a request let through without its caller")
		}
		callers[r.Header.Get("X-Name")] = c
		_, err := io.ReadAll(r.Body)
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})))
	defer srv.Close()
	do := func(name, key, body string, chunked bool) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		if chunked {
			req.ContentLength = -1
		}
		req.Header.Set("X-Name", name)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name, key, body string
		chunked         bool
		want            int
	}{
		{"none", "", "{}", false, 401},
		{"wrong", "nope", "{}", false, 401},
		{"a", keyA, "{}", false, 204},
		{"b", keyB, "{}", false, 204},
		{"op", "op-token", "{}", false, 204},
		{"announced", keyA, strings.Repeat("x", 101), false, 413},
		{"chunked", keyA, strings.Repeat("x", 101), true, 413},
	} {
		if got := do(tc.name, tc.key, tc.body, tc.chunked); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	if callers["a"].Tenant() != "a" || callers["b"].Tenant() != "b" || callers["op"].Tenant() != server.TokenTenant {
		t.Fatalf("callers: %+v", callers)
	}

	fp := newFakePort()
	p := g.Port(fp)
	ctx := context.Background()
	asA, asB := callers["a"].Context(ctx), callers["b"].Context(ctx)
	if _, err := p.CreateSession(ctx, port.CreateSessionRequest{}); !errors.Is(err, port.ErrUnauthorized) {
		t.Fatalf("no caller: %v", err)
	}
	s1, err := p.CreateSession(asA, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreateSession(asA, port.CreateSessionRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreateSession(asA, port.CreateSessionRequest{}); !errors.Is(err, port.ErrRateLimited) {
		t.Fatalf("a's third session: %v", err)
	}
	run := port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x"}
	if _, err := p.Execute(asB, s1.ID, run); !errors.Is(err, port.ErrSessionNotFound) {
		t.Fatalf("b on a's session: %v", err)
	}
	if _, err := p.ListFiles(asB, s1.ID, "."); !errors.Is(err, port.ErrSessionNotFound) {
		t.Fatalf("b listing a's session: %v", err)
	}
	if err := p.DestroySession(asB, s1.ID); err != nil {
		t.Fatalf("b destroying a's session, answered as an unknown one: %v", err)
	}
	if _, err := fp.ListFiles(ctx, s1.ID, "."); err != nil {
		t.Fatalf("a's session after b's destroy: %v", err)
	}
	for i := range 2 {
		if _, err := p.Execute(asA, s1.ID, run); err != nil {
			t.Fatalf("a's execution %d: %v", i+1, err)
		}
	}
	if _, err := p.Execute(asA, s1.ID, run); !errors.Is(err, port.ErrRateLimited) {
		t.Fatalf("a's third execution at once: %v", err)
	}
	if err := p.DestroySession(asA, s1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CreateSession(asA, port.CreateSessionRequest{}); err != nil {
		t.Fatalf("a's session after destroying one: %v", err)
	}

	// Without tenants the port is p itself.
	if server.NewGuard().Port(fp) != port.CodeExecutionPort(fp) {
		t.Error("without tenants, Port wraps the port")
	}
}

// A tenant's requests through a Guard are counted by the status they were
// answered with, the guard's own refusals and next's answers alike, and
// next may flush through it.
func TestGuardCountsTenantRequestsByStatus(t *testing.T) {
	reg := prometheus.NewRegistry()
	ts, err := server.NewTenants(server.TenantsConfig{Tenants: defaultTenants(), Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	g := server.NewGuard(server.WithTenants(ts), server.WithMaxRequestBytes(100))
	srv := httptest.NewServer(g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		switch r.Header.Get("X-Answer") {
		case "404":
			http.NotFound(w, r)
		case "stream":
			f, ok := w.(http.Flusher)
			if !ok {
				t.Error("next's writer is no http.Flusher")
				return
			}
			_, _ = io.WriteString(w, "data: 1\n\n")
			f.Flush()
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})))
	defer srv.Close()
	do := func(answer, body string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+keyA)
		req.Header.Set("X-Answer", answer)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		answer, body string
		want         int
	}{
		{"", "{}", 204},
		{"404", "{}", 404},
		{"404", "{}", 404},
		{"stream", "{}", 200},
		{"", strings.Repeat("x", 101), 413}, // refused by the guard, before next
	} {
		if got := do(c.answer, c.body); got != c.want {
			t.Fatalf("%q: %d, want %d", c.answer, got, c.want)
		}
	}
	for status, want := range map[string]float64{"204": 1, "404": 2, "200": 1, "413": 1} {
		if got := metrictest.Value(t, reg, "codeport_tenant_requests_total", "tenant", "a", "status", status); got != want {
			t.Errorf("tenant a's requests answered %s: %v, want %v", status, got, want)
		}
	}
}
