package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// statusClientClosed is recorded (for the log only: nobody is listening)
// when the client went away before the port answered.
const statusClientClosed = 499

// maxPathFieldBytes bounds the multipart path field, which is read into
// memory.
const maxPathFieldBytes = 4096

// SessionRoutePattern matches the path of every route of a session whose
// id carries a node id (port.WithNodeID) and captures the node id as
// "node". A proxy in front of several nodes routes by it, with no table
// of sessions (deploy/nginx holds the same expression, as a test checks).
const SessionRoutePattern = `^/sessions/(?P<node>` + port.NodeIDPattern + `)\.[^/]+`

// NewHandler returns an http.Handler that serves p over code-execution
// contract v1, plus /healthz, /capabilities, /metrics and /openapi.yaml.
//
// Each request's context is passed to p, so a client that disconnects
// cancels its execution. The handler sets no timeouts of its own: put it in
// an http.Server with ReadHeaderTimeout, ReadTimeout and IdleTimeout, and
// with a WriteTimeout, if any, above the ReadTimeout plus the backend's
// longest execution. ReadTimeout bounds the request body (a body that has
// not arrived by then is answered 408, code request_timeout); it does not
// cut an execution, since net/http lifts the read deadline once the body
// has been read.
//
// Every exec result of p carries a tool use id, as port.Result promises:
// the request's, or one p made. Every adapter's *port.Port keeps that
// promise; an exec result without one is answered as an internal error.
//
// NewHandler panics if p is nil.
func NewHandler(p port.CodeExecutionPort, opts ...Option) http.Handler {
	if p == nil {
		panic("server: NewHandler called with a nil port")
	}
	s := &server{port: p, cfg: newConfig(opts), mux: http.NewServeMux(), openapi: contract.OpenAPI()}
	s.snapshotSlots = make(chan struct{}, s.cfg.maxSnapshotRequests)
	if s.cfg.token != "" {
		s.tokenHash = sha256.Sum256([]byte(s.cfg.token))
	}
	if s.cfg.gatherer != nil {
		s.metrics = promhttp.HandlerFor(s.cfg.gatherer, promhttp.HandlerOpts{
			ErrorHandling: promhttp.ContinueOnError,
		})
	}
	s.routes()
	if s.cfg.tracerProvider != nil {
		return traced(s, s.cfg.tracerProvider)
	}
	return s
}

type server struct {
	port      port.CodeExecutionPort
	cfg       config
	tokenHash [sha256.Size]byte
	mux       *http.ServeMux
	metrics   http.Handler
	openapi   []byte
	// snapshotSlots holds a token per snapshot or restore under way
	// (WithMaxSnapshotRequests).
	snapshotSlots chan struct{}
	// tempSink, when set, is what a snapshot's temporary file is
	// written through (tests give one that fails as a full disk does).
	tempSink func(io.Writer) io.Writer
}

func (s *server) routes() {
	allowed := map[string][]string{}
	handle := func(pattern string, h http.HandlerFunc, auth bool) {
		method, path, _ := strings.Cut(pattern, " ")
		allowed[path] = append(allowed[path], method)
		if method == http.MethodGet {
			allowed[path] = append(allowed[path], http.MethodHead)
		}
		if strings.Contains(path, "{id}") {
			h = s.owned(h, method == http.MethodDelete)
		}
		if auth {
			h = s.authenticated(h)
		}
		s.mux.Handle(pattern, h)
	}
	handle("POST /sessions", s.createSession, true)
	handle("GET /sessions", s.listSessions, true)
	handle("DELETE /sessions/{id}", s.destroySession, true)
	handle("POST /sessions/{id}/exec", s.execute, true)
	handle("GET /sessions/{id}/files/list", s.listFiles, true)
	handle("GET /sessions/{id}/files", s.getFile, true)
	handle("POST /sessions/{id}/files", s.putFile, true)
	handle("POST /sessions/{id}/snapshot", s.snapshotSession, true)
	handle("POST /snapshots/restore", s.restoreSession, true)
	handle("GET /capabilities", s.capabilities, true)
	handle("GET /metrics", s.serveMetrics, true)
	handle("GET /openapi.yaml", s.openAPI, true)
	handle("GET /healthz", s.healthz, false)

	// ServeMux answers a wrong method with a plain-text 405 and an unknown
	// path with a plain-text 404; the contract wants {"detail"} bodies, so
	// both are registered explicitly. A method-less pattern loses to the
	// method-specific ones above, so it sees only the wrong methods.
	for path, methods := range allowed {
		slices.Sort(methods)
		allow := strings.Join(methods, ", ")
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			s.writeError(w, r, refuse(contract.CodeMethodNotAllowed, "method "+r.Method+" not allowed; allowed: "+allow))
		})
		if path != "/healthz" {
			h = s.authenticated(h)
		}
		s.mux.Handle(path, h)
	}
	s.mux.Handle("/", s.authenticated(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, refuse(contract.CodeRouteNotFound, "no such route"))
	}))
}

