package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/metrictest"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// Keys of the tenants of these tests: 32 characters, as a deployment's
// would be (random ones).
const (
	keyA  = "tenant-a-key-0123456789abcdefghi"
	keyA2 = "tenant-a-rotated-key-0123456789a"
	keyB  = "tenant-b-key-0123456789abcdefghi"
	token = "operator-token-0123456789abcdefg"
)

// testClock is a clock a test moves; safe for the handler's goroutines.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// tenantHarness serves fp with tenants a (two keys) and b, built from
// cfg's tenants or these defaults.
type tenantHarness struct {
	*harness
	ts    *server.Tenants
	reg   *prometheus.Registry
	clock *testClock
}

func defaultTenants() []server.Tenant {
	return []server.Tenant{
		{Name: "a", Keys: [][32]byte{server.KeyDigest(keyA), server.KeyDigest(keyA2)}, MaxSessions: 2, ExecutionsPerSecond: 1, Burst: 2},
		{Name: "b", Keys: [][32]byte{server.KeyDigest(keyB)}},
	}
}

func newTenantHarness(t *testing.T, fp *fakePort, cfg server.TenantsConfig, opts ...server.Option) *tenantHarness {
	t.Helper()
	if fp == nil {
		fp = newFakePort()
	}
	return newTenantHarnessOver(t, fp, fp, cfg, opts...)
}

// newTenantHarnessOver serves p, whose sessions fp holds.
func newTenantHarnessOver(t *testing.T, p port.CodeExecutionPort, fp *fakePort, cfg server.TenantsConfig, opts ...server.Option) *tenantHarness {
	t.Helper()
	if cfg.Tenants == nil {
		cfg.Tenants = defaultTenants()
	}
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	ts, err := server.NewTenants(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ts.Close() })
	clock := &testClock{t: time.Now()}
	server.SetTenantsClock(ts, clock.now)
	opts = append([]server.Option{server.WithTenants(ts), server.WithGatherer(reg)}, opts...)
	h := servePort(t, p, opts...)
	h.port = fp
	return &tenantHarness{harness: h, ts: ts, reg: reg, clock: clock}
}

// as sends a request with key's bearer credential.
func (h *tenantHarness) as(key, method, target, body string) response {
	h.t.Helper()
	h.auth = "Bearer " + key
	defer func() { h.auth = "" }()
	return h.do(method, target, body)
}

func (h *tenantHarness) create(key string) string {
	h.t.Helper()
	r := h.as(key, "POST", "/sessions", "")
	if r.status != http.StatusCreated {
		h.t.Fatalf("create: %d %s", r.status, r.body)
	}
	var s contract.SessionHandle
	r.json(h.t, &s)
	return s.SessionID
}

