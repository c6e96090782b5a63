package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/pyvenv"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/server"
)

// mcpPythonVersion is the official MCP Python SDK the cross-check pins: the
// newest released when it was written. Changing it builds a new cached
// environment.
const mcpPythonVersion = "2.3.0"

var servingAddr = regexp.MustCompile(`msg="serving MCP over streamable HTTP" addr=(\S+)`)

// waitDone waits until done is closed, failing t with what and log if the
// test's wait ends first.
func waitDone(t *testing.T, done <-chan struct{}, what string, log func() string) {
	t.Helper()
	wait, cancel := testwait.Context(t)
	defer cancel()
	select {
	case <-done:
	case <-wait.Done():
		t.Fatalf("%s:\n%s", what, log())
	}
}

// mcpCall calls a tool and fails the test on a protocol error.
func mcpCall(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := testwait.Context(t)
	defer cancel()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("%s: %v", params.Name, err)
	}
	return res
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Over stdio, stdout carries the protocol alone (the SDK's client reads
// nothing else), the logs go to stderr without the code or its output,
// and the end of stdin ends the command; whichever adapter is bound (here
// in process, and a remote sandbox: a contract v1 server).
func TestMCPOverStdio(t *testing.T) {
	for _, tc := range []struct {
		name, adapter string
		flags         []string
	}{
		{"in-process", "wasm", nil},
		{"remote", "http", []string{"--sandbox-url", serveWasm(t, nil)}},
	} {
		t.Run(tc.name, func(t *testing.T) { testMCPOverStdio(t, tc.adapter, tc.flags...) })
	}
}

func testMCPOverStdio(t *testing.T, adapter string, flags ...string) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr logtest.Buffer
	var code int
	done := make(chan struct{})
	args := append([]string{"mcp", "--sessions-dir", t.TempDir()}, flags...)
	go func() {
		defer close(done)
		code = run(context.Background(), args, inR, outW, &stderr)
		outW.Close()
	}()
	defer func() {
		inW.Close()
		<-done
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-test"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if strings.Join(names, " ") != "bash create_session destroy_session run_python text_editor" {
		t.Errorf("tools %q", names)
	}
	res := mcpCall(t, cs, &mcp.CallToolParams{Name: "create_session"})
	sid, _ := res.StructuredContent.(map[string]any)["session_id"].(string)
	if res.IsError || sid == "" {
		t.Fatalf("create_session: %s", resultText(res))
	}
	mcpCall(t, cs, &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": "secret = 'code-' + 'marker'", "session_id": sid}})
	res = mcpCall(t, cs, &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": "open('f.txt', 'w').write(secret)\nprint('output-marker')", "session_id": sid}})
	if res.IsError || !strings.HasPrefix(resultText(res), "stdout:\noutput-marker\nreturn_code: 0\nfiles: f.txt") {
		t.Fatalf("run_python: %s", resultText(res))
	}
	uri, _ := res.StructuredContent.(map[string]any)["files"].([]any)[0].(map[string]any)["uri"].(string)
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "code-marker" {
		t.Fatalf("resources/read %s: %v %+v", uri, err, rr)
	}
	cs.Close() // closes stdin
	waitDone(t, done, "codeport mcp did not end with its stdin", stderr.String)
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, stderr.String())
	}
	log := stderr.String()
	if !strings.Contains(log, `msg="serving MCP over stdio" adapter=`+adapter) || !strings.Contains(log, "op=execute") {
		t.Errorf("log:\n%s", log)
	}
	if strings.Contains(log, "marker") {
		t.Errorf("the log holds code, output or file contents:\n%s", log)
	}
}

