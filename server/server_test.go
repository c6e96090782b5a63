package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
	"github.com/codeport/codeport/server"
)

const execCode = `{"tool":"code_execution","input":{"code":"print(1)"}}`

func TestStatusMapping(t *testing.T) {
	tests := []struct {
		err    error
		status int
		code   string
	}{
		{port.ErrSessionNotFound, http.StatusNotFound, "session_not_found"},
		{port.ErrFileNotFound, http.StatusNotFound, "file_not_found"},
		{port.ErrSessionBusy, http.StatusConflict, "session_busy"},
		{port.ErrAtCapacity, http.StatusServiceUnavailable, "at_capacity"},
		{&port.CapacityError{Resource: "sessions", Limit: 4, RetryAfter: 2 * time.Second}, http.StatusServiceUnavailable, "at_capacity"},
		{port.ErrClosed, http.StatusServiceUnavailable, "closed"},
		{&port.CapacityError{Resource: "executions", RetryAfter: time.Second, RateLimited: true}, http.StatusTooManyRequests, "rate_limited"},
		{port.ErrInvalidRequest, http.StatusUnprocessableEntity, "invalid_request"},
		{port.ErrUnsupportedTool, http.StatusBadRequest, "unsupported_tool"},
		{port.ErrPathEscapesWorkspace, http.StatusForbidden, "path_escapes_workspace"},
		{port.ErrFileTooLarge, http.StatusRequestEntityTooLarge, "file_too_large"},
		{port.ErrIsDirectory, http.StatusBadRequest, "is_directory"},
		{port.ErrUnauthorized, http.StatusUnauthorized, "unauthorized"},
		{port.ErrBackendUnreachable, http.StatusBadGateway, "backend_unreachable"},
		{port.ErrRuntimeFailure, http.StatusInternalServerError, "runtime_failure"},
		// A runtime failure because the adapter closed is the server
		// shutting down, not a failure: the first code in port's order wins.
		{fmt.Errorf("%w: %w", port.ErrRuntimeFailure, port.ErrClosed), http.StatusServiceUnavailable, "closed"},
		{errors.New("something else entirely"), http.StatusInternalServerError, "internal_error"},
	}
	// Every operation that calls the port, with a request that is valid so
	// that the port's error is what decides the status.
	ops := []struct {
		name           string
		method, target string
		body           func() (io.Reader, string)
	}{
		{"create", "POST", "/sessions", nil},
		{"exec", "POST", "/sessions/s1/exec", func() (io.Reader, string) {
			return strings.NewReader(execCode), "application/json"
		}},
		{"list", "GET", "/sessions/s1/files/list?path=.", nil},
		{"get", "GET", "/sessions/s1/files?path=a.txt", nil},
		{"put", "POST", "/sessions/s1/files", func() (io.Reader, string) {
			return multipartBody(t, "", "a.txt", "hello")
		}},
		{"capabilities", "GET", "/capabilities", nil},
	}
	for _, tc := range tests {
		for _, op := range ops {
			for _, wrapped := range []bool{false, true} {
				err := tc.err
				if wrapped {
					err = fmt.Errorf("adapter: doing things: %w", err)
				}
				t.Run(fmt.Sprintf("%s/%v/wrapped=%v", op.name, tc.err, wrapped), func(t *testing.T) {
					fp := newFakePort()
					fp.err = err
					h := newHarness(t, fp)
					var body io.Reader
					ct := ""
					if op.body != nil {
						body, ct = op.body()
					}
					req, _ := http.NewRequest(op.method, h.srv.URL+op.target, body)
					if ct != "" {
						req.Header.Set("Content-Type", ct)
					}
					r := h.send(req)
					if r.status != tc.status {
						t.Fatalf("status %d, want %d (body %s)", r.status, tc.status, r.body)
					}
					if got := r.code(t); got != tc.code {
						t.Errorf("code %q, want %q", got, tc.code)
					}
					if tc.status == http.StatusServiceUnavailable && r.header.Get("Retry-After") == "" {
						t.Error("503 without Retry-After")
					}
					detail := r.detail(t)
					switch {
					case tc.status >= 500 && tc.status != http.StatusServiceUnavailable:
						if strings.Contains(detail, "adapter") || strings.Contains(detail, "entirely") {
							t.Errorf("5xx detail leaks the internal error: %q", detail)
						}
					case detail == "":
						t.Error("empty detail")
					}
					if tc.status == http.StatusUnauthorized && r.header.Get("WWW-Authenticate") != "Bearer" {
						t.Errorf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
					}
				})
			}
		}
	}
}

// TestErrorCodes drives every code of contract.ErrorCodes through the
// handler, by a real request that earns it, and checks the status, the
// code and the headers that go with it: the server's table, the OpenAPI
// enum (TestSpecChecker's harness validates each body) and ErrorCodes
// cannot drift apart.
func TestErrorCodes(t *testing.T) {
	type want struct {
		status     int
		retryAfter bool
	}
	wants := map[string]want{
		"closed":                 {http.StatusServiceUnavailable, true},
		"rate_limited":           {http.StatusTooManyRequests, true},
		"at_capacity":            {http.StatusServiceUnavailable, true},
		"unauthorized":           {http.StatusUnauthorized, false},
		"session_not_found":      {http.StatusNotFound, false},
		"session_busy":           {http.StatusConflict, false},
		"unsupported_tool":       {http.StatusBadRequest, false},
		"path_escapes_workspace": {http.StatusForbidden, false},
		"file_too_large":         {http.StatusRequestEntityTooLarge, false},
		"file_not_found":         {http.StatusNotFound, false},
		"is_directory":           {http.StatusBadRequest, false},
		"invalid_snapshot":       {http.StatusBadRequest, false},
		"unsupported":            {http.StatusNotImplemented, false},
		"invalid_request":        {http.StatusUnprocessableEntity, false},
		"backend_unreachable":    {http.StatusBadGateway, false},
		"runtime_failure":        {http.StatusInternalServerError, false},
		"request_too_large":      {http.StatusRequestEntityTooLarge, false},
		"unsupported_media_type": {http.StatusUnsupportedMediaType, false},
		"route_not_found":        {http.StatusNotFound, false},
		"method_not_allowed":     {http.StatusMethodNotAllowed, false},
		"not_ready":              {http.StatusServiceUnavailable, false},
		"internal_error":         {http.StatusInternalServerError, false},
		"request_timeout":        {http.StatusRequestTimeout, false},
		"host_not_allowed":       {http.StatusForbidden, false},
	}
	for _, code := range contract.ErrorCodes() {
		if _, ok := wants[code]; !ok {
			t.Errorf("code %q has no expected status here", code)
		}
	}
	if len(wants) != len(contract.ErrorCodes()) {
		t.Errorf("%d codes expected here, contract.ErrorCodes has %d", len(wants), len(contract.ErrorCodes()))
	}
	check := func(t *testing.T, r response, code string) {
		t.Helper()
		w := wants[code]
		if r.status != w.status || r.code(t) != code || r.detail(t) == "" {
			t.Fatalf("status %d code %q, want %d %q: %s", r.status, r.code(t), w.status, code, r.body)
		}
		if got := r.header.Get("Retry-After") != ""; got != w.retryAfter {
			t.Errorf("Retry-After %q, want one: %v", r.header.Get("Retry-After"), w.retryAfter)
		}
	}

	// The port's codes: an error received with the code (as adapters/http
	// and the worker protocol rebuild one) goes out with the same code.
	for _, code := range port.ErrorCodes() {
		t.Run(code, func(t *testing.T) {
			err, ok := port.ErrorFromCode(code, "remote says "+code, 3*time.Second)
			if !ok {
				t.Fatalf("port.ErrorFromCode does not know %q", code)
			}
			fp := newFakePort()
			fp.err = err
			check(t, newHarness(t, fp).do("POST", "/sessions/s1/exec", execCode), code)
		})
	}

	// The server's own, each by the request that earns it.
	fp := newFakePort()
	fp.addSession("s1", nil)
	var ready atomic.Bool
	h := newHarness(t, fp, server.WithMaxRequestBytes(256), server.WithMaxUploadBytes(1024), server.WithReady(ready.Load))
	big := `{"tool":"code_execution","input":{"code":"` + strings.Repeat("x", 1000) + `"}}`
	check(t, h.do("POST", "/sessions/s1/exec", big), "request_too_large")
	check(t, h.do("POST", "/sessions/s1/files", `{"not":"multipart"}`), "unsupported_media_type")
	check(t, h.do("GET", "/no/such/route", ""), "route_not_found")
	check(t, h.do("GET", "/metrics", ""), "route_not_found") // no gatherer
	check(t, h.do("PUT", "/sessions", ""), "method_not_allowed")
	check(t, h.do("GET", "/healthz", ""), "not_ready")
	// An upload over the upload cap is a file too large, not a request
	// too large, whether its length was announced or not.
	body, ct := endlessUpload(4096)
	req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/s1/files", body)
	req.Header.Set("Content-Type", ct)
	check(t, h.send(req), "file_too_large")
	body, ct = endlessUpload(4096)
	req, _ = http.NewRequest("POST", h.srv.URL+"/sessions/s1/files", io.MultiReader(body))
	req.ContentLength = -1
	req.Header.Set("Content-Type", ct)
	check(t, h.send(req), "file_too_large")
	fp.err = errors.New("no sentinel at all")
	check(t, h.do("POST", "/sessions/s1/exec", execCode), "internal_error")
	fp.err = nil
	// A Host no loopback server answers to, without a token.
	req, _ = http.NewRequest("GET", h.srv.URL+"/capabilities", nil)
	req.Host = "attacker.example"
	check(t, h.send(req), "host_not_allowed")
	// A body that stalls past the read timeout.
	slow := newTimeoutServer(t, fp, 200*time.Millisecond)
	r := slow.stall(t, "POST /sessions/s1/exec HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"tool\":")
	h.spec.checkResponse(t, httptest.NewRequest("POST", "/sessions/s1/exec", nil), r.status, r.header, r.body)
	check(t, r, "request_timeout")
}

