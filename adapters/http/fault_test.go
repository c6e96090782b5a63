package httpadapter_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// These tests put small, misbehaving backends written here in front of the
// adapter: killed, silent, refusing, or answering things that are not
// contract v1.

// marker is user code and file content no error message may carry.
const marker = "MARKER-c0de-never-in-errors-7f3a9b"

var markedCode = "print('" + marker + "')"

func execCode(a *port.Port, timeout time.Duration) (port.Result, error) {
	return a.Execute(context.Background(), "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: markedCode, Timeout: timeout})
}

// backend serves h and returns an adapter configured by tweak for it.
func backend(t *testing.T, h http.HandlerFunc, tweak func(httpadapter.Config) httpadapter.Config) (*port.Port, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	cfg := httpadapter.NewConfig(srv.URL)
	if tweak != nil {
		cfg = tweak(cfg)
	}
	return newAdapter(t, cfg), srv
}

// answer replies with a status and a body, JSON unless it starts with '<'.
func answer(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if w.Header().Get("Content-Type") == "" {
			if strings.HasPrefix(body, "<") {
				w.Header().Set("Content-Type", "text/html")
			} else {
				w.Header().Set("Content-Type", "application/json")
			}
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// settleGoroutines fails the test unless the goroutine count comes back to
// at most base. Goroutines whose connections are closed only need to be
// scheduled to end, which load delays by milliseconds, not by the minute
// allowed here.
func settleGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestBackendKilledMidCall(t *testing.T) {
	base := runtime.NumGoroutine()
	entered := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		entered <- struct{}{}
		<-r.Context().Done()
	}))
	a, err := httpadapter.New(httpadapter.NewConfig(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	// Not noticing the death would leave the call to the adapter's wall
	// clock, an hour away; noticing it takes milliseconds, seconds on a
	// loaded machine.
	go func() {
		_, err := execCode(a, time.Hour)
		done <- outcome{err, time.Now()}
	}()
	<-entered
	killed := time.Now()
	srv.CloseClientConnections()
	wait, cancelWait := testwait.Context(t)
	defer cancelWait()
	select {
	case o := <-done:
		if !errors.Is(o.err, port.ErrBackendUnreachable) || strings.Contains(o.err.Error(), "no answer within") {
			t.Fatalf("got %v, want the connection's end", o.err)
		}
		if d := o.at.Sub(killed); d > stuckAfter {
			t.Fatalf("noticed after %s", d)
		}
		if strings.Contains(o.err.Error(), marker) {
			t.Fatalf("message carries the code: %v", o.err)
		}
	case <-wait.Done():
		t.Fatal("Execute did not return after the backend died")
	}

	// GetFile and PutFile too, killed while the transfer runs.
	release := make(chan struct{})
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_, _ = io.CopyN(io.Discard, r.Body, 1<<20)
			entered <- struct{}{}
			// The server cannot notice the closed connection while the
			// body is unread; the test releases the handler.
			<-release
			return
		}
		w.Header().Set("Content-Length", "1000000")
		_, _ = w.Write(make([]byte, 1000))
		w.(http.Flusher).Flush()
		entered <- struct{}{}
		<-r.Context().Done()
	}))
	b, err := httpadapter.New(httpadapter.NewConfig(srv2.URL))
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := b.GetFile(context.Background(), "s1", "f.bin")
	if err != nil {
		t.Fatal(err)
	}
	<-entered
	srv2.CloseClientConnections()
	_, err = io.ReadAll(rc)
	_ = rc.Close()
	wantErr(t, "download cut short", err, port.ErrBackendUnreachable)
	putDone := make(chan error, 1)
	go func() {
		_, err := b.PutFile(context.Background(), "s1", "f.bin", io.LimitReader(zeros{}, 64<<20))
		putDone <- err
	}()
	<-entered
	srv2.CloseClientConnections()
	close(release)
	select {
	case err := <-putDone:
		wantErr(t, "upload cut short", err, port.ErrBackendUnreachable)
	case <-wait.Done():
		t.Fatal("PutFile did not return after the backend died")
	}

	_ = a.Close()
	_ = b.Close()
	srv.Close()
	srv2.Close()
	settleGoroutines(t, base)
}