// ServeHTTP routes the request and logs it once it is answered.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	switch err := s.checkOrigin(r); {
	case err != nil:
		s.writeError(rec, r, err)
	case r.Method != http.MethodConnect && r.URL.Path != cleanPath(r.URL.Path):
		// ServeMux would redirect to the clean path with an HTML page, a
		// 301 that turns a POST into a GET; no route of this API has such
		// a path.
		s.writeError(rec, r, refuse(contract.CodeRouteNotFound, "no such route"))
	default:
		orig := r
		r = s.limitBodyRate(rec, r)
		s.mux.ServeHTTP(rec, r)
		// The route matched, for what wraps the handler (its tracing)
		// when r is a copy.
		orig.Pattern = r.Pattern
	}
	s.log(r, rec, time.Since(start))
}

func (s *server) log(r *http.Request, rec *recorder, d time.Duration) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	level := slog.LevelInfo
	switch {
	case r.Pattern == "GET /healthz" && (status == http.StatusOK || status == http.StatusServiceUnavailable):
		// An orchestrator probes every few seconds: at INFO its probes
		// would drown the requests. Ready or not yet ready, both are
		// routine.
		level = slog.LevelDebug
	case status == http.StatusServiceUnavailable:
		// At capacity or shutting down: a state the server reports on
		// purpose, not a failure.
		level = slog.LevelWarn
	case status >= 500:
		level = slog.LevelError
	case rec.err != nil && status < 400:
		// A failure after the status was sent: a download cut short.
		level = slog.LevelWarn
	}
	ctx := context.WithoutCancel(r.Context())
	if !s.cfg.logger.Enabled(ctx, level) {
		// No record is built for a level that is not logged.
		return
	}
	attrs := make([]slog.Attr, 0, 7)
	attrs = append(attrs,
		slog.String("method", r.Method),
		slog.String("route", r.Pattern),
		slog.Int("status", status),
		slog.Duration("duration", d),
	)
	if id := r.PathValue("id"); id != "" {
		attrs = append(attrs, slog.String("session_id", id))
	}
	if rec.tenant != "" {
		attrs = append(attrs, slog.String("tenant", rec.tenant))
	}
	// A client error is the client's business, and its message may quote
	// the client's input; others are logged. Port errors never carry code,
	// output or file contents.
	if rec.err != nil && (status < 400 || status >= 500 || status == statusClientClosed) {
		attrs = append(attrs, slog.String("error", rec.err.Error()))
	}
	s.cfg.logger.LogAttrs(ctx, level, "request", attrs...)
}

// authenticated wraps h with the bearer check when a token or tenants are
// configured.
func (s *server) authenticated(h http.HandlerFunc) http.HandlerFunc {
	if s.cfg.tenants != nil {
		return s.tenantAuthenticated(h)
	}
	if s.cfg.token == "" {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			s.writeError(w, r, port.ErrUnauthorized)
			return
		}
		h(w, r)
	}
}

func (s *server) authorized(r *http.Request) bool {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	// Hashing first makes the comparison independent of the presented
	// credential's length as well as its content.
	got := sha256.Sum256([]byte(strings.TrimSpace(cred)))
	return subtle.ConstantTimeCompare(got[:], s.tokenHash[:]) == 1
}

func (s *server) createSession(w http.ResponseWriter, r *http.Request) {
	var body contract.CreateSessionRequest
	if err := s.decodeJSON(w, r, &body, true); err != nil {
		s.writeError(w, r, err)
		return
	}
	req, err := contract.CreateSessionRequestToPort(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	t := tenantOf(r)
	if err := s.cfg.tenants.admit(r.Context(), s.port, t); err != nil {
		s.writeError(w, r, err)
		return
	}
	sess, err := s.port.CreateSession(r.Context(), req)
	s.cfg.tenants.settle(t, sessionOrNil(sess, err))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if sess.ID == "" {
		s.writeError(w, r, errors.New("port returned a session without an id"))
		return
	}
	writeJSON(w, http.StatusCreated, contract.SessionFromPort(sess))
}

func (s *server) destroySession(w http.ResponseWriter, r *http.Request) {
	// The contract lets an unknown id be released "again": the session is
	// in the desired state either way. Not so an id of another node's
	// (port.WithNodeID): the call was misrouted, and the session lives on.
	err := s.port.DestroySession(r.Context(), r.PathValue("id"))
	var elsewhere *port.OtherNodeError
	if err != nil && (!errors.Is(err, port.ErrSessionNotFound) || errors.As(err, &elsewhere)) {
		s.writeError(w, r, err)
		return
	}
	s.cfg.tenants.gone(tenantOf(r), r.PathValue("id"))
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) execute(w http.ResponseWriter, r *http.Request) {
	var body contract.ExecRequest
	if err := s.decodeJSON(w, r, &body, false); err != nil {
		s.writeError(w, r, err)
		return
	}
	req, err := contract.ExecRequestToPort(body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.cfg.tenants.allowExec(tenantOf(r)); err != nil {
		s.executed(r, port.Result{}, err)
		s.writeError(w, r, err)
		return
	}
	if acceptsEventStream(r.Header) {
		s.executeStream(w, r, req)
		return
	}
	res, err := s.port.Execute(r.Context(), r.PathValue("id"), req)
	err = checkResult(res, err)
	s.executed(r, res, err)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, responseOf(res, req))
}

// errNoToolUseID is the error of a result without a tool use id.
var errNoToolUseID = errors.New("server: the port returned a result without a tool use id")

// checkResult is the error of an Execute call that returned res and err.
// The contract promises a tool_use_id on every response: the request's,
// or one the backend made. A port promises the same (port.Result), and
// keeps it in one place, port.Port, which every adapter's constructor
// returns; over adapters/http the remote backend's id comes back, or the
// Port mints one. The handler does not make one up for a port that broke
// that promise (an id the port, its logs and its other callers never saw):
// such a result is an internal error.
func checkResult(res port.Result, err error) error {
	if err == nil && res.ToolUseID == "" {
		return errNoToolUseID
	}
	return err
}

// responseOf is the exec response for res, which checkResult accepted.
// The contract promises the block type of the tool that ran on every
// response. A port.Port keeps that promise; a bare CodeExecutionPort may
// not, so the handler does not rely on it.
func responseOf(res port.Result, req port.ExecuteRequest) contract.ExecResponse {
	if res.Tool == "" {
		res.Tool = req.Tool
	}
	return contract.ResultFromPort(res)
}

func (s *server) listFiles(w http.ResponseWriter, r *http.Request) {
	dir := r.URL.Query().Get("path")
	if dir == "" {
		dir = "."
	}
	files, err := s.port.ListFiles(r.Context(), r.PathValue("id"), dir)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, contract.FileListFromPort(files))
}