func TestTenantsConfigErrors(t *testing.T) {
	k := func(s string) [][32]byte { return [][32]byte{server.KeyDigest(s)} }
	tests := []struct {
		name    string
		tenants []server.Tenant
		want    string
	}{
		{"none", []server.Tenant{}, "none configured"},
		{"empty name", []server.Tenant{{Name: "", Keys: k(keyA)}}, "the name must be"},
		{"upper case", []server.Tenant{{Name: "Acme", Keys: k(keyA)}}, "the name must be"},
		{"slash", []server.Tenant{{Name: "a/b", Keys: k(keyA)}}, "the name must be"},
		{"long name", []server.Tenant{{Name: strings.Repeat("a", 33), Keys: k(keyA)}}, "the name must be"},
		{"reserved", []server.Tenant{{Name: server.TokenTenant, Keys: k(keyA)}}, "reserved"},
		{"twice", []server.Tenant{{Name: "a", Keys: k(keyA)}, {Name: "a", Keys: k(keyB)}}, `tenant "a" is configured twice`},
		{"no key", []server.Tenant{{Name: "a"}}, "no key"},
		{"zero digest", []server.Tenant{{Name: "a", Keys: [][32]byte{{}}}}, "all zeros"},
		{"shared key", []server.Tenant{{Name: "a", Keys: k(keyA)}, {Name: "b", Keys: k(keyA)}}, `tenants "a" and "b" share a key`},
		{"negative sessions", []server.Tenant{{Name: "a", Keys: k(keyA), MaxSessions: -1}}, "max_sessions -1"},
		{"negative rate", []server.Tenant{{Name: "a", Keys: k(keyA), ExecutionsPerSecond: -1}}, "executions_per_second -1"},
		{"burst without rate", []server.Tenant{{Name: "a", Keys: k(keyA), Burst: 3}}, "burst needs executions_per_second"},
		{"negative burst", []server.Tenant{{Name: "a", Keys: k(keyA), ExecutionsPerSecond: 1, Burst: -2}}, "burst -2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts, err := server.NewTenants(server.TenantsConfig{Tenants: tc.tenants})
			if err == nil {
				ts.Close()
				t.Fatalf("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
	// Every mistake is reported at once.
	_, err := server.NewTenants(server.TenantsConfig{Tenants: []server.Tenant{{Name: "X"}, {Name: "b", Keys: k(keyB), MaxSessions: -3}}})
	if err == nil || !strings.Contains(err.Error(), "the name must be") || !strings.Contains(err.Error(), "max_sessions -3") {
		t.Fatalf("error %v", err)
	}
}

// Each key authenticates its own tenant and nothing else: the lookup
// compares the presented credential's digest with every key's (see
// Tenants.lookup, which does not stop at a match), so a near miss of any
// length is refused like no key at all.
func TestTenantKeys(t *testing.T) {
	fp := newFakePort()
	h := newTenantHarness(t, fp, server.TenantsConfig{})
	near := []string{"", keyA[:len(keyA)-1], keyA + "x", keyA[:len(keyA)-1] + "j", strings.ToUpper(keyA),
		fmt.Sprintf("%x", server.KeyDigest(keyA)), token}
	for _, cred := range near {
		for _, g := range []struct{ method, target string }{{"POST", "/sessions"}, {"GET", "/capabilities"}, {"GET", "/no/route"}} {
			if r := h.as(cred, g.method, g.target, ""); r.status != http.StatusUnauthorized || r.code(t) != "unauthorized" {
				t.Errorf("%s %s with %q: %d %s", g.method, g.target, cred, r.status, r.body)
			}
		}
	}
	if fp.next != 0 {
		t.Fatal("a session was made without a valid key")
	}
	// Both of a's keys are a: a session made with one is reached with the
	// other (a rotation keeps the sessions).
	id := h.create(keyA)
	if r := h.as(keyA2, "POST", "/sessions/"+id+"/exec", execCode); r.status != http.StatusOK {
		t.Fatalf("a's second key: %d %s", r.status, r.body)
	}
	if r := h.as(keyB, "POST", "/sessions/"+id+"/exec", execCode); r.status != http.StatusNotFound {
		t.Fatalf("b on a's session: %d %s", r.status, r.body)
	}
	// /healthz needs no key.
	if r := h.do("GET", "/healthz", ""); r.status != http.StatusOK {
		t.Fatalf("/healthz: %d", r.status)
	}
}

// The single --auth-token keeps working beside tenants, as a tenant of its
// own without limits, and alone as before.
func TestTenantsWithTheAuthToken(t *testing.T) {
	h := newTenantHarness(t, nil, server.TenantsConfig{}, server.WithBearerToken(token))
	var mine []string
	for range 3 { // over a's limit of 2: the token has none
		mine = append(mine, h.create(token))
	}
	a := h.create(keyA)
	if r := h.as(token, "POST", "/sessions/"+a+"/exec", execCode); r.status != http.StatusNotFound {
		t.Errorf("the token on a's session: %d", r.status)
	}
	if r := h.as(keyA, "POST", "/sessions/"+mine[0]+"/exec", execCode); r.status != http.StatusNotFound {
		t.Errorf("a on the token's session: %d", r.status)
	}
	for range 5 { // a's rate is 1/s with a burst of 2; the token has none
		if r := h.as(token, "POST", "/sessions/"+mine[0]+"/exec", execCode); r.status != http.StatusOK {
			t.Fatalf("the token's exec: %d %s", r.status, r.body)
		}
	}
	// /metrics names every tenant: the operator's token only.
	if r := h.as(token, "GET", "/metrics", ""); r.status != http.StatusOK {
		t.Errorf("/metrics with the token: %d", r.status)
	}
	if r := h.as(keyA, "GET", "/metrics", ""); r.status != http.StatusNotFound || r.code(t) != "route_not_found" {
		t.Errorf("/metrics with a tenant's key: %d %s", r.status, r.body)
	}

	// The token alone: as before tenants, every session is its own.
	fp := newFakePort()
	fp.addSession("s1", nil)
	only := newHarness(t, fp, server.WithBearerToken(token))
	only.auth = "Bearer " + token
	if r := only.do("POST", "/sessions/s1/exec", execCode); r.status != http.StatusOK {
		t.Errorf("the token alone: %d %s", r.status, r.body)
	}
	only.auth = "Bearer " + keyA
	if r := only.do("POST", "/sessions/s1/exec", execCode); r.status != http.StatusUnauthorized {
		t.Errorf("a tenant key without tenants: %d", r.status)
	}
}

// A tenant's request on another tenant's session gets exactly what it gets
// on an id no session has, on every session route, and the port never
// hears of it: ids cannot be probed, nor the session touched.
func TestCrossTenantIsUnknown(t *testing.T) {
	fp := newFakePort()
	h := newTenantHarness(t, fp, server.TenantsConfig{})
	theirs := h.create(keyA)
	fp.addSession("never-owned", nil) // in the backend, owned by nobody
	unknown := strings.Repeat("z", len(theirs))

	routes := []struct{ method, path, body string }{
		{"POST", "/exec", execCode},
		{"GET", "/files/list?path=.", ""},
		{"GET", "/files?path=a.txt", ""},
		{"GET", "/files?file_id=f1", ""},
		{"POST", "/snapshot", ""},
		{"DELETE", "", ""},
	}
	before := fp.lastExecID
	for _, rt := range routes {
		foreign := h.as(keyB, rt.method, "/sessions/"+theirs+rt.path, rt.body)
		none := h.as(keyB, rt.method, "/sessions/"+unknown+rt.path, rt.body)
		orphan := h.as(keyB, rt.method, "/sessions/never-owned"+rt.path, rt.body)
		want := http.StatusNotFound
		if rt.method == "DELETE" {
			want = http.StatusNoContent
		}
		if foreign.status != want || none.status != want || orphan.status != want {
			t.Errorf("%s %s: foreign %d, unknown %d, unowned %d; want %d", rt.method, rt.path, foreign.status, none.status, orphan.status, want)
		}
		// The bodies differ only by the id they quote.
		fb := strings.ReplaceAll(string(foreign.body), theirs, "ID")
		nb := strings.ReplaceAll(string(none.body), unknown, "ID")
		if fb != nb {
			t.Errorf("%s %s: foreign %s, unknown %s", rt.method, rt.path, foreign.body, none.body)
		}
		for _, hdr := range []string{"Content-Type", "Content-Length", "Retry-After", "Allow"} {
			if foreign.header.Get(hdr) != none.header.Get(hdr) {
				t.Errorf("%s %s: header %s %q vs %q", rt.method, rt.path, hdr, foreign.header.Get(hdr), none.header.Get(hdr))
			}
		}
		if want == http.StatusNotFound && foreign.code(t) != "session_not_found" {
			t.Errorf("%s %s: code %q", rt.method, rt.path, foreign.code(t))
		}
	}
	// An upload, multipart.
	up := func(id string) response {
		body, ct := multipartBody(t, "", "f.txt", "data")
		req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/"+id+"/files", body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+keyB)
		return h.send(req)
	}
	fu, nu := up(theirs), up(unknown)
	if fu.status != http.StatusNotFound || strings.ReplaceAll(string(fu.body), theirs, "ID") != strings.ReplaceAll(string(nu.body), unknown, "ID") {
		t.Errorf("upload: foreign %d %s, unknown %d %s", fu.status, fu.body, nu.status, nu.body)
	}
	if fp.lastExecID != before || fp.putCalls != 0 || len(fp.destroyed) != 0 {
		t.Fatalf("the port was reached: exec %q, puts %d, destroyed %v", fp.lastExecID, fp.putCalls, fp.destroyed)
	}
	// a's session is untouched, and a's own.
	if r := h.as(keyA, "POST", "/sessions/"+theirs+"/exec", execCode); r.status != http.StatusOK {
		t.Fatalf("owner after the probes: %d %s", r.status, r.body)
	}
	if r := h.as(keyA, "DELETE", "/sessions/"+theirs, ""); r.status != http.StatusNoContent || len(fp.destroyed) != 1 {
		t.Fatalf("owner's delete: %d, destroyed %v", r.status, fp.destroyed)
	}
}

func checkRateLimited(t *testing.T, r response, wantRetry string) {
	t.Helper()
	if r.status != http.StatusTooManyRequests || r.code(t) != "rate_limited" || r.detail(t) == "" {
		t.Fatalf("%d %s, want 429 rate_limited", r.status, r.body)
	}
	if got := r.header.Get("Retry-After"); got != wantRetry {
		t.Fatalf("Retry-After %q, want %q", got, wantRetry)
	}
}

// Sessions at once: a's third session is refused with 429 until one is
// released, by its owner or by the backend; b is not affected.
func TestTenantSessionLimit(t *testing.T) {
	fp := newFakePort()
	h := newTenantHarness(t, fp, server.TenantsConfig{})
	s1, s2 := h.create(keyA), h.create(keyA)
	r := h.as(keyA, "POST", "/sessions", "")
	// The hint is the earliest a session would be reclaimed: the fake's
	// idle timeout of 10 minutes is beyond the cap of a minute.
	checkRateLimited(t, r, "60")
	if !strings.Contains(r.detail(t), "tenant a") {
		t.Errorf("detail %q", r.detail(t))
	}
	if fp.next != 2 {
		t.Fatalf("the port made %d sessions", fp.next)
	}
	for range 3 {
		h.create(keyB) // no limit
	}
	// A restore is a session too.
	if r := h.as(keyA, "POST", "/snapshots/restore", ""); r.status != http.StatusNotFound {
		// Without snapshots the route is not there; the limit is not
		// reached before that.
		t.Fatalf("restore without snapshots: %d", r.status)
	}
	// Released by its owner.
	if r := h.as(keyA, "DELETE", "/sessions/"+s1, ""); r.status != http.StatusNoContent {
		t.Fatal(r.status)
	}
	s3 := h.create(keyA)
	checkRateLimited(t, h.as(keyA, "POST", "/sessions", ""), "60")

	// Reclaimed by the backend, which the server learns from a call.
	fp.mu.Lock()
	delete(fp.sessions, s2)
	fp.mu.Unlock()
	if r := h.as(keyA, "POST", "/sessions/"+s2+"/exec", execCode); r.status != http.StatusNotFound {
		t.Fatalf("reclaimed session: %d", r.status)
	}
	s4 := h.create(keyA)

	// Reclaimed by the backend without a word: once past the idle
	// deadline the server computes (the session's idle timeout after its
	// last call here), the sessions no longer count, and are destroyed
	// to make sure.
	fp.mu.Lock()
	delete(fp.sessions, s3)
	delete(fp.sessions, s4)
	fp.mu.Unlock()
	h.clock.advance(10*time.Minute - time.Second)
	checkRateLimited(t, h.as(keyA, "POST", "/sessions", ""), "6") // 10 min + the 5 s margin
	h.clock.advance(10 * time.Second)
	h.create(keyA)
	fp.mu.Lock()
	destroyed := append([]string(nil), fp.destroyed...)
	fp.mu.Unlock()
	if strings.Join(destroyed, ",") != s1+","+s3+","+s4 && strings.Join(destroyed, ",") != s1+","+s4+","+s3 {
		t.Fatalf("destroyed %v", destroyed)
	}
}

// A session in a call is never taken for reclaimed, however long the call.
func TestTenantSessionInACallCounts(t *testing.T) {
	fp := newFakePort()
	h := newTenantHarness(t, fp, server.TenantsConfig{Tenants: []server.Tenant{{Name: "a", Keys: [][32]byte{server.KeyDigest(keyA)}, MaxSessions: 1}}})
	id := h.create(keyA)
	started, release := make(chan struct{}), make(chan struct{})
	fp.execute = func(ctx context.Context, _ string, req port.ExecuteRequest) (port.Result, error) {
		close(started)
		<-release
		return port.Result{Outcome: port.OutcomeCompleted}, nil
	}
	done := make(chan response, 1)
	go func() {
		req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/"+id+"/exec", strings.NewReader(execCode))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+keyA)
		resp, err := h.srv.Client().Do(req)
		if err != nil {
			done <- response{}
			return
		}
		resp.Body.Close()
		done <- response{status: resp.StatusCode}
	}()
	<-started
	h.clock.advance(time.Hour)
	checkRateLimited(t, h.as(keyA, "POST", "/sessions", ""), "60")
	close(release)
	if r := <-done; r.status != http.StatusOK {
		t.Fatalf("the long call: %d", r.status)
	}
	if len(fp.destroyed) != 0 {
		t.Fatalf("destroyed %v", fp.destroyed)
	}
}

// Executions per second: a's bucket holds 2 and refills at 1/s. Over it,
// exec is refused with 429 and the wait; file calls do not count; b is
// not affected.
func TestTenantExecutionRate(t *testing.T) {
	fp := newFakePort()
	h := newTenantHarness(t, fp, server.TenantsConfig{})
	a, b := h.create(keyA), h.create(keyB)
	for i := range 2 {
		if r := h.as(keyA, "POST", "/sessions/"+a+"/exec", execCode); r.status != http.StatusOK {
			t.Fatalf("exec %d: %d %s", i, r.status, r.body)
		}
	}
	fp.lastExec = port.ExecuteRequest{}
	checkRateLimited(t, h.as(keyA, "POST", "/sessions/"+a+"/exec", execCode), "1")
	if fp.lastExec.Tool != "" {
		t.Fatal("a refused exec reached the port")
	}
	// Streaming is the same route, and the same limit.
	req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/"+a+"/exec", strings.NewReader(execCode))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", contract.EventStreamType)
	req.Header.Set("Authorization", "Bearer "+keyA)
	checkRateLimited(t, h.send(req), "1")
	if r := h.as(keyA, "GET", "/sessions/"+a+"/files/list?path=.", ""); r.status != http.StatusOK {
		t.Errorf("listing while rate limited: %d", r.status)
	}
	for range 5 {
		if r := h.as(keyB, "POST", "/sessions/"+b+"/exec", execCode); r.status != http.StatusOK {
			t.Fatalf("b: %d", r.status)
		}
	}
	h.clock.advance(1100 * time.Millisecond)
	if r := h.as(keyA, "POST", "/sessions/"+a+"/exec", execCode); r.status != http.StatusOK {
		t.Fatalf("after a second: %d %s", r.status, r.body)
	}
	checkRateLimited(t, h.as(keyA, "POST", "/sessions/"+a+"/exec", execCode), "1")
}

// Metrics are labelled by the configured names only.
func TestTenantMetrics(t *testing.T) {
	fp := newFakePort()
	h := newTenantHarness(t, fp, server.TenantsConfig{})
	a1, _ := h.create(keyA), h.create(keyA)
	h.as(keyA, "POST", "/sessions", "") // refused: sessions
	for range 3 {
		h.as(keyA, "POST", "/sessions/"+a1+"/exec", execCode) // the third refused: executions
	}
	h.create(keyB)
	h.as("not-a-key-of-anyone-0123456789ab", "POST", "/sessions", "")
	h.as(keyB, "POST", "/sessions/"+a1+"/exec", execCode) // 404

	counter := func(name string, labels ...string) float64 {
		t.Helper()
		return metrictest.Value(t, h.reg, name, labels...)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"codeport_tenant_requests_total", []string{"tenant", "a", "status", "201"}, 2},
		{"codeport_tenant_requests_total", []string{"tenant", "a", "status", "429"}, 2},
		{"codeport_tenant_requests_total", []string{"tenant", "b", "status", "404"}, 1},
		{"codeport_tenant_executions_total", []string{"tenant", "a", "outcome", "completed"}, 2},
		{"codeport_tenant_executions_total", []string{"tenant", "a", "outcome", "rate_limited"}, 1},
		{"codeport_tenant_limit_refusals_total", []string{"tenant", "a", "limit", "sessions"}, 1},
		{"codeport_tenant_limit_refusals_total", []string{"tenant", "a", "limit", "executions"}, 1},
		{"codeport_tenant_limit_refusals_total", []string{"tenant", "b", "limit", "sessions"}, 0},
		{"codeport_tenant_sessions", []string{"tenant", "a"}, 2},
		{"codeport_tenant_sessions", []string{"tenant", "b"}, 1},
		{"codeport_tenant_sessions", []string{"tenant", server.TokenTenant}, 0},
	} {
		if got := counter(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Bounded: no series names a tenant that is not configured.
	mfs, _ := h.reg.Gather()
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "tenant" && lp.GetValue() != "a" && lp.GetValue() != "b" && lp.GetValue() != server.TokenTenant {
					t.Errorf("%s has tenant %q", mf.GetName(), lp.GetValue())
				}
			}
		}
	}
	if n, err := testutil.GatherAndCount(h.reg, "codeport_tenant_sessions"); err != nil || n != 3 {
		t.Errorf("%d codeport_tenant_sessions series", n)
	}
}

// Ownership survives a restart of the server through the owners file: the
// owner reaches its session, another tenant does not, and a session the
// file does not name, or names for a tenant no longer configured, is
// reachable by nobody.
func TestTenantOwnershipSurvivesARestart(t *testing.T) {
	fp := newFakePort() // the backend, which keeps its sessions
	file := filepath.Join(t.TempDir(), "owners")
	cfg := server.TenantsConfig{OwnersFile: file, Tenants: append(defaultTenants(),
		server.Tenant{Name: "gone-later", Keys: [][32]byte{server.KeyDigest("gone-later-key-0123456789abcdefg")}})}
	first := newTenantHarness(t, fp, cfg)
	a, b := first.create(keyA), first.create(keyB)
	dropped := first.create(keyB)
	orphan := first.create("gone-later-key-0123456789abcdefg")
	if r := first.as(keyB, "DELETE", "/sessions/"+dropped, ""); r.status != http.StatusNoContent {
		t.Fatal(r.status)
	}
	fp.addSession("made-elsewhere", nil)
	if err := first.ts.Close(); err != nil {
		t.Fatal(err)
	}
	first.srv.Close()

	cfg.Tenants = defaultTenants() // "gone-later" is no longer configured
	second := newTenantHarness(t, fp, cfg)
	if r := second.as(keyA, "POST", "/sessions/"+a+"/exec", execCode); r.status != http.StatusOK {
		t.Errorf("a's session after the restart: %d %s", r.status, r.body)
	}
	if r := second.as(keyB, "POST", "/sessions/"+b+"/exec", execCode); r.status != http.StatusOK {
		t.Errorf("b's session after the restart: %d %s", r.status, r.body)
	}
	for _, key := range []string{keyA, keyB} {
		for _, id := range []string{orphan, "made-elsewhere", dropped} {
			if r := second.as(key, "POST", "/sessions/"+id+"/exec", execCode); r.status != http.StatusNotFound {
				t.Errorf("session %s reached after the restart: %d", id, r.status)
			}
		}
	}
	if r := second.as(keyB, "POST", "/sessions/"+a+"/exec", execCode); r.status != http.StatusNotFound {
		t.Errorf("b on a's session after the restart: %d", r.status)
	}
	// a's count came back too: one of its two.
	second.create(keyA)
	checkRateLimited(t, second.as(keyA, "POST", "/sessions", ""), "60")

	// The file was compacted at start: the destroyed session is gone from it.
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), `"gone":true`) {
		t.Errorf("not compacted:\n%s", raw)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("owners file mode: %v %v", fi.Mode(), err)
	}
}

