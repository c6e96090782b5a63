package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/openapispec"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/server"
)

// spec is contract/openapi.yaml, loaded and validated once.
type spec struct {
	doc    *openapi3.T
	router routers.Router
}

var loadSpec = sync.OnceValues(func() (*spec, error) {
	s, err := openapispec.Load()
	if err != nil {
		return nil, err
	}
	return &spec{doc: s.Doc, router: s.Router}, nil
})

func mustSpec(t testing.TB) *spec {
	t.Helper()
	s, err := loadSpec()
	if err != nil {
		t.Fatalf("loading contract/openapi.yaml: %v", err)
	}
	return s
}

// checkResponse fails the test unless the response is what the document
// says this request may get. Requests for routes the document does not have
// (unknown paths, wrong methods) must still answer with an Error body.
func (s *spec) checkResponse(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	lookup := req
	if req.Method == http.MethodHead {
		// Every GET route answers HEAD too, without a body.
		lookup = req.Clone(req.Context())
		lookup.Method = http.MethodGet
	}
	route, params, err := s.router.FindRoute(lookup)
	if err != nil {
		switch status {
		case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusUnauthorized, http.StatusForbidden:
		default:
			t.Errorf("%s %s: no route in openapi.yaml, yet status %d", req.Method, req.URL.Path, status)
		}
		s.checkError(t, req, header, body)
		return
	}
	if req.Method == http.MethodHead {
		if status == http.StatusOK && len(body) != 0 {
			t.Errorf("HEAD %s: %d body bytes", req.URL.Path, len(body))
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    req,
			PathParams: params,
			Route:      route,
		},
		Status:  status,
		Header:  header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s -> %d: response does not match openapi.yaml: %v\nbody: %s",
			req.Method, req.URL.Path, status, err, truncate(body))
	}
}

func (s *spec) checkError(t testing.TB, req *http.Request, header http.Header, body []byte) {
	t.Helper()
	if ct := header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: error Content-Type %q", req.Method, req.URL.Path, ct)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Errorf("%s %s: error body is not JSON: %v", req.Method, req.URL.Path, err)
		return
	}
	schema := s.doc.Components.Schemas["Error"].Value
	if err := schema.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		t.Errorf("%s %s: error body does not match Error: %v", req.Method, req.URL.Path, err)
	}
}

// requestValid reports whether the document accepts a JSON request body.
func (s *spec) requestValid(t testing.TB, method, target string, body []byte) error {
	t.Helper()
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	route, params, err := s.router.FindRoute(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: params,
		Route:      route,
		Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
	})
}

// harness serves a fake port over a real HTTP server and checks every
// response against openapi.yaml.
type harness struct {
	t    *testing.T
	port *fakePort
	h    http.Handler
	srv  *httptest.Server
	spec *spec
	// auth, when set, is sent as the Authorization header.
	auth string
}

func newHarness(t *testing.T, fp *fakePort, opts ...server.Option) *harness {
	t.Helper()
	if fp == nil {
		fp = newFakePort()
	}
	h := servePort(t, fp, opts...)
	h.port = fp
	return h
}

// servePort serves any port over a real HTTP server on loopback.
func servePort(t *testing.T, p port.CodeExecutionPort, opts ...server.Option) *harness {
	t.Helper()
	h := server.NewHandler(p, opts...)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &harness{t: t, h: h, srv: srv, spec: mustSpec(t)}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", truncate(r.body), err)
	}
}

func (r response) detail(t testing.TB) string {
	t.Helper()
	var e contract.Error
	r.json(t, &e)
	return e.Detail
}

// code is the error body's code, "" when it has none.
func (r response) code(t testing.TB) string {
	t.Helper()
	var e contract.Error
	r.json(t, &e)
	return e.Code
}

// do sends a request with a JSON (or empty) body.
func (h *harness) do(method, target, body string) response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+target, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return h.send(req)
}

// send sends req, reads the whole response and checks it against the spec.
func (h *harness) send(req *http.Request) response {
	h.t.Helper()
	if h.auth != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", h.auth)
	}
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("%s %s: reading body: %v", req.Method, req.URL, err)
	}
	h.spec.checkResponse(h.t, req, resp.StatusCode, resp.Header, body)
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

// serve runs req through the handler in-process (no network), for tests
// that need the handler to have finished when it returns, and checks the
// response against the spec.
func (h *harness) serve(req *http.Request) response {
	h.t.Helper()
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	h.spec.checkResponse(h.t, req, res.StatusCode, res.Header, body)
	return response{status: res.StatusCode, header: res.Header, body: body}
}

func truncate(b []byte) string {
	if len(b) > 500 {
		return string(b[:500]) + "..."
	}
	return string(b)
}