func TestSilentBackendIsBoundedByTheWallClock(t *testing.T) {
	silent := func(w http.ResponseWriter, r *http.Request) {
		// With the body read, the server notices the client leaving.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}
	a, _ := backend(t, silent, func(c httpadapter.Config) httpadapter.Config {
		return c.WithTimeoutMargin(time.Second).WithRequestTimeout(500 * time.Millisecond).WithDefaultTimeout(time.Second)
	})

	// Execute: the granted second plus the margin's. The message names
	// the bound; the time shows it was kept: not before it, and not
	// without end (load delays the end by seconds, so the upper bound is
	// far above them).
	for _, granted := range []time.Duration{time.Second, 0, 200 * time.Millisecond} {
		start := time.Now()
		_, err := execCode(a, granted)
		d := time.Since(start)
		wantErr(t, "silent exec", err, port.ErrBackendUnreachable)
		if d < 1900*time.Millisecond || d > 2*time.Second+stuckAfter {
			t.Fatalf("granted %s: gave up after %s, want about 2 s", granted, d)
		}
		if !strings.Contains(err.Error(), "no answer within 2s") || strings.Contains(err.Error(), marker) {
			t.Fatalf("message: %v", err)
		}
	}

	// Other calls: the request timeout.
	ctx := context.Background()
	calls := map[string]func() error{
		"create": func() error { _, err := a.CreateSession(ctx, port.CreateSessionRequest{}); return err },
		"list":   func() error { _, err := a.ListFiles(ctx, "s1", "."); return err },
		"get":    func() error { _, _, err := a.GetFile(ctx, "s1", "a"); return err },
		"put": func() error {
			_, err := a.PutFile(ctx, "s1", "a", strings.NewReader(marker))
			return err
		},
		"destroy":  func() error { return a.DestroySession(ctx, "s1") },
		"describe": func() error { _, err := a.Describe(ctx); return err },
	}
	for name, f := range calls {
		start := time.Now()
		err := f()
		d := time.Since(start)
		wantErr(t, name, err, port.ErrBackendUnreachable)
		if d < 450*time.Millisecond || d > 500*time.Millisecond+stuckAfter || !strings.Contains(err.Error(), "no answer within 500ms") {
			t.Fatalf("%s: gave up after %s (%v), want about 0.5 s", name, d, err)
		}
	}

	// The caller's cancellation is not the backend's fault: the error
	// wraps ctx.Err(), since the remote outcome is unknown.
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	_, err := a.Execute(cctx, "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: markedCode})
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, port.ErrBackendUnreachable) {
		t.Fatalf("cancelled by the caller: %v", err)
	}
}

func TestStalledDownload(t *testing.T) {
	a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("first bytes"))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}, func(c httpadapter.Config) httpadapter.Config { return c.WithRequestTimeout(300 * time.Millisecond) })
	rc, info, err := a.GetFile(context.Background(), "s1", "f")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if info.Size != -1 {
		t.Fatalf("size without Content-Length: %d", info.Size)
	}
	// Unbounded, the read would never end; bounded, it ends 300 ms after
	// the last bytes, seconds on a loaded machine.
	start := time.Now()
	got, err := io.ReadAll(rc)
	wantErr(t, "stalled download", err, port.ErrBackendUnreachable)
	if string(got) != "first bytes" || time.Since(start) > stuckAfter {
		t.Fatalf("%q after %s", got, time.Since(start))
	}
}

func TestCapacityAndRetryAfter(t *testing.T) {
	made := time.Now()
	date := made.Add(90 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		header string
		want   time.Duration
		slack  time.Duration
		aged   bool // the hint shrinks by the time since made
	}{
		{"7", 7 * time.Second, 0, false},
		{"", time.Second, 0, false},
		{"soon", time.Second, 0, false},
		{"-3", time.Second, 0, false},
		// A date has whole seconds: up to one less than made+90 s.
		{date, 90 * time.Second, time.Second, true},
	}
	for _, c := range cases {
		t.Run(c.header, func(t *testing.T) {
			var h http.HandlerFunc
			if c.header == "" {
				h = answer(503, `{"detail":"at capacity"}`)
			} else {
				h = answer(503, `{"detail":"at capacity"}`, "Retry-After", c.header)
			}
			a, _ := backend(t, h, nil)
			for name, err := range map[string]error{
				"create": func() error { _, err := a.CreateSession(context.Background(), port.CreateSessionRequest{}); return err }(),
				"exec":   func() error { _, err := execCode(a, 0); return err }(),
			} {
				var ce *port.CapacityError
				if !errors.Is(err, port.ErrAtCapacity) || !errors.As(err, &ce) {
					t.Fatalf("%s: %v", name, err)
				}
				low := c.want - c.slack
				if c.aged {
					// However long a loaded machine took to get here.
					low -= time.Since(made)
				}
				if ce.RetryAfter < low || ce.RetryAfter > c.want {
					t.Fatalf("%s: RetryAfter %s, want %s", name, ce.RetryAfter, c.want)
				}
				if !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), `"at capacity"`) {
					t.Fatalf("%s: message %v", name, err)
				}
			}
		})
	}
}

// callAs makes the named call of a TestStatusMapping case.
func callAs(a *port.Port, call string) error {
	ctx := context.Background()
	var err error
	switch call {
	case "create":
		_, err = a.CreateSession(ctx, port.CreateSessionRequest{})
	case "exec":
		_, err = execCode(a, 0)
	case "exec-unknown-tool":
		_, err = a.Execute(ctx, "s1", port.ExecuteRequest{Tool: "cobol_execution", Code: markedCode})
	case "get":
		_, _, err = a.GetFile(ctx, "s1", "f")
	case "list":
		_, err = a.ListFiles(ctx, "s1", "d")
	case "put":
		_, err = a.PutFile(ctx, "s1", "f", strings.NewReader(marker))
	default:
		panic("unknown call " + call)
	}
	return err
}

// TestStatusMapping checks the mapping of answers without a code, as the
// reference backend sends them: the status decides.
func TestStatusMapping(t *testing.T) {
	cases := []struct {
		status int
		detail string
		call   string
		want   error
	}{
		{401, "missing bearer", "exec", port.ErrUnauthorized},
		{403, "outside", "get", port.ErrPathEscapesWorkspace},
		{404, "session not found", "exec", port.ErrSessionNotFound},
		{404, "no such route", "create", port.ErrBackendUnreachable},
		{409, "busy", "exec", port.ErrSessionBusy},
		{413, "too big", "put", port.ErrFileTooLarge},
		{400, "unknown tool", "exec-unknown-tool", port.ErrUnsupportedTool},
		{400, "bad", "exec", port.ErrInvalidRequest},
		{400, "is a directory", "get", port.ErrIsDirectory},
		{400, "bad", "create", port.ErrInvalidRequest},
		{422, "bad", "exec", port.ErrInvalidRequest},
		{405, "no", "exec", port.ErrInvalidRequest},
		{500, "internal error", "exec", port.ErrBackendUnreachable},
		{502, "bad gateway", "list", port.ErrBackendUnreachable},
		{302, "", "create", port.ErrBackendUnreachable},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d %s %s", c.status, c.call, c.detail), func(t *testing.T) {
			body := `{"detail":` + fmt.Sprintf("%q", c.detail) + `}`
			a, _ := backend(t, answer(c.status, body, "Location", "/elsewhere"), nil)
			err := callAs(a, c.call)
			wantErr(t, "status", err, c.want)
			if !strings.Contains(err.Error(), fmt.Sprint(c.status)) || (c.detail != "" && !strings.Contains(err.Error(), c.detail)) {
				t.Fatalf("message lacks the status or detail: %v", err)
			}
			if c.want != port.ErrSessionNotFound && errors.Is(err, port.ErrSessionNotFound) {
				t.Fatalf("also session not found: %v", err)
			}
		})
	}

	// DELETE: 204 and 404 both succeed; other failures do not.
	for status, ok := range map[int]bool{204: true, 200: true, 404: true, 500: false, 401: false} {
		a, _ := backend(t, answer(status, `{"detail":"x"}`), nil)
		if err := a.DestroySession(context.Background(), "s1"); (err == nil) != ok {
			t.Fatalf("DELETE answered %d: %v", status, err)
		}
	}
}