func TestDestroySession(t *testing.T) {
	h := newHarness(t, nil)
	h.port.addSession("s1", nil)
	if r := h.do("DELETE", "/sessions/s1", ""); r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("DELETE known: %d %q", r.status, r.body)
	}
	if r := h.do("DELETE", "/sessions/never-was", ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE unknown: %d %s", r.status, r.body)
	}
	if got := h.port.destroyed; len(got) != 2 || got[0] != "s1" {
		t.Errorf("destroyed %v", got)
	}

	// A port that does report unknown ids still gets 204: the session is
	// gone either way.
	h.port.err = fmt.Errorf("x: %w", port.ErrSessionNotFound)
	if r := h.do("DELETE", "/sessions/s2", ""); r.status != http.StatusNoContent {
		t.Fatalf("DELETE with ErrSessionNotFound: %d %s", r.status, r.body)
	}
	h.port.err = port.ErrRuntimeFailure
	if r := h.do("DELETE", "/sessions/s2", ""); r.status != http.StatusInternalServerError {
		t.Fatalf("DELETE with ErrRuntimeFailure: %d %s", r.status, r.body)
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&port.CapacityError{RetryAfter: 3 * time.Second}, "3"},
		{&port.CapacityError{RetryAfter: 1500 * time.Millisecond}, "2"},
		{&port.CapacityError{RetryAfter: 10 * time.Millisecond}, "1"},
		{&port.CapacityError{RetryAfter: 0}, "1"},
		{&port.CapacityError{RetryAfter: -time.Second}, "1"},
		{fmt.Errorf("pool: %w", &port.CapacityError{Resource: "workers", RetryAfter: 4 * time.Second}), "4"},
		{port.ErrAtCapacity, "1"},
		{fmt.Errorf("pool: %w", port.ErrAtCapacity), "1"},
	}
	for _, tc := range tests {
		t.Run(tc.err.Error(), func(t *testing.T) {
			fp := newFakePort()
			fp.err = tc.err
			h := newHarness(t, fp)
			for _, r := range []response{
				h.do("POST", "/sessions", ""),
				h.do("POST", "/sessions/s1/exec", execCode),
			} {
				if r.status != http.StatusServiceUnavailable {
					t.Fatalf("status %d", r.status)
				}
				if got := r.header.Get("Retry-After"); got != tc.want {
					t.Errorf("Retry-After %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestBearerToken(t *testing.T) {
	const token = "s3cret-token"
	reg := prometheus.NewRegistry()
	fp := newFakePort()
	fp.addSession("s1", map[string]string{"a.txt": "hi"})
	h := newHarness(t, fp, server.WithBearerToken(token), server.WithGatherer(reg))

	guarded := []struct{ method, target, body string }{
		{"POST", "/sessions", ""},
		{"POST", "/sessions/s1/exec", execCode},
		{"DELETE", "/sessions/s1", ""},
		{"GET", "/sessions/s1/files/list", ""},
		{"GET", "/sessions/s1/files?path=a.txt", ""},
		{"POST", "/sessions/s1/files", ""},
		{"GET", "/capabilities", ""},
		{"GET", "/metrics", ""},
		{"GET", "/openapi.yaml", ""},
		{"GET", "/no/such/route", ""},
		{"PUT", "/sessions", ""},
	}
	for _, creds := range []string{"", "Bearer wrong", "Bearer " + token + "x", "Basic " + token, token, "Bearer"} {
		for _, g := range guarded {
			req, _ := http.NewRequest(g.method, h.srv.URL+g.target, strings.NewReader(g.body))
			if creds != "" {
				req.Header.Set("Authorization", creds)
			}
			r := h.send(req)
			if r.status != http.StatusUnauthorized {
				t.Errorf("%s %s with %q: status %d, want 401", g.method, g.target, creds, r.status)
				continue
			}
			if got := r.header.Get("WWW-Authenticate"); got != "Bearer" {
				t.Errorf("%s %s: WWW-Authenticate %q", g.method, g.target, got)
			}
		}
	}
	if fp.putCalls != 0 || len(fp.destroyed) != 0 || fp.lastExecID != "" {
		t.Fatal("the port was reached without credentials")
	}

	// /healthz needs none, even with a wrong one.
	for _, creds := range []string{"", "Bearer wrong"} {
		req, _ := http.NewRequest("GET", h.srv.URL+"/healthz", nil)
		if creds != "" {
			req.Header.Set("Authorization", creds)
		}
		if r := h.send(req); r.status != http.StatusOK {
			t.Errorf("/healthz with %q: %d", creds, r.status)
		}
	}

	// The right token opens every route; the scheme is case-insensitive.
	for _, creds := range []string{"Bearer " + token, "bearer " + token, "BEARER  " + token} {
		h.auth = creds
		if r := h.do("POST", "/sessions", ""); r.status != http.StatusCreated {
			t.Errorf("POST /sessions with %q: %d %s", creds, r.status, r.body)
		}
		if r := h.do("GET", "/metrics", ""); r.status != http.StatusOK {
			t.Errorf("GET /metrics with %q: %d", creds, r.status)
		}
		if r := h.do("POST", "/sessions/s1/exec", execCode); r.status != http.StatusOK {
			t.Errorf("exec with %q: %d", creds, r.status)
		}
	}

	// Without a token configured, nothing is asked for.
	open := newHarness(t, nil)
	if r := open.do("POST", "/sessions", ""); r.status != http.StatusCreated {
		t.Errorf("open handler: %d", r.status)
	}
	if r := open.do("GET", "/openapi.yaml", ""); r.status != http.StatusOK {
		t.Errorf("open handler /openapi.yaml: %d", r.status)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	h := newHarness(t, nil)
	tests := []struct{ method, target, allow string }{
		{"PUT", "/sessions", "GET, HEAD, POST"},
		{"DELETE", "/sessions", "GET, HEAD, POST"},
		{"GET", "/sessions/s1", "DELETE"},
		{"POST", "/sessions/s1", "DELETE"},
		{"GET", "/sessions/s1/exec", "POST"},
		{"PUT", "/sessions/s1/exec", "POST"},
		{"DELETE", "/sessions/s1/files", "GET, HEAD, POST"},
		{"POST", "/sessions/s1/files/list", "GET, HEAD"},
		{"POST", "/healthz", "GET, HEAD"},
		{"POST", "/capabilities", "GET, HEAD"},
		{"POST", "/metrics", "GET, HEAD"},
		{"DELETE", "/openapi.yaml", "GET, HEAD"},
	}
	for _, tc := range tests {
		r := h.do(tc.method, tc.target, "")
		if r.status != http.StatusMethodNotAllowed {
			t.Errorf("%s %s: %d, want 405", tc.method, tc.target, r.status)
			continue
		}
		if got := r.header.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.target, got, tc.allow)
		}
		if r.detail(t) == "" {
			t.Errorf("%s %s: empty detail", tc.method, tc.target)
		}
	}
	for _, target := range []string{"/", "/nope", "/sessions/s1/files/list/extra", "/sessions/s1/exec/x"} {
		r := h.do("GET", target, "")
		if r.status != http.StatusNotFound || r.detail(t) == "" {
			t.Errorf("GET %s: %d %s", target, r.status, r.body)
		}
	}
}

func TestCreateSession(t *testing.T) {
	h := newHarness(t, nil)

	r := h.do("POST", "/sessions", "")
	if r.status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	var handle contract.SessionHandle
	r.json(t, &handle)
	if handle.SessionID != "sess-1" || handle.IdleTimeoutSeconds != 600 || handle.CreatedAt != 1772366400.25 {
		t.Errorf("handle %+v", handle)
	}
	// An unknown bound is omitted, never null.
	if bytes.Contains(r.body, []byte("max_lifetime_seconds")) || bytes.Contains(r.body, []byte("null")) {
		t.Errorf("unknown bound not omitted: %s", r.body)
	}

	// A port that forgets the id is a server-side bug, not a handle.
	fp := newFakePort()
	fp.create = func(context.Context, port.CreateSessionRequest) (port.Session, error) { return port.Session{}, nil }
	if r := newHarness(t, fp).do("POST", "/sessions", ""); r.status != http.StatusInternalServerError {
		t.Errorf("session without id: %d %s", r.status, r.body)
	}

	ok := []struct {
		body       string
		idle, life time.Duration
	}{
		{`{}`, 0, 0},
		{`null`, 0, 0},
		{` `, 0, 0},
		{`{"idle_timeout_seconds": null, "max_lifetime_seconds": null}`, 0, 0},
		{`{"idle_timeout_seconds": 30, "max_lifetime_seconds": 7200}`, 30 * time.Second, 2 * time.Hour},
		{`{"idle_timeout_seconds": 30.0}`, 30 * time.Second, 0},
		{`{"max_lifetime_seconds": 1e30}`, 0, time.Duration(1<<63 - 1)},
		{`{"unknown": {"nested": [1, 2]}, "idle_timeout_seconds": 5}`, 5 * time.Second, 0},
	}
	for _, tc := range ok {
		r := h.do("POST", "/sessions", tc.body)
		if r.status != http.StatusCreated {
			t.Errorf("%s: %d %s", tc.body, r.status, r.body)
			continue
		}
		if got := h.port.lastCreate; got.IdleTimeout != tc.idle || got.MaxLifetime != tc.life {
			t.Errorf("%s: port got %+v", tc.body, got)
		}
	}
	bad := []string{
		`{"idle_timeout_seconds": 0}`,
		`{"idle_timeout_seconds": -5}`,
		`{"max_lifetime_seconds": 0}`,
		`{"max_lifetime_seconds": -1e30}`,
		`{"idle_timeout_seconds": 1.5}`,
		`{"idle_timeout_seconds": "10"}`,
		`{"idle_timeout_seconds": true}`,
		`{"idle_timeout_seconds": [10]}`,
		`[]`,
		`"x"`,
		`{`,
		`{} {}`,
		`{} x`,
		`{"idle_timeout_seconds": 10}]`,
	}
	for _, body := range bad {
		r := h.do("POST", "/sessions", body)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", body, r.status, r.body)
		}
	}
}

func TestExecute(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	h := newHarness(t, fp)

	r := h.do("POST", "/sessions/s1/exec", `{"tool":"code_execution","input":{"code":"print(6*7)"},"timeout_seconds":30,"tool_use_id":"toolu_1"}`)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	want := port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(6*7)", Timeout: 30 * time.Second, ToolUseID: "toolu_1"}
	if got := fp.lastExec; !execEqual(got, want) || fp.lastExecID != "s1" {
		t.Errorf("port got %q %+v, want %+v", fp.lastExecID, got, want)
	}
	var resp contract.ExecResponse
	r.json(t, &resp)
	if resp.ToolUseID != "toolu_1" || resp.ResultBlock.ToolUseID != "toolu_1" ||
		resp.ResultBlock.Type != "code_execution_tool_result" || resp.Outcome != "completed" {
		t.Errorf("response %+v", resp)
	}
	// Contract shape details a struct decode would hide.
	for _, frag := range []string{`"content":[]`, `"type":"code_execution_result"`, `"state_lost":false`, `"output_truncated":false`} {
		if !bytes.Contains(r.body, []byte(frag)) {
			t.Errorf("body lacks %s: %s", frag, r.body)
		}
	}

	// A full result: files, truncation, lost state, bash block type.
	fp.result = &port.Result{
		ToolUseID: "toolu_2", Tool: port.ToolBashCodeExecution,
		Stdout: "partial", Stderr: "Killed: timeout; interpreter state lost\n", ReturnCode: port.ReturnCodeTimedOut,
		Outcome: port.OutcomeTimedOut, Duration: 1500 * time.Millisecond,
		OutputTruncated: true, StateLost: true,
		Files: []port.OutputFile{{FileID: "f1", Filename: "chart.png"}},
	}
	r = h.do("POST", "/sessions/s1/exec", `{"tool":"bash_code_execution","input":{"command":"sleep 100"},"tool_use_id":"toolu_2"}`)
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	resp = contract.ExecResponse{}
	r.json(t, &resp)
	if resp.ResultBlock.Type != "bash_code_execution_tool_result" || resp.ExecutionTimeMS != 1500 ||
		resp.Outcome != "timed_out" || !resp.StateLost || !resp.OutputTruncated ||
		resp.ResultBlock.Content.ReturnCode != 124 || len(resp.ResultBlock.Content.Content) != 1 ||
		resp.ResultBlock.Content.Content[0] != (contract.OutputFile{Type: "code_execution_output", FileID: "f1", Filename: "chart.png"}) {
		t.Errorf("response %+v", resp)
	}

	// A port that leaves out the tool and the outcome: the server still
	// answers with the contract's guarantees.
	fp.result = &port.Result{ToolUseID: "srvtoolu_port", ReturnCode: 1, Stderr: "Traceback"}
	r = h.do("POST", "/sessions/s1/exec", `{"tool":"text_editor_code_execution","input":{"command":"view","path":"x"},"tool_use_id":null}`)
	resp = contract.ExecResponse{}
	r.json(t, &resp)
	if resp.ToolUseID != "srvtoolu_port" || resp.ResultBlock.ToolUseID != resp.ToolUseID ||
		resp.ResultBlock.Type != "text_editor_code_execution_tool_result" || resp.Outcome != "program_error" {
		t.Errorf("response %+v", resp)
	}
	// A port that breaks its promise of a tool use id: the server makes
	// none up (the port mints them, see port.Port), whether or not the
	// request brought one, and the response is still the contract's.
	fp.result = &port.Result{}
	fp.breaksToolUseIDs = true
	for _, body := range []string{
		`{"tool":"code_execution","input":{"code":"pass"},"tool_use_id":"mine"}`,
		`{"tool":"code_execution","input":{"code":"pass"}}`,
	} {
		r = h.do("POST", "/sessions/s1/exec", body)
		if r.status != http.StatusInternalServerError || r.detail(t) != "internal error" {
			t.Errorf("a result without a tool use id: %d %s", r.status, r.body)
		}
	}
}

func execEqual(a, b port.ExecuteRequest) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// TestExecRequestValidation feeds the server good and bad exec bodies and
// checks that openapi.yaml agrees with the server about each: the document
// must accept what the server accepts, and reject what it refuses.
func TestExecRequestValidation(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	h := newHarness(t, fp)
	const target = "/sessions/s1/exec"

	good := []struct {
		body string
		want port.ExecuteRequest
	}{
		{execCode, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"}},
		{`{"tool":"code_execution","input":{"code":"x","extra":1},"extra":{"a":[1]}}`,
			port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x"}},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":60.0}`,
			port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", Timeout: time.Minute}},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":1}`,
			port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", Timeout: time.Second}},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":100000000000000000000}`,
			port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x", Timeout: time.Duration(1<<63 - 1)}},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":null,"tool_use_id":null}`,
			port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "x"}},
		{`{"tool":"bash_code_execution","input":{"command":"ls -la"},"tool_use_id":"t"}`,
			port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "ls -la", ToolUseID: "t"}},
		{"\n\t {\"tool\":\"bash_code_execution\",\"input\":{\"command\":\"ls\"}} \n",
			port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "ls"}},
	}
	for _, tc := range good {
		r := h.do("POST", target, tc.body)
		if r.status != http.StatusOK {
			t.Errorf("%s: %d %s", tc.body, r.status, r.body)
			continue
		}
		if !execEqual(fp.lastExec, tc.want) {
			t.Errorf("%s: port got %+v, want %+v", tc.body, fp.lastExec, tc.want)
		}
		if err := h.spec.requestValid(t, "POST", target, []byte(tc.body)); err != nil {
			t.Errorf("%s: server accepts it, openapi.yaml does not: %v", tc.body, err)
		}
	}

	// kin-openapi cannot judge these: its JSON decoder stops after the first
	// value and ignores the rest.
	docBlind := map[string]bool{
		execCode + ` trailing`: true,
		execCode + execCode:    true,
		execCode + `}`:         true,
	}
	bad := []struct {
		body   string
		status int
	}{
		{``, 422},
		{`{`, 422},
		{`not json`, 422},
		{`null`, 422},
		{`[]`, 422},
		{`"code_execution"`, 422},
		{execCode + ` trailing`, 422},
		{execCode + execCode, 422},
		{execCode + `}`, 422},
		{`{"input":{"code":"x"}}`, 422},
		{`{"tool":null,"input":{"code":"x"}}`, 422},
		{`{"tool":"code_execution"}`, 422},
		{`{"tool":"code_execution","input":null}`, 422},
		{`{"tool":"code_execution","input":"print(1)"}`, 422},
		{`{"tool":"code_execution","input":["print(1)"]}`, 422},
		{`{"tool":"code_execution","input":{}}`, 422},
		{`{"tool":"code_execution","input":{"code":""}}`, 422},
		{`{"tool":"code_execution","input":{"code":5}}`, 422},
		{`{"tool":"code_execution","input":{"code":null}}`, 422},
		{`{"tool":"code_execution","input":{"command":"ls"}}`, 422},
		{`{"tool":"bash_code_execution","input":{"code":"x"}}`, 422},
		{`{"tool":"bash_code_execution","input":{"command":""}}`, 422},
		{`{"tool":"bash_code_execution","input":{"command":["ls"]}}`, 422},
		{`{"tool":5,"input":{"code":"x"}}`, 422},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":0}`, 422},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":-3}`, 422},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":1.5}`, 422},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":"30"}`, 422},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":true}`, 422},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":-1e30}`, 422},
		{`{"tool":"code_execution","input":{"code":"x"},"tool_use_id":5}`, 422},
		{`{"tool":"code_execution","input":{"code":"x"},"tool_use_id":{}}`, 422},
		{`{"tool":"python","input":{"code":"x"}}`, 400},
		{`{"tool":"code_execution_20250825","input":{"code":"x"}}`, 400},
		{`{"tool":"CODE_EXECUTION","input":{"code":"x"}}`, 400},
	}
	for _, tc := range bad {
		fp.lastExecID = ""
		r := h.do("POST", target, tc.body)
		if r.status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.body, r.status, r.body, tc.status)
		}
		if fp.lastExecID != "" {
			t.Errorf("%s: reached the port", tc.body)
		}
		if docBlind[tc.body] {
			continue
		}
		if err := h.spec.requestValid(t, "POST", target, []byte(tc.body)); err == nil {
			t.Errorf("%s: server refuses it, openapi.yaml accepts it", tc.body)
		}
	}
}

