package httpadapter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/textclip"
	"github.com/codeport/codeport/port"
)

// errWallClock is the cancellation cause of a call whose wall clock ran out.
var errWallClock = errors.New("wall clock ran out")

// errUploadEnded ends the upload goroutine once the request is over.
var errUploadEnded = errors.New("upload ended")

// op names the kind of call, for the status mapping.
type op int

const (
	opCreate op = iota
	opExecute
	opDestroy
	opList
	opGet
	opPut
	opDescribe
	// opProbe lists a session's workspace root to learn whether the
	// session exists (see settleNotFound).
	opProbe
	// opSnapshot and opRestore are codeport's snapshot extension.
	opSnapshot
	opRestore
)

// call is one HTTP exchange, as error messages and logs name it.
type call struct {
	op      op
	method  string
	path    string // escaped, without the base URL's path or the query
	route   string // the contract's route pattern, for logs
	session string
	// wall is the call's wall clock, for the message when it runs out.
	wall time.Duration
	// tool is the tool kind of an Execute.
	tool port.ToolKind
	// secrets are the request's texts that a detail must not quote.
	secrets []string
}

func (c *call) String() string {
	p := c.path
	if len(p) > 200 {
		p = p[:200] + "..."
	}
	return c.method + " " + p
}

// maxDetailBytes bounds the detail quoted in an error message.
const maxDetailBytes = 200

// maxErrorBodyBytes bounds how much of an error body is read.
const maxErrorBodyBytes = 64 << 10

// statusError maps a non-2xx answer to the port's errors. body is the start
// of the response body.
//
// The body's code, which codeport's server sends, decides: it names the
// port's sentinel (port.ErrorFromCode) or one of the server's own refusals
// (contract.ErrorCodes), so a missing session and a missing file are told
// apart without reading the detail. Only an answer without a code the
// adapter knows (the reference backend's, a newer server's) is mapped from
// its status, and a 404 from a file route is then left ambiguous, as a
// *sessionOrFile, for settleNotFound to resolve by asking the backend.
func statusError(c *call, status int, header http.Header, body []byte) error {
	detail := readDetail(body, c.secrets)
	code := readCode(body)
	prefix := fmt.Sprintf("httpadapter: %s: HTTP %d", c, status)
	switch {
	case detail != "" && code != "":
		prefix += fmt.Sprintf(" (detail %q, code %q)", detail, code)
	case detail != "":
		prefix += fmt.Sprintf(" (detail %q)", detail)
	case code != "":
		prefix += fmt.Sprintf(" (code %q)", code)
	}
	retryAfter := parseRetryAfter(header.Get("Retry-After"), time.Now())
	if err, ok := codedError(c, prefix, code, retryAfter); ok {
		return err
	}
	wrap := func(sentinel error) error { return fmt.Errorf("%s: %w", prefix, sentinel) }
	switch {
	case status == http.StatusServiceUnavailable, status == http.StatusTooManyRequests:
		return wrap(&port.CapacityError{Resource: resource(c), RetryAfter: retryAfter})
	case status >= 500, status < 400:
		// A 3xx too: a contract v1 backend never redirects, so the base URL
		// does not lead to one.
		return wrap(port.ErrBackendUnreachable)
	}
	switch status {
	case http.StatusUnauthorized:
		return wrap(port.ErrUnauthorized)
	case http.StatusForbidden:
		return wrap(port.ErrPathEscapesWorkspace)
	case http.StatusConflict:
		return wrap(port.ErrSessionBusy)
	case http.StatusRequestEntityTooLarge:
		return wrap(port.ErrFileTooLarge)
	case http.StatusNotFound:
		switch c.op {
		case opCreate:
			// POST /sessions is the one route every backend has.
			return wrap(port.ErrBackendUnreachable)
		case opList, opGet, opPut:
			// The session or the file: the status does not say which.
			return &sessionOrFile{msg: prefix}
		}
		// Execute's 404, and the probe's: only the session can be missing
		// (the probe lists the workspace root, which always exists).
		return wrap(port.ErrSessionNotFound)
	case http.StatusBadRequest:
		switch c.op {
		case opExecute:
			if !c.tool.Known() {
				return wrap(port.ErrUnsupportedTool)
			}
		case opList, opGet, opPut:
			// The contract's 400 on a file route: a directory where a
			// file was expected (or, for a listing, the other way round).
			return wrap(port.ErrIsDirectory)
		}
	}
	return wrap(port.ErrInvalidRequest)
}

// codedError is the error an answer's code names, and false when the code
// is absent or unknown to this adapter (then the status decides).
func codedError(c *call, prefix, code string, retryAfter time.Duration) (error, bool) {
	wrap := func(sentinel error) (error, bool) { return fmt.Errorf("%s: %w", prefix, sentinel), true }
	switch code {
	case "":
		return nil, false
	case "closed":
		// The remote server is shutting down. That is not this port's
		// closing (port.ErrClosed would say so to the caller): to the
		// caller the backend is unavailable for now, as at capacity, and
		// the Retry-After hint applies.
		code = "at_capacity"
	case contract.CodeRouteNotFound, contract.CodeMethodNotAllowed:
		if c.op == opSnapshot || c.op == opRestore {
			// An extension a codeport server answers only with snapshots on.
			return wrap(port.ErrUnsupported)
		}
		// Every route and method this adapter calls is contract v1's, and
		// codeport's server serves them all: the base URL does not lead to
		// one (a wrong path prefix, say).
		return wrap(port.ErrBackendUnreachable)
	case contract.CodeRequestTooLarge, contract.CodeUnsupportedMediaType:
		// The request, not a file, is what the server refused, as the
		// port refuses code over its source limit.
		return wrap(port.ErrInvalidRequest)
	case contract.CodeInternalError:
		return wrap(port.ErrRuntimeFailure)
	}
	err, ok := port.ErrorFromCode(code, prefix, retryAfter)
	if !ok {
		return nil, false
	}
	if ce, isCap := err.(*port.CapacityError); isCap {
		ce.Resource = resource(c)
	}
	return err, true
}