// getFile serves a workspace file by path, or an output file by its id
// (file_id: the version a call produced, see port.GetOutputFile). Both go
// by one route, so that what guards and proxies that route (its auth, its
// limits) covers both, and the answer has one form.
func (s *server) getFile(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	name, fileID := q.Get("path"), q.Get("file_id")
	var (
		rc   io.ReadCloser
		info port.FileInfo
		err  error
	)
	switch {
	case name != "" && fileID != "":
		err = invalidf("give query parameter path or file_id, not both")
	case fileID != "":
		rc, info, err = s.port.GetOutputFile(r.Context(), r.PathValue("id"), fileID)
		name = info.Path
	case name == "":
		err = invalidf("query parameter path (or file_id) is required")
	default:
		rc, info, err = s.port.GetFile(r.Context(), r.PathValue("id"), name)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer rc.Close()
	if info.IsDir {
		s.writeError(w, r, fmt.Errorf("%w: %s", port.ErrIsDirectory, name))
		return
	}
	h := w.Header()
	ct := info.MimeType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	// The bytes are the program's, not the server's: a browser pointed at
	// this route must neither sniff nor render them as a page of this origin.
	h.Set("X-Content-Type-Options", "nosniff")
	if fileID != "" && name != "" {
		h.Set(contract.PathHeader, url.PathEscape(name))
	}
	if cd := mime.FormatMediaType("attachment", map[string]string{"filename": baseName(name)}); cd != "" {
		h.Set("Content-Disposition", cd)
	} else {
		h.Set("Content-Disposition", "attachment")
	}
	src := io.Reader(rc)
	if info.Size > 0 {
		h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
		// Never send more than announced, whatever the file did since.
		src = io.LimitReader(rc, info.Size)
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	n, err := io.Copy(w, src)
	if err == nil && info.Size > 0 && n < info.Size {
		err = fmt.Errorf("file ended after %d of %d bytes", n, info.Size)
	}
	if err != nil {
		// Too late for a status; the short body tells the client.
		if rec, ok := w.(*recorder); ok {
			rec.err = fmt.Errorf("streaming file: %w", err)
		}
	}
}

// putFile puts the multipart body's file part into the port, at the path
// part's destination (else at the file's base name).
//
// A path part before the file lets the upload be streamed into the port as
// it arrives. A file part that comes first is spooled to a temporary file
// (see spoolFile), since a path may follow it, and put once the body has
// ended. Either way, a second path part, a second file part or an empty
// path part is refused (422) rather than ignored, and a refused upload
// writes nothing: when streaming, the parts after the file are read when
// the file part ends, before the port is told so, and if they hold a path
// or another file the port's read fails there, and a port's PutFile
// writes nothing when its reader fails (as it writes nothing for a body
// that breaks off or goes over the cap; see uploadReader); when spooling,
// the port is called only once the whole body has been read and found
// well-formed.
func (s *server) putFile(w http.ResponseWriter, r *http.Request) {
	limit := s.cfg.maxUploadBytes
	if r.ContentLength > limit {
		s.writeError(w, r, uploadTooLarge(&http.MaxBytesError{Limit: limit}))
		return
	}
	// Remember a cap overrun or a read timeout however the multipart
	// reader or the port wrap the read error, so it is always reported
	// as 413 or 408.
	body := &bodyTracker{ReadCloser: http.MaxBytesReader(unwrap(w), r.Body, limit)}
	r.Body = body
	mr, err := r.MultipartReader()
	if err != nil {
		if errors.Is(err, http.ErrNotMultipart) {
			s.writeError(w, r, refuse(contract.CodeUnsupportedMediaType, "request body must be multipart/form-data"))
			return
		}
		s.writeError(w, r, invalidf("malformed multipart body"))
		return
	}
	dest, havePath := "", false
	// spooled is the file part when it came before any path part.
	var spooled *spool
	defer func() { spooled.remove() }()
	for {
		part, err := mr.NextPart()
		switch {
		case body.failure() != nil:
			s.writeError(w, r, body.failure())
			return
		case err == io.EOF && spooled != nil:
			// Exactly io.EOF: the closing delimiter was read. (A body that
			// breaks off after a boundary gives a wrapped io.EOF, and may
			// have lost a path part.)
			s.putSpooled(w, r, spooled, dest, havePath)
			return
		case errors.Is(err, io.EOF) && spooled == nil:
			s.writeError(w, r, invalidf("multipart body has no file part"))
			return
		case err != nil:
			s.writeError(w, r, invalidf("malformed multipart body"))
			return
		}
		switch part.FormName() {
		case "path":
			if havePath {
				s.writeError(w, r, invalidf("multipart body has more than one path part"))
				return
			}
			b, err := io.ReadAll(io.LimitReader(part, maxPathFieldBytes+1))
			if body.failure() != nil {
				s.writeError(w, r, body.failure())
				return
			}
			if err != nil {
				s.writeError(w, r, invalidf("malformed multipart body"))
				return
			}
			if len(b) > maxPathFieldBytes {
				s.writeError(w, r, invalidf("path part is over %d bytes", maxPathFieldBytes))
				return
			}
			if len(b) == 0 {
				// Not read as "no path": a path given must be honoured.
				s.writeError(w, r, invalidf("path part is empty"))
				return
			}
			dest, havePath = string(b), true
		case "file":
			if spooled != nil {
				s.writeError(w, r, invalidf("multipart body has more than one file part; nothing was written"))
				return
			}
			if !havePath {
				// A path part may follow: keep the file until the body ends.
				if spooled, err = s.spoolFile(part, body); err != nil {
					s.writeError(w, r, err)
					return
				}
				continue
			}
			up := &uploadReader{part: part, mr: mr, body: body}
			info, err := s.port.PutFile(r.Context(), r.PathValue("id"), dest, up)
			if err == nil && !up.checked {
				// The port stopped reading at the file's last byte, before
				// the part's end: look now. A refusal then comes after the
				// write, and says so.
				if rerr := up.rest(); rerr != nil {
					up.err = fmt.Errorf("%w (the file was written as %s nonetheless)", rerr, quoteShort(dest))
				}
			}
			switch {
			case body.failure() != nil:
				s.writeError(w, r, body.failure())
			case up.err != nil:
				s.writeError(w, r, up.err)
			case err != nil:
				s.writeError(w, r, err)
			default:
				if info.Path == "" {
					info.Path = dest
				}
				writeJSON(w, http.StatusCreated, contract.FileUploadResultFromPort(info))
			}
			return
		}
		// Other parts are skipped by NextPart.
	}
}

// spool is a file part kept in a temporary file until the body has ended.
type spool struct {
	f *os.File
	// name is the part's file name, the destination's base name when no
	// path part comes.
	name string
}

// remove closes and deletes the spool file; a nil spool is none.
func (sp *spool) remove() {
	if sp == nil {
		return
	}
	_ = sp.f.Close()
	_ = os.Remove(sp.f.Name())
}

// spoolFile copies a file part into a temporary file in the directory the
// server keeps its temporary files in (os.TempDir, as for snapshots). The
// port's file limit, when the port states one (Limits, as *port.Port
// does), is enforced as the bytes arrive: a file over it is refused with
// port.ErrFileTooLarge after at most one byte over, never spooled whole;
// the upload cap bounds the body anyway. The file is removed when the
// copy fails.
func (s *server) spoolFile(part *multipart.Part, body *bodyTracker) (*spool, error) {
	f, err := os.CreateTemp("", "codeport-upload-")
	if err != nil {
		return nil, fmt.Errorf("%w: upload: temporary file: %w", port.ErrRuntimeFailure, err)
	}
	sp := &spool{f: f, name: part.FileName()}
	src := io.Reader(part)
	fileMax := s.fileLimit()
	if fileMax > 0 && fileMax < math.MaxInt64 {
		// One byte over tells a file over the limit; no file can be over
		// the largest.
		src = io.LimitReader(part, fileMax+1)
	}
	dst := &writeTracker{w: f}
	n, err := io.Copy(dst, src)
	switch {
	case body.failure() != nil:
		err = body.failure()
	case dst.err != nil:
		err = fmt.Errorf("%w: upload: temporary file: %w", port.ErrRuntimeFailure, dst.err)
	case err != nil:
		// A body that breaks off inside the file part is the client's
		// malformed request, not the backend's failure.
		err = invalidf("malformed multipart body")
	case fileMax > 0 && n > fileMax:
		err = fmt.Errorf("%w: the file is over the limit of %d bytes; nothing was written", port.ErrFileTooLarge, fileMax)
	default:
		_, err = f.Seek(0, io.SeekStart)
		if err != nil {
			err = fmt.Errorf("%w: upload: temporary file: %w", port.ErrRuntimeFailure, err)
		}
	}
	if err != nil {
		sp.remove()
		return nil, err
	}
	return sp, nil
}

// putSpooled puts a spooled file part, once the whole body has been read,
// at the path part's destination, or at the file's base name without one.
func (s *server) putSpooled(w http.ResponseWriter, r *http.Request, sp *spool, dest string, havePath bool) {
	if !havePath {
		dest = baseName(sp.name)
		if dest == "" || dest == "." || dest == ".." {
			s.writeError(w, r, invalidf("no path part and no usable file name"))
			return
		}
	}
	info, err := s.port.PutFile(r.Context(), r.PathValue("id"), dest, sp.f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if info.Path == "" {
		info.Path = dest
	}
	writeJSON(w, http.StatusCreated, contract.FileUploadResultFromPort(info))
}

// fileLimit is the port's limit on a file's size, if it states one.
func (s *server) fileLimit() int64 {
	if l, ok := s.port.(interface{ Limits() port.Limits }); ok {
		return l.Limits().FileBytes
	}
	return 0
}

// writeTracker remembers why a write failed, to tell it from a failed read
// in io.Copy's error.
type writeTracker struct {
	w   io.Writer
	err error
}

func (t *writeTracker) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if err != nil && t.err == nil {
		t.err = err
	}
	return n, err
}

// uploadReader is the reader the port's PutFile gets when the path part
// came first: the file part, whose end it reports only once the rest of
// the multipart body has been read and found to hold no second path part
// and no second file part. If it does, or
// the body is malformed, Read fails instead of reporting the end, so the
// port never completes the write: the refusal leaves nothing behind. The
// look-ahead reads what a well-formed body holds after its file anyway
// (the closing boundary, perhaps other fields), so the upload is still
// streamed, and the cost is bounded by the upload cap.
type uploadReader struct {
	part *multipart.Part
	mr   *multipart.Reader
	body *bodyTracker
	// err is the refusal found while reading, answered instead of the
	// port's error (a port reports a failed read in its own terms).
	err error
	// checked: the rest of the body has been looked at.
	checked bool
}

func (u *uploadReader) Read(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	if u.checked {
		return 0, io.EOF
	}
	n, err := u.part.Read(p)
	switch {
	case errors.Is(err, io.EOF):
		if rerr := u.rest(); rerr != nil {
			u.err = rerr
			return n, rerr
		}
	case err != nil && u.body.failure() == nil:
		// A body that breaks off inside the file part is the client's
		// malformed request, not the backend's failure.
		u.err = invalidf("malformed multipart body")
		return n, u.err
	}
	return n, err
}

// rest reads the multipart body after the file part.
func (u *uploadReader) rest() error {
	u.checked = true
	for {
		part, err := u.mr.NextPart()
		switch {
		case err == io.EOF:
			// Exactly io.EOF: the closing delimiter was read. A body that
			// breaks off after a boundary gives a wrapped io.EOF, and may
			// have lost the very part this looks for.
			return nil
		case err != nil:
			if f := u.body.failure(); f != nil {
				return f
			}
			return invalidf("malformed multipart body after the file part")
		}
		switch part.FormName() {
		case "path":
			return invalidf("multipart body has more than one path part; nothing was written")
		case "file":
			return invalidf("multipart body has more than one file part; nothing was written")
		}
	}
}

// snapshots is the port's snapshot operations, or route_not_found when
// it offers none.
func (s *server) snapshots(ctx context.Context) (port.SessionSnapshots, error) {
	sn, ok := s.port.(port.SessionSnapshots)
	if !ok || !sn.SnapshotsOffered(ctx) {
		// As /metrics without a gatherer: the deployment has no such route.
		return nil, refuse(contract.CodeRouteNotFound, "this server offers no session snapshots (see snapshots in /capabilities)")
	}
	return sn, nil
}

// sessionLister is a port that can list its sessions (*port.Port).
type sessionLister interface {
	SessionIDs(ctx context.Context) ([]string, error)
}

// listSessions answers with the ids of the node's sessions, so that an
// operator can drain it (codeport drain). A port that cannot list them
// answers 501.
func (s *server) listSessions(w http.ResponseWriter, r *http.Request) {
	l, ok := s.port.(sessionLister)
	if !ok {
		s.writeError(w, r, fmt.Errorf("%w: this server cannot list its sessions", port.ErrUnsupported))
		return
	}
	ids, err := l.SessionIDs(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// With tenants, a tenant sees its own sessions only: a drain by its
	// key moves them with their owner.
	ids = s.cfg.tenants.mine(tenantOf(r), ids)
	slices.Sort(ids)
	writeJSON(w, http.StatusOK, contract.SessionList{SessionIDs: ids})
}

// snapshotTenant is whom a snapshot made or restored through this server
// belongs to: the name the request gives (contract.SnapshotTenantHeader)
// within the caller's credential. The seal (the server's snapshot key)
// keeps other servers' snapshots out.
//
// With tenants (WithTenants), the credential is the caller's tenant: a
// snapshot is bound to "tenant/<name>/" and the header's name, so that one
// tenant's snapshot does not restore under another tenant's key (it is
// invalid_snapshot there, as a forged one is), while the header still
// separates a tenant's own users. Tenant names hold no '/', so no two
// tenants' bindings can be spelled alike. The server's one token
// (WithBearerToken, the TokenTenant) keeps "credential/", so snapshots it
// made before tenants were configured still restore.
func (s *server) snapshotTenant(r *http.Request) (port.SnapshotOptions, error) {
	raw := r.Header.Get(contract.SnapshotTenantHeader)
	if len(raw) > contract.MaxSnapshotTenantBytes {
		return port.SnapshotOptions{}, invalidf("header %s is over %d bytes", contract.SnapshotTenantHeader, contract.MaxSnapshotTenantBytes)
	}
	name, err := url.PathUnescape(raw)
	if err != nil {
		// Not percent-encoded: the value is the name as it is.
		name = raw
	}
	if t := tenantOf(r); t != nil && t.name != TokenTenant {
		return port.SnapshotOptions{Tenant: "tenant/" + t.name + "/" + name}, nil
	}
	return port.SnapshotOptions{Tenant: "credential/" + name}, nil
}

// snapshotSession answers with a sealed snapshot of the session. It is
// made into a temporary file first, so that a failure is an error
// answer, never a 200 with a truncated body.
func (s *server) snapshotSession(w http.ResponseWriter, r *http.Request) {
	sn, err := s.snapshots(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	opt, err := s.snapshotTenant(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	switch v := r.URL.Query().Get("release"); v {
	case "", "false":
	case "true":
		// The session moves out: it is destroyed only once its snapshot
		// has been written to the client, under its lock.
		opt.Release = true
	default:
		s.writeError(w, r, invalidf("release must be true or false, not %q", v))
		return
	}
	// Admitted before any work: a slot of the snapshots at once, and one
	// of the tenant's executions (a snapshot runs the session's
	// interpreter and spends CPU on its memory, as a call does).
	release, err := s.snapshotSlot()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer release()
	if err := s.cfg.tenants.allowExec(tenantOf(r)); err != nil {
		s.writeError(w, r, err)
		return
	}
	f, err := os.CreateTemp("", "codeport-snapshot-")
	if err != nil {
		s.writeError(w, r, spoolError(err))
		return
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	spool := &writeTracker{w: f}
	if s.tempSink != nil {
		spool.w = s.tempSink(f)
	}
	answered := false
	send := func() error {
		answered = true
		size, err := f.Seek(0, io.SeekCurrent)
		if err == nil {
			_, err = f.Seek(0, io.SeekStart)
		}
		if err != nil {
			answered = false
			return fmt.Errorf("%w: snapshot: %v", port.ErrRuntimeFailure, err)
		}
		h := w.Header()
		h.Set("Content-Type", contract.SnapshotMediaType)
		h.Set("Content-Length", strconv.FormatInt(size, 10))
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		return http.NewResponseController(w).Flush()
	}
	if opt.Release {
		opt.Commit = send
	}
	if err := sn.SnapshotSession(r.Context(), r.PathValue("id"), spool, opt); err != nil {
		if spool.err != nil {
			// The server's disk, not the session: the snapshot may
			// succeed once space is freed.
			err = spoolError(spool.err)
		}
		if !answered {
			s.writeError(w, r, err)
		}
		return
	}
	if opt.Release {
		s.cfg.tenants.gone(tenantOf(r), r.PathValue("id"))
	}
	if !opt.Release {
		if err := send(); err != nil && !answered {
			s.writeError(w, r, err)
		}
	}
}

// snapshotSlot takes a slot of the handler's snapshots and restores at
// once (WithMaxSnapshotRequests), or refuses with 503 and Retry-After. The
// returned function frees it.
func (s *server) snapshotSlot() (release func(), err error) {
	select {
	case s.snapshotSlots <- struct{}{}:
		return func() { <-s.snapshotSlots }, nil
	default:
		return nil, &port.CapacityError{Resource: "snapshots and restores at once", Limit: cap(s.snapshotSlots), RetryAfter: time.Second}
	}
}

// spoolError is the error of the temporary file a snapshot is written to:
// for want of disk space (or quota), 503 with a retry hint, since nothing
// is wrong with the session; else a runtime failure.
func spoolError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return &port.CapacityError{Resource: "disk space for snapshots", RetryAfter: 10 * time.Second,
			Detail: "at capacity: the server has no disk space left to hold the snapshot; the session is unchanged; retry after 10s"}
	}
	return fmt.Errorf("%w: snapshot: temporary file: %v", port.ErrRuntimeFailure, err)
}

// restoreSession makes a session from a sealed snapshot in the body
// (application/octet-stream), answering 201 with the session.
func (s *server) restoreSession(w http.ResponseWriter, r *http.Request) {
	// A refused restore may not have read all its body: the connection
	// is closed after the answer rather than kept for another request.
	// (net/http drains up to 256 KiB of what is left first, under the
	// minimum body rate's deadline, so that the client reads the answer.)
	body := &bodyTracker{ReadCloser: r.Body}
	fail := func(err error) {
		w.Header().Set("Connection", "close")
		s.writeError(w, r, err)
	}
	sn, err := s.snapshots(r.Context())
	if err != nil {
		fail(err)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != contract.SnapshotMediaType {
		fail(refuse(contract.CodeUnsupportedMediaType, "request body must be "+contract.SnapshotMediaType))
		return
	}
	opt, err := s.snapshotTenant(r)
	if err != nil {
		fail(err)
		return
	}
	if id := r.Header.Get(contract.KeepSessionIDHeader); id != "" {
		if err := port.CheckMovedID(id); err != nil {
			fail(err)
			return
		}
		opt.SessionID = id
	}
	opt.Size = r.ContentLength
	// Admitted before a byte of the body is read: a slot of the restores
	// at once, one of the tenant's sessions at once, one of its
	// executions (a restore spends CPU as a call does, and more than one
	// that fails); then the port refuses one it has no room for, or that
	// is announced over its cap, before it reads.
	release, err := s.snapshotSlot()
	if err != nil {
		fail(err)
		return
	}
	defer release()
	t := tenantOf(r)
	if err := s.cfg.tenants.admit(r.Context(), s.port, t); err != nil {
		fail(err)
		return
	}
	if err := s.cfg.tenants.allowExec(t); err != nil {
		s.cfg.tenants.settle(t, nil)
		fail(err)
		return
	}
	sess, err := sn.RestoreSession(r.Context(), body, opt)
	s.cfg.tenants.settle(t, sessionOrNil(sess, err))
	if err != nil {
		if f := body.failure(); f != nil {
			err = f
		}
		fail(err)
		return
	}
	writeJSON(w, http.StatusCreated, contract.SessionFromPort(sess))
}

func (s *server) capabilities(w http.ResponseWriter, r *http.Request) {
	caps, err := s.port.Describe(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, contract.CapabilitiesFromPort(caps))
}

func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if s.metrics == nil {
		s.writeError(w, r, refuse(contract.CodeRouteNotFound, "metrics are not enabled"))
		return
	}
	if t := tenantOf(r); t != nil && t.name != TokenTenant {
		// They name every tenant and count what each does.
		s.writeError(w, r, refuse(contract.CodeRouteNotFound, "metrics are served to the operator's auth-token only"))
		return
	}
	s.metrics.ServeHTTP(w, r)
}

func (s *server) openAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	w.Header().Set("Content-Length", strconv.Itoa(len(s.openapi)))
	_, _ = w.Write(s.openapi)
}

// healthStatus is the body of a 200 from /healthz.
type healthStatus struct {
	Status string `json:"status"`
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	if s.cfg.ready != nil && !s.cfg.ready() {
		s.writeError(w, r, refuse(contract.CodeNotReady, "not ready"))
		return
	}
	writeJSON(w, http.StatusOK, healthStatus{Status: "ok"})
}

// decodeJSON decodes a body that must be declared as JSON (requireJSON)
// and hold exactly one JSON value. An empty body is allowed only when
// allowEmpty is set, and leaves v untouched.
func (s *server) decodeJSON(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) error {
	if err := requireJSON(r); err != nil {
		return err
	}
	limit := s.cfg.maxRequestBytes
	if r.ContentLength > limit {
		return &http.MaxBytesError{Limit: limit}
	}
	r.Body = http.MaxBytesReader(unwrap(w), r.Body, limit)
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return err
		case isTimeout(err):
			return timeoutAnswer(err)
		case errors.Is(err, io.EOF):
			if allowEmpty {
				return nil
			}
			return invalidf("request body is required")
		}
		return contract.DecodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			return err
		case isTimeout(err):
			return timeoutAnswer(err)
		}
		return invalidf("unexpected data after the JSON body")
	}
	return nil
}