// TestErrorCodeMapping checks that an answer's code decides, whatever its
// status and detail say: the statuses and details here are chosen to
// mislead, and no case may send a second request.
func TestErrorCodeMapping(t *testing.T) {
	cases := []struct {
		status int
		code   string
		call   string
		want   error
	}{
		// Every port code, each to its sentinel.
		{404, "session_not_found", "get", port.ErrSessionNotFound},
		{404, "session_not_found", "put", port.ErrSessionNotFound},
		{404, "session_not_found", "list", port.ErrSessionNotFound},
		{404, "file_not_found", "get", port.ErrFileNotFound},
		{404, "file_not_found", "list", port.ErrFileNotFound},
		{400, "session_busy", "exec", port.ErrSessionBusy},
		{400, "unsupported_tool", "exec", port.ErrUnsupportedTool},
		{400, "is_directory", "get", port.ErrIsDirectory},
		{400, "path_escapes_workspace", "get", port.ErrPathEscapesWorkspace},
		{413, "file_too_large", "put", port.ErrFileTooLarge},
		{422, "invalid_request", "list", port.ErrInvalidRequest},
		{401, "unauthorized", "create", port.ErrUnauthorized},
		{502, "backend_unreachable", "exec", port.ErrBackendUnreachable},
		{500, "runtime_failure", "exec", port.ErrRuntimeFailure},
		{503, "at_capacity", "create", port.ErrAtCapacity},
		{429, "rate_limited", "exec", port.ErrRateLimited},
		{429, "rate_limited", "create", port.ErrRateLimited},
		{400, "invalid_snapshot", "exec", port.ErrInvalidSnapshot},
		{501, "unsupported", "exec", port.ErrUnsupported},
		// The server's own codes.
		{404, "route_not_found", "exec", port.ErrBackendUnreachable},
		{405, "method_not_allowed", "list", port.ErrBackendUnreachable},
		{413, "request_too_large", "exec", port.ErrInvalidRequest},
		{415, "unsupported_media_type", "put", port.ErrInvalidRequest},
		{500, "internal_error", "exec", port.ErrRuntimeFailure},
		// A code this adapter does not know: the status decides.
		{409, "some_future_code", "exec", port.ErrSessionBusy},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.code] = true
		t.Run(fmt.Sprintf("%s %s %d", c.code, c.call, c.status), func(t *testing.T) {
			var requests atomic.Int32
			body := fmt.Sprintf(`{"detail":"session gone, file missing, whatever","code":%q}`, c.code)
			a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				answer(c.status, body)(w, r)
			}, nil)
			err := callAs(a, c.call)
			wantErr(t, c.code, err, c.want)
			for _, other := range []error{port.ErrSessionNotFound, port.ErrFileNotFound, port.ErrClosed} {
				if other != c.want && errors.Is(err, other) {
					t.Errorf("also %v: %v", other, err)
				}
			}
			if !strings.Contains(err.Error(), fmt.Sprint(c.status)) || !strings.Contains(err.Error(), c.code) {
				t.Errorf("message lacks the status or code: %v", err)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests; a code needs no probe", n)
			}
		})
	}
	for _, code := range port.ErrorCodes() {
		if !covered[code] && code != "closed" {
			t.Errorf("port code %q has no case", code)
		}
	}

	// at_capacity and rate_limited keep the Retry-After hint, and a
	// server shutting down (closed) is unavailable for now, not this port
	// closed. Only rate_limited is the caller's own limit.
	for _, code := range []string{"at_capacity", "closed", "rate_limited"} {
		status := map[bool]int{true: 429, false: 503}[code == "rate_limited"]
		a, _ := backend(t, answer(status, fmt.Sprintf(`{"detail":"x","code":%q}`, code), "Retry-After", "7"), nil)
		for _, call := range []string{"create", "exec"} {
			err := callAs(a, call)
			var ce *port.CapacityError
			if !errors.As(err, &ce) || ce.RetryAfter != 7*time.Second || errors.Is(err, port.ErrClosed) {
				t.Fatalf("%s %s: %v", code, call, err)
			}
			if limited := errors.Is(err, port.ErrRateLimited); limited != (code == "rate_limited") || ce.RateLimited != limited {
				t.Errorf("%s %s: rate limited %v", code, call, limited)
			}
			if want := map[string]string{"create": "sessions", "exec": "calls"}[call]; ce.Resource != want {
				t.Errorf("%s %s: resource %q, want %q", code, call, ce.Resource, want)
			}
		}
	}

	// A code that is not one (the request echoed, a number) is ignored.
	for _, body := range []string{`{"detail":"x","code":"` + marker + `"}`, `{"detail":"x","code":404}`} {
		a, _ := backend(t, answer(409, body), nil)
		err := callAs(a, "exec")
		wantErr(t, body, err, port.ErrSessionBusy)
		if strings.Contains(err.Error(), marker) {
			t.Errorf("message quotes the code field: %v", err)
		}
	}
}

