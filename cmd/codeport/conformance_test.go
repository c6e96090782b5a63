package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/server"
)

func runConformance(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := conformanceCommand(t.Context(), args, &out, &errb)
	t.Logf("codeport conformance %s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errb.String())
	return code, out.String(), errb.String()
}

// serveWasm serves a wasm adapter with room for four sessions over
// contract v1 on loopback, and returns its URL.
func serveWasm(t *testing.T, wrap func(http.Handler) http.Handler, opts ...server.Option) string {
	t.Helper()
	a := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(4) })
	var h http.Handler = server.NewHandler(a, opts...)
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

var summaryLine = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed(, (\d+) skipped)?\n\z`)

func TestConformanceAgainstServe(t *testing.T) {
	url := serveWasm(t, nil, server.WithBearerToken("tok"))
	code, out, errs := runConformance(t, "--base-url", url+"/", "--auth-token", "tok", "-v")
	m := summaryLine.FindStringSubmatch(out)
	if code != 0 || m == nil || m[2] != "0" || m[1] == "0" {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	for _, want := range []string{"PASS session/capacity (", "PASS timeout/partial-output (", "SKIP bash/basics: backend does not offer bash_code_execution"} {
		if !strings.Contains(out, want) && !(strings.HasPrefix(want, "SKIP bash") && strings.Contains(out, "PASS bash/basics")) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Without the token every call is refused: the checks fail, and the
	// 401 answers themselves are what the document allows.
	code, out, _ = runConformance(t, "--base-url", url, "--run", "^session/state-persists$")
	if code != 1 || !strings.Contains(out, "FAIL session/state-persists: ") || strings.Contains(out, "openapi") || !strings.HasSuffix(out, "0 passed, 1 failed\n") {
		t.Fatalf("without the token: exit %d\n%s", code, out)
	}
}

// TestConformanceCatchesDocumentViolations serves a backend that the
// adapter can work with but that sends an outcome openapi.yaml does not
// allow: the checks that received such a response fail.
func TestConformanceCatchesDocumentViolations(t *testing.T) {
	badOutcome := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/exec") {
				h.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			var m map[string]any
			if rec.Code == http.StatusOK && json.Unmarshal(body, &m) == nil {
				m["outcome"] = "exploded"
				body, _ = json.Marshal(m)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
		})
	}
	url := serveWasm(t, badOutcome)
	code, out, _ := runConformance(t, "--base-url", url, "--run", "^(tool/code_execution|errors/unknown-session)$")
	if code != 1 || !strings.Contains(out, "FAIL tool/code_execution: response violates openapi.yaml: POST /sessions/") ||
		!strings.Contains(out, "outcome") || !strings.Contains(out, "PASS errors/unknown-session (") || !strings.HasSuffix(out, "1 passed, 1 failed\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

// TestConformanceAgainstABrokenServer points the command at a server that
// nests nothing: the result block sits at the top level of the exec
// response, and session handles carry nulls.
func TestConformanceAgainstABrokenServer(t *testing.T) {
	mux := http.NewServeMux()
	writeJSON := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
	mux.HandleFunc("POST /sessions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusCreated, `{"session_id":"s1","idle_timeout_seconds":null}`)
	})
	mux.HandleFunc("DELETE /sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /sessions/{id}/exec", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, `{"type":"code_execution_tool_result","tool_use_id":"t1","content":{"type":"code_execution_result","stdout":"42\n","stderr":"","return_code":0,"content":[]}}`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, `{"detail":"no such route"}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	code, out, _ := runConformance(t, "--base-url", srv.URL, "--run", "^(session/state-persists|session/destroy|tool/code_execution)$")
	if code != 1 || strings.Count(out, "FAIL ") < 3 || !strings.Contains(out, "response violates openapi.yaml") || !strings.HasSuffix(out, "0 passed, 3 failed\n") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}