// resource names what a refused admission was for, in a *CapacityError.
func resource(c *call) string {
	if c.op == opCreate {
		return "sessions"
	}
	return "calls"
}

// sessionOrFile is the error of a 404 without a code from a file route:
// the session is gone or the file is missing, and the answer does not say
// which. (The reference backend answers 404 for both, with free text this
// adapter does not interpret.) It matches port.ErrFileNotFound, the reading
// that holds while the session lives, until settleNotFound has asked.
type sessionOrFile struct {
	msg string
}

func (e *sessionOrFile) Error() string {
	return e.msg + ": " + port.ErrFileNotFound.Error() + " (or the session is gone)"
}

func (e *sessionOrFile) Unwrap() error { return port.ErrFileNotFound }

// readCode extracts the body's code: a short string of lower-case letters
// and underscores, as codeport's server sends, or "" (absent, another
// shape, or text that is no code and might quote the request).
func readCode(body []byte) string {
	var e struct {
		Code json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	var code string
	if json.Unmarshal(e.Code, &code) != nil || len(code) == 0 || len(code) > 64 {
		return ""
	}
	for _, r := range code {
		if (r < 'a' || r > 'z') && r != '_' {
			return ""
		}
	}
	return code
}

// readDetail extracts a short, printable detail from an error body: a
// string detail, or the loc and msg of FastAPI's validation errors. Other
// shapes are left out, since they may quote the request. A detail that
// quotes one of secrets is withheld.
func readDetail(body []byte, secrets []string) string {
	var e struct {
		Detail json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	raw := bytes.TrimSpace(e.Detail)
	var detail string
	switch {
	case len(raw) == 0:
		return ""
	case raw[0] == '"':
		if json.Unmarshal(raw, &detail) != nil {
			return ""
		}
	case raw[0] == '[':
		detail = validationDetail(raw)
	default:
		return ""
	}
	if quotesAny(detail, secrets) {
		return "[withheld: it quotes the request]"
	}
	return shorten(detail, maxDetailBytes)
}

// validationDetail renders FastAPI's list of validation errors as
// "body.timeout_seconds: Input should be ...; ...", leaving out their
// "input" members, which echo the request.
func validationDetail(raw []byte) string {
	var items []struct {
		Loc []any  `json:"loc"`
		Msg string `json:"msg"`
	}
	if json.Unmarshal(raw, &items) != nil {
		return ""
	}
	parts := make([]string, 0, len(items))
	for _, it := range items {
		if it.Msg == "" {
			continue
		}
		loc := make([]string, 0, len(it.Loc))
		for _, l := range it.Loc {
			loc = append(loc, fmt.Sprint(l))
		}
		if len(loc) > 0 {
			parts = append(parts, strings.Join(loc, ".")+": "+it.Msg)
		} else {
			parts = append(parts, it.Msg)
		}
	}
	return strings.Join(parts, "; ")
}

// quotesAny reports whether detail quotes one of secrets: any line of
// them, or the start of a line cut short, of 8 bytes or more.
func quotesAny(detail string, secrets []string) bool {
	if detail == "" {
		return false
	}
	for _, s := range secrets {
		for line := range strings.Lines(s) {
			line = strings.TrimSpace(line)
			if len(line) < 8 {
				continue
			}
			probe := line
			if len(probe) > 32 {
				probe = probe[:32]
			}
			if strings.Contains(detail, probe) {
				return true
			}
		}
	}
	return false
}

// shorten makes s valid UTF-8 of at most n bytes, cut at a rune boundary.
func shorten(s string, n int) string {
	return textclip.Clip(strings.ToValidUTF8(s, "\uFFFD"), n)
}

// parseRetryAfter reads a Retry-After header: delay seconds or an HTTP
// date. An absent or unreadable one gives 1 s.
func parseRetryAfter(h string, now time.Time) time.Duration {
	const fallback = time.Second
	h = strings.TrimSpace(h)
	if h == "" {
		return fallback
	}
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		if n < 0 {
			return fallback
		}
		if n > int64(math.MaxInt64/time.Second) {
			return math.MaxInt64
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(now), 0)
	}
	return fallback
}

// readErrorBody reads the start of an error body, where the detail is.
func readErrorBody(r io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBodyBytes))
	return b
}

// transportError is the error of a call that got no usable answer: the
// caller gave up (ctx), the wall clock ran out (callCtx's cause), or the
// transport failed.
func transportError(ctx, callCtx context.Context, c *call, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("httpadapter: %s: call abandoned, its outcome on the backend is unknown: %w", c, ctxErr)
	}
	if errors.Is(context.Cause(callCtx), errWallClock) {
		return fmt.Errorf("httpadapter: %s: %w: no answer within %s", c, port.ErrBackendUnreachable, c.wall)
	}
	// The URL is in the message already; keep the cause.
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("httpadapter: %s: %w: %v", c, port.ErrBackendUnreachable, err)
}

// violation is the error of a 2xx answer that is not contract v1.
func violation(c *call, status int, what string) error {
	return fmt.Errorf("httpadapter: %s: HTTP %d: %w: the response is not contract v1: %s", c, status, port.ErrBackendUnreachable, what)
}