// TestCodelessNotFound checks how a 404 without a code from a file route
// is resolved, as from the reference backend, which answers 404 for a
// missing session and a missing file alike: by listing the session's
// workspace root, never by reading the detail (each detail here says the
// opposite of the truth).
func TestCodelessNotFound(t *testing.T) {
	type seen struct{ path, query string }
	cases := []struct {
		name    string
		call    string
		probe   int // the status of GET /sessions/s1/files/list?path=.
		want    error
		wantNot error
	}{
		{"get, the session lives", "get", 200, port.ErrFileNotFound, port.ErrSessionNotFound},
		{"put, the session lives", "put", 200, port.ErrFileNotFound, port.ErrSessionNotFound},
		{"list, the session lives", "list", 200, port.ErrFileNotFound, port.ErrSessionNotFound},
		{"get, the session is gone", "get", 404, port.ErrSessionNotFound, port.ErrFileNotFound},
		{"put, the session is gone", "put", 404, port.ErrSessionNotFound, port.ErrFileNotFound},
		{"list, the session is gone", "list", 404, port.ErrSessionNotFound, port.ErrFileNotFound},
		// The probe cannot tell: the missing file stands.
		{"get, the probe fails", "get", 500, port.ErrFileNotFound, port.ErrSessionNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var requests []seen
			a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				requests = append(requests, seen{r.URL.Path, r.URL.RawQuery})
				mu.Unlock()
				probe := r.Method == http.MethodGet && r.URL.Path == "/sessions/s1/files/list" && r.URL.Query().Get("path") == "."
				switch {
				case probe && c.probe == 200:
					answer(200, `{"files":[]}`)(w, r)
				case probe:
					answer(c.probe, `{"detail":"File not found"}`)(w, r)
				default:
					answer(404, `{"detail":"Session not found"}`)(w, r)
				}
			}, nil)
			err := callAs(a, c.call)
			wantErr(t, c.name, err, c.want)
			if errors.Is(err, c.wantNot) {
				t.Errorf("also %v: %v", c.wantNot, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(requests) != 2 || requests[1] != (seen{"/sessions/s1/files/list", "path=."}) {
				t.Errorf("requests %v, want the call then one probe", requests)
			}
		})
	}

	// Only file routes are ambiguous: an Execute's 404 is the session's,
	// with no probe.
	var requests atomic.Int32
	a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		answer(404, `{"detail":"File not found"}`)(w, r)
	}, nil)
	wantErr(t, "exec", callAs(a, "exec"), port.ErrSessionNotFound)
	if n := requests.Load(); n != 1 {
		t.Errorf("exec: %d requests", n)
	}
}

func TestGarbageAnswers(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, call string
		status     int
		body       string
	}{
		{"non-JSON 200 exec", "exec", 200, "OK"},
		{"non-JSON 201 create", "create", 201, "created!"},
		{"empty 200 exec", "exec", 200, ""},
		{"JSON null", "exec", 200, "null"},
		{"exec without result_block", "exec", 200, `{"tool_use_id":"t1","execution_time_ms":3}`},
		{"exec without tool_use_id", "exec", 200, `{"result_block":{"type":"code_execution_tool_result","content":{"stdout":"x"}}}`},
		{"exec result_block of the wrong type", "exec", 200, `{"tool_use_id":"t1","result_block":"done"}`},
		{"exec stdout of the wrong type", "exec", 200, `{"tool_use_id":"t1","result_block":{"content":{"stdout":42}}}`},
		{"exec trailing garbage", "exec", 200, `{"tool_use_id":"t1","result_block":{}} {}`},
		{"create without session_id", "create", 201, `{"idle_timeout_seconds":60}`},
		{"create with an empty session_id", "create", 201, `{"session_id":""}`},
		{"list without files", "list", 200, `{"entries":[]}`},
		{"list of the wrong type", "list", 200, `{"files":{"a":1}}`},
		{"put not JSON", "put", 201, "stored"},
		{"describe not JSON", "describe", 200, "<html>caps</html>"},
		{"HTML 500 exec", "exec", 500, "<html><body><h1>Internal Server Error</h1><pre>" + marker + "</pre></body></html>"},
		{"HTML 502 create", "create", 502, "<html><body>Bad Gateway</body></html>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, _ := backend(t, answer(c.status, c.body), nil)
			var err error
			switch c.call {
			case "create":
				_, err = a.CreateSession(ctx, port.CreateSessionRequest{})
			case "exec":
				_, err = execCode(a, 0)
			case "list":
				_, err = a.ListFiles(ctx, "s1", ".")
			case "put":
				_, err = a.PutFile(ctx, "s1", "f", strings.NewReader(marker))
			case "describe":
				_, err = a.Describe(ctx)
			}
			wantErr(t, c.name, err, port.ErrBackendUnreachable)
			if strings.Contains(err.Error(), marker) || strings.Contains(err.Error(), "<html") || strings.Contains(err.Error(), "Internal Server Error") {
				t.Fatalf("message quotes the body: %v", err)
			}
		})
	}

	t.Run("response over the cap", func(t *testing.T) {
		big := `{"tool_use_id":"t1","result_block":{"content":{"stdout":"` + strings.Repeat("y", 4096) + `"}}}`
		a, _ := backend(t, answer(200, big), func(c httpadapter.Config) httpadapter.Config { return c.WithMaxResponseBytes(1024) })
		_, err := execCode(a, 0)
		wantErr(t, "over the cap", err, port.ErrBackendUnreachable)
	})
}

