package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/conformance"
	"github.com/codeport/codeport/internal/openapispec"
)

const conformanceUsage = `Usage: codeport conformance --base-url URL [--auth-token T] [--run REGEXP] [--max-sessions N] [-v]

Runs the contract v1 conformance suite against the backend at URL through
codeport's HTTP adapter. Every response is also checked against codeport's
OpenAPI document; a response the document does not allow fails the check
that caused it. Prints one line per check and a summary; exits 1 when a
check fails, 2 on a usage error.

The token may also come from $CODEPORT_CONFORMANCE_TOKEN.

Flags:
`

// conformanceCommand is `codeport conformance`.
func conformanceCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newClientFlags("conformance", conformanceUsage, stdout, stderr)
	baseURL := fs.String("base-url", "", "the backend's base `URL`, e.g. http://127.0.0.1:8080 (required)")
	token := fs.String("auth-token", "", "bearer `token` to send (default $CODEPORT_CONFORMANCE_TOKEN)")
	runPattern := fs.String("run", "", "run only the checks whose names match `REGEXP`")
	maxSessions := fs.Int("max-sessions", 0, "the backend's session limit `N`, when Describe does not report it (enables the capacity check for N <= 16)")
	verbose := fs.Bool("v", false, "also print each check's log lines")
	fail := fs.fail
	if code, done := fs.parse(args); done {
		return code
	}
	switch {
	case *baseURL == "":
		return fail("--base-url is required")
	case *maxSessions < 0:
		return fail("--max-sessions must not be negative")
	}
	var filter func(string) bool
	if *runPattern != "" {
		re, err := regexp.Compile(*runPattern)
		if err != nil {
			return fail("--run: %v", err)
		}
		filter = re.MatchString
	}
	if *token == "" {
		*token = os.Getenv("CODEPORT_CONFORMANCE_TOKEN")
	}
	u, err := backendURL("--base-url", *baseURL)
	if err != nil {
		return fail("%v", err)
	}

	var base http.RoundTripper = http.DefaultTransport
	if t, ok := base.(*http.Transport); ok {
		base = t.Clone()
	}
	vt, err := newValidatingTransport(base, strings.TrimRight(u.EscapedPath(), "/"))
	if err != nil {
		fmt.Fprintf(stderr, "codeport conformance: loading the OpenAPI document: %v\n", err)
		return 1
	}
	defer vt.closeIdle()
	adapter, err := httpadapter.New(httpadapter.NewConfig(*baseURL).
		WithToken(*token).
		WithHTTPClient(&http.Client{
			Transport: vt,
			// The contract has no redirects; show one as it is.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}))
	if err != nil {
		return fail("%v", err)
	}
	defer adapter.Close()

	tgt := conformance.Target{Port: adapter, MaxSessions: *maxSessions}
	var passed, failed, skipped int
	for _, c := range conformance.Checks() {
		if filter != nil && !filter(c.Name) {
			continue
		}
		rs := conformance.RunChecks(ctx, tgt, func(name string) bool { return name == c.Name })
		for _, r := range rs {
			switch r.Status {
			case conformance.Pass:
				passed++
				fmt.Fprintf(stdout, "PASS %s (%dms)\n", r.Name, r.Duration.Milliseconds())
			case conformance.Fail:
				failed++
				fmt.Fprintf(stdout, "FAIL %s: %s\n", r.Name, oneLine(r.Message))
			default:
				skipped++
				fmt.Fprintf(stdout, "SKIP %s: %s\n", r.Name, oneLine(r.Message))
			}
			if *verbose {
				for _, l := range r.Logs {
					fmt.Fprintf(stdout, "    %s\n", oneLine(l))
				}
			}
		}
	}
	if stray := vt.unattributed(); len(stray) > 0 {
		failed++
		fmt.Fprintf(stdout, "FAIL openapi: responses to calls outside any check violate openapi.yaml: %s\n", oneLine(strings.Join(stray, "; ")))
	}
	summary := fmt.Sprintf("%d passed, %d failed", passed, failed)
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", skipped)
	}
	fmt.Fprintln(stdout, summary)
	if failed > 0 || ctx.Err() != nil {
		return 1
	}
	return 0
}

// oneLine keeps a check's report on its line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// maxValidatedBody bounds the response bodies the transport buffers.
const maxValidatedBody = 64 << 20

// validatingTransport checks every response against codeport's OpenAPI
// document. A violation fails the conformance check whose context made the
// request; violations outside any check are kept for the summary.
type validatingTransport struct {
	base   http.RoundTripper
	router routers.Router
	doc    *openapi3.T
	prefix string // the base URL's path, stripped before routing

	mu    sync.Mutex
	stray []string
}

func newValidatingTransport(base http.RoundTripper, prefix string) (*validatingTransport, error) {
	spec, err := openapispec.Load()
	if err != nil {
		return nil, err
	}
	return &validatingTransport{base: base, router: spec.Router, doc: spec.Doc, prefix: prefix}, nil
}

func (v *validatingTransport) closeIdle() {
	if c, ok := v.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// RoundTrip implements http.RoundTripper: it buffers the response body,
// validates the response and hands the adapter an equivalent response. A
// stream of events is validated as it passes instead (eventChecker).
func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := v.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusOK && isEventStream(resp) {
		// Checked as it streams: buffering it would hold back the events
		// a check of live output waits for.
		resp.Body = newEventChecker(resp.Body, v, req)
		return resp, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxValidatedBody+1))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the response: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > maxValidatedBody {
		v.violation(req, fmt.Sprintf("%s %s: response body over %d bytes, not validated", req.Method, req.URL.Path, maxValidatedBody))
		return resp, nil
	}
	if problem := v.check(req, resp, body); problem != nil {
		v.violation(req, fmt.Sprintf("%s -> %d: %s", problem.where, resp.StatusCode, problem.what))
	}
	return resp, nil
}

