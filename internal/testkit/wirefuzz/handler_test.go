package wirefuzz_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
	"github.com/codeport/codeport/server"
)

// FuzzHandler and FuzzUpload run the whole handler in memory (no network)
// over porttest: `make test` runs each for a few seconds, `make fuzz` for
// longer.

// sidToken in a fuzzed target stands for the id of a live session, so
// that the fuzzer reaches the session routes' handlers rather than only
// their 404.
const sidToken = "{sid}"

// fuzzPort is a fresh porttest port with one live session, closed with
// the test.
func fuzzPort(t *testing.T) (*port.Port, string) {
	t.Helper()
	echo := func(_ context.Context, _ porttest.Session, req port.ExecuteRequest) (port.Result, error) {
		return port.Result{Stdout: req.Code + req.Command}, nil
	}
	p := porttest.New(porttest.WithExecutor(echo, port.ToolCodeExecution, port.ToolBashCodeExecution), porttest.WithMaxSessions(4))
	t.Cleanup(func() { _ = p.Close() })
	sess, err := p.CreateSession(context.Background(), port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return p, sess.ID
}

// validToken reports whether s can be an HTTP method, which a server
// checks before any handler runs.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether a server would have let the value
// through as a header.
func validHeaderValue(s string) bool {
	return !strings.ContainsAny(s, "\r\n\x00")
}

// handlerSeeds are requests as clients send them (Otari's exec call,
// uploads, downloads, curl's defaults), and a few hostile ones.
var handlerSeeds = []struct {
	method, target, ctype, host, origin string
	body                                string
}{
	{"POST", "/sessions", "", "127.0.0.1:8080", "", ""},
	{"POST", "/sessions", "application/json", "localhost:8080", "", `{"idle_timeout_seconds":600,"max_lifetime_seconds":3600}`},
	{"POST", "/sessions/{sid}/exec", "application/json", "127.0.0.1:8080", "", `{"tool":"code_execution","input":{"code":"print(1)"},"timeout_seconds":30}`},
	{"POST", "/sessions/{sid}/exec", "application/json; charset=utf-8", "[::1]:8080", "", `{"tool":"bash_code_execution","input":{"command":"ls"},"tool_use_id":"t1"}`},
	{"POST", "/sessions/{sid}/exec", "application/json", "localhost", "", `{"tool":"text_editor_code_execution","input":{"command":"create","path":"a.py","file_text":"x=1\n"}}`},
	{"POST", "/sessions/{sid}/exec", "application/json", "localhost", "", `{"tool":"text_editor_code_execution","input":{"command":"view","path":"a.py","view_range":[1,-1]}}`},
	{"POST", "/sessions/{sid}/exec", "application/x-www-form-urlencoded", "localhost", "", `{"tool":"code_execution","input":{"code":"print(1)"}}`},
	{"POST", "/sessions/{sid}/exec", "text/plain", "attacker.example", "http://attacker.example", `{"tool":"code_execution","input":{"code":"print(1)"}}`},
	{"POST", "/sessions/{sid}/exec", "application/json", "localhost", "", `{"tool":"code_execution","tool":"bash_code_execution","input":{"command":"id"}}`},
	{"POST", "/sessions/{sid}/files", "multipart/form-data; boundary=B", "localhost", "", "--B\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\nin/a.csv\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\na,b\r\n--B--\r\n"},
	{"POST", "/sessions/{sid}/files", "multipart/form-data; boundary=B", "localhost", "", "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\n\r\na,b\r\n--B\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\nx\r\n--B--\r\n"},
	{"GET", "/sessions/{sid}/files/list?path=.", "", "localhost", "", ""},
	{"GET", "/sessions/{sid}/files?path=a.py", "", "localhost", "", ""},
	{"HEAD", "/sessions/{sid}/files?path=../etc/passwd", "", "localhost", "", ""},
	{"DELETE", "/sessions/{sid}", "", "localhost", "", ""},
	{"GET", "/capabilities", "", "localhost", "", ""},
	{"GET", "/healthz", "", "attacker.example", "", ""},
	{"GET", "/metrics", "", "localhost", "", ""},
	{"GET", "/openapi.yaml", "", "localhost", "", ""},
	{"PUT", "/sessions", "", "localhost", "", ""},
	{"GET", "/sessions/{sid}/../exec", "", "localhost", "", ""},
	{"POST", "//sessions", "", "localhost", "", ""},
	{"GET", "/nope", "", "localhost", "null", ""},
}

// FuzzHandler sends arbitrary requests to the whole handler: it must not
// panic, must never answer a request with a 5xx (porttest does not fail)
// or a redirect, and every error must be a JSON {"detail","code"} body with a code of
// contract.ErrorCodes. The request arrives on a loopback address, so the
// host check is in play.
func FuzzHandler(f *testing.F) {
	for _, s := range handlerSeeds {
		f.Add(s.method, s.target, s.ctype, s.host, s.origin, []byte(s.body))
	}
	codes := contract.ErrorCodes()
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	f.Fuzz(func(t *testing.T, method, target, ctype, host, origin string, body []byte) {
		if !validToken(method) || !validHeaderValue(ctype) || !validHeaderValue(host) || !validHeaderValue(origin) {
			return
		}
		p, sid := fuzzPort(t)
		target = strings.ReplaceAll(target, sidToken, sid)
		u, err := url.ParseRequestURI(target)
		if err != nil || !strings.HasPrefix(target, "/") {
			return // a server answers 400 before any handler runs
		}
		req := &http.Request{
			Method: method, URL: u, RequestURI: target, Host: host,
			Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
			RemoteAddr: "127.0.0.1:40000",
		}
		if len(body) == 0 {
			req.Body = http.NoBody
		}
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req = req.WithContext(context.WithValue(context.Background(), http.LocalAddrContextKey, net.Addr(loopback)))
		h := server.NewHandler(p, server.WithMaxRequestBytes(64<<10), server.WithMaxUploadBytes(64<<10),
			server.WithGatherer(prometheus.NewRegistry()))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)

		status := rec.Code
		if status >= 500 || (status >= 300 && status < 400) {
			t.Fatalf("%s %q: %d %s", method, target, status, rec.Body.Bytes())
		}
		if status < 400 {
			return
		}
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Fatalf("%s %q: %d with Content-Type %q: %s", method, target, status, ct, rec.Body.Bytes())
		}
		var e contract.Error
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Detail == "" || !slices.Contains(codes, e.Code) {
			t.Fatalf("%s %q: %d with body %s (%v)", method, target, status, rec.Body.Bytes(), err)
		}
	})
}

