package httpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// describeTTL is how long a capability description is reused.
const describeTTL = time.Minute

// userAgent identifies the adapter to the backend.
const userAgent = "codeport-httpadapter/1"

// adapter is the driver that forwards every call to a remote contract v1
// backend.
type adapter struct {
	cfg    Config
	base   string // scheme://host[:port][/prefix], no trailing slash
	client *http.Client
	log    *slog.Logger
	// tracer makes a client span per request; nil makes none.
	tracer trace.Tracer
	// closing ends at Close (close): a download still being read then
	// drops its connection instead of returning it to the pool, and the
	// streamed answers read to their end behind a call that returned at
	// its result (drains, execStream) stop, and are awaited. drainMu
	// orders a new drain against Close.
	closing context.Context
	close   context.CancelFunc
	drainMu sync.Mutex
	drains  sync.WaitGroup

	capsMu sync.Mutex
	caps   port.Capabilities
	capsAt time.Time
}

var _ port.Driver = (*adapter)(nil)

// New checks the configuration and returns the adapter's port. It never
// contacts the backend: the first call does. The base URL must be absolute
// http or https with a host, and carry no query, fragment or credentials
// (use WithToken). opts configure the portable layer (its observers; its log
// is the configuration's logger unless port.WithLogger names another).
func New(cfg Config, opts ...port.Option) (*port.Port, error) {
	base, err := cfg.settings.base()
	if err != nil {
		return nil, err
	}
	if cfg.client == nil {
		cfg.client = newDefaultClient()
	}
	a := &adapter{cfg: cfg, base: base, client: cfg.client, log: cfg.logger}
	a.closing, a.close = context.WithCancel(context.Background())
	if cfg.tracerProvider != nil {
		a.tracer = cfg.tracerProvider.Tracer(tracerScope)
	}
	return port.New(a, opts...), nil
}

// Info implements port.Driver. The limits are the remote's, which it
// enforces: none are checked here. A tool kind contract v1 does not know
// is forwarded, for a backend that offers more.
func (a *adapter) Info() port.DriverInfo {
	return port.DriverInfo{Name: "http", Logger: a.log, ForwardsUnknownTools: true, StreamsOutput: true}
}

// base checks the settings and returns the base URL without a trailing
// slash.
func (c Settings) base() (string, error) {
	bad := func(format string, args ...any) (string, error) {
		return "", fmt.Errorf("httpadapter config: "+format, args...)
	}
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return bad("base URL not set")
	case err != nil:
		return bad("base URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("base URL must be http or https, not %q", u.Scheme)
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return bad("base URL has no host")
	case !validPort(u):
		return bad("base URL's port %q is not a port number from 1 to 65535", u.Port())
	case u.User != nil:
		return bad("base URL carries credentials; use WithToken")
	case u.RawQuery != "" || u.ForceQuery:
		return bad("base URL has a query")
	case u.Fragment != "" || strings.Contains(c.URL, "#"):
		return bad("base URL has a fragment")
	case strings.ContainsAny(c.Token, "\x00\r\n") || strings.TrimSpace(c.Token) != c.Token:
		return bad("token contains control characters or surrounding spaces")
	case c.TimeoutMargin <= 0:
		return bad("timeout margin must be positive (a client must allow more than it grants)")
	case c.Timeout <= 0 || c.RequestTimeout <= 0:
		return bad("timeouts must be positive")
	case c.FileLimit <= 0 || c.MaxResponseBytes <= 0:
		return bad("size caps must be positive")
	}
	for _, b := range []byte(c.Token) {
		if b < 0x20 || b == 0x7f {
			return bad("token contains control characters or surrounding spaces")
		}
	}
	return strings.TrimRight(u.Scheme+"://"+u.Host+u.EscapedPath(), "/"), nil
}