// refusal is an error of the handler's own making, answered with its code.
type refusal struct {
	code   string
	detail string
}

func (e *refusal) Error() string { return e.detail }

func refuse(code, detail string) error { return &refusal{code: code, detail: detail} }

// uploadTooLarge makes an upload over the upload cap a file too large (the
// port's code), as a file over the backend's own cap is, rather than a
// request too large: to the client both are a file it cannot upload.
func uploadTooLarge(err error) error {
	return fmt.Errorf("%w: %w", port.ErrFileTooLarge, err)
}

// answer is how the handler answers an error code.
type answer struct {
	status int
	// retryAfter: the refusal is temporary; a Retry-After header says when
	// to try again.
	retryAfter bool
}

// answers is the one table from code to status: every code in
// contract.ErrorCodes has a row (a test holds it to that), and writeError
// answers every error from it.
var answers = map[string]answer{
	"closed":                          {http.StatusServiceUnavailable, true}, // shutting down; another instance may take the retry
	"rate_limited":                    {http.StatusTooManyRequests, true},    // the caller's own limit: only it must wait
	"at_capacity":                     {http.StatusServiceUnavailable, true},
	"unauthorized":                    {http.StatusUnauthorized, false},
	"session_not_found":               {http.StatusNotFound, false},
	"session_busy":                    {http.StatusConflict, false},
	"unsupported_tool":                {http.StatusBadRequest, false},
	"path_escapes_workspace":          {http.StatusForbidden, false},
	"file_too_large":                  {http.StatusRequestEntityTooLarge, false},
	"file_not_found":                  {http.StatusNotFound, false},
	"is_directory":                    {http.StatusBadRequest, false},
	"invalid_snapshot":                {http.StatusBadRequest, false},
	"unsupported":                     {http.StatusNotImplemented, false},
	"invalid_request":                 {http.StatusUnprocessableEntity, false},
	"backend_unreachable":             {http.StatusBadGateway, false},
	"runtime_failure":                 {http.StatusInternalServerError, false},
	contract.CodeRequestTooLarge:      {http.StatusRequestEntityTooLarge, false},
	contract.CodeUnsupportedMediaType: {http.StatusUnsupportedMediaType, false},
	contract.CodeRouteNotFound:        {http.StatusNotFound, false},
	contract.CodeMethodNotAllowed:     {http.StatusMethodNotAllowed, false},
	// A probe that is not ready is not told when to come back: the
	// orchestrator probes on its own schedule.
	contract.CodeNotReady:      {http.StatusServiceUnavailable, false},
	contract.CodeInternalError: {http.StatusInternalServerError, false},
	// The connection is closed after it: the rest of the body is unread.
	contract.CodeRequestTimeout: {http.StatusRequestTimeout, false},
	// 403 rather than 421 (Misdirected Request): a browser's page must
	// not be invited to retry elsewhere, and the refusal covers a
	// cross-origin request as well as a foreign Host.
	contract.CodeHostNotAllowed: {http.StatusForbidden, false},
}