const fuzzBoundary = "B0undary"

// uploadSeed builds a multipart body of the given parts, "name=content"
// or "name;filename=content".
func uploadSeed(parts ...string) []byte {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.SetBoundary(fuzzBoundary)
	for _, p := range parts {
		head, content, _ := strings.Cut(p, "=")
		name, filename, hasFile := strings.Cut(head, ";")
		var w io.Writer
		if hasFile {
			w, _ = mw.CreateFormFile(name, filename)
		} else {
			w, _ = mw.CreateFormField(name)
		}
		_, _ = io.WriteString(w, content)
	}
	_ = mw.Close()
	return buf.Bytes()
}

// refPart is what a straightforward parse of the body finds in a part.
type refPart struct {
	name, filename string
	content        []byte
}

// parseUpload reads every part of body, as a client would expect a server
// to; ok is false when the body is not well-formed multipart.
func parseUpload(body []byte) (parts []refPart, ok bool) {
	mr := multipart.NewReader(bytes.NewReader(body), fuzzBoundary)
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return parts, true
		}
		if err != nil {
			return parts, false
		}
		b, err := io.ReadAll(p)
		if err != nil {
			return parts, false
		}
		parts = append(parts, refPart{name: p.FormName(), filename: p.FileName(), content: b})
	}
}