// validPort reports whether u names no port, or one a connection can be
// made to: url.Parse takes any digits ("http://host:99999"), and the
// dial would fail at every call instead of once here.
func validPort(u *url.URL) bool {
	p := u.Port()
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// sessionPath is the escaped path of a session's route.
func sessionPath(id, suffix string) string {
	return "/sessions/" + url.PathEscape(id) + suffix
}

// newRequest builds a request of call c with the adapter's headers.
func (a *adapter) newRequest(ctx context.Context, c *call, query string, body io.Reader) (*http.Request, error) {
	target := a.base + c.path
	if query != "" {
		target += "?" + query
	}
	req, err := http.NewRequestWithContext(ctx, c.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("httpadapter: %s: %w: %v", c, port.ErrInvalidRequest, err)
	}
	if a.cfg.settings.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.cfg.settings.Token)
	}
	req.Header.Set("User-Agent", userAgent)
	return req, nil
}

// do sends req and logs the exchange. ctx is the caller's context, callCtx
// the request's; a transport failure is classified with both.
func (a *adapter) do(ctx, callCtx context.Context, c *call, req *http.Request) (*http.Response, error) {
	start := time.Now()
	req, span := a.traceRequest(req, c)
	resp, err := a.client.Do(req)
	if err != nil {
		err = transportError(ctx, callCtx, c, err)
		endSpan(span, nil, err)
		a.logCall(ctx, c, 0, time.Since(start), err)
		return nil, err
	}
	endSpan(span, resp, nil)
	a.logCall(ctx, c, resp.StatusCode, time.Since(start), nil)
	return resp, nil
}

func (a *adapter) logCall(ctx context.Context, c *call, status int, d time.Duration, err error) {
	level := slog.LevelDebug
	if err != nil && errors.Is(err, port.ErrBackendUnreachable) {
		level = slog.LevelWarn
	}
	ctx = context.WithoutCancel(ctx)
	if !a.log.Enabled(ctx, level) {
		// Most calls are not logged (debug): their record is not built.
		return
	}
	attrs := []slog.Attr{
		slog.String("method", c.method),
		slog.String("route", c.route),
		slog.Int("status", status),
		slog.Duration("duration", d),
	}
	if c.session != "" {
		attrs = append(attrs, slog.String("session_id", c.session))
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	a.log.LogAttrs(ctx, level, "remote call", attrs...)
}

// finish ends a response: the rest of the body is drained (a little of it,
// so the connection can be reused) and closed.
func (a *adapter) finish(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 4<<10)
	_ = resp.Body.Close()
	if a.closed() {
		// A call that was under way when Close ran must not leave its
		// connection in the pool.
		a.client.CloseIdleConnections()
	}
}

// roundTrip sends a JSON call and reads the answer. A 2xx body is returned
// whole (up to the response cap); any other status is mapped to the port's
// errors. ok lists further statuses that count as success with no body
// (a description's 404 and 405).
func (a *adapter) roundTrip(ctx context.Context, c *call, query string, body []byte, ok ...int) (int, []byte, error) {
	callCtx, cancel := context.WithTimeoutCause(ctx, c.wall, errWallClock)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := a.newRequest(callCtx, c, query, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.do(ctx, callCtx, c, req)
	if err != nil {
		return 0, nil, err
	}
	return a.readAnswer(ctx, callCtx, c, resp, ok...)
}

// readAnswer reads and ends a response: a 2xx body whole (up to the
// response cap), any other status mapped to the port's errors, the statuses
// in ok as success with no body.
func (a *adapter) readAnswer(ctx, callCtx context.Context, c *call, resp *http.Response, ok ...int) (int, []byte, error) {
	defer a.finish(resp)
	status := resp.StatusCode
	if slices.Contains(ok, status) {
		return status, nil, nil
	}
	if status < 200 || status > 299 {
		return status, nil, a.settleNotFound(ctx, c, statusError(c, status, resp.Header, readErrorBody(resp.Body)))
	}
	limit := a.cfg.settings.MaxResponseBytes
	body := io.Reader(resp.Body)
	if limit < math.MaxInt64 {
		// One byte over tells an answer over the cap; none is over the
		// largest.
		body = io.LimitReader(resp.Body, limit+1)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return status, nil, transportError(ctx, callCtx, c, err)
	}
	if int64(len(b)) > limit {
		return status, nil, violation(c, status, fmt.Sprintf("body over the %d-byte cap", limit))
	}
	return status, b, nil
}

// decode decodes a 2xx body, whose shape the caller then checks.
func decode(c *call, status int, b []byte, v any) error {
	if err := json.Unmarshal(b, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return violation(c, status, "field "+typeErr.Field+" has the wrong type")
		}
		return violation(c, status, "body is not a JSON object of the expected shape")
	}
	return nil
}