func TestLenientParsing(t *testing.T) {
	ctx := context.Background()
	// What the reference backend and others may send: nulls, unknown
	// fields, no codeport outcome.
	exec := `{"tool_use_id":"srvtoolu_9","execution_time_ms":12,"future_field":{"x":[1,2]},
		"result_block":{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_9","extra":true,
		"content":{"type":"code_execution_result","stdout":null,"stderr":null,"return_code":null,"content":null,"more":1}}}`
	a, _ := backend(t, answer(200, exec), nil)
	res, err := execCode(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "" || res.Stderr != "" || res.ReturnCode != 0 || res.Outcome != port.OutcomeCompleted ||
		res.ToolUseID != "srvtoolu_9" || res.Tool != port.ToolCodeExecution || res.Duration != 12*time.Millisecond {
		t.Fatalf("nulls: %+v", res)
	}

	failed := `{"tool_use_id":"","result_block":{"tool_use_id":"srvtoolu_2","content":{"stdout":"partial\n","stderr":"Traceback...","return_code":3,
		"content":[{"type":"code_execution_output","file_id":"f1","filename":"plot.png"}]}}}`
	a, _ = backend(t, answer(200, failed), nil)
	res, err = execCode(a, 0)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != port.OutcomeProgramError || res.ReturnCode != 3 || res.Stdout != "partial\n" || res.ToolUseID != "srvtoolu_2" ||
		res.Tool != port.ToolCodeExecution || len(res.Files) != 1 || res.Files[0].Filename != "plot.png" {
		t.Fatalf("a failed program: %+v", res)
	}

	a, _ = backend(t, answer(201, `{"session_id":"abc","unknown":null}`), nil)
	if s, err := a.CreateSession(ctx, port.CreateSessionRequest{}); err != nil || s.ID != "abc" || s.IdleTimeout != 0 {
		t.Fatalf("minimal handle: %+v %v", s, err)
	}
	a, _ = backend(t, answer(200, `{"files":[{"path":"a.txt","size_bytes":3,"owner":"x"},{"path":"d","is_dir":true}],"cursor":null}`), nil)
	if l, err := a.ListFiles(ctx, "s1", ""); err != nil || len(l) != 2 || l[0].Size != 3 || !l[1].IsDir {
		t.Fatalf("list: %+v %v", l, err)
	}
	a, _ = backend(t, answer(200, `{"files":[]}`), nil)
	if l, err := a.ListFiles(ctx, "s1", ""); err != nil || len(l) != 0 {
		t.Fatalf("empty list: %+v %v", l, err)
	}
	a, _ = backend(t, answer(201, `{"size_bytes":6}`), nil)
	if info, err := a.PutFile(ctx, "s1", "d/f.txt", strings.NewReader("abcdef")); err != nil || info.Path != "d/f.txt" || info.Size != 6 {
		t.Fatalf("upload result without a path: %+v %v", info, err)
	}
}

// TestWhatGoesOnTheWire checks the requests the adapter sends: routes
// under the base URL's path, escaping, headers and bodies.
func TestWhatGoesOnTheWire(t *testing.T) {
	type seen struct {
		method, rawPath, query, auth, ctype, body, filename string
		fields                                              []string
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := seen{method: r.Method, rawPath: r.URL.EscapedPath(), query: r.URL.RawQuery,
			auth: r.Header.Get("Authorization"), ctype: r.Header.Get("Content-Type")}
		if mr, err := r.MultipartReader(); err == nil {
			for {
				p, err := mr.NextPart()
				if err != nil {
					break
				}
				b, _ := io.ReadAll(p)
				s.fields = append(s.fields, p.FormName()+"="+string(b))
				if p.FormName() == "file" {
					s.filename = p.FileName()
				}
			}
		} else {
			b, _ := io.ReadAll(r.Body)
			s.body = string(b)
		}
		got <- s
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/sessions"):
			answer(201, `{"session_id":"x"}`)(w, r)
		case strings.HasSuffix(r.URL.Path, "/exec"):
			answer(200, `{"tool_use_id":"toolu_1","result_block":{"content":{}}}`)(w, r)
		case strings.HasSuffix(r.URL.Path, "/files/list"):
			answer(200, `{"files":[]}`)(w, r)
		case r.Method == http.MethodPost:
			answer(201, `{"path":"p","size_bytes":1}`)(w, r)
		case r.Method == http.MethodGet:
			answer(200, "data", "Content-Type", "text/plain")(w, r)
		default:
			w.WriteHeader(204)
		}
	}))
	t.Cleanup(srv.Close)
	a := newAdapter(t, httpadapter.NewConfig(srv.URL+"/prefix/").WithToken("tok-1"))
	ctx := context.Background()
	id := "a/b c?d"
	const escID = "a%2Fb%20c%3Fd"
	check := func(what string, s seen, method, rawPath, query, body string) {
		t.Helper()
		if s.method != method || s.rawPath != rawPath || s.query != query || s.auth != "Bearer tok-1" || (body != "*" && s.body != body) {
			t.Fatalf("%s: %+v", what, s)
		}
	}

	if _, err := a.CreateSession(ctx, port.CreateSessionRequest{IdleTimeout: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	check("create", <-got, "POST", "/prefix/sessions", "", `{"idle_timeout_seconds":2}`)

	if _, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)", Timeout: 2500 * time.Millisecond, ToolUseID: "toolu_1"}); err != nil {
		t.Fatal(err)
	}
	check("exec", <-got, "POST", "/prefix/sessions/"+escID+"/exec", "",
		`{"tool":"code_execution","input":{"code":"print(1)"},"timeout_seconds":3,"tool_use_id":"toolu_1"}`)

	// A tool kind contract v1 does not know is sent as is.
	if _, err := a.Execute(ctx, "s", port.ExecuteRequest{Tool: "bash_code_execution_v2", Command: "ls"}); err != nil {
		t.Fatal(err)
	}
	check("unknown tool", <-got, "POST", "/prefix/sessions/s/exec", "", `{"tool":"bash_code_execution_v2","input":{"command":"ls"}}`)

	if _, err := a.ListFiles(ctx, id, "dir with/&=?"); err != nil {
		t.Fatal(err)
	}
	check("list", <-got, "GET", "/prefix/sessions/"+escID+"/files/list", "path=dir+with%2F%26%3D%3F", "")
	if _, err := a.ListFiles(ctx, "s", ""); err != nil {
		t.Fatal(err)
	}
	check("list root", <-got, "GET", "/prefix/sessions/s/files/list", "path=.", "")

	rc, info, err := a.GetFile(ctx, id, "out/r&d.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	_ = rc.Close()
	check("get", <-got, "GET", "/prefix/sessions/"+escID+"/files", "path=out%2Fr%26d.txt", "")
	if string(b) != "data" || info.Size != 4 || info.MimeType != "text/plain" || info.Path != "out/r&d.txt" {
		t.Fatalf("get: %q %+v", b, info)
	}

	if _, err := a.PutFile(ctx, id, "in/data.csv", strings.NewReader("a,b")); err != nil {
		t.Fatal(err)
	}
	s := <-got
	check("put", s, "POST", "/prefix/sessions/"+escID+"/files", "", "*")
	if !strings.HasPrefix(s.ctype, "multipart/form-data; boundary=") || strings.Join(s.fields, "|") != "path=in/data.csv|file=a,b" || s.filename != "data.csv" {
		t.Fatalf("put: %+v", s)
	}

	if err := a.DestroySession(ctx, id); err != nil {
		t.Fatal(err)
	}
	check("destroy", <-got, "DELETE", "/prefix/sessions/"+escID, "", "")

	// Ids that cannot name a session on the wire never leave the adapter.
	for _, bad := range []string{"", ".", ".."} {
		if _, err := a.Execute(ctx, bad, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "1"}); !errors.Is(err, port.ErrSessionNotFound) {
			t.Fatalf("exec in %q: %v", bad, err)
		}
	}
	select {
	case s := <-got:
		t.Fatalf("unexpected request %+v", s)
	default:
	}
}