// codeOf is the code err is answered with: the port's code of the sentinel
// it wraps, else the handler's own.
func codeOf(err error) string {
	if c := port.ErrorCode(err); c != "" {
		return c
	}
	var rf *refusal
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &rf):
		return rf.code
	case errors.As(err, &tooLarge):
		return contract.CodeRequestTooLarge
	}
	return contract.CodeInternalError
}

// writeError answers with the status the error's code maps to and a
// {"detail", "code"} body. Client errors say what was wrong (port errors
// never carry user data); server errors say only which kind, and are
// logged in full.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, a, body := errorAnswer(r, err)
	detail := body.Detail
	if rec, ok := w.(*recorder); ok {
		rec.err = err
	}
	if body.Code == "session_not_found" {
		// The backend reclaimed it: it no longer counts as the tenant's.
		s.cfg.tenants.gone(tenantOf(r), r.PathValue("id"))
	}
	switch {
	case status == http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", "Bearer")
	case status == http.StatusRequestTimeout:
		// The rest of the body is unread: the connection cannot carry
		// another request.
		w.Header().Set("Connection", "close")
	case a.retryAfter:
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(err)))
	case status == http.StatusRequestEntityTooLarge:
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			detail = fmt.Sprintf("request body is over the %d-byte limit", tooLarge.Limit)
		}
	}
	e := contract.Error{Detail: detail, Code: body.Code}
	if s.cfg.errorBody != nil {
		writeJSON(w, status, s.cfg.errorBody(status, e))
		return
	}
	writeJSON(w, status, e)
}

