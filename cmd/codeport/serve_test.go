package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
	"github.com/codeport/codeport/server"
)

// startHTTPServer serves porttest, whose code execution takes execTime,
// through serve's http.Server with the given timeouts.
func startHTTPServer(t *testing.T, s binding.Config, maxExec, execTime time.Duration) (string, *port.Port) {
	t.Helper()
	slow := func(ctx context.Context, _ porttest.Session, req port.ExecuteRequest) (port.Result, error) {
		select {
		case <-time.After(execTime):
			return port.Result{Stdout: "done"}, nil
		case <-ctx.Done():
			return port.Result{}, ctx.Err()
		}
	}
	p := porttest.New(porttest.WithExecutor(slow))
	srv := newHTTPServer(server.NewHandler(p), s, maxExec, slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		_ = p.Close()
	})
	return ln.Addr().String(), p
}

// closedByServer reports whether the server closes conn: a read ends with
// EOF or a reset rather than the test's wait (see testwait.Context). A
// server that holds the connection holds it without end; one that closes
// it does so after its timeout (a second at most here), or seconds after
// on a loaded machine.
func closedByServer(t *testing.T, conn net.Conn) bool {
	setReadDeadline(t, conn)
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

// setReadDeadline bounds reads from conn by the test's wait (see
// testwait.Context) rather than by a time a loaded machine may reach.
func setReadDeadline(t *testing.T, conn net.Conn) {
	_ = conn.SetReadDeadline(testwait.Deadline(t))
}

// TestHTTPServerTimeouts: serve's server lets go of a client that stalls
// while sending a body, and of idle keep-alive connections, yet never
// cuts an execution that outlasts those timeouts. The test waits for the
// server to act as long as the test binary allows: that fails a server
// that holds connections indefinitely, not a slow machine.
func TestHTTPServerTimeouts(t *testing.T) {
	// Each server has one short timeout, so that each is seen to act.
	s := binding.Config{ReadTimeout: 300 * time.Millisecond, KeepaliveTimeout: time.Minute}
	addr, p := startHTTPServer(t, s, 0, 1500*time.Millisecond)
	idleAddr, _ := startHTTPServer(t, binding.Config{ReadTimeout: time.Minute, KeepaliveTimeout: 300 * time.Millisecond}, 0, 0)
	sess, err := p.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}

	// A body that stops arriving: 408, then the connection is closed.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /sessions/"+sess.ID+"/exec HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"tool\":")
	setReadDeadline(t, conn)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("stalled body: %d", resp.StatusCode)
	}
	if !closedByServer(t, conn) {
		t.Error("the connection of a stalled body is still open")
	}

	// Headers that never end.
	conn2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	_, _ = io.WriteString(conn2, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
	if !closedByServer(t, conn2) {
		t.Error("a connection whose headers never end is still open")
	}

	// Idle keep-alive connections, each after one request: all closed.
	const idle = 50
	conns := make([]net.Conn, 0, idle)
	for range idle {
		c, err := net.Dial("tcp", idleAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		br := bufio.NewReader(c)
		setReadDeadline(t, c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("keep-alive request: %v %v", err, resp)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		conns = append(conns, c)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	open := 0
	for _, c := range conns {
		wg.Go(func() {
			if !closedByServer(t, c) {
				mu.Lock()
				open++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if open > 0 {
		t.Errorf("%d of %d idle keep-alive connections still open", open, idle)
	}

	// An execution five times the read timeout is answered.
	req, _ := http.NewRequest("POST", "http://"+addr+"/sessions/"+sess.ID+"/exec",
		strings.NewReader(`{"tool":"code_execution","input":{"code":"x"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("a long execution: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"stdout":"done"`) {
		t.Errorf("a long execution: %d %s", resp.StatusCode, b)
	}
}

// TestHTTPServerDefaults: every timeout that bounds a client is set, and
// the write timeout leaves room for the longest execution.
func TestHTTPServerDefaults(t *testing.T) {
	s := newBinder(nil).Defaults()
	srv := newHTTPServer(http.NotFoundHandler(), s, 300*time.Second, slog.New(slog.DiscardHandler))
	if srv.ReadHeaderTimeout <= 0 || srv.ReadTimeout <= 0 || srv.IdleTimeout <= 0 || srv.MaxHeaderBytes <= 0 {
		t.Errorf("unbounded: header %v, read %v, idle %v, header bytes %d", srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout, srv.MaxHeaderBytes)
	}
	// Go's clients keep idle connections 90 s; closing them first races
	// their next request.
	if srv.IdleTimeout <= 90*time.Second {
		t.Errorf("keep-alive timeout %v is not above Go clients' 90s", srv.IdleTimeout)
	}
	if srv.WriteTimeout < srv.ReadTimeout+300*time.Second {
		t.Errorf("write timeout %v would cut a 300s execution", srv.WriteTimeout)
	}
	if srv := newHTTPServer(http.NotFoundHandler(), s, 0, slog.New(slog.DiscardHandler)); srv.WriteTimeout != 0 {
		t.Errorf("write timeout %v with no known longest execution", srv.WriteTimeout)
	}
}

func writeToken(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAuthTokenFile(t *testing.T) {
	tok, warnings, err := readSecretFile("auth-token-file", writeToken(t, "s3cret-token\n", 0o600))
	if err != nil || tok != "s3cret-token" || len(warnings) != 0 {
		t.Errorf("0600: %q %v %v", tok, warnings, err)
	}
	tok, warnings, err = readSecretFile("auth-token-file", writeToken(t, "  s3cret-token\r\n\n", 0o640))
	if err != nil || tok != "s3cret-token" || len(warnings) != 0 {
		t.Errorf("0640, padded: %q %v %v", tok, warnings, err)
	}
	// Readable by others: used, with a warning that names the file, not
	// the token.
	path := writeToken(t, "s3cret-token", 0o644)
	tok, warnings, err = readSecretFile("auth-token-file", path)
	if err != nil || tok != "s3cret-token" || len(warnings) != 1 || !strings.Contains(warnings[0], path) || strings.Contains(warnings[0], "s3cret") {
		t.Errorf("0644: %q %v %v", tok, warnings, err)
	}
	for name, path := range map[string]string{
		"writable by others": writeToken(t, "s3cret-token", 0o666),
		"empty":              writeToken(t, "\n", 0o600),
		"two lines":          writeToken(t, "a\nb\n", 0o600),
		"control characters": writeToken(t, "a\x00b", 0o600),
		"too long":           writeToken(t, strings.Repeat("x", maxTokenFileBytes+1), 0o600),
		"a directory":        t.TempDir(),
		"missing":            filepath.Join(t.TempDir(), "nope"),
	} {
		if tok, _, err := readSecretFile("auth-token-file", path); err == nil {
			t.Errorf("%s: accepted %q", name, tok)
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error quotes the token: %v", name, err)
		}
	}

	// Sources: one of the token and the file; the flag is warned about.
	file := writeToken(t, "from-file", 0o600)
	if _, _, err := authToken(binding.Config{AuthToken: "x", AuthTokenFile: file}, false); err == nil {
		t.Error("auth-token and auth-token-file together accepted")
	}
	if tok, _, err := authToken(binding.Config{AuthTokenFile: file}, false); err != nil || tok != "from-file" {
		t.Errorf("file: %q %v", tok, err)
	}
	if tok, w, err := authToken(binding.Config{AuthToken: "env"}, false); err != nil || tok != "env" || len(w) != 0 {
		t.Errorf("environment: %q %v %v", tok, w, err)
	}
	if tok, w, err := authToken(binding.Config{AuthToken: "flag"}, true); err != nil || tok != "flag" || len(w) != 1 || strings.Contains(w[0], "flag\"") {
		t.Errorf("flag: %q %v %v", tok, w, err)
	}
}

func TestAllowedHostsSetting(t *testing.T) {
	hosts := func(v string) ([]string, error) { c := binding.Config{AllowedHosts: v}; return c.AllowedHostList() }
	if h, err := hosts(""); h != nil || err != nil {
		t.Errorf("empty: %v %v", h, err)
	}
	if h, err := hosts(" sandbox.internal , [::1]:8080,*"); err != nil || len(h) != 3 || h[0] != "sandbox.internal" {
		t.Errorf("list: %v %v", h, err)
	}
	for _, bad := range []string{"a,,b", "http://x", "a b", "user@host"} {
		if _, err := hosts(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestServeRefusesBadTokenSources: serve stops before binding anything
// when the token's source is unsafe or ambiguous.
func TestServeRefusesBadTokenSources(t *testing.T) {
	writable := writeToken(t, "s3cret", 0o666)
	ok := writeToken(t, "s3cret", 0o600)
	for name, args := range map[string][]string{
		"world-writable file": {"serve", "--auth-token-file", writable},
		"token and file":      {"serve", "--auth-token", "x", "--auth-token-file", ok},
		"bad allowed hosts":   {"serve", "--allowed-hosts", "http://x"},
	} {
		var out, errb strings.Builder
		if code := run(context.Background(), args, strings.NewReader(""), &out, &errb); code != 2 || strings.Contains(errb.String(), "s3cret") {
			t.Errorf("%s: exit %d: %s", name, code, errb.String())
		}
	}
}

// TestServeOnAPortInUse: an address in use is said plainly, without a
// record of the runtime's start "failing" when it was only stopped by the
// shutdown that followed; so with mcp over HTTP.
func TestServeOnAPortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, cmd := range []string{"serve", "mcp"} {
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{cmd, "--listen", ln.Addr().String(), "--sessions-dir", t.TempDir()}, strings.NewReader(""), &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), "codeport "+cmd+": listen tcp "+ln.Addr().String()) || !strings.Contains(errb.String(), "address already in use") {
			t.Errorf("%s: exit %d:\n%s", cmd, code, errb.String())
		}
		if strings.Contains(errb.String(), "wasm runtime failed") || strings.Contains(errb.String(), "level=ERROR") {
			t.Errorf("%s: a spurious failure logged:\n%s", cmd, errb.String())
		}
	}
}

// TestServeSettingsSources: serve's own settings come from flags, the
// environment and the YAML file like every other.
func TestServeSettingsSources(t *testing.T) {
	yaml := filepath.Join(t.TempDir(), "codeport.yaml")
	if err := os.WriteFile(yaml, []byte("allowed_hosts: sandbox.internal\nkeepalive_timeout: 30s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CODEPORT_CONFIG": yaml, "CODEPORT_READ_TIMEOUT": "90", "CODEPORT_AUTH_TOKEN_FILE": "/run/secrets/token"}
	cfg, err := newBinder(nil).Load(nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AllowedHosts != "sandbox.internal" || cfg.KeepaliveTimeout != 30*time.Second || cfg.ReadTimeout != 90*time.Second || cfg.AuthTokenFile != "/run/secrets/token" {
		t.Errorf("settings %+v", cfg)
	}
	if o, err := cfg.Selected(); err != nil || o.Name() != "wasm" {
		t.Errorf("selected %v %v", o, err)
	}
}