// bearer adds a bearer token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Over streamable HTTP, with a token: refused without it; with it, both
// eras of the protocol run cells and stream their output; a signal ends
// the command.
func TestMCPOverHTTP(t *testing.T) {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var stderr logtest.Buffer
	var code int
	done := make(chan struct{})
	args := []string{"mcp", "--listen", "127.0.0.1:0", "--sessions-dir", t.TempDir(), "--auth-token-file", writeToken(t, "s3cret\n", 0o600)}
	go func() {
		defer close(done)
		code = run(ctx, args, strings.NewReader(""), io.Discard, &stderr)
	}()
	defer func() {
		stop()
		<-done
	}()
	url := "http://" + stderr.Await(t, servingAddr, done) + "/mcp"

	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Fatalf("without the token: %d", resp.StatusCode)
	}

	for _, version := range []string{"", "2025-06-18"} {
		t.Run("protocol="+version, func(t *testing.T) {
			var mu sync.Mutex
			var streamed strings.Builder
			c := mcp.NewClient(&mcp.Implementation{Name: "http-test"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					streamed.WriteString(r.Params.Message)
					mu.Unlock()
				},
			})
			transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{"s3cret", http.DefaultTransport}}}
			cs, err := c.Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res := mcpCall(t, cs, &mcp.CallToolParams{Name: "create_session"})
			sid, _ := res.StructuredContent.(map[string]any)["session_id"].(string)
			if res.IsError || sid == "" {
				t.Fatalf("create_session: %s", resultText(res))
			}
			mcpCall(t, cs, &mcp.CallToolParams{Name: "run_python", Arguments: map[string]any{"code": "x = 41", "session_id": sid}})
			res = mcpCall(t, cs, &mcp.CallToolParams{Meta: mcp.Meta{"progressToken": "t"}, Name: "run_python",
				Arguments: map[string]any{"code": "print(x + 1)", "session_id": sid}})
			if res.IsError || resultText(res) != "stdout:\n42\nreturn_code: 0" {
				t.Fatalf("print(x + 1): %s", resultText(res))
			}
			// The server sends the notification before the result (the
			// mcpserver tests show it comes while the call runs), but the
			// SDK's client may hand it to the handler after CallTool returns;
			// the output may come in more than one notification ("42", then
			// "\n"), so the wait is for all of it, or for anything else.
			var got string
			wait, cancel := testwait.Context(t)
			defer cancel()
			_ = testwait.Poll(wait, 10*time.Millisecond, func() bool {
				mu.Lock()
				got = streamed.String()
				mu.Unlock()
				return got == "42\n" || !strings.HasPrefix("42\n", got)
			})
			if got != "42\n" {
				t.Errorf("streamed %q", got)
			}
			mcpCall(t, cs, &mcp.CallToolParams{Name: "destroy_session", Arguments: map[string]any{"session_id": sid}})
		})
	}

	stop()
	waitDone(t, done, "codeport mcp did not stop", stderr.String)
	if code != 0 {
		t.Fatalf("exit status %d:\n%s", code, stderr.String())
	}
}