func TestEditorInput(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	h := newHarness(t, fp)
	const target = "/sessions/s1/exec"
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }

	good := []struct {
		input string
		want  port.EditorInput
	}{
		{`{"command":"view","path":"src"}`, port.EditorInput{Command: port.EditorView, Path: "src"}},
		{`{"command":"view","path":"a.py","view_range":[3,-1]}`,
			port.EditorInput{Command: port.EditorView, Path: "a.py", ViewRange: []int{3, -1}}},
		{`{"command":"view","path":"a.py","view_range":[1.0,2]}`,
			port.EditorInput{Command: port.EditorView, Path: "a.py", ViewRange: []int{1, 2}}},
		{`{"command":"create","path":"a.py","file_text":"print(1)\n"}`,
			port.EditorInput{Command: port.EditorCreate, Path: "a.py", FileText: str("print(1)\n")}},
		{`{"command":"create","path":"empty.txt","file_text":""}`,
			port.EditorInput{Command: port.EditorCreate, Path: "empty.txt", FileText: str("")}},
		// Per-command requirements are the editor's to check, not the server's.
		{`{"command":"create","path":"a.py"}`, port.EditorInput{Command: port.EditorCreate, Path: "a.py"}},
		{`{"command":"str_replace","path":"a.py","old_str":"1","new_str":""}`,
			port.EditorInput{Command: port.EditorStrReplace, Path: "a.py", OldStr: str("1"), NewStr: str("")}},
		{`{"command":"insert","path":"a.py","insert_line":0,"new_str":"# top\n"}`,
			port.EditorInput{Command: port.EditorInsert, Path: "a.py", InsertLine: num(0), NewStr: str("# top\n")}},
		{`{"command":"undo_edit","path":"a.py","file_text":null,"old_str":null,"new_str":null,"insert_line":null,"view_range":null}`,
			port.EditorInput{Command: port.EditorUndoEdit, Path: "a.py"}},
		{`{"command":"view","path":"a.py","unknown":true}`, port.EditorInput{Command: port.EditorView, Path: "a.py"}},
	}
	for _, tc := range good {
		body := `{"tool":"text_editor_code_execution","input":` + tc.input + `}`
		r := h.do("POST", target, body)
		if r.status != http.StatusOK {
			t.Errorf("%s: %d %s", tc.input, r.status, r.body)
			continue
		}
		want := port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &tc.want}
		if !execEqual(fp.lastExec, want) {
			got, _ := json.Marshal(fp.lastExec.Editor)
			t.Errorf("%s: port got %s", tc.input, got)
		}
		if err := h.spec.requestValid(t, "POST", target, []byte(body)); err != nil {
			t.Errorf("%s: server accepts it, openapi.yaml does not: %v", tc.input, err)
		}
	}

	bad := []string{
		`{"path":"a.py"}`,
		`{"command":"delete","path":"a.py"}`,
		`{"command":"VIEW","path":"a.py"}`,
		`{"command":null,"path":"a.py"}`,
		`{"command":"view"}`,
		`{"command":"view","path":""}`,
		`{"command":"view","path":null}`,
		`{"command":"view","path":7}`,
		`{"command":7,"path":"a.py"}`,
		`{"command":"create","path":"a.py","file_text":5}`,
		`{"command":"create","path":"a.py","file_text":["x"]}`,
		`{"command":"str_replace","path":"a.py","old_str":true,"new_str":"x"}`,
		`{"command":"str_replace","path":"a.py","old_str":"x","new_str":{}}`,
		`{"command":"insert","path":"a.py","insert_line":"3","new_str":"x"}`,
		`{"command":"insert","path":"a.py","insert_line":1.5,"new_str":"x"}`,
		`{"command":"view","path":"a.py","view_range":[1]}`,
		`{"command":"view","path":"a.py","view_range":[1,2,3]}`,
		`{"command":"view","path":"a.py","view_range":[]}`,
		`{"command":"view","path":"a.py","view_range":["1","2"]}`,
		`{"command":"view","path":"a.py","view_range":[1,null]}`,
		`{"command":"view","path":"a.py","view_range":[1.5,2]}`,
		`{"command":"view","path":"a.py","view_range":"1-2"}`,
		`{"command":"view","path":"a.py","view_range":{"start":1}}`,
	}
	for _, input := range bad {
		fp.lastExecID = ""
		body := `{"tool":"text_editor_code_execution","input":` + input + `}`
		r := h.do("POST", target, body)
		if r.status != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s, want 422", input, r.status, r.body)
		}
		if fp.lastExecID != "" {
			t.Errorf("%s: reached the port", input)
		}
		if err := h.spec.requestValid(t, "POST", target, []byte(body)); err == nil {
			t.Errorf("%s: server refuses it, openapi.yaml accepts it", input)
		}
	}
}