// present records whether a JSON member is there and not null.
type present bool

func (p *present) UnmarshalJSON(b []byte) error {
	*p = present(string(b) != "null")
	return nil
}

// CreateSession implements port.Driver: POST /sessions.
func (a *adapter) CreateSession(ctx context.Context, req port.CreateSessionRequest) (port.Session, error) {
	body, err := json.Marshal(contract.CreateSessionRequestFromPort(req))
	if err != nil {
		return port.Session{}, fmt.Errorf("httpadapter: encoding request: %w", err)
	}
	c := &call{op: opCreate, method: http.MethodPost, path: "/sessions", route: "POST /sessions", wall: a.cfg.settings.RequestTimeout}
	status, b, err := a.roundTrip(ctx, c, "", body)
	if err != nil {
		return port.Session{}, err
	}
	return decodeSession(c, status, b)
}

// decodeSession reads the session handle of a 2xx answer (a create's, a
// restore's).
func decodeSession(c *call, status int, b []byte) (port.Session, error) {
	var h contract.SessionHandle
	if err := decode(c, status, b, &h); err != nil {
		return port.Session{}, err
	}
	if h.SessionID == "" {
		return port.Session{}, violation(c, status, "no session_id")
	}
	return contract.SessionToPort(h), nil
}

// Execute implements port.Driver: POST /sessions/{id}/exec.
//
// The wall clock is the granted timeout (the request's, rounded up to whole
// seconds as sent, or the configured default) plus the margin, within ctx.
// A cancelled ctx gives an error wrapping ctx.Err(), since the remote
// outcome is unknown. A tool kind that contract v1 does not know is sent as
// is, with the input its fields describe (editor fields, else a command,
// else code), for a backend that offers more. An answer under another
// tool_use_id than the one the request carried is another call's:
// port.ErrBackendUnreachable, as any answer that is not contract v1.
func (a *adapter) Execute(ctx context.Context, id string, req port.ExecuteRequest) (port.Result, error) {
	wire, err := execRequest(req)
	if err != nil {
		return port.Result{}, fmt.Errorf("httpadapter: %w", err)
	}
	granted := a.cfg.settings.Timeout
	if wire.TimeoutSeconds != nil {
		granted = saturatingSeconds(*wire.TimeoutSeconds)
	}
	body, err := json.Marshal(wire)
	if err != nil {
		return port.Result{}, fmt.Errorf("httpadapter: encoding request: %w", err)
	}
	c := &call{
		op: opExecute, method: http.MethodPost, path: sessionPath(id, "/exec"),
		route: "POST /sessions/{id}/exec", session: id, tool: req.Tool,
		wall: saturatingAdd(granted, a.cfg.settings.TimeoutMargin), secrets: requestTexts(req),
	}
	var status int
	var b []byte
	if req.OnOutput != nil {
		status, b, err = a.execStream(ctx, c, body, req.OnOutput)
	} else {
		status, b, err = a.roundTrip(ctx, c, "", body)
	}
	if err != nil {
		return port.Result{}, err
	}
	var resp execAnswer
	if err := decode(c, status, b, &resp); err != nil {
		return port.Result{}, err
	}
	switch {
	case resp.ToolUseID == nil:
		return port.Result{}, violation(c, status, "no tool_use_id")
	case resp.ResultBlock == nil:
		return port.Result{}, violation(c, status, "no result_block")
	}
	resp.ExecResponse.ToolUseID, resp.ExecResponse.ResultBlock = *resp.ToolUseID, *resp.ResultBlock
	res := contract.ResultToPort(resp.ExecResponse)
	if req.ToolUseID != "" && res.ToolUseID != "" && res.ToolUseID != req.ToolUseID {
		// The contract echoes the request's id: an answer under another
		// one is another call's (a proxy or a backend that mixed up its
		// answers), and taking it would hand this caller that call's
		// output.
		return port.Result{}, violation(c, status, "the tool_use_id is not the request's")
	}
	return res, nil
}