// Sessions taken over from a previous process that did not survive it (a
// crash) are found out when their tenant reaches its limit: the server
// asks the backend about those it has not seen answer since, and forgets
// the ones it does not have.
func TestTenantRestartReconciles(t *testing.T) {
	file := filepath.Join(t.TempDir(), "owners")
	cfg := server.TenantsConfig{OwnersFile: file}
	fp := newFakePort()
	first := newTenantHarness(t, fp, cfg)
	lost, kept := first.create(keyA), first.create(keyA)
	first.ts.Close()
	first.srv.Close()
	// Garbage in the file (a line cut short by a crash) is skipped.
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"session":"x","tenant":"a","crea` + "\n" + strings.Repeat("y", 10000) + "\n")
	f.Close()

	fp.mu.Lock()
	delete(fp.sessions, lost) // lost with the process
	fp.mu.Unlock()
	second := newTenantHarness(t, fp, cfg)
	second.create(keyA) // at the limit: lost is found gone
	checkRateLimited(t, second.as(keyA, "POST", "/sessions", ""), "60")
	if r := second.as(keyA, "POST", "/sessions/"+kept+"/exec", execCode); r.status != http.StatusOK {
		t.Fatalf("kept: %d", r.status)
	}
	if r := second.as(keyA, "POST", "/sessions/x/exec", execCode); r.status != http.StatusNotFound {
		t.Fatalf("a cut line granted a session: %d", r.status)
	}
}

