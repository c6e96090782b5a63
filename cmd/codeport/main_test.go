package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/testwait"
)

// cli runs the command in process with the test's runtime directory and a
// private sessions directory.
func cli(t *testing.T, ctx context.Context, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	args = append(args[:1:1], append([]string{"--sessions-dir", t.TempDir()}, args[1:]...)...)
	code := run(ctx, args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestExec(t *testing.T) {
	ctx := context.Background()
	code, out, errs := cli(t, ctx, "", "exec", "-c", "import sys\nprint(sum(range(10)))\nprint('warn', file=sys.stderr)")
	if code != 0 || out != "45\n" || errs != "warn\n" {
		t.Fatalf("exec: %d %q %q", code, out, errs)
	}
	code, _, errs = cli(t, ctx, "", "exec", "-c", "raise SystemExit(5)")
	if code != 5 || errs != "" {
		t.Fatalf("exit status: %d %q", code, errs)
	}
	code, _, errs = cli(t, ctx, "", "exec", "-c", "1/0")
	if code != 1 || !strings.Contains(errs, "ZeroDivisionError") {
		t.Fatalf("exception: %d %q", code, errs)
	}
	code, out, _ = cli(t, ctx, "print('from stdin')", "exec", "-")
	if code != 0 || out != "from stdin\n" {
		t.Fatalf("stdin: %d %q", code, out)
	}
	file := filepath.Join(t.TempDir(), "prog.py")
	if err := os.WriteFile(file, []byte("print('from a file')"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = cli(t, ctx, "", "exec", file)
	if code != 0 || out != "from a file\n" {
		t.Fatalf("file: %d %q", code, out)
	}
	code, _, errs = cli(t, ctx, "", "exec", "--timeout", "1s", "-c", "while True: pass")
	if code != 124 || !strings.Contains(errs, "timed out") {
		t.Fatalf("timeout: %d %q", code, errs)
	}
	if code, _, errs = cli(t, ctx, "", "exec"); code != 2 || !strings.Contains(errs, "Usage") {
		t.Fatalf("no code: %d %q", code, errs)
	}
	if code, _, errs = cli(t, ctx, "", "exec", "--memory-limit", "lots", "-c", "1"); code != 2 || !strings.Contains(errs, "memory-limit") {
		t.Fatalf("bad flag value: %d %q", code, errs)
	}
}

func TestDescribe(t *testing.T) {
	code, out, errs := cli(t, context.Background(), "", "describe", "--memory-limit", "128MiB")
	if code != 0 {
		t.Fatalf("describe: %d %s", code, errs)
	}
	var d struct {
		Adapter     string   `json:"adapter"`
		Backend     string   `json:"backend"`
		Tools       []string `json:"tools"`
		PurposeHint string   `json:"purpose_hint"`
		Limits      struct {
			MemoryBytes int64 `json:"memory_bytes"`
		} `json:"limits"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if d.Adapter != "wasm" || d.Backend != "wasm" || d.Limits.MemoryBytes != 128<<20 || !strings.Contains(d.PurposeHint, "standard library") {
		t.Fatalf("description: %+v", d)
	}
}

// With process isolation, describe starts no worker (it once waited for
// one forever: that now fails at the test's wait, not at a time a loaded
// machine may reach).
func TestDescribeWithProcessIsolation(t *testing.T) {
	ctx, cancel := testwait.Context(t)
	defer cancel()
	code, out, errs := cli(t, ctx, "", "describe", "--isolation", "process")
	if code != 0 || !strings.Contains(out, `"adapter": "subprocess"`) {
		t.Fatalf("describe: %d %s %s", code, out, errs)
	}
}

func TestServe(t *testing.T) {
	// The token from a file others may read: served, with a warning.
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tokenFile, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := startServe(t, "--auth-token-file", tokenFile,
		"--allowed-hosts", "sandbox.internal", "--keepalive-timeout", "1s", "--read-timeout", "1s")
	base, addr := srv.base, srv.addr
	req, _ := http.NewRequest("POST", base+"/sessions", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without token: %v %v", err, resp)
	}
	req, _ = http.NewRequest("POST", base+"/sessions", nil)
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("with token: %v %v", err, resp)
	}
	resp.Body.Close()

	// --allowed-hosts: named hosts and loopback ones only, token or not.
	for host, want := range map[string]int{"sandbox.internal:8080": http.StatusOK, "attacker.example": http.StatusForbidden} {
		req, _ = http.NewRequest("GET", base+"/capabilities", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer s3cret")
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != want {
			t.Errorf("Host %s: %v %v, want %d", host, err, resp, want)
		} else {
			resp.Body.Close()
		}
	}
	// JSON bodies only as application/json (what curl -d sends is not).
	req, _ = http.NewRequest("POST", base+"/sessions", strings.NewReader(`{"idle_timeout_seconds":60}`))
	req.Header.Set("Authorization", "Bearer s3cret")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Errorf("a form body: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	// An idle keep-alive connection is closed (the bound is generous).
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("keep-alive request: %v %v", err, resp)
	} else {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if !closedByServer(t, conn) {
		t.Error("an idle keep-alive connection is still open")
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.log.String())
	}
	if log := srv.log.String(); !strings.Contains(log, "serving contract v1") || strings.Contains(log, "s3cret") ||
		!strings.Contains(log, "every user of this machine can read the secret") {
		t.Fatalf("log:\n%s", log)
	}
}

// TestServeLogFormat: --log-format json makes every record serve writes a
// JSON object; a format it does not know is refused before anything starts.
func TestServeLogFormat(t *testing.T) {
	srv := startServe(t, "--log-format", "json")
	if code := srv.stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.log.String())
	}
	var msgs []string
	for line := range strings.Lines(srv.log.String()) {
		var rec struct {
			Level string `json:"level"`
			Msg   string `json:"msg"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Level == "" {
			t.Fatalf("not a JSON record: %q (%v)", line, err)
		}
		msgs = append(msgs, rec.Msg)
	}
	if !slices.Contains(msgs, "serving contract v1") {
		t.Errorf("records %q lack the start", msgs)
	}

	code, _, errs := cli(t, context.Background(), "", "serve", "--log-format", "xml")
	if code != 2 || !strings.Contains(errs, `log-format "xml"`) {
		t.Errorf("a bad log format: %d %q", code, errs)
	}
}

// TestUnknownEnvIsWarnedAbout: a CODEPORT_* variable that names no setting
// is warned about when serve (or describe) starts, with the setting it
// likely meant, and not its value; the variables codeport reads
// elsewhere are not.
func TestUnknownEnvIsWarnedAbout(t *testing.T) {
	t.Setenv("CODEPORT_MEMORY_LIMT", "512MiB")
	t.Setenv("CODEPORT_BENCH_SCALE", "1")
	t.Setenv("CODEPORT_CONFORMANCE_TOKEN", "tok-9d1e")
	const want = "environment variable CODEPORT_MEMORY_LIMT names no setting and is ignored; did you mean CODEPORT_MEMORY_LIMIT (--memory-limit)?"

	srv := startServe(t)
	if code := srv.stop(); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, srv.log.String())
	}
	log := srv.log.String()
	if !strings.Contains(log, `level=WARN msg="`+want+`"`) {
		t.Errorf("serve did not warn:\n%s", log)
	}
	if strings.Contains(log, "512MiB") || strings.Contains(log, "BENCH_SCALE") || strings.Contains(log, "CONFORMANCE_TOKEN") {
		t.Errorf("serve warned about a value or a known variable:\n%s", log)
	}

	code, _, errs := cli(t, context.Background(), "", "describe")
	if code != 0 || !strings.Contains(errs, "codeport describe: warning: "+want) {
		t.Errorf("describe: %d %q", code, errs)
	}
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), nil, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "Usage") {
		t.Fatalf("no command: %d", code)
	}
	if code := run(context.Background(), []string{"frobnicate"}, nil, &out, &errb); code != 2 || !strings.Contains(errb.String(), "unknown command") {
		t.Fatalf("unknown command: %d", code)
	}
	errb.Reset()
	if code := run(context.Background(), []string{"serve", "-h"}, nil, &out, &errb); code != 0 || !strings.Contains(errb.String(), "CODEPORT_MEMORY_LIMIT") {
		t.Fatalf("serve -h: %d %s", code, errb.String())
	}
	// A setting the adapters share shows the in-process runtime's default,
	// which is what serve binds without a sandbox-url.
	if !strings.Contains(errb.String(), `largest uploaded file (env CODEPORT_FILE_LIMIT; the http adapter's default: 100MiB) (default "50MiB")`) {
		t.Errorf("serve -h shows another default for file-limit:\n%s", errb.String())
	}
	// The help says where a token may come from besides the command line,
	// and how hosts and timeouts are set.
	for _, want := range []string{"-auth-token-file", "CODEPORT_AUTH_TOKEN_FILE", "$CODEPORT_AUTH_TOKEN", "process list",
		"-allowed-hosts", "DNS rebinding", "application/json", "-read-timeout", "-keepalive-timeout",
		"-min-body-rate", "-min-body-rate-window", "-snapshot-limit", "-max-snapshot-requests"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("serve -h does not mention %s", want)
		}
	}

}