func TestRequestTooLarge(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	h := newHarness(t, fp, server.WithMaxRequestBytes(256))
	big := `{"tool":"code_execution","input":{"code":"` + strings.Repeat("x", 1000) + `"}}`
	if r := h.do("POST", "/sessions/s1/exec", big); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("exec: %d %s", r.status, r.body)
	}
	// Without a Content-Length the cap is met while reading.
	req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/s1/exec", io.MultiReader(strings.NewReader(big)))
	req.ContentLength = -1
	req.Header.Set("Content-Type", "application/json")
	if r := h.send(req); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("exec, chunked: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/sessions", `{"x":"`+strings.Repeat("y", 1000)+`"}`); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("create: %d %s", r.status, r.body)
	}
	if fp.lastExecID != "" {
		t.Error("an oversized request reached the port")
	}
	if r := h.do("POST", "/sessions/s1/exec", execCode); r.status != http.StatusOK {
		t.Errorf("a small request after them: %d", r.status)
	}
}

func TestListFiles(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", map[string]string{"data/a.csv": "a,b\n", "notes.txt": "hi"})
	fp.addSession("empty", nil)
	h := newHarness(t, fp)

	r := h.do("GET", "/sessions/s1/files/list", "")
	if r.status != http.StatusOK || fp.lastDir != "." {
		t.Fatalf("%d %s, dir %q", r.status, r.body, fp.lastDir)
	}
	var list contract.FileList
	r.json(t, &list)
	if len(list.Files) != 2 || list.Files[0].Path != "data/a.csv" || list.Files[0].SizeBytes != 4 ||
		list.Files[0].MimeType != "text/csv" || list.Files[0].ModifiedAt != 1772366400.25 {
		t.Errorf("list %+v", list)
	}
	h.do("GET", "/sessions/s1/files/list?path=data", "")
	if fp.lastDir != "data" {
		t.Errorf("dir %q", fp.lastDir)
	}
	h.do("GET", "/sessions/s1/files/list?path=", "")
	if fp.lastDir != "." {
		t.Errorf("empty path: dir %q", fp.lastDir)
	}
	r = h.do("GET", "/sessions/empty/files/list?path=.", "")
	if r.status != http.StatusOK || !bytes.Equal(r.body, []byte(`{"files":[]}`)) {
		t.Errorf("empty workspace: %d %s", r.status, r.body)
	}
	if r := h.do("GET", "/sessions/gone/files/list", ""); r.status != http.StatusNotFound {
		t.Errorf("unknown session: %d", r.status)
	}
}