func TestErrorMessagesNeverQuoteCodeOrFiles(t *testing.T) {
	ctx := context.Background()
	// Backends that echo the request back in their errors, in the shapes
	// seen in the wild.
	echo := func(status int, shape string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			var body string
			switch shape {
			case "string":
				body = fmt.Sprintf(`{"detail":%q}`, "bad request: "+string(b))
			case "fastapi":
				body = fmt.Sprintf(`{"detail":[{"type":"value_error","loc":["body","input"],"msg":"Value error, too long","input":%q}]}`, string(b))
			case "object":
				body = fmt.Sprintf(`{"detail":{"request":%q}}`, string(b))
			case "plain":
				body = "<pre>" + string(b) + "</pre>"
			}
			answer(status, body)(w, r)
		}
	}
	for _, status := range []int{400, 413, 422, 500, 503} {
		for _, shape := range []string{"string", "fastapi", "object", "plain"} {
			a, _ := backend(t, echo(status, shape), nil)
			_, err := a.Execute(ctx, "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x = 1\n" + markedCode + "\ny = 2"})
			if err == nil || strings.Contains(err.Error(), marker) {
				t.Fatalf("%d %s exec: %v", status, shape, err)
			}
			_, err = a.Execute(ctx, "s1", port.ExecuteRequest{Tool: port.ToolTextEditorExecution,
				Editor: &port.EditorInput{Command: port.EditorCreate, Path: "a.py", FileText: ptr(marker + "\n")}})
			if err == nil || strings.Contains(err.Error(), marker) {
				t.Fatalf("%d %s editor: %v", status, shape, err)
			}
			_, err = a.PutFile(ctx, "s1", "f.txt", strings.NewReader("header line\n"+marker+"\n"))
			if err == nil || strings.Contains(err.Error(), marker) {
				t.Fatalf("%d %s put: %v", status, shape, err)
			}
		}
	}
	// A FastAPI validation error keeps its useful part.
	a, _ := backend(t, answer(422, `{"detail":[{"type":"less_than_equal","loc":["body","timeout_seconds"],"msg":"Input should be less than or equal to 120","input":300,"ctx":{"le":120}}]}`), nil)
	_, err := a.Execute(ctx, "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: markedCode, Timeout: 300 * time.Second})
	wantErr(t, "422", err, port.ErrInvalidRequest)
	if !strings.Contains(err.Error(), "body.timeout_seconds: Input should be less than or equal to 120") {
		t.Fatalf("message: %v", err)
	}
	// A long detail is cut short.
	a, _ = backend(t, answer(422, fmt.Sprintf(`{"detail":%q}`, strings.Repeat("é", 300))), nil)
	_, err = execCode(a, 0)
	if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "...") {
		t.Fatalf("long detail: %d bytes: %v", len(err.Error()), err)
	}
}

func TestDownloadCap(t *testing.T) {
	const limit = 1000
	serve := func(size int, withLength bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if withLength {
				w.Header().Set("Content-Length", fmt.Sprint(size))
			}
			w.WriteHeader(200)
			if !withLength {
				w.(http.Flusher).Flush() // chunked: no length upfront
			}
			_, _ = w.Write([]byte(strings.Repeat("z", size)))
		}
	}
	get := func(h http.HandlerFunc) ([]byte, port.FileInfo, error, error) {
		a, _ := backend(t, h, func(c httpadapter.Config) httpadapter.Config { return c.WithMaxFileBytes(limit) })
		rc, info, err := a.GetFile(context.Background(), "s1", "f.bin")
		if err != nil {
			return nil, info, err, nil
		}
		defer rc.Close()
		b, rerr := io.ReadAll(rc)
		return b, info, nil, rerr
	}

	_, _, err, _ := get(serve(limit+1, true))
	wantErr(t, "announced over the cap", err, port.ErrFileTooLarge)

	b, info, err, rerr := get(serve(limit+1, false))
	if err != nil || info.Size != -1 {
		t.Fatalf("unannounced: %v %+v", err, info)
	}
	wantErr(t, "streamed over the cap", rerr, port.ErrFileTooLarge)
	if len(b) > limit {
		t.Fatalf("delivered %d bytes past a cap of %d", len(b), limit)
	}

	for _, withLength := range []bool{true, false} {
		b, _, err, rerr := get(serve(limit, withLength))
		if err != nil || rerr != nil || len(b) != limit {
			t.Fatalf("exactly the cap (length %v): %d bytes, %v, %v", withLength, len(b), err, rerr)
		}
	}
}

