package server_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
	"github.com/codeport/codeport/server"
)

// timeoutServer serves a port over a real loopback server with a short
// ReadTimeout, for requests written by hand.
type timeoutServer struct {
	addr string
}

func newTimeoutServer(t *testing.T, p port.CodeExecutionPort, readTimeout time.Duration, opts ...server.Option) *timeoutServer {
	t.Helper()
	srv := httptest.NewUnstartedServer(server.NewHandler(p, opts...))
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	t.Cleanup(srv.Close)
	return &timeoutServer{addr: srv.Listener.Addr().String()}
}

// stall writes head, a request whose body is shorter than it announces, and
// then nothing more. It returns the answer, which must come, and checks
// that the server then closes the connection. It waits as long as the
// test binary allows: that fails a server that holds the connection
// indefinitely, not a slow machine.
func (s *timeoutServer) stall(t *testing.T, head string) response {
	t.Helper()
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(testwait.Deadline(t))
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	if _, err := br.ReadByte(); err == nil || isTimeoutErr(err) {
		t.Errorf("the connection is still open after the answer to a stalled body (%v)", err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

func isTimeoutErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestSlowBodyTimesOut: a body that stops arriving is answered with 408
// at the server's read timeout, and its connection closed, instead of
// holding a handler forever; an execution that outlasts the read timeout
// is not cut by it.
func TestSlowBodyTimesOut(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	fp := newFakePort()
	fp.addSession("s1", map[string]string{"keep.txt": "old"})
	fp.execute = func(ctx context.Context, _ string, req port.ExecuteRequest) (port.Result, error) {
		select {
		case <-time.After(4 * readTimeout):
			return port.Result{Tool: req.Tool, Stdout: "done", Outcome: port.OutcomeCompleted}, nil
		case <-ctx.Done():
			return port.Result{}, ctx.Err()
		}
	}
	srv := newTimeoutServer(t, fp, readTimeout)
	spec := mustSpec(t)
	expect408 := func(name, target, head string) {
		t.Helper()
		r := srv.stall(t, head)
		spec.checkResponse(t, httptest.NewRequest("POST", target, nil), r.status, r.header, r.body)
		if r.status != http.StatusRequestTimeout || r.code(t) != "request_timeout" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	expect408("exec", "/sessions/s1/exec",
		"POST /sessions/s1/exec HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"+`{"tool":"code_execution","inp`)
	expect408("create", "/sessions",
		"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{")
	expect408("create, chunked", "/sessions",
		"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n")
	head := "--b\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\nkeep.txt\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\nnew conte"
	expect408("upload, inside the file", "/sessions/s1/files",
		"POST /sessions/s1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n"+head)
	expect408("upload, before the file", "/sessions/s1/files",
		"POST /sessions/s1/files HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n--b\r\nContent-Dispo")
	if fp.lastExecID != "" {
		t.Error("a stalled exec body reached the port")
	}
	if got := string(fp.sessions["s1"]["keep.txt"]); got != "old" {
		t.Errorf("a stalled upload replaced the file: %q", got)
	}

	// An execution longer than the read timeout: the deadline covers the
	// body only.
	execOutlasting(t, srv.addr, "the read timeout")
}

// execOutlasting runs execCode on session s1 of the server at addr, an
// execution that lasts longer than what (a deadline on the request's
// body), and checks that it completes: such deadlines cover the body only.
func execOutlasting(t *testing.T, addr, what string) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+addr+"/sessions/s1/exec", strings.NewReader(execCode))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"stdout":"done"`) {
		t.Errorf("an execution longer than %s: %d %s", what, resp.StatusCode, body)
	}
}

// TestHostCheck: an unauthenticated handler on loopback answers only to
// loopback names and same-origin requests, so that a web page cannot reach
// it by DNS rebinding or a cross-origin request; configuration widens or
// drops the check.
func TestHostCheck(t *testing.T) {
	get := func(h *harness, host, origin string) response {
		t.Helper()
		req, _ := http.NewRequest("GET", h.srv.URL+"/capabilities", nil)
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		return h.send(req)
	}
	refused := func(r response) bool {
		return r.status == http.StatusForbidden && r.code(t) == "host_not_allowed"
	}

	h := newHarness(t, nil)
	port := h.srv.Listener.Addr().(*net.TCPAddr).Port
	for _, host := range []string{"", "localhost", "LOCALHOST:1", "localhost.:80", "127.0.0.1:9", "127.1.2.3", "[::1]:8080", "[::1]"} {
		if r := get(h, host, ""); r.status != http.StatusOK {
			t.Errorf("Host %q: %d %s", host, r.status, r.body)
		}
	}
	for _, host := range []string{"attacker.example", "attacker.example:" + itoa(port), "localhost.attacker.example", "10.0.0.1", "[::2]:80", "127.0.0.1.nip.io"} {
		if r := get(h, host, ""); !refused(r) {
			t.Errorf("Host %q: %d %s", host, r.status, r.body)
		}
	}
	// Every route but /healthz, and before the route is known.
	for _, target := range []string{"/sessions", "/sessions/x/exec", "/nope"} {
		req, _ := http.NewRequest("POST", h.srv.URL+target, nil)
		req.Host = "attacker.example"
		if r := h.send(req); !refused(r) {
			t.Errorf("POST %s: %d %s", target, r.status, r.body)
		}
	}
	req, _ := http.NewRequest("GET", h.srv.URL+"/healthz", nil)
	req.Host = "attacker.example"
	if r := h.send(req); r.status != http.StatusOK {
		t.Errorf("/healthz: %d", r.status)
	}
	if h.port.lastCreate != (port0) || len(h.port.sessions) != 0 {
		t.Error("a refused request reached the port")
	}
	// No Host at all (HTTP/1.0).
	if r := rawRequest(t, h.srv.Listener.Addr().String(), "GET /capabilities HTTP/1.0\r\n\r\n"); r.status != http.StatusForbidden {
		t.Errorf("no Host: %d %s", r.status, r.body)
	}

	// Origin: only the server's own.
	self := "http://" + h.srv.Listener.Addr().String()
	if r := get(h, "", self); r.status != http.StatusOK {
		t.Errorf("same origin: %d %s", r.status, r.body)
	}
	for _, origin := range []string{"http://attacker.example", "null", "http://localhost:3000", "file://", "%zz"} {
		if r := get(h, "", origin); !refused(r) {
			t.Errorf("Origin %q: %d %s", origin, r.status, r.body)
		}
	}
	// The simple requests a page can send without a preflight.
	req, _ = http.NewRequest("POST", h.srv.URL+"/sessions", nil)
	req.Header.Set("Origin", "http://attacker.example")
	if r := h.send(req); !refused(r) || len(h.port.sessions) != 0 {
		t.Errorf("cross-origin POST /sessions: %d %s", r.status, r.body)
	}

	// With a bearer token the check is not needed: a page cannot send it.
	h = newHarness(t, nil, server.WithBearerToken("tok"))
	h.auth = "Bearer tok"
	if r := get(h, "attacker.example", "http://attacker.example"); r.status != http.StatusOK {
		t.Errorf("with a token: %d %s", r.status, r.body)
	}

	// Named hosts: added to the loopback ones, checked on every request,
	// token or not.
	h = newHarness(t, nil, server.WithBearerToken("tok"), server.WithAllowedHosts("Sandbox.Internal:8080", "[fd00::1]"))
	h.auth = "Bearer tok"
	for _, host := range []string{"sandbox.internal", "SANDBOX.internal:9000", "[fd00::1]:80", "localhost"} {
		if r := get(h, host, ""); r.status != http.StatusOK {
			t.Errorf("allowed %q: %d %s", host, r.status, r.body)
		}
	}
	if r := get(h, "attacker.example", ""); !refused(r) {
		t.Errorf("named hosts, other host: %d %s", r.status, r.body)
	}
	// "*": no check.
	h = newHarness(t, nil, server.WithAllowedHosts("*"))
	if r := get(h, "attacker.example", "http://attacker.example"); r.status != http.StatusOK {
		t.Errorf("*: %d %s", r.status, r.body)
	}

	// Not on loopback: no check unless configured (the handler cannot
	// know the names a network deployment is reached by).
	hnd := server.NewHandler(newFakePort())
	for addr, want := range map[net.Addr]int{
		&net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 80}: http.StatusOK,
		&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}: http.StatusForbidden,
		&net.TCPAddr{IP: net.IPv6loopback, Port: 80}:       http.StatusForbidden,
	} {
		req := httptest.NewRequest("GET", "/capabilities", nil)
		req.Host = "attacker.example"
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, addr))
		rec := httptest.NewRecorder()
		hnd.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("local address %v: %d, want %d", addr, rec.Code, want)
		}
	}
}

var port0 port.CreateSessionRequest

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

// rawRequest writes a request by hand and reads the answer.
func rawRequest(t *testing.T, addr, raw string) response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(testwait.Deadline(t))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

// TestJSONMediaType: JSON routes take only application/json bodies, so
// that no request a browser sends without a preflight (a form, text/plain)
// runs code; POST /sessions still takes no body without a Content-Type.
func TestJSONMediaType(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	h := newHarness(t, fp)
	send := func(target, ct, body string) response {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest("POST", h.srv.URL+target, rd)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		return h.send(req)
	}
	for _, ct := range []string{"", "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", "application/json; charset=latin1", "application/jsonx", "application/json-seq", "json", ";"} {
		fp.lastExecID = ""
		if r := send("/sessions/s1/exec", ct, execCode); r.status != http.StatusUnsupportedMediaType || r.code(t) != "unsupported_media_type" || fp.lastExecID != "" {
			t.Errorf("exec as %q: %d %s", ct, r.status, r.body)
		}
		if r := send("/sessions", ct, `{"idle_timeout_seconds":60}`); r.status != http.StatusUnsupportedMediaType {
			t.Errorf("create as %q: %d %s", ct, r.status, r.body)
		}
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON;Charset=UTF-8", "application/json; foo=bar"} {
		if r := send("/sessions/s1/exec", ct, execCode); r.status != http.StatusOK {
			t.Errorf("exec as %q: %d %s", ct, r.status, r.body)
		}
		if r := send("/sessions", ct, `{"idle_timeout_seconds":60}`); r.status != http.StatusCreated {
			t.Errorf("create as %q: %d %s", ct, r.status, r.body)
		}
	}
	// What curl -XPOST sends (no body, no Content-Type), and an empty JSON body.
	if r := send("/sessions", "", ""); r.status != http.StatusCreated {
		t.Errorf("create without a body: %d %s", r.status, r.body)
	}
	if r := send("/sessions", "application/json", ""); r.status != http.StatusCreated {
		t.Errorf("create with an empty JSON body: %d %s", r.status, r.body)
	}
	// What curl -d '' sends: a form, even if empty.
	if r := send("/sessions", "application/x-www-form-urlencoded", ""); r.status != http.StatusUnsupportedMediaType {
		t.Errorf("create as an empty form: %d %s", r.status, r.body)
	}
	// An exec without a body is told so.
	if r := send("/sessions/s1/exec", "", ""); r.status != http.StatusUnprocessableEntity {
		t.Errorf("exec without a body: %d %s", r.status, r.body)
	}
}

// TestDuplicateKeysServed: the server refuses, before the port sees it, a
// body that a gateway could read differently.
func TestDuplicateKeysServed(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	h := newHarness(t, fp)
	for body, path := range map[string]string{
		`{"tool":"code_execution","input":{"code":"print(1)"},"tool":"bash_code_execution"}`: `"tool"`,
		`{"tool":"code_execution","input":{"code":"print(1)","code":"print(2)"}}`:            `"input.code"`,
		`{"tool":"code_execution","input":{"code":"print(1)"},"Input":{"code":"print(2)"}}`:  `"Input"`,
	} {
		fp.lastExecID = ""
		r := h.do("POST", "/sessions/s1/exec", body)
		if r.status != http.StatusUnprocessableEntity || r.code(t) != "invalid_request" || !strings.Contains(r.detail(t), "duplicate key "+path) {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
		if fp.lastExecID != "" {
			t.Errorf("%s reached the port", body)
		}
	}
	if r := h.do("POST", "/sessions", `{"max_lifetime_seconds":60,"max_lifetime_seconds":7200}`); r.status != http.StatusUnprocessableEntity ||
		!strings.Contains(r.detail(t), `duplicate key "max_lifetime_seconds"`) {
		t.Errorf("create: %d %s", r.status, r.body)
	}
}

// part is one part of a multipart body built by uploadBody.
type part struct {
	name, filename, content string
}

func uploadBody(t testing.TB, parts ...part) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		cd := `form-data; name="` + p.name + `"`
		if p.filename != "" {
			cd += `; filename="` + p.filename + `"`
		}
		h.Set("Content-Disposition", cd)
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(w, p.content)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &buf, mw.FormDataContentType()
}

// TestUploadPartOrder: a path part is honoured whether it comes before the
// file or after it (the file is then spooled until the body ends), and a
// second file or path, or an empty path, is refused, with nothing written,
// never ignored. No spool file is left behind, whatever the answer. It
// runs over porttest, whose workspace writes as the real ones do: nothing
// when the upload's reader fails.
func TestUploadPartOrder(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the server spools
	p := porttest.New()
	t.Cleanup(func() { _ = p.Close() })
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	h := servePort(t, p)
	upload := func(parts ...part) response {
		t.Helper()
		body, ct := uploadBody(t, parts...)
		req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/"+sess.ID+"/files", body)
		req.Header.Set("Content-Type", ct)
		r := h.send(req)
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%d %s: spool files left behind: %v", r.status, r.body, left)
		}
		return r
	}
	files := func() map[string]string {
		t.Helper()
		out := map[string]string{}
		var walk func(dir string)
		walk = func(dir string) {
			list, err := p.ListFiles(ctx, sess.ID, dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range list {
				if f.IsDir {
					walk(f.Path)
					continue
				}
				rc, _, err := p.GetFile(ctx, sess.ID, f.Path)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(rc)
				rc.Close()
				out[f.Path] = string(b)
			}
		}
		walk(".")
		return out
	}
	// reset starts each case in a fresh session holding data.csv alone.
	reset := func() {
		t.Helper()
		if err := p.DestroySession(ctx, sess.ID); err != nil {
			t.Fatal(err)
		}
		if sess, err = p.CreateSession(ctx, port.CreateSessionRequest{}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.PutFile(ctx, sess.ID, "data.csv", strings.NewReader("original")); err != nil {
			t.Fatal(err)
		}
	}
	big := strings.Repeat("0123456789abcdef", 64<<10) // 1 MiB: streamed past any buffer

	// Refused, and nothing written, wherever the extra part is.
	for name, parts := range map[string][]part{
		"two files":                  {{"path", "", "data.csv"}, {"file", "a", "new"}, {"file", "b", "newer"}},
		"two paths":                  {{"path", "", "data.csv"}, {"path", "", "other.csv"}, {"file", "a", "new"}},
		"empty path":                 {{"path", "", ""}, {"file", "data.csv", "new"}},
		"path first, a path after":   {{"path", "", "data.csv"}, {"file", "a", "new"}, {"path", "", "other.csv"}},
		"file first, two paths":      {{"file", "a", "new"}, {"path", "", "data.csv"}, {"path", "", "other.csv"}},
		"file first, two files":      {{"file", "a", "new"}, {"file", "b", "newer"}, {"path", "", "data.csv"}},
		"file, path, file":           {{"file", "a", big}, {"path", "", "data.csv"}, {"file", "b", "newer"}},
		"file first, empty path":     {{"file", "data.csv", "new"}, {"path", "", ""}},
		"file first, no usable name": {{"file", "..", "new"}},
	} {
		reset()
		r := upload(parts...)
		if r.status != http.StatusUnprocessableEntity || r.code(t) != "invalid_request" {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
		if got := files(); len(got) != 1 || got["data.csv"] != "original" {
			t.Errorf("%s: the workspace holds %v after a refusal", name, keys(got))
		}
	}

	// Honoured: the path before or after the file; other parts anywhere
	// are ignored.
	for name, c := range map[string]struct {
		parts      []part
		dest, want string
	}{
		"path first":             {[]part{{"note", "", "x"}, {"path", "", "in/data.csv"}, {"file", "local.csv", big}, {"submit", "", "go"}}, "in/data.csv", big},
		"path after file":        {[]part{{"file", "local.csv", "new"}, {"path", "", "data.csv"}}, "data.csv", "new"},
		"path after a big file":  {[]part{{"file", "data.csv", big}, {"path", "", "in/elsewhere.csv"}}, "in/elsewhere.csv", big},
		"path after file, later": {[]part{{"file", "local.csv", "new"}, {"note", "", "x"}, {"path", "", "out.csv"}, {"submit", "", "go"}}, "out.csv", "new"},
		"file alone":             {[]part{{"file", "dir/local.csv", "new"}}, "local.csv", "new"},
	} {
		reset()
		r := upload(c.parts...)
		var res contract.FileUploadResult
		if r.status != http.StatusCreated {
			t.Errorf("%s: %d %s", name, r.status, r.body)
			continue
		}
		r.json(t, &res)
		got := files()
		if res.Path != c.dest || res.SizeBytes != int64(len(c.want)) || got[c.dest] != c.want {
			t.Errorf("%s: answered %+v; the workspace holds %v", name, res, keys(got))
		}
		if c.dest != "data.csv" && got["data.csv"] != "original" {
			t.Errorf("%s: data.csv was changed", name)
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestUploadBrokenOff: a body that ends inside the file part is the
// client's malformed request (422), not the backend's failure (it was a
// 500 when the port's wrapped read error decided the status).
func TestUploadBrokenOff(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	h := newHarness(t, fp)
	body := "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.txt\"\r\n\r\nsome bytes and then noth"
	req, _ := http.NewRequest("POST", h.srv.URL+"/sessions/s1/files", strings.NewReader(body))
	req.Header.Set("Content-Type", "multipart/form-data; boundary=b")
	if r := h.send(req); r.status != http.StatusUnprocessableEntity || r.code(t) != "invalid_request" {
		t.Errorf("%d %s", r.status, r.body)
	}
	if _, ok := fp.sessions["s1"]["x.txt"]; ok {
		t.Error("a broken-off upload was stored")
	}
}

// bodyCounter counts the bytes handlers read of request bodies.
type bodyCounter struct{ n atomic.Int64 }

// wrap counts what h reads of every request's body.
func (c *bodyCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A copy: net/http goes on using its own request's body.
		r = r.WithContext(r.Context())
		r.Body = &countedBody{ReadCloser: r.Body, n: &c.n}
		h.ServeHTTP(w, r)
	})
}

type countedBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// serveCounted serves h on loopback, counting what it reads of bodies.
func serveCounted(t *testing.T, h http.Handler) (*timeoutServer, *bodyCounter) {
	t.Helper()
	c := &bodyCounter{}
	srv := httptest.NewServer(c.wrap(h))
	t.Cleanup(srv.Close)
	return &timeoutServer{addr: srv.Listener.Addr().String()}, c
}

var testSnapshotKey = bytes.Repeat([]byte("k"), port.MinSnapshotKeyBytes)

const restoreHead = "POST /snapshots/restore HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"

// A restore asks for its session before it reads its body: at capacity it
// is answered 503 with Retry-After at once, without a byte of the body
// read (a forged 2 GiB body cost 2 GiB of disk and seconds of CPU before a
// 400), and one announced over the cap is refused before it is read.
func TestRestoreRefusedBeforeItsBody(t *testing.T) {
	a := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(1) }, port.WithSnapshotKey(testSnapshotKey))
	// After a refusal, net/http drains what it can of the body before
	// it closes the connection: a short window ends that for a client
	// that sends no more.
	h := server.NewHandler(a, server.WithMinBodyRate(1<<10, 100*time.Millisecond))
	srv, read := serveCounted(t, h)
	spec := mustSpec(t)
	s, err := a.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}

	r := srv.stall(t, restoreHead+"Transfer-Encoding: chunked\r\n\r\n4\r\ncode\r\n")
	spec.checkResponse(t, httptest.NewRequest("POST", "/snapshots/restore", nil), r.status, r.header, r.body)
	if r.status != http.StatusServiceUnavailable || r.code(t) != "at_capacity" || r.header.Get("Retry-After") == "" {
		t.Errorf("restore at capacity: %d %s (Retry-After %q); want 503 at_capacity with Retry-After", r.status, r.body, r.header.Get("Retry-After"))
	}
	if n := read.n.Load(); n != 0 {
		t.Fatalf("a restore refused at capacity read %d bytes of its body", n)
	}

	if err := a.DestroySession(context.Background(), s.ID); err != nil {
		t.Fatal(err)
	}
	r = srv.stall(t, restoreHead+"Content-Length: 2147483648\r\n\r\ncode")
	if r.status != http.StatusBadRequest || r.code(t) != "invalid_snapshot" || !strings.Contains(r.detail(t), "larger than") {
		t.Errorf("a restore announced at 2 GiB: %d %s; want 400 invalid_snapshot, larger than the cap", r.status, r.body)
	}
	if n := read.n.Load(); n != 0 {
		t.Fatalf("a restore announced over the cap read %d bytes of its body", n)
	}
}

// Snapshots and restores at once are bounded: one more is answered 503
// with Retry-After before its body is read, and the slot is free again
// once the one under way ends.
func TestSnapshotRequestsAtOnce(t *testing.T) {
	sp := &heldRestorePort{snapshotPort: &snapshotPort{fakePort: newFakePort()}, entered: make(chan struct{}, 1)}
	sp.addSession("s1", nil)
	h := server.NewHandler(sp, server.WithMaxSnapshotRequests(1))
	srv, read := serveCounted(t, h)
	url := "http://" + srv.addr

	// A restore whose body arrives as the test writes it: once the
	// first bytes are taken, the restore holds the one slot.
	pr, pw := io.Pipe()
	first := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest("POST", url+"/snapshots/restore", pr)
		req.Header.Set("Content-Type", contract.SnapshotMediaType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	testwait.Receive(t, sp.entered, "the first restore in the port")
	before := read.n.Load()
	for _, head := range []string{
		restoreHead + "Content-Length: 4\r\n\r\ncode",
		"POST /sessions/s1/snapshot HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
	} {
		r := srv.stall(t, head)
		if r.status != http.StatusServiceUnavailable || r.code(t) != "at_capacity" || r.header.Get("Retry-After") != "1" {
			t.Errorf("%s: %d %s (Retry-After %q); want 503 at_capacity, Retry-After 1", strings.SplitN(head, "\r\n", 2)[0], r.status, r.body, r.header.Get("Retry-After"))
		}
	}
	if n := read.n.Load(); n != before {
		t.Errorf("refused restores read %d bytes of their bodies", n-before)
	}
	io.WriteString(pw, "snapshot of s1 for credential/")
	pw.Close()
	if got := testwait.Receive(t, first, "the first restore's answer"); got != http.StatusCreated {
		t.Fatalf("the first restore: %d", got)
	}
	req, _ := http.NewRequest("POST", url+"/sessions/s1/snapshot", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a snapshot once the restore ended: %d", resp.StatusCode)
	}
}

// heldRestorePort tells when a restore has reached it.
type heldRestorePort struct {
	*snapshotPort
	entered chan struct{}
}

func (p *heldRestorePort) RestoreSession(ctx context.Context, r io.Reader, opt port.SnapshotOptions) (port.Session, error) {
	select {
	case p.entered <- struct{}{}:
	default:
	}
	return p.snapshotPort.RestoreSession(ctx, r, opt)
}

// A body that arrives slower than the minimum rate is cut off with 408,
// and its connection closed, long before the read timeout; the rate ends
// with the body, so an execution longer than its window is not cut.
func TestSlowBodyCutAtTheMinimumRate(t *testing.T) {
	const window = 200 * time.Millisecond
	sp := &snapshotPort{fakePort: newFakePort()}
	sp.addSession("s1", nil)
	sp.execute = func(ctx context.Context, _ string, req port.ExecuteRequest) (port.Result, error) {
		select {
		case <-time.After(4 * window):
			return port.Result{Tool: req.Tool, Stdout: "done", Outcome: port.OutcomeCompleted}, nil
		case <-ctx.Done():
			return port.Result{}, ctx.Err()
		}
	}
	// The read timeout is longer than any test: only the rate can end
	// these requests.
	srv := newTimeoutServer(t, sp, time.Hour, server.WithMinBodyRate(1<<20, window))
	spec := mustSpec(t)
	for name, c := range map[string]struct{ target, head string }{
		"exec": {"/sessions/s1/exec",
			"POST /sessions/s1/exec HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n" + `{"tool":"code_execution","inp`},
		"create, chunked": {"/sessions",
			"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1\r\n{\r\n"},
		"restore": {"/snapshots/restore", restoreHead + "Content-Length: 100000\r\n\r\nsnapshot of s1"},
	} {
		r := srv.stall(t, c.head)
		spec.checkResponse(t, httptest.NewRequest("POST", c.target, nil), r.status, r.header, r.body)
		if r.status != http.StatusRequestTimeout || r.code(t) != "request_timeout" || !strings.Contains(r.detail(t), "minimum rate") {
			t.Errorf("%s: %d %s; want 408 request_timeout, for the minimum rate", name, r.status, r.body)
		}
	}
	if sp.lastExecID != "" {
		t.Error("a trickled exec body reached the port")
	}

	execOutlasting(t, srv.addr, "the rate's window")
}

// A snapshot whose temporary file the disk has no room for is 503 with a
// retry hint, and the session is as it was: the disk is the server's
// trouble, not the session's.
func TestSnapshotWithTheDiskFull(t *testing.T) {
	a := wasmtest.New(t, nil, port.WithSnapshotKey(testSnapshotKey))
	h := servePort(t, a)
	server.SetSnapshotDiskFull(h.h)
	id := h.createSession("")
	if r, _ := h.exec(id, `{"tool":"code_execution","input":{"code":"x = 7"}}`); r.status != http.StatusOK {
		t.Fatalf("exec: %d %s", r.status, r.body)
	}
	r := h.do("POST", "/sessions/"+id+"/snapshot", "")
	if r.status != http.StatusServiceUnavailable || r.code(t) != "at_capacity" || r.header.Get("Retry-After") == "" {
		t.Fatalf("snapshot with the disk full: %d %s; want 503 at_capacity with Retry-After", r.status, r.body)
	}
	if r, res := h.exec(id, `{"tool":"code_execution","input":{"code":"print(x)"}}`); r.status != http.StatusOK || res.ResultBlock.Content.Stdout != "7\n" || res.StateLost {
		t.Fatalf("the session after the refused snapshot: %d %+v", r.status, res)
	}
}