func TestDownload(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", map[string]string{
		"out/report.csv": "a,b\n1,2\n",
		"blob":           "\x00\x01\x02",
		"page.json":      `{"x":1}`,
		"empty.txt":      "",
	})
	h := newHarness(t, fp)

	r := h.do("GET", "/sessions/s1/files?path=out/report.csv", "")
	if r.status != http.StatusOK || string(r.body) != "a,b\n1,2\n" || fp.lastGet != "out/report.csv" {
		t.Fatalf("%d %q (asked %q)", r.status, r.body, fp.lastGet)
	}
	for k, want := range map[string]string{
		"Content-Type":           "text/csv",
		"Content-Length":         "8",
		"X-Content-Type-Options": "nosniff",
		"Content-Disposition":    `attachment; filename=report.csv`,
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	r = h.do("GET", "/sessions/s1/files?path=blob", "")
	if r.header.Get("Content-Type") != "application/octet-stream" || string(r.body) != "\x00\x01\x02" {
		t.Errorf("blob: %q %q", r.header.Get("Content-Type"), r.body)
	}
	r = h.do("GET", "/sessions/s1/files?path=page.json", "")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/json" || string(r.body) != `{"x":1}` {
		t.Errorf("json file: %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	r = h.do("GET", "/sessions/s1/files?path=empty.txt", "")
	if r.status != http.StatusOK || len(r.body) != 0 || r.header.Get("Content-Length") != "0" {
		t.Errorf("empty file: %d %q %q", r.status, r.body, r.header.Get("Content-Length"))
	}
	// HEAD gets the headers only.
	req, _ := http.NewRequest("HEAD", h.srv.URL+"/sessions/s1/files?path=out/report.csv", nil)
	if r := h.send(req); r.status != http.StatusOK || r.header.Get("Content-Length") != "8" || len(r.body) != 0 {
		t.Errorf("HEAD: %d %v", r.status, r.header)
	}

	if r := h.do("GET", "/sessions/s1/files", ""); r.status != http.StatusUnprocessableEntity {
		t.Errorf("no path: %d", r.status)
	}
	if r := h.do("GET", "/sessions/s1/files?path=", ""); r.status != http.StatusUnprocessableEntity {
		t.Errorf("empty path: %d", r.status)
	}
	if r := h.do("GET", "/sessions/s1/files?path=missing", ""); r.status != http.StatusNotFound {
		t.Errorf("missing file: %d", r.status)
	}
	if r := h.do("GET", "/sessions/nope/files?path=blob", ""); r.status != http.StatusNotFound {
		t.Errorf("unknown session: %d", r.status)
	}

	// A port that hands back a directory instead of refusing it.
	fp.getInfo = func(i port.FileInfo) port.FileInfo { i.IsDir = true; return i }
	if r := h.do("GET", "/sessions/s1/files?path=blob", ""); r.status != http.StatusBadRequest {
		t.Errorf("directory: %d", r.status)
	}
	// A file that grew after it was described: never more than announced.
	fp.getInfo = func(i port.FileInfo) port.FileInfo { i.Size = 2; return i }
	if r := h.do("GET", "/sessions/s1/files?path=out/report.csv", ""); string(r.body) != "a," {
		t.Errorf("grown file: %q", r.body)
	}
}

// An output file is served by the file route with file_id, and names its
// workspace path; path and file_id together, or neither, are refused.
func TestDownloadOutputFile(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", map[string]string{"plots/a b\n.csv": "PNG", "x": "x"})
	fp.outputs = map[string]string{"file_1": "plots/a b\n.csv"}
	h := newHarness(t, fp)

	r := h.do("GET", "/sessions/s1/files?file_id=file_1", "")
	if r.status != http.StatusOK || string(r.body) != "PNG" {
		t.Fatalf("%d %q", r.status, r.body)
	}
	for k, want := range map[string]string{
		"Content-Type":        "text/csv",
		"X-Codeport-Path":     "plots%2Fa%20b%0A.csv",
		"Content-Length":      "3",
		"Content-Disposition": `attachment; filename*=utf-8''a%20b%0A.csv`,
	} {
		if got := r.header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if r := h.do("GET", "/sessions/s1/files?path=x", ""); r.header.Get("X-Codeport-Path") != "" {
		t.Errorf("a download by path names the path %q", r.header.Get("X-Codeport-Path"))
	}
	for q, want := range map[string]int{
		"file_id=nope":          http.StatusNotFound,
		"file_id=file_1&path=x": http.StatusUnprocessableEntity,
		"":                      http.StatusUnprocessableEntity,
		"file_id=":              http.StatusUnprocessableEntity,
	} {
		if r := h.do("GET", "/sessions/s1/files?"+q, ""); r.status != want {
			t.Errorf("?%s: %d %s, want %d", q, r.status, r.body, want)
		}
	}
	if r := h.do("GET", "/sessions/nope/files?file_id=file_1", ""); r.status != http.StatusNotFound || !strings.Contains(string(r.body), "session_not_found") {
		t.Errorf("unknown session: %d %s", r.status, r.body)
	}
}

// multipartBody builds an upload with an optional path field before the
// file part.
func multipartBody(t testing.TB, dest, filename, content string) (io.Reader, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if dest != "" {
		if err := mw.WriteField("path", dest); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := mw.CreateFormFile("file", filename)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

func TestUpload(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	h := newHarness(t, fp)
	upload := func(body io.Reader, ct string) response {
		t.Helper()
		req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/s1/files", body)
		req.Header.Set("Content-Type", ct)
		return h.send(req)
	}

	r := upload(multipartBody(t, "in/data.csv", "local.csv", "a,b\n"))
	if r.status != http.StatusCreated {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var res contract.FileUploadResult
	r.json(t, &res)
	if res != (contract.FileUploadResult{Path: "in/data.csv", SizeBytes: 4}) || string(fp.sessions["s1"]["in/data.csv"]) != "a,b\n" {
		t.Errorf("result %+v, stored %q", res, fp.sessions["s1"]["in/data.csv"])
	}

	// Without a path, the base name of the uploaded file's name.
	for filename, want := range map[string]string{
		"report.txt":                 "report.txt",
		"/home/me/report.txt":        "report.txt",
		"../../etc/passwd":           "passwd",
		`C:\Users\me\My Report.docx`: "My Report.docx",
	} {
		r := upload(multipartBody(t, "", filename, "x"))
		if r.status != http.StatusCreated || fp.lastPutPath != want {
			t.Errorf("filename %q: %d %s, port got %q, want %q", filename, r.status, r.body, fp.lastPutPath, want)
		}
	}
	for _, filename := range []string{"", "..", "/", `a\`} {
		fp.putCalls = 0
		if r := upload(multipartBody(t, "", filename, "x")); r.status != http.StatusUnprocessableEntity || fp.putCalls != 0 {
			t.Errorf("filename %q: %d %s", filename, r.status, r.body)
		}
	}

	// Not multipart, no file part, broken multipart.
	if r := upload(strings.NewReader(`{"file":"x"}`), "application/json"); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("JSON body: %d", r.status)
	}
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("path", "a.txt")
	_ = mw.Close()
	if r := upload(&buf, mw.FormDataContentType()); r.status != http.StatusUnprocessableEntity {
		t.Errorf("no file part: %d", r.status)
	}
	if r := upload(strings.NewReader("--b\r\nContent-Dispo"), "multipart/form-data; boundary=b"); r.status != http.StatusUnprocessableEntity {
		t.Errorf("truncated multipart: %d %s", r.status, r.body)
	}
	if r := upload(strings.NewReader("x"), "multipart/form-data"); r.status != http.StatusUnprocessableEntity {
		t.Errorf("no boundary: %d %s", r.status, r.body)
	}
	if r := upload(multipartBody(t, strings.Repeat("p", 5000), "a.txt", "x")); r.status != http.StatusUnprocessableEntity {
		t.Errorf("huge path field: %d", r.status)
	}

	// The port's own refusals.
	for err, want := range map[error]int{
		port.ErrFileTooLarge:         http.StatusRequestEntityTooLarge,
		port.ErrPathEscapesWorkspace: http.StatusForbidden,
		port.ErrIsDirectory:          http.StatusBadRequest,
		port.ErrSessionBusy:          http.StatusConflict,
	} {
		fp.putFile = func(context.Context, string, string, io.Reader) (port.FileInfo, error) {
			return port.FileInfo{}, fmt.Errorf("fake: %w", err)
		}
		if r := upload(multipartBody(t, "../x", "a.txt", "x")); r.status != want {
			t.Errorf("%v: %d, want %d", err, r.status, want)
		}
	}
}

// countingReader counts what the server consumed of a request body.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// endlessUpload is a multipart upload whose file part goes on for size bytes,
// generated as it is read so the test holds none of it.
func endlessUpload(size int64) (io.Reader, string) {
	const boundary = "xyzzy"
	head := "--" + boundary + "\r\n" +
		`Content-Disposition: form-data; name="file"; filename="big.bin"` + "\r\n" +
		"Content-Type: application/octet-stream\r\n\r\n"
	tail := "\r\n--" + boundary + "--\r\n"
	return io.MultiReader(strings.NewReader(head), io.LimitReader(zeros{}, size), strings.NewReader(tail)),
		"multipart/form-data; boundary=" + boundary
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'z'
	}
	return len(p), nil
}

func TestUploadOverCap(t *testing.T) {
	const limit = 64 << 10
	fp := newFakePort()
	fp.addSession("s1", nil)
	h := newHarness(t, fp, server.WithMaxUploadBytes(limit))

	// Chunked (no Content-Length): refused while reading.
	body, ct := endlessUpload(16 << 20)
	counted := &countingReader{r: body}
	req := httptest.NewRequest("POST", "/sessions/s1/files", counted)
	req.ContentLength = -1
	req.Header.Set("Content-Type", ct)
	r := h.serve(req)
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if fp.putRead > limit {
		t.Errorf("the port read %d bytes, cap %d", fp.putRead, limit)
	}
	if got := counted.n.Load(); got > limit+64<<10 {
		t.Errorf("the server consumed %d bytes of the body, cap %d", got, limit)
	}
	if _, ok := fp.sessions["s1"]["big.bin"]; ok {
		t.Error("a refused upload was stored")
	}

	// Over a real connection too: the client gets its 413 while still
	// sending, and the port still never sees more than the cap.
	fp.putRead = 0
	body, ct = endlessUpload(8 << 20)
	req, _ = http.NewRequest("POST", h.srv.URL+"/sessions/s1/files", body)
	req.Header.Set("Content-Type", ct)
	if r := h.send(req); r.status != http.StatusRequestEntityTooLarge || fp.putRead > limit {
		t.Errorf("over the network: %d, port read %d", r.status, fp.putRead)
	}

	// With a Content-Length over the cap: refused before reading.
	fp.putCalls = 0
	body, ct = endlessUpload(1 << 20)
	counted = &countingReader{r: body}
	req = httptest.NewRequest("POST", "/sessions/s1/files", counted)
	req.ContentLength = 1<<20 + 200
	req.Header.Set("Content-Type", ct)
	if r := h.serve(req); r.status != http.StatusRequestEntityTooLarge || fp.putCalls != 0 || counted.n.Load() != 0 {
		t.Errorf("declared too large: %d, port calls %d, read %d", r.status, fp.putCalls, counted.n.Load())
	}

	// Just under the cap, over a real connection: accepted.
	body, ct = endlessUpload(limit - 1024)
	req, _ = http.NewRequest("POST", h.srv.URL+"/sessions/s1/files", body)
	req.Header.Set("Content-Type", ct)
	if r := h.send(req); r.status != http.StatusCreated {
		t.Errorf("under the cap: %d %s", r.status, r.body)
	}
}

// TestUploadStreams proves that the server hands the file to the port while
// it is still arriving when the path part comes first: the client sends
// the rest only after the port has read the beginning, which a server that
// buffered the upload would never allow. (A file part before its path is
// spooled: the path may follow it.)
func TestUploadStreams(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	started := make(chan struct{})
	var got bytes.Buffer
	fp.putFile = func(_ context.Context, _, name string, r io.Reader) (port.FileInfo, error) {
		head := make([]byte, 5)
		if _, err := io.ReadFull(r, head); err != nil {
			return port.FileInfo{}, err
		}
		got.Write(head)
		close(started)
		n, err := io.Copy(&got, r)
		return port.FileInfo{Path: name, Size: 5 + n}, err
	}
	h := newHarness(t, fp)

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	errc := make(chan error, 1)
	// A buffered upload never shows the port its first bytes: wait for them
	// as long as the test binary allows, not for a time load may reach.
	wait, cancelWait := testwait.Context(t)
	defer cancelWait()
	go func() {
		err := mw.WriteField("path", "stream.txt")
		var fw io.Writer
		if err == nil {
			fw, err = mw.CreateFormFile("file", "local.txt")
		}
		if err == nil {
			_, err = io.WriteString(fw, "first")
		}
		if err != nil {
			errc <- pw.CloseWithError(err)
			return
		}
		select {
		case <-started:
		case <-wait.Done():
			errc <- pw.CloseWithError(errors.New("the port never saw the first bytes: the upload is buffered"))
			return
		}
		_, _ = io.WriteString(fw, " and the rest")
		errc <- errors.Join(mw.Close(), pw.Close())
	}()
	req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/s1/files", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	r := h.send(req)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if r.status != http.StatusCreated || got.String() != "first and the rest" {
		t.Fatalf("%d %s, port got %q", r.status, r.body, got.String())
	}
	var res contract.FileUploadResult
	r.json(t, &res)
	if res.Path != "stream.txt" || res.SizeBytes != 18 {
		t.Errorf("result %+v", res)
	}
}

func TestCapabilities(t *testing.T) {
	fp := newFakePort()
	fp.caps = port.Capabilities{
		Backend: "wasm", Runtime: "CPython", RuntimeVersion: "3.12.0",
		Tools:            []port.ToolKind{port.ToolCodeExecution, port.ToolTextEditorExecution},
		WorkingDirectory: "/workspace",
		Limits: port.Limits{
			DefaultTimeout: 30 * time.Second, MaxTimeout: 2 * time.Minute,
			MemoryBytes: 256 << 20, MaxSessions: 64, MaxLifetime: -time.Second,
		},
		PurposeHint: "Run Python (standard library only).",
	}
	h := newHarness(t, fp)
	r := h.do("GET", "/capabilities", "")
	if r.status != http.StatusOK {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var raw map[string]any
	r.json(t, &raw)
	limits := raw["limits"].(map[string]any)
	if len(limits) != 4 || limits["max_timeout_seconds"] != 120.0 || limits["memory_bytes"] != float64(256<<20) {
		t.Errorf("limits %v (zero and negative ones must be omitted)", limits)
	}
	for _, frag := range []string{`"packages":[]`, `"unavailable_modules":[]`, `"network":false`, `"tools":["code_execution","text_editor_code_execution"]`} {
		if !bytes.Contains(r.body, []byte(frag)) {
			t.Errorf("body lacks %s: %s", frag, r.body)
		}
	}
}

func TestHealthz(t *testing.T) {
	var ready atomic.Bool
	h := newHarness(t, nil, server.WithReady(ready.Load), server.WithBearerToken("t"))
	if r := h.do("GET", "/healthz", ""); r.status != http.StatusServiceUnavailable || r.detail(t) == "" {
		t.Errorf("not ready: %d %s", r.status, r.body)
	}
	ready.Store(true)
	r := h.do("GET", "/healthz", "")
	if r.status != http.StatusOK || string(r.body) != `{"status":"ok"}` {
		t.Errorf("ready: %d %s", r.status, r.body)
	}
	req, _ := http.NewRequest("HEAD", h.srv.URL+"/healthz", nil)
	if r := h.send(req); r.status != http.StatusOK {
		t.Errorf("HEAD: %d", r.status)
	}

	always := newHarness(t, nil)
	if r := always.do("GET", "/healthz", ""); r.status != http.StatusOK {
		t.Errorf("without WithReady: %d", r.status)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "codeport_test_total", Help: "A test counter."})
	reg.MustRegister(c)
	c.Add(3)
	h := newHarness(t, nil, server.WithGatherer(reg))
	r := h.do("GET", "/metrics", "")
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(string(r.body), "codeport_test_total 3") {
		t.Errorf("%d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}

	off := newHarness(t, nil)
	if r := off.do("GET", "/metrics", ""); r.status != http.StatusNotFound {
		t.Errorf("without a gatherer: %d", r.status)
	}
}

func TestOpenAPIServed(t *testing.T) {
	h := newHarness(t, nil)
	r := h.do("GET", "/openapi.yaml", "")
	if r.status != http.StatusOK || r.header.Get("Content-Type") != "application/yaml" {
		t.Fatalf("%d %q", r.status, r.header.Get("Content-Type"))
	}
	if !bytes.Equal(r.body, contract.OpenAPI()) {
		t.Error("served document differs from OpenAPI()")
	}
	doc := contract.OpenAPI()
	doc[0] = '!'
	if contract.OpenAPI()[0] == '!' {
		t.Error("OpenAPI() hands out the package's own bytes")
	}
	if s := mustSpec(t); s.doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", s.doc.OpenAPI)
	}
}

// TestDisconnectCancels checks that the request's context reaches the port,
// so a client that gives up stops its execution.
func TestDisconnectCancels(t *testing.T) {
	fp := newFakePort()
	running := make(chan struct{})
	cancelled := make(chan error, 1)
	// The cancellation is waited for as long as the test binary allows.
	wait, cancelWait := testwait.Context(t)
	defer cancelWait()
	fp.execute = func(ctx context.Context, _ string, req port.ExecuteRequest) (port.Result, error) {
		close(running)
		select {
		case <-ctx.Done():
			cancelled <- ctx.Err()
			return port.Result{Tool: req.Tool, ReturnCode: port.ReturnCodeCancelled, Outcome: port.OutcomeCancelled}, nil
		case <-wait.Done():
			cancelled <- errors.New("never cancelled")
			return port.Result{}, nil
		}
	}
	h := newHarness(t, fp)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", h.srv.URL+"/sessions/s1/exec", strings.NewReader(execCode))
	req.Header.Set("Content-Type", "application/json")
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := h.srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-running
	cancel()
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Errorf("port saw %v, want the request's context cancelled", err)
	}
	<-done
}

func TestLogging(t *testing.T) {
	var buf logtest.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	fp := newFakePort()
	fp.addSession("s1", map[string]string{"secret.txt": "FILE_CONTENT_SECRET"})
	fp.result = &port.Result{Tool: port.ToolCodeExecution, Stdout: "OUTPUT_SECRET", Stderr: "STDERR_SECRET", Outcome: port.OutcomeCompleted}
	h := newHarness(t, fp, server.WithLogger(logger))

	send := func(method, target, ct string, body io.Reader) {
		req := httptest.NewRequest(method, target, body)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		h.serve(req)
	}
	send("POST", "/sessions/s1/exec", "application/json", strings.NewReader(`{"tool":"code_execution","input":{"code":"CODE_SECRET"}}`))
	send("GET", "/sessions/s1/files?path=secret.txt", "", nil)
	body, ct := multipartBody(t, "up.txt", "up.txt", "UPLOAD_SECRET")
	send("POST", "/sessions/s1/files", ct, body)
	send("POST", "/sessions/s1/exec", "application/json", strings.NewReader(`{"tool":"code_execution","input":{"code":5, "x":"INPUT_SECRET"}}`))
	fp.err = fmt.Errorf("worker 3 crashed: %w", port.ErrRuntimeFailure)
	send("POST", "/sessions/s1/exec", "application/json", strings.NewReader(`{"tool":"code_execution","input":{"code":"CODE_SECRET"}}`))

	out := buf.String()
	for _, secret := range []string{"CODE_SECRET", "OUTPUT_SECRET", "STDERR_SECRET", "FILE_CONTENT_SECRET", "UPLOAD_SECRET", "INPUT_SECRET"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log carries %s:\n%s", secret, out)
		}
	}
	var records []map[string]any
	for line := range strings.Lines(out) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		records = append(records, rec)
	}
	if len(records) != 5 {
		t.Fatalf("%d records, want 5:\n%s", len(records), out)
	}
	first := records[0]
	if first["method"] != "POST" || first["route"] != "POST /sessions/{id}/exec" || first["status"] != 200.0 ||
		first["session_id"] != "s1" || first["level"] != "INFO" || first["duration"] == nil {
		t.Errorf("record %v", first)
	}
	if records[3]["status"] != 422.0 || records[3]["error"] != nil {
		t.Errorf("4xx record %v", records[3])
	}
	last := records[4]
	if last["status"] != 500.0 || last["level"] != "ERROR" || !strings.Contains(fmt.Sprint(last["error"]), "worker 3 crashed") {
		t.Errorf("5xx record %v", last)
	}
}

func TestNewHandlerNilPort(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	server.NewHandler(nil)
}

// A 503 the server answers on purpose is not logged as an error: /healthz
// is probed every few seconds, ready (200) or warming up (503), and is
// logged at DEBUG so that probes do not drown the requests at INFO; a
// refusal at capacity is worth a look (WARN); a failure of the backend
// stays an ERROR.
func TestLogLevelsOfUnavailability(t *testing.T) {
	var buf logtest.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var ready atomic.Bool
	fp := newFakePort()
	h := newHarness(t, fp, server.WithLogger(logger), server.WithReady(ready.Load))
	h.serve(httptest.NewRequest("GET", "/healthz", nil))
	ready.Store(true)
	h.serve(httptest.NewRequest("GET", "/healthz", nil))
	fp.err = &port.CapacityError{Resource: "sessions", Limit: 1, RetryAfter: time.Second}
	h.serve(httptest.NewRequest("POST", "/sessions", nil))
	fp.err = fmt.Errorf("worker crashed: %w", port.ErrRuntimeFailure)
	h.serve(httptest.NewRequest("POST", "/sessions", nil))
	var levels []string
	for line := range strings.Lines(buf.String()) {
		var rec struct {
			Level  string `json:"level"`
			Status int    `json:"status"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		levels = append(levels, fmt.Sprintf("%d %s", rec.Status, rec.Level))
	}
	want := []string{"503 DEBUG", "200 DEBUG", "503 WARN", "500 ERROR"}
	if !slices.Equal(levels, want) {
		t.Fatalf("levels %q, want %q", levels, want)
	}
}

// TestNodeIDs serves a Port with a node id: the ids it hands out name the
// node, and every session route refuses an id of another node with the
// contract's 404, DELETE included (a misrouted destroy must not look done).
func TestNodeIDs(t *testing.T) {
	p := port.New(porttest.NewDriver(), port.WithNodeID("node-b"))
	t.Cleanup(func() { _ = p.Close() })
	srv := httptest.NewServer(server.NewHandler(p))
	t.Cleanup(srv.Close)
	do := func(method, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	st, m := do("POST", "/sessions", "{}")
	id, _ := m["session_id"].(string)
	if st != http.StatusCreated && st != http.StatusOK || !strings.HasPrefix(id, "node-b.") {
		t.Fatalf("POST /sessions: %d %v; want an id starting node-b.", st, m)
	}
	other := "node-c." + strings.TrimPrefix(id, "node-b.")
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/sessions/" + other + "/exec", `{"tool":"text_editor_code_execution","input":{"command":"view","path":"."}}`},
		{"GET", "/sessions/" + other + "/files/list", ""},
		{"GET", "/sessions/" + other + "/files?path=a", ""},
		{"DELETE", "/sessions/" + other, ""},
	} {
		st, m := do(r.method, r.path, r.body)
		detail, _ := m["detail"].(string)
		if st != http.StatusNotFound || m["code"] != "session_not_found" || !strings.Contains(detail, `"node-c"`) {
			t.Errorf("%s %s: %d %v; want 404 session_not_found naming node-c", r.method, r.path, st, m)
		}
	}
	if st, m := do("GET", "/sessions/"+id+"/files/list", ""); st != http.StatusOK {
		t.Errorf("the session itself: %d %v", st, m)
	}
	if st, _ := do("DELETE", "/sessions/"+id, ""); st != http.StatusNoContent {
		t.Errorf("DELETE own id: %d", st)
	}
}

// SessionRoutePattern finds the node in every route of a session whose id
// a node made, and in no other path.
func TestSessionRoutePatternFindsTheNode(t *testing.T) {
	p := port.New(porttest.NewDriver(), port.WithNodeID("codeport-1"))
	t.Cleanup(func() { _ = p.Close() })
	s, err := p.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	route := regexp.MustCompile(server.SessionRoutePattern)
	for _, path := range []string{"/sessions/" + s.ID, "/sessions/" + s.ID + "/exec", "/sessions/" + s.ID + "/files/a.txt"} {
		m := route.FindStringSubmatch(path)
		if m == nil || m[route.SubexpIndex("node")] != "codeport-1" {
			t.Errorf("%s: the route pattern does not find node codeport-1 (match %q)", path, m)
		}
	}
	for _, path := range []string{"/sessions", "/sessions/", "/capabilities", "/sessions/nonode/exec", "/x/sessions/" + s.ID} {
		if route.MatchString(path) {
			t.Errorf("%s matched the session route pattern", path)
		}
	}
}

// The largest file limit a port can state takes every byte of an upload:
// one byte over it cannot be asked for.
func TestUploadUnderTheLargestFileLimit(t *testing.T) {
	p := porttest.New(porttest.WithLimits(port.Limits{FileBytes: math.MaxInt64}))
	defer p.Close()
	s, err := p.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	h := servePort(t, p)
	body, ct := multipartBody(t, "", "a.txt", "every byte")
	req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/"+s.ID+"/files", body)
	req.Header.Set("Content-Type", ct)
	if r := h.send(req); r.status != http.StatusCreated {
		t.Fatalf("%d %s", r.status, r.body)
	}
	rc, _, err := p.GetFile(context.Background(), s.ID, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if b, _ := io.ReadAll(rc); string(b) != "every byte" {
		t.Errorf("stored %q", b)
	}
}