// execAnswer decodes an exec answer in one pass and tells whether its two
// required members are there and not null: the outer fields take those
// two members (encoding/json gives a name to the shallowest field that
// carries it), the embedded response the rest. Decoding the body once
// for the members' presence and again for their values cost as much as
// the rest of the client's work on a short call.
type execAnswer struct {
	ToolUseID   *string               `json:"tool_use_id"`
	ResultBlock *contract.ResultBlock `json:"result_block"`
	contract.ExecResponse
}

// execRequest converts a request for the wire with the contract's
// conversion. An unknown tool kind, which that conversion refuses, is
// converted as the known kind its fields fit and sent under its own name.
func execRequest(req port.ExecuteRequest) (contract.ExecRequest, error) {
	if req.Tool.Known() {
		return contract.ExecRequestFromPort(req)
	}
	as := req
	switch {
	case req.Editor != nil:
		as.Tool = port.ToolTextEditorExecution
	case req.Command != "" && req.Code == "":
		as.Tool = port.ToolBashCodeExecution
	default:
		as.Tool = port.ToolCodeExecution
	}
	wire, err := contract.ExecRequestFromPort(as)
	if err != nil {
		return contract.ExecRequest{}, err
	}
	wire.Tool = string(req.Tool)
	return wire, nil
}

// requestTexts are the user-written texts of a request.
func requestTexts(req port.ExecuteRequest) []string {
	texts := []string{req.Code, req.Command}
	if e := req.Editor; e != nil {
		for _, p := range []*string{e.FileText, e.OldStr, e.NewStr} {
			if p != nil {
				texts = append(texts, *p)
			}
		}
	}
	return texts
}

// DestroySession implements port.Driver: DELETE /sessions/{id}. A 404
// that says the session is not found, or says nothing the adapter knows
// (a backend that answers an unknown id so), is success: the session is
// gone either way. A 404 whose code says the route is unknown is not:
// the base URL leads to no contract v1 backend, and the session lives on.
func (a *adapter) DestroySession(ctx context.Context, id string) error {
	c := &call{op: opDestroy, method: http.MethodDelete, path: sessionPath(id, ""),
		route: "DELETE /sessions/{id}", session: id, wall: a.cfg.settings.RequestTimeout}
	_, _, err := a.roundTrip(ctx, c, "", nil)
	if errors.Is(err, port.ErrSessionNotFound) {
		// statusError's reading of a 404 without a code it knows, or
		// with session_not_found.
		return nil
	}
	return err
}

// ListFiles implements port.Driver: GET
// /sessions/{id}/files/list?path=dir.
func (a *adapter) ListFiles(ctx context.Context, id, dir string) ([]port.FileInfo, error) {
	c := &call{op: opList, method: http.MethodGet, path: sessionPath(id, "/files/list"),
		route: "GET /sessions/{id}/files/list", session: id, wall: a.cfg.settings.RequestTimeout}
	status, b, err := a.roundTrip(ctx, c, url.Values{"path": {dir}}.Encode(), nil)
	if err != nil {
		return nil, err
	}
	var must struct {
		Files present `json:"files"`
	}
	if err := decode(c, status, b, &must); err != nil {
		return nil, err
	}
	if !must.Files {
		return nil, violation(c, status, "no files")
	}
	var list contract.FileList
	if err := decode(c, status, b, &list); err != nil {
		return nil, err
	}
	return contract.FileListToPort(list), nil
}