func TestDescribe(t *testing.T) {
	ctx := context.Background()
	for _, status := range []int{404, 405} {
		a, _ := backend(t, answer(status, `{"detail":"Not Found"}`), nil)
		caps, err := a.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if caps.Backend != "http" || caps.Runtime != "Python" || caps.RuntimeVersion != "" || caps.Network ||
			len(caps.Packages) != 0 || len(caps.Tools) != 1 || caps.Tools[0] != port.ToolCodeExecution ||
			len(caps.Limitations) != 1 || caps.Limits != (port.Limits{}) || !caps.Partial {
			t.Fatalf("%d: %+v", status, caps)
		}
	}

	calls := 0
	a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		answer(200, `{"backend":"wasm","runtime":"CPython","runtime_version":"3.12.0","tools":["code_execution","text_editor_code_execution"],
			"packages":[{"name":"numpy","version":"2.0"}],"unavailable_modules":["ssl"],"network":false,"working_directory":"/workspace",
			"limits":{"default_timeout_seconds":30,"max_sessions":8},"purpose_hint":"Runs Python.","new_field":1}`)(w, r)
	}, nil)
	for range 3 {
		caps, err := a.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if caps.Backend != "http" || caps.Runtime != "CPython" || caps.RuntimeVersion != "3.12.0" || len(caps.Tools) != 2 ||
			caps.Packages[0].Name != "numpy" || caps.Limits.DefaultTimeout != 30*time.Second || caps.Limits.MaxSessions != 8 ||
			caps.PurposeHint != "Runs Python." || caps.WorkingDirectory != "/workspace" || caps.Partial {
			t.Fatalf("%+v", caps)
		}
	}
	if calls != 1 {
		t.Fatalf("%d calls to /capabilities; the description is cached", calls)
	}
}

func TestConfigValidation(t *testing.T) {
	for _, u := range []string{
		"", "localhost:8080", "ftp://host", "http://", "http:///path", "http://user:pw@host",
		"http://host/?x=1", "http://host/?", "http://host/#frag", "mailto:x@example.com", "http://host:port",
		"http://host:99999", "https://host:0", "http://[::1]:65536", "http://host:0080000",
	} {
		if _, err := httpadapter.New(httpadapter.NewConfig(u)); err == nil {
			t.Errorf("%q accepted", u)
		}
	}
	for _, u := range []string{"http://127.0.0.1:8080", "https://sandbox.internal/", "HTTP://host/prefix/", "http://[::1]:9000"} {
		if _, err := httpadapter.New(httpadapter.NewConfig(u)); err != nil {
			t.Errorf("%q refused: %v", u, err)
		}
	}
	base := httpadapter.NewConfig("http://host")
	for name, c := range map[string]httpadapter.Config{
		"zero margin":          base.WithTimeoutMargin(0),
		"negative default":     base.WithDefaultTimeout(-time.Second),
		"zero request timeout": base.WithRequestTimeout(0),
		"zero file cap":        base.WithMaxFileBytes(0),
		"zero response cap":    base.WithMaxResponseBytes(0),
		"token with newline":   base.WithToken("a\nb"),
	} {
		if _, err := httpadapter.New(c); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	// The With methods return copies.
	_ = base.WithToken("t")
	if _, err := httpadapter.New(base.WithHTTPClient(nil).WithLogger(nil)); err != nil {
		t.Fatal(err)
	}
}

func TestCloseDuringAStalledDownload(t *testing.T) {
	a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		_, _ = w.Write(make([]byte, 10))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}, func(c httpadapter.Config) httpadapter.Config { return c.WithRequestTimeout(time.Minute) })
	rc, _, err := a.GetFile(context.Background(), "s1", "f")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(rc, buf); err != nil {
		t.Fatal(err)
	}
	readErr := make(chan error, 1)
	go func() {
		_, err := rc.Read(buf)
		readErr <- err
	}()
	closed := make(chan struct{})
	go func() {
		_ = rc.Close()
		close(closed)
	}()
	wait, cancel := testwait.Context(t)
	defer cancel()
	select {
	case <-closed:
	case <-wait.Done():
		t.Fatal("Close hangs on a stalled backend")
	}
	select {
	case <-readErr:
	case <-wait.Done():
		t.Fatal("a Read blocked on a stalled backend outlives Close")
	}
}