// errorAnswer is the status and the body that answer err.
func errorAnswer(r *http.Request, err error) (int, answer, contract.Error) {
	code := codeOf(err)
	a, ok := answers[code]
	if !ok {
		// A port code newer than this table; the test of the table fails
		// first.
		code, a = contract.CodeInternalError, answers[contract.CodeInternalError]
	}
	status, detail := a.status, err.Error()
	switch {
	case r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
		// Nobody reads this answer; the status is for the log.
		status, code, detail = statusClientClosed, "", "client closed request"
	case status == http.StatusInternalServerError:
		detail = "internal error"
	case status == http.StatusBadGateway:
		detail = "backend unreachable"
	}
	return status, a, contract.Error{Detail: detail, Code: code}
}

// retryAfterSeconds is the capacity error's hint in whole seconds, rounded
// up and at least 1: "Retry-After: 0" would invite a hot retry loop. An
// error without a hint (a server shutting down) gets 1.
func retryAfterSeconds(err error) int {
	var ce *port.CapacityError
	if !errors.As(err, &ce) || ce.RetryAfter <= 0 {
		return 1
	}
	secs := math.Ceil(ce.RetryAfter.Seconds())
	if secs > math.MaxInt32 {
		return math.MaxInt32
	}
	return max(int(secs), 1)
}