// Describe implements port.Driver: GET /capabilities, which
// `codeport serve` offers, with Backend set to "http" and the rest as the
// remote reports it. A backend without that route (404 or 405) gets a
// description that promises nothing the adapter cannot know: Python of an
// unknown version, code_execution only, unknown limits, and Partial set, so
// that the empty Packages and false Network are read as unknown rather than
// as absent. A description is reused for a minute.
func (a *adapter) Describe(ctx context.Context) (port.Capabilities, error) {
	a.capsMu.Lock()
	if !a.capsAt.IsZero() && time.Since(a.capsAt) < describeTTL {
		caps := cloneCaps(a.caps)
		a.capsMu.Unlock()
		return caps, nil
	}
	a.capsMu.Unlock()

	caps, err := a.describe(ctx)
	if err != nil {
		return port.Capabilities{}, err
	}
	a.capsMu.Lock()
	a.caps, a.capsAt = caps, time.Now()
	a.capsMu.Unlock()
	return cloneCaps(caps), nil
}

func (a *adapter) describe(ctx context.Context) (port.Capabilities, error) {
	c := &call{op: opDescribe, method: http.MethodGet, path: "/capabilities",
		route: "GET /capabilities", wall: a.cfg.settings.RequestTimeout}
	status, b, err := a.roundTrip(ctx, c, "", nil, http.StatusNotFound, http.StatusMethodNotAllowed)
	if err != nil {
		return port.Capabilities{}, err
	}
	if status == http.StatusNotFound || status == http.StatusMethodNotAllowed {
		return unknownCapabilities(), nil
	}
	var wire contract.Capabilities
	if err := decode(c, status, b, &wire); err != nil {
		return port.Capabilities{}, err
	}
	caps := contract.CapabilitiesToPort(wire)
	if caps.Backend != "" && caps.Backend != "http" {
		a.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelDebug, "remote backend described",
			slog.String("remote_backend", caps.Backend))
	}
	caps.Backend = "http"
	return caps, nil
}

// unknownCapabilities describes a backend that does not describe itself.
func unknownCapabilities() port.Capabilities {
	return port.Capabilities{
		Backend: "http",
		Runtime: "Python",
		// The one tool kind every contract v1 backend runs, and the one
		// Otari drives.
		Tools: []port.ToolKind{port.ToolCodeExecution},
		Limitations: []string{
			"The capabilities of the remote backend are unknown: third-party packages and network access are not promised",
		},
		// Packages and Network above say nothing: a hint must neither
		// promise nor deny them.
		Partial: true,
	}
}

func cloneCaps(c port.Capabilities) port.Capabilities {
	c.Tools = slices.Clone(c.Tools)
	c.Packages = slices.Clone(c.Packages)
	c.UnavailableModules = slices.Clone(c.UnavailableModules)
	c.Limitations = slices.Clone(c.Limitations)
	c.ShellCommands = slices.Clone(c.ShellCommands)
	return c
}

// Close closes idle connections. It does not destroy remote sessions: the
// adapter does not own them (see the package documentation).
func (a *adapter) Close() error {
	a.drainMu.Lock()
	a.close()
	a.drainMu.Unlock()
	a.drains.Wait()
	a.client.CloseIdleConnections()
	return nil
}

// closed reports whether Close has run.
func (a *adapter) closed() bool { return a.closing.Err() != nil }

// drainBehind reads the rest of resp, whose call has returned, on a
// goroutine of its own, and then ends the request (cancel); Close ends the
// read and awaits it. After Close it ends the request at once instead.
func (a *adapter) drainBehind(resp *http.Response, cancel context.CancelFunc) {
	a.drainMu.Lock()
	defer a.drainMu.Unlock()
	if a.closed() {
		cancel()
		_ = resp.Body.Close()
		return
	}
	a.drains.Add(1)
	stop := context.AfterFunc(a.closing, cancel)
	go func() {
		defer a.drains.Done()
		defer stop()
		a.finish(resp)
		cancel()
	}()
}

// saturatingSeconds is n seconds, saturating instead of overflowing.
func saturatingSeconds(n int) time.Duration {
	if int64(n) > int64(math.MaxInt64/time.Second) {
		return math.MaxInt64
	}
	return time.Duration(n) * time.Second
}

// saturatingAdd is a + b for non-negative durations, saturating.
func saturatingAdd(a, b time.Duration) time.Duration {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