func TestConformanceUsage(t *testing.T) {
	code, out, _ := runConformance(t, "--help")
	if code != 0 || !strings.Contains(out, "Usage: codeport conformance") || !strings.Contains(out, "-base-url") {
		t.Fatalf("--help: %d %q", code, out)
	}
	for _, args := range [][]string{
		{},
		{"--base-url", "ftp://x"},
		{"--base-url", "http://127.0.0.1:1", "--run", "("},
		{"--base-url", "http://127.0.0.1:1", "--max-sessions", "-1"},
		{"--base-url", "http://127.0.0.1:1", "extra"},
		{"--no-such-flag"},
	} {
		if code, _, errs := runConformance(t, args...); code != 2 || !strings.Contains(errs, "Usage") {
			t.Errorf("%q: exit %d, stderr %q", args, code, errs)
		}
	}
	// Nothing matches: nothing runs, nothing fails.
	if code, out, _ := runConformance(t, "--base-url", "http://127.0.0.1:1", "--run", "^nothing$"); code != 0 || out != "0 passed, 0 failed\n" {
		t.Fatalf("empty run: %d %q", code, out)
	}
}

// The checker of streamed execs finds what breaks the event stream's
// rules, and lets a good stream through untouched.
func TestEventStreamChecks(t *testing.T) {
	const result = `{"tool_use_id":"t","execution_time_ms":1,"result_block":{"type":"code_execution_tool_result","tool_use_id":"t","content":{"type":"code_execution_result","stdout":"a","stderr":"","return_code":0,"content":[]}}}`
	for _, c := range []struct{ name, stream, want string }{
		{"good", "event: stdout\ndata: {\"text\":\"a\"}\n\n: keep-alive\n\nevent: result\ndata: " + result + "\n\n", ""},
		{"no end", "event: stdout\ndata: {\"text\":\"a\"}\n\n", "ended without a result or error event"},
		{"after the end", "event: result\ndata: " + result + "\n\nevent: stdout\ndata: {\"text\":\"a\"}\n\n", "a stdout event after the result event"},
		{"unknown event", "event: progress\ndata: {}\n\n", `an event named "progress"`},
		{"bad data", "event: stdout\ndata: {\"text\":1}\n\n", "stdout event data does not match OutputEvent"},
		{"bad error", "event: error\ndata: {\"code\":\"x\"}\n\n", "error event data does not match Error"},
		{"garbage line", "hello\n\n", "a line that is not an event"},
		// What any event-stream client reads, but our server never writes.
		{"CRLF", "event: stdout\r\ndata: {\"text\":\"a\"}\r\n\r\nevent: result\r\ndata: " + result + "\r\n\r\n", "line 1: a line that ends with CR"},
		{"no space", "event: stdout\ndata:{\"text\":\"a\"}\n\nevent: result\ndata: " + result + "\n\n", `line 2: an event or data line not in the form "name: value"`},
		{"two data lines", "event: stdout\ndata: {\"text\":\ndata: \"a\"}\n\nevent: result\ndata: " + result + "\n\n", "line 3: an event with more than one data line"},
		{"an id", "id: 1\nevent: result\ndata: " + result + "\n\n", "line 1: a line that is not an event, data or comment line"},
		{"no data", "event: stdout\n\nevent: result\ndata: " + result + "\n\n", "line 2: an event without a data line"},
		{"the end inside an event", "event: result\ndata: " + result + "\n\nevent: stdout\n", "line 5: the stream ended inside an event"},
	} {
		t.Run(c.name, func(t *testing.T) {
			vt, err := newValidatingTransport(http.DefaultTransport, "")
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest("POST", "/sessions/s/exec", nil)
			ck := newEventChecker(io.NopCloser(strings.NewReader(c.stream)), vt, req)
			got, err := io.ReadAll(ck)
			if err != nil || string(got) != c.stream {
				t.Fatalf("the stream was changed: %q %v", got, err)
			}
			stray := strings.Join(vt.unattributed(), "; ")
			if c.want == "" && stray != "" || c.want != "" && !strings.Contains(stray, c.want) {
				t.Fatalf("violations %q, want %q", stray, c.want)
			}
		})
	}
}