func (v *validatingTransport) violation(req *http.Request, msg string) {
	msg = "response violates openapi.yaml: " + msg
	if conformance.Errorf(req.Context(), "%s", msg) {
		return
	}
	v.mu.Lock()
	v.stray = append(v.stray, msg)
	v.mu.Unlock()
}

func (v *validatingTransport) unattributed() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]string(nil), v.stray...)
}

// problem is what is wrong with a response, and for which route.
type problem struct{ where, what string }

// check returns what is wrong with the response, or nil.
func (v *validatingTransport) check(req *http.Request, resp *http.Response, body []byte) *problem {
	lookup := req.Clone(req.Context())
	lookup.URL.Path = "/" + strings.TrimPrefix(strings.TrimPrefix(req.URL.Path, v.prefix), "/")
	lookup.URL.RawPath = ""
	if req.Method == http.MethodHead {
		lookup.Method = http.MethodGet
	}
	where := req.Method + " " + lookup.URL.Path
	route, params, err := v.router.FindRoute(lookup)
	if err != nil {
		switch resp.StatusCode {
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnauthorized:
			if what := v.checkError(body); what != "" {
				return &problem{where, what}
			}
			return nil
		}
		return &problem{where, "no such route in openapi.yaml"}
	}
	// The route's template keeps repeated reports of one defect identical.
	where = req.Method + " " + route.Path
	if req.Method == http.MethodHead {
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    lookup,
			PathParams: params,
			Route:      route,
		},
		Status:  resp.StatusCode,
		Header:  resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.WithoutCancel(req.Context()), in); err != nil {
		return &problem{where, violationText(err)}
	}
	return nil
}

// violationText is a validation error without the schema and value dumps
// kin-openapi appends, which would bury the reason.
func violationText(err error) string {
	var parts []string
	var walk func(prefix string, err error)
	walk = func(prefix string, err error) {
		join := func(msg string) string {
			if prefix == "" {
				return msg
			}
			return prefix + ": " + msg
		}
		switch e := err.(type) {
		case openapi3.MultiError:
			for _, x := range e {
				walk(prefix, x)
			}
		case *openapi3filter.ResponseError:
			p := prefix
			if e.Reason != "" {
				p = join(e.Reason)
			}
			if e.Err == nil {
				parts = append(parts, p)
				return
			}
			walk(p, e.Err)
		case *openapi3.SchemaError:
			if e.Origin != nil {
				walk(prefix, e.Origin)
				return
			}
			reason := e.Reason
			if reason == "" {
				reason = "does not match the schema's " + e.SchemaField
			}
			if ptr := e.JSONPointer(); len(ptr) > 0 && !strings.Contains(reason, "at '") {
				reason = "at /" + strings.Join(ptr, "/") + ": " + reason
			}
			parts = append(parts, join(reason))
		default:
			msg, _, _ := strings.Cut(err.Error(), "\n")
			parts = append(parts, join(msg))
		}
	}
	walk("", err)
	return strings.Join(parts, "; ")
}

// checkError checks an error answer to a request the document has no
// route for: it must still carry the {"detail"} body.
func (v *validatingTransport) checkError(body []byte) string {
	var e any
	if err := json.Unmarshal(body, &e); err != nil {
		return fmt.Sprintf("error body is not JSON: %s", clipBody(body))
	}
	if err := v.doc.Components.Schemas["Error"].Value.VisitJSON(e, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Sprintf("error body does not match Error: %v", err)
	}
	return ""
}

func clipBody(b []byte) string {
	const limit = 300
	if len(b) > limit {
		return string(b[:limit]) + "..."
	}
	return string(b)
}