// Snapshots are bound to the tenant: a's snapshot restores for a, under
// either of its keys, and is invalid_snapshot for b, whatever tenant name
// header b sends. The restored session is a's, and counts.
func TestTenantSnapshots(t *testing.T) {
	sp := &snapshotPort{fakePort: newFakePort()}
	h := newTenantHarnessOver(t, sp, sp.fakePort, server.TenantsConfig{})
	id := h.create(keyA)
	snap := func(key, id, name string) response {
		req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/"+id+"/snapshot", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set(contract.SnapshotTenantHeader, name)
		return h.send(req)
	}
	restore := func(key string, body []byte, name string) response {
		req, _ := http.NewRequest("POST", h.srv.URL+"/snapshots/restore", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", contract.SnapshotMediaType)
		req.Header.Set(contract.SnapshotTenantHeader, name)
		return h.send(req)
	}
	r := snap(keyA, id, "user-1")
	if r.status != http.StatusOK {
		t.Fatalf("snapshot: %d %s", r.status, r.body)
	}
	if got := string(r.body); got != "snapshot of "+id+" for tenant/a/user-1" {
		t.Fatalf("bound to %q", got)
	}
	for _, name := range []string{"user-1", "", "a/user-1", "../a/user-1"} {
		if r := restore(keyB, r.body, name); r.status != http.StatusBadRequest || r.code(t) != "invalid_snapshot" {
			t.Errorf("b restores a's snapshot with name %q: %d %s", name, r.status, r.body)
		}
	}
	if r := restore(keyA2, r.body, "user-2"); r.status != http.StatusBadRequest {
		t.Errorf("another user of a: %d", r.status)
	}
	// Snapshots and restores count against a's executions per second
	// (burst 2): the two above took them.
	checkRateLimited(t, restore(keyA2, r.body, "user-1"), "1")
	h.clock.advance(2 * time.Second)
	got := restore(keyA2, r.body, "user-1")
	if got.status != http.StatusCreated {
		t.Fatalf("a restores its own: %d %s", got.status, got.body)
	}
	var s contract.SessionHandle
	got.json(t, &s)
	if r := h.as(keyB, "POST", "/sessions/"+s.SessionID+"/exec", execCode); r.status != http.StatusNotFound {
		t.Errorf("b on a's restored session: %d", r.status)
	}
	if r := h.as(keyA, "POST", "/sessions/"+s.SessionID+"/exec", execCode); r.status != http.StatusOK {
		t.Errorf("a on its restored session: %d", r.status)
	}
	// a now has 2 sessions, its limit: a restore is refused as a create is.
	checkRateLimited(t, restore(keyA, r.body, "user-1"), "60")
	// b cannot snapshot a's session: the answer of an unknown id.
	if r := snap(keyB, id, "user-1"); r.status != http.StatusNotFound || r.code(t) != "session_not_found" {
		t.Errorf("b snapshots a's session: %d %s", r.status, r.body)
	}
}

// snapshotPort adds snapshots to the fake port: a snapshot's bytes name
// the session and the binding the server asked for, and a restore checks
// the binding as port.Port does (the real seal is port's, tested there
// and end to end in cmd/codeport).
type snapshotPort struct {
	*fakePort
}

func (p *snapshotPort) SnapshotsOffered(context.Context) bool { return true }

func (p *snapshotPort) SnapshotSession(_ context.Context, id string, w io.Writer, opt port.SnapshotOptions) error {
	p.mu.Lock()
	_, ok := p.sessions[id]
	p.mu.Unlock()
	if !ok {
		return port.ErrSessionNotFound
	}
	_, err := io.WriteString(w, "snapshot of "+id+" for "+opt.Tenant)
	return err
}

func (p *snapshotPort) RestoreSession(ctx context.Context, r io.Reader, opt port.SnapshotOptions) (port.Session, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return port.Session{}, err
	}
	_, tenant, ok := strings.Cut(string(b), " for ")
	if !ok || tenant != opt.Tenant {
		return port.Session{}, fmt.Errorf("%w: it belongs to another tenant", port.ErrInvalidSnapshot)
	}
	return p.CreateSession(ctx, port.CreateSessionRequest{})
}