// The HTTP guard, serve's (server.Guard): the token when one is set;
// without one, a loopback connection must name a loopback host and come
// from no other origin; allowed-hosts checks every request.
func TestMCPGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	status := func(g *server.Guard, host, origin, auth string) int {
		srv := httptest.NewServer(g.Handler(ok))
		defer srv.Close()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", nil)
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	open := server.NewGuard()
	withToken := server.NewGuard(server.WithBearerToken("s3cret"))
	hosts := server.NewGuard(server.WithAllowedHosts("Sandbox.Internal."))
	anyHost := server.NewGuard(server.WithAllowedHosts("*"))
	for _, tc := range []struct {
		name               string
		g                  *server.Guard
		host, origin, auth string
		want               int
	}{
		{"loopback name", open, "localhost:1234", "", "", 204},
		{"loopback address", open, "127.0.0.1:1", "", "", 204},
		{"rebound name", open, "evil.example:80", "", "", 403},
		{"other origin", open, "localhost:1", "http://evil.example", "", 403},
		{"same origin", open, "localhost:1", "http://localhost:1", "", 204},
		{"no token", withToken, "anything", "", "", 401},
		{"wrong token", withToken, "anything", "", "Bearer nope", 401},
		{"token", withToken, "anything", "http://elsewhere", "bearer s3cret", 204},
		{"allowed host", hosts, "sandbox.internal:8080", "", "", 204},
		{"unlisted host", hosts, "other.internal", "", "", 403},
		{"any host", anyHost, "whatever.example", "http://elsewhere", "", 204},
	} {
		if got := status(tc.g, tc.host, tc.origin, tc.auth); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// The official MCP Python SDK drives `codeport mcp` as a client we did not
// write: its stdio client starts the binary, its streamable HTTP client
// talks to one serving with a token; each in both eras of the protocol
// (2026-07-28, found by its "auto" probe, and the initialize handshake).
// testdata/mcp_client.py lists tools, runs stateful cells in a session,
// reads a produced file through resources/read and receives the output
// as progress notifications and log messages while a cell runs.
func TestMCPWithThePythonSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("builds codeport and a Python environment")
	}
	python := pyvenv.Python(t, "mcpcheck", "mcp=="+mcpPythonVersion)
	bin := codeportBinary(t)
	script, err := filepath.Abs(filepath.Join("testdata", "mcp_client.py"))
	if err != nil {
		t.Fatal(err)
	}
	// client runs the script and returns its stderr, which holds the
	// server's log when the script started the server.
	client := func(t *testing.T, mode string, args ...string) string {
		t.Helper()
		// The script starts codeport, which loads or compiles the
		// runtime: no deadline but the test binary's.
		ctx, cancel := testwait.Context(t)
		defer cancel()
		var stdout, stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, python, append([]string{script, "--mode", mode}, args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr // the server's log, with stdio, and the script's errors
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s\n%s", args[0], err, stdout.String(), stderr.String())
		}
		want := "protocol 2026-07-28\n"
		if mode == "legacy" {
			want = "protocol 2025-11-25\n"
		}
		if out := stdout.String(); !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "ok: destroys the session\n") {
			t.Fatalf("want %q first:\n%s\n%s", want, out, stderr.String())
		}
		t.Logf("%s", stdout.String())
		if slices.Contains(args, "scientific") && !strings.Contains(stdout.String(), "ok: returns a matplotlib figure as ImageContent\n") {
			t.Errorf("the scientific profile's figure was not checked:\n%s", stdout.String())
		}
		return stderr.String()
	}

	t.Run("stdio", func(t *testing.T) {
		for _, mode := range []string{"auto", "legacy"} {
			t.Run(mode, func(t *testing.T) {
				client(t, mode, "stdio", bin, "--", "--sessions-dir", t.TempDir())
			})
		}
		// The scientific profile: a matplotlib figure comes back as
		// ImageContent.
		t.Run("scientific", func(t *testing.T) {
			client(t, "auto", "stdio", bin, "--", "--sessions-dir", t.TempDir(), "--profile", "scientific")
		})
		// Each session in a worker process of its own.
		t.Run("process-isolation", func(t *testing.T) {
			log := client(t, "auto", "stdio", bin, "--", "--sessions-dir", t.TempDir(), "--isolation", "process", "--min-workers", "1")
			if !strings.Contains(log, `msg="serving MCP over stdio" adapter=subprocess`) {
				t.Errorf("not served by worker processes:\n%s", log)
			}
		})
	})

	t.Run("http", func(t *testing.T) {
		srv := exec.Command(bin, "mcp", "--listen", "127.0.0.1:0", "--sessions-dir", t.TempDir())
		srv.Env = append(os.Environ(), "CODEPORT_AUTH_TOKEN=py-s3cret")
		var log logtest.Buffer
		stderr, err := srv.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		// This goroutine owns the process: it copies its log, then reaps it.
		var waitErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				log.Write(append(sc.Bytes(), '\n'))
			}
			waitErr = srv.Wait()
		}()
		defer func() {
			select {
			case <-done:
			default:
				srv.Process.Kill()
				<-done
			}
		}()
		url := "http://" + log.Await(t, servingAddr, done) + "/mcp"
		for _, mode := range []string{"auto", "legacy"} {
			t.Run(mode, func(t *testing.T) { client(t, mode, "http", url, "py-s3cret") })
		}
		if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		waitDone(t, done, "codeport mcp did not stop on SIGTERM", log.String)
		if waitErr != nil {
			t.Fatalf("after SIGTERM: %v\n%s", waitErr, log.String())
		}
		if !strings.Contains(log.String(), `msg="shutting down"`) {
			t.Errorf("log:\n%s", log.String())
		}
	})
}

func TestMCPUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"mcp", "-h"}, nil, &out, &errb); code != 0 {
		t.Fatalf("mcp -h: %d", code)
	}
	for _, want := range []string{"stdio", "-listen", "/mcp", "run_python", "Bearer", "-allowed-hosts", "CODEPORT_MEMORY_LIMIT"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("mcp -h does not mention %s", want)
		}
	}
	errb.Reset()
	if code := run(context.Background(), []string{"mcp", "extra"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "unexpected arguments") {
		t.Fatalf("mcp extra: %d %s", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), nil, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "codeport mcp") {
		t.Fatalf("usage lacks mcp: %s", errb.String())
	}
}