// FuzzUpload sends arbitrary multipart bodies to the upload route. Wherever
// a path part is, before the file or after it, it is honoured or the
// upload refused, never ignored: an upload accepted has one file part and
// at most one path part, and the file is where the path (or else the
// file's name) says, with the file part's bytes; an upload refused writes
// nothing; no answer is a 5xx; no spool file outlives a request.
func FuzzUpload(f *testing.F) {
	tmp := f.TempDir()
	f.Setenv("TMPDIR", tmp) // where the server spools a file sent before its path
	for _, seed := range [][]byte{
		uploadSeed("path=in/data.csv", "file;local.csv=a,b\n1,2\n"),
		uploadSeed("file;report.txt=hello"),
		uploadSeed("file;report.txt=hello", "path=elsewhere.txt"),
		uploadSeed("file;=no name", "note=x", "path=in/named.txt"),
		uploadSeed("file;a.txt=one", "path=b.txt", "path=c.txt"),
		uploadSeed("file;a.txt=one", "file;b.txt=two", "path=c.txt"),
		uploadSeed("file;a.txt=one", "path="),
		uploadSeed("file;a.txt=one", "path=../escape.txt"),
		uploadSeed("note=x", "path=a.txt", "file;b.txt=content", "submit=go"),
		uploadSeed("path=a.txt", "path=b.txt", "file;c.txt=content"),
		uploadSeed("path=a.txt", "file;b.txt=one", "file;c.txt=two"),
		uploadSeed("path=", "file;b.txt=one"),
		uploadSeed("path=../escape.txt", "file;b.txt=one"),
		uploadSeed("file;=no name"),
		[]byte("--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\nbroken off"),
		// The file, then a body that breaks off where a path part might be.
		[]byte("--" + fuzzBoundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\nall of it\r\n--" + fuzzBoundary + "\r\n"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, sid := fuzzPort(t)
		h := server.NewHandler(p, server.WithMaxUploadBytes(1<<20))
		req := httptest.NewRequest("POST", "/sessions/"+sid+"/files", bytes.NewReader(body))
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+fuzzBoundary)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%d %s", rec.Code, rec.Body.Bytes())
		}
		if left, _ := filepath.Glob(filepath.Join(tmp, "codeport-upload-*")); len(left) != 0 {
			t.Fatalf("%d %s: spool files left behind: %v", rec.Code, rec.Body.Bytes(), left)
		}
		stored := workspaceFiles(t, p, sid)

		parts, wellFormed := parseUpload(body)
		var files, paths []int
		for i, pt := range parts {
			switch pt.name {
			case "file":
				files = append(files, i)
			case "path":
				paths = append(paths, i)
			}
		}
		if rec.Code != http.StatusCreated {
			if len(stored) != 0 {
				t.Fatalf("refused with %d %s, yet the workspace holds %v", rec.Code, rec.Body.Bytes(), stored)
			}
			return
		}
		switch {
		case !wellFormed:
			t.Fatalf("accepted a malformed body (%d parts read)", len(parts))
		case len(files) != 1:
			t.Fatalf("accepted %d file parts", len(files))
		case len(paths) > 1:
			t.Fatalf("accepted %d path parts", len(paths))
		}
		file := parts[files[0]]
		dest := file.filename[strings.LastIndexAny(file.filename, `/\`)+1:]
		if len(paths) == 1 {
			dest = string(parts[paths[0]].content)
		}
		var res contract.FileUploadResult
		if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		if len(stored) != 1 || stored[res.Path] != string(file.content) {
			t.Fatalf("accepted as %q; the workspace holds %v", res.Path, stored)
		}
		// The destination names that file (the port may spell it
		// differently: "./a" is "a").
		rc, _, err := p.GetFile(context.Background(), sid, dest)
		if err != nil {
			t.Fatalf("the upload's destination %q: %v", dest, err)
		}
		got, _ := io.ReadAll(rc)
		rc.Close()
		if !bytes.Equal(got, file.content) {
			t.Fatalf("%q holds %q, the file part %q", dest, got, file.content)
		}
	})
}

// workspaceFiles lists every file of the session with its contents.
func workspaceFiles(t *testing.T, p *port.Port, sid string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	var walk func(dir string)
	walk = func(dir string) {
		list, err := p.ListFiles(ctx, sid, dir)
		if err != nil {
			t.Fatalf("listing %q: %v", dir, err)
		}
		for _, f := range list {
			if f.IsDir {
				walk(f.Path)
				continue
			}
			rc, _, err := p.GetFile(ctx, sid, f.Path)
			if err != nil {
				t.Fatalf("reading %q: %v", f.Path, err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			out[f.Path] = string(b)
		}
	}
	walk(".")
	return out
}