// invalidf returns an error wrapping port.ErrInvalidRequest.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", port.ErrInvalidRequest, fmt.Sprintf(format, args...))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a bug can get here: every body is one of this package's types.
		status = http.StatusInternalServerError
		b = []byte(`{"detail":"internal error"}`)
		if rec, ok := w.(*recorder); ok {
			rec.err = fmt.Errorf("encoding response: %w", err)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// cleanPath is the path ServeMux would redirect p to (its own cleanPath):
// p when p is clean.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// baseName is the last element of a client-supplied file name, whichever
// separator the client's platform uses.
func baseName(name string) string {
	return name[strings.LastIndexAny(name, `/\`)+1:]
}

// recorder keeps what the log needs: the status and the error behind it.
type recorder struct {
	http.ResponseWriter
	status int
	err    error
	// tenant names the caller's tenant, with WithTenants.
	tenant string
	// passed says, behind a Guard, that the request passed the guard:
	// its answer is next's, not a refusal the guard logs.
	passed bool
}

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// FlushError flushes the underlying writer, and is what
// http.ResponseController calls: its error (the client gone) reaches the
// caller.
func (r *recorder) FlushError() error {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return http.NewResponseController(r.ResponseWriter).Flush()
}

// Flush serves a handler that asserts http.Flusher rather than using
// http.ResponseController (a Guard's next).
func (r *recorder) Flush() { _ = r.FlushError() }

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// unwrap returns the server's own writer, which http.MaxBytesReader needs to
// tell the server to close the connection after an oversized body instead
// of draining it: beneath the recorder, and beneath any wrapper put around
// the handler (the tracing of WithTracerProvider).
func unwrap(w http.ResponseWriter) http.ResponseWriter {
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}

// bodyTracker remembers why the request body failed, if it went over its
// cap or past the read deadline, whatever the multipart reader or the port
// make of the read error.
type bodyTracker struct {
	io.ReadCloser
	err error
}

func (c *bodyTracker) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if err != nil && c.err == nil {
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			c.err = uploadTooLarge(err)
		case isTimeout(err):
			c.err = timeoutAnswer(err)
		}
	}
	return n, err
}

// failure is the error the upload is answered with because of its body,
// nil if the body has not failed.
func (c *bodyTracker) failure() error { return c.err }