// A streamed exec from a backend that breaks the event stream is a typed
// failure, never a hang or a result made up; its error event is the error
// its code names; a plain JSON answer to a streaming request is read as
// one.
func TestBrokenEventStreams(t *testing.T) {
	const result = `{"tool_use_id":"t","execution_time_ms":1,"result_block":{"type":"code_execution_tool_result","tool_use_id":"t","content":{"type":"code_execution_result","stdout":"ab","stderr":"","return_code":0,"content":[]}}}`
	for _, c := range []struct {
		name, body, ctype string
		want              error  // nil: success
		chunks            string // what OnOutput got
	}{
		{"whole", "event: stdout\ndata: {\"text\":\"a\"}\n\n: keep-alive\n\nevent: stdout\r\ndata: {\"text\":\"b\"}\r\n\r\nevent: result\ndata: " + result + "\n\n", "text/event-stream", nil, "ab"},
		{"plain json", result, "application/json", nil, "ab"},
		{"no result", "event: stdout\ndata: {\"text\":\"a\"}\n\n", "text/event-stream", port.ErrBackendUnreachable, "a"},
		{"bad output", "event: stdout\ndata: [1]\n\n", "text/event-stream", port.ErrBackendUnreachable, ""},
		{"line too long", "event: stdout\ndata: {\"text\":\"" + strings.Repeat("x", 5000) + "\"}\n\n", "text/event-stream", port.ErrBackendUnreachable, ""},
		{"output over the cap", strings.Repeat("event: stdout\ndata: {\"text\":\""+strings.Repeat("x", 900)+"\"}\n\n", 3), "text/event-stream", port.ErrBackendUnreachable, strings.Repeat("x", 1800)},
		{"error event", "event: stdout\ndata: {\"text\":\"a\"}\n\nevent: error\ndata: {\"detail\":\"busy\",\"code\":\"session_busy\"}\n\n", "text/event-stream", port.ErrSessionBusy, "a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, _ := backend(t, answer(http.StatusOK, c.body, "Content-Type", c.ctype), func(cfg httpadapter.Config) httpadapter.Config {
				return cfg.WithMaxResponseBytes(2000)
			})
			var got strings.Builder
			res, err := a.Execute(context.Background(), "s1", port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: markedCode,
				OnOutput: func(_ port.Stream, b []byte) { got.Write(b) }})
			switch {
			case c.want == nil && (err != nil || res.Stdout != "ab"):
				t.Fatalf("%v %+v", err, res)
			case c.want != nil && !errors.Is(err, c.want):
				t.Fatalf("error %v, want %v", err, c.want)
			case err != nil && strings.Contains(err.Error(), marker):
				t.Fatalf("the error carries the code: %v", err)
			}
			if got.String() != c.chunks {
				t.Fatalf("OnOutput got %q, want %q", got.String(), c.chunks)
			}
		})
	}
}

// The snapshot routes: a remote that says it offers snapshots and then
// answers route_not_found has none (ErrUnsupported, not an unreachable
// backend); invalid_snapshot and session_not_found keep their meaning; a
// snapshot body shorter than its Content-Length is an error.
func TestSnapshotRouteErrors(t *testing.T) {
	ctx := context.Background()
	caps := `{"backend":"wasm","runtime":"CPython","runtime_version":"3.13.5","tools":["code_execution"],"packages":[],"unavailable_modules":[],"network":false,"working_directory":"/workspace","limits":{},"purpose_hint":"x","snapshots":true}`
	cases := []struct {
		status int
		body   string
		want   error
	}{
		{404, `{"detail":"no snapshots","code":"route_not_found"}`, port.ErrUnsupported},
		{400, `{"detail":"altered","code":"invalid_snapshot"}`, port.ErrInvalidSnapshot},
		{404, `{"detail":"gone","code":"session_not_found"}`, port.ErrSessionNotFound},
	}
	for _, c := range cases {
		a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/capabilities" {
				answer(200, caps)(w, r)
				return
			}
			answer(c.status, c.body)(w, r)
		}, nil)
		if !a.SnapshotsOffered(ctx) {
			t.Fatal("snapshots not offered although the remote says so")
		}
		err := a.SnapshotSession(ctx, "s1", io.Discard, port.SnapshotOptions{})
		if !errors.Is(err, c.want) {
			t.Errorf("snapshot answered %d %s: %v, want %v", c.status, c.body, err, c.want)
		}
		if c.want == port.ErrSessionNotFound {
			continue
		}
		_, err = a.RestoreSession(ctx, strings.NewReader("sealed bytes"), port.SnapshotOptions{Tenant: "t"})
		if !errors.Is(err, c.want) {
			t.Errorf("restore answered %d %s: %v, want %v", c.status, c.body, err, c.want)
		}
	}
	short, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/capabilities" {
			answer(200, caps)(w, r)
			return
		}
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(200)
		_, _ = w.Write([]byte("only some"))
	}, nil)
	if err := short.SnapshotSession(ctx, "s1", io.Discard, port.SnapshotOptions{}); err == nil {
		t.Error("a truncated snapshot body was accepted")
	}
}

// Whether the remote offers snapshots is asked within the caller's
// context: a snapshot or restore cancelled while the remote is slow to
// describe itself ends with the cancellation, not after the request
// timeout, and a remote that cannot be asked is not reported as one
// without snapshots.
func TestSnapshotOfferAskedWithinTheCallersContext(t *testing.T) {
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	a, _ := backend(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/capabilities" {
			asked <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		t.Errorf("unexpected %s %s", r.Method, r.URL.Path)
	}, func(c httpadapter.Config) httpadapter.Config { return c.WithRequestTimeout(time.Hour) })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-asked
		cancel()
	}()
	err := a.SnapshotSession(ctx, "s1", io.Discard, port.SnapshotOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("snapshot cancelled while the remote describes itself: %v, want context.Canceled", err)
	}
	if errors.Is(err, port.ErrUnsupported) {
		t.Fatalf("a cancelled ask reported as no snapshots: %v", err)
	}
}

// The largest response cap takes every byte of an answer: one byte over
// it cannot be asked for.
func TestLargestResponseCap(t *testing.T) {
	a, _ := backend(t, answer(200, `{"session_id":"s1"}`), func(c httpadapter.Config) httpadapter.Config {
		return c.WithMaxResponseBytes(math.MaxInt64)
	})
	s, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil || s.ID != "s1" {
		t.Fatalf("CreateSession under the largest cap: %+v, %v", s, err)
	}
}