var _ port.SessionSnapshots = (*snapshotPort)(nil)

// The owners file fails closed on what it cannot read, and refuses a path
// it cannot use.
func TestTenantOwnersFileErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := server.NewTenants(server.TenantsConfig{Tenants: defaultTenants(), OwnersFile: dir})
	if err == nil {
		t.Fatal("a directory was taken for the owners file")
	}
	_, err = server.NewTenants(server.TenantsConfig{Tenants: defaultTenants(), OwnersFile: filepath.Join(dir, "no", "such", "dir", "owners")})
	if err == nil || !strings.Contains(err.Error(), "owners file") {
		t.Fatalf("a missing directory: %v", err)
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error %v does not wrap ErrNotExist", err)
	}
}

// The request log names the tenant, never its key; and a tenant's key,
// like the token, stands in for the loopback host check (a browser cannot
// attach it to a page's request).
func TestTenantLogAndHostCheck(t *testing.T) {
	var buf logtest.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	h := newTenantHarness(t, nil, server.TenantsConfig{}, server.WithLogger(logger))
	// In process, so that the record is written when serve returns.
	req := httptest.NewRequest("POST", "/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+keyA)
	if r := h.serve(req); r.status != http.StatusCreated {
		t.Fatalf("create: %d", r.status)
	}
	if log := buf.String(); !strings.Contains(log, "tenant=a") || strings.Contains(log, keyA) {
		t.Fatalf("log:\n%s", log)
	}
	req, _ = http.NewRequest("POST", h.srv.URL+"/sessions", nil)
	req.Host = "attacker.example"
	if r := h.send(req); r.status != http.StatusUnauthorized {
		t.Errorf("a foreign host without a key: %d", r.status)
	}
	req, _ = http.NewRequest("POST", h.srv.URL+"/sessions", nil)
	req.Host = "sandbox.internal"
	req.Header.Set("Authorization", "Bearer "+keyB)
	if r := h.send(req); r.status != http.StatusCreated {
		t.Errorf("another host with a key: %d %s", r.status, r.body)
	}
}

// Snapshots and restores spend CPU as executions do (a restore checks the
// seal over the whole snapshot and runs the interpreter it brings, even
// when it then fails), so they take the tenant's executions per second:
// replaying a snapshot cannot exceed the tenant's budget. Over it, a
// restore is refused before its body is read.
func TestTenantRestoresCountAsExecutions(t *testing.T) {
	sp := &snapshotPort{fakePort: newFakePort()}
	h := newTenantHarnessOver(t, sp, sp.fakePort, server.TenantsConfig{Tenants: []server.Tenant{
		{Name: "a", Keys: [][32]byte{server.KeyDigest(keyA)}, ExecutionsPerSecond: 1, Burst: 2},
		{Name: "b", Keys: [][32]byte{server.KeyDigest(keyB)}},
	}})
	srv, read := serveCounted(t, h.h)
	id := h.create(keyA)
	r := h.as(keyA, "POST", "/sessions/"+id+"/snapshot", "")
	if r.status != http.StatusOK {
		t.Fatalf("snapshot: %d %s", r.status, r.body)
	}
	snap := r.body
	restoreAs := func(key string) response {
		req, _ := http.NewRequest("POST", h.srv.URL+"/snapshots/restore", strings.NewReader("not a snapshot"))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", contract.SnapshotMediaType)
		return h.send(req)
	}
	if r := restoreAs(keyA); r.status != http.StatusBadRequest {
		t.Fatalf("a forged restore: %d %s", r.status, r.body)
	}
	// The burst is spent: the next restore, snapshot or exec waits.
	stalled := srv.stall(t, restoreHead+"Authorization: Bearer "+keyA+"\r\nContent-Length: "+strconv.Itoa(len(snap))+"\r\n\r\n"+string(snap))
	if stalled.status != http.StatusTooManyRequests || stalled.code(t) != "rate_limited" || stalled.header.Get("Retry-After") != "1" {
		t.Fatalf("a third restore or snapshot in the second: %d %s", stalled.status, stalled.body)
	}
	if n := read.n.Load(); n != 0 {
		t.Errorf("a restore over the rate read %d bytes of its body", n)
	}
	checkRateLimited(t, h.as(keyA, "POST", "/sessions/"+id+"/snapshot", ""), "1")
	checkRateLimited(t, h.as(keyA, "POST", "/sessions/"+id+"/exec", execCode), "1")
	// Another tenant's budget is its own.
	if r := restoreAs(keyB); r.status != http.StatusBadRequest {
		t.Errorf("b's restore: %d %s", r.status, r.body)
	}
	h.clock.advance(time.Second)
	req, _ := http.NewRequest("POST", h.srv.URL+"/snapshots/restore", bytes.NewReader(snap))
	req.Header.Set("Authorization", "Bearer "+keyA)
	req.Header.Set("Content-Type", contract.SnapshotMediaType)
	if r := h.send(req); r.status != http.StatusCreated {
		t.Errorf("a restore a second later: %d %s", r.status, r.body)
	}
}

// A restore that asks to keep an id tells nothing of whose it is: keeping
// another tenant's live id is answered exactly as keeping an id no session
// has, with the snapshot of another session (400 invalid_snapshot), where
// it was 422 "here already" for the live one and a success for the free
// one. A tenant's own session, restored where it is live, is still told so.
func TestTenantKeptIDTellsNothing(t *testing.T) {
	a := wasmtest.New(t, nil, port.WithSnapshotKey(testSnapshotKey))
	h := newTenantHarnessOver(t, a, nil, server.TenantsConfig{Tenants: []server.Tenant{
		{Name: "a", Keys: [][32]byte{server.KeyDigest(keyA)}},
		{Name: "b", Keys: [][32]byte{server.KeyDigest(keyB)}},
	}})
	snapshot := func(key, id, release string) []byte {
		t.Helper()
		r := h.as(key, "POST", "/sessions/"+id+"/snapshot?release="+release, "")
		if r.status != http.StatusOK {
			t.Fatalf("snapshot: %d %s", r.status, r.body)
		}
		return r.body
	}
	restore := func(key string, snap []byte, keep string) response {
		req, _ := http.NewRequest("POST", h.srv.URL+"/snapshots/restore", bytes.NewReader(snap))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", contract.SnapshotMediaType)
		req.Header.Set(contract.KeepSessionIDHeader, keep)
		return h.send(req)
	}
	theirs := h.create(keyA)
	own := h.create(keyB)
	snapB := snapshot(keyB, own, "true")
	free := "0b7c3f1e-2a4d-4c6b-9e8f-112233445566"

	live, unknown := restore(keyB, snapB, theirs), restore(keyB, snapB, free)
	for _, r := range []response{live, unknown} {
		if r.status != http.StatusBadRequest || r.code(t) != "invalid_snapshot" {
			t.Errorf("b keeps an id not its snapshot's: %d %s; want 400 invalid_snapshot", r.status, r.body)
		}
	}
	if l, u := strings.ReplaceAll(string(live.body), theirs, "ID"), strings.ReplaceAll(string(unknown.body), free, "ID"); l != u || live.status != unknown.status {
		t.Errorf("a's live id and a free one are told apart:\n%d %s\n%d %s", live.status, l, unknown.status, u)
	}
	if r := h.as(keyA, "POST", "/sessions/"+theirs+"/exec", execCode); r.status != http.StatusOK {
		t.Errorf("a's session after b's attempts: %d %s", r.status, r.body)
	}

	// a's own session, restored where it is live: said clearly.
	snapA := snapshot(keyA, theirs, "false")
	if r := restore(keyA, snapA, theirs); r.status != http.StatusUnprocessableEntity || r.code(t) != "invalid_request" {
		t.Errorf("a restores its live session under its id: %d %s; want 422 invalid_request", r.status, r.body)
	}
	// b's own, released: it comes back under its id, b's.
	if r := restore(keyB, snapB, own); r.status != http.StatusCreated {
		t.Fatalf("b restores its released session under its id: %d %s", r.status, r.body)
	}
	if r := h.as(keyB, "POST", "/sessions/"+own+"/exec", execCode); r.status != http.StatusOK {
		t.Errorf("b on its restored session: %d %s", r.status, r.body)
	}
}

// The tenant a request authenticated as reaches the port in its calls'
// contexts (port.TenantOf), for a driver that keeps tenants apart; the
// server's own token is its tenant, TokenTenant.
func TestTenantReachesThePort(t *testing.T) {
	fp := newFakePort()
	h := newTenantHarness(t, fp, server.TenantsConfig{}, server.WithBearerToken("op-token"))
	h.create(keyA)
	h.create(keyB)
	h.create("op-token")
	fp.mu.Lock()
	got := slices.Clone(fp.createTenants)
	fp.mu.Unlock()
	if want := []string{"a", "b", server.TokenTenant}; !slices.Equal(got, want) {
		t.Fatalf("the port saw tenants %q; want %q", got, want)
	}
}
