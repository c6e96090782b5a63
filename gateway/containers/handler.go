package containers

import (
	"context"
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
	"strconv"
	"strings"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// APIPrefix is the path under which NewHandler serves OpenAI's Containers
// API: a gateway mounts the handler for APIPrefix and everything below it.
const APIPrefix = "/v1/containers"

// PathPattern matches the path of every route of a container whose id
// carries a node id (WithNodeID) and captures the node id as "node": a
// proxy in front of several gateway processes sends each such request to
// the process that holds the container, with no table of containers of
// its own (deploy/nginx holds the same expression, as a test checks).
// Creating and listing containers name none: any process answers, and a
// list holds the containers of the process that answers it.
const PathPattern = `^/v1/containers/cntr_(?P<node>` + port.NodeIDPattern + `)_[0-9a-f]{32}(?:/|$)`

// Bounds of the API's inputs beyond the store's own.
const (
	// maxJSONBytes bounds a JSON body (a container's creation, a file by
	// id): far above any real one.
	maxJSONBytes = 1 << 20
	// maxFieldBytes bounds a form field other than the file (file_id).
	maxFieldBytes = 4 << 10
	// maxExpiryMinutes bounds expires_after.minutes (a week); the port
	// clamps it further to its own maximum idle time.
	maxExpiryMinutes = 7 * 24 * 60
	// maxCursorBytes bounds an after cursor: longer is no id.
	maxCursorBytes = 256
)

// HandlerOption configures NewHandler.
type HandlerOption func(*handlerConfig)

type handlerConfig struct {
	logger *slog.Logger
}

// WithHandlerLogger sets the logger of the handler: a record for each
// request it refuses or fails (method, route, status, error code, the
// container's id). It never logs file names, file contents, code or
// output, nor the text of an error (which may quote a file name).
func WithHandlerLogger(l *slog.Logger) HandlerOption {
	return func(c *handlerConfig) {
		if l != nil {
			c.logger = l
		}
	}
}

// NewHandler serves OpenAI's Containers API over store, under APIPrefix:
//
//	POST   /v1/containers                                   create
//	GET    /v1/containers                                   list (after, limit, order, name)
//	GET    /v1/containers/{id}                              retrieve
//	DELETE /v1/containers/{id}                              delete
//	POST   /v1/containers/{id}/files                        upload (multipart file) or copy (file_id)
//	GET    /v1/containers/{id}/files                        list (after, limit, order)
//	GET    /v1/containers/{id}/files/{file_id}              retrieve
//	DELETE /v1/containers/{id}/files/{file_id}              delete
//	GET    /v1/containers/{id}/files/{file_id}/content      download
//
// The objects are the shapes of OpenAI's API. Errors are OpenAI's
// {"error": {"message", "type", "param", "code"}}:
//
//   - 400 invalid_request_error: a malformed or refused input, with param
//     naming it; a body that is not application/json (or, for an upload,
//     multipart/form-data); and a limit of the store's (LimitError: code
//     container_limit_reached or file_limit_reached). A limit of counts is
//     a 400, not a 429, because waiting does not lift it (a container
//     must be deleted first), and 429 tells clients to retry: OpenAI's
//     SDKs retry a 429 on their own, twice, with backoff, for nothing.
//   - 401: the port refused the caller (no credential reached it).
//   - 404: an unknown container or file; another tenant's container, a
//     deleted one and an expired one answer exactly as an unknown one.
//   - 409: the container is running another call (port.ErrSessionBusy).
//   - 413: a file over the port's file limit or the workspace's quota
//     (port.ErrFileTooLarge), or a body over the handler's cap.
//   - 429 with Retry-After: the caller's own rate (port.ErrRateLimited:
//     a tenant's sessions or executions per second).
//   - 503 with Retry-After: the backend at capacity (port.ErrAtCapacity),
//     or the store closed (shutting down).
//
// The caller's tenant is the store's (WithTenantOf): the handler is meant
// to run behind what authenticates the caller and puts it in the
// request's context (server.Guard for codeport serve).
func NewHandler(store *Store, opts ...HandlerOption) http.Handler {
	cfg := handlerConfig{logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o(&cfg)
	}
	return &handler{s: store, log: cfg.logger}
}

type handler struct {
	s   *Store
	log *slog.Logger
}

// apiError is an answer of the handler's own making.
type apiError struct {
	status int
	typ    string
	code   string
	param  string
	msg    string
}

func (e *apiError) Error() string { return e.msg }

func invalid(param, format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", param: param, msg: fmt.Sprintf(format, args...)}
}

// withParam names the parameter of a refusal of the store's.
type withParam struct {
	error
	param string
}

func (e withParam) Unwrap() error { return e.error }

// route is the handler's template of a path, for the log.
type route string

const (
	routeContainers route = APIPrefix
	routeContainer  route = APIPrefix + "/{id}"
	routeFiles      route = APIPrefix + "/{id}/files"
	routeFile       route = APIPrefix + "/{id}/files/{file_id}"
	routeContent    route = APIPrefix + "/{id}/files/{file_id}/content"
	routeNone       route = ""
)

// split parses the path into its route and ids; routeNone when it names
// none.
func split(r *http.Request) (rt route, id, fileID string) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), APIPrefix)
	if !ok {
		return routeNone, "", ""
	}
	if rest == "" {
		return routeContainers, "", ""
	}
	if rest[0] != '/' {
		return routeNone, "", ""
	}
	segs := strings.Split(rest[1:], "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil || u == "" || u == "." || u == ".." {
			return routeNone, "", ""
		}
		segs[i] = u
	}
	switch {
	case len(segs) == 1:
		return routeContainer, segs[0], ""
	case len(segs) == 2 && segs[1] == "files":
		return routeFiles, segs[0], ""
	case len(segs) == 3 && segs[1] == "files":
		return routeFile, segs[0], segs[2]
	case len(segs) == 4 && segs[1] == "files" && segs[3] == "content":
		return routeContent, segs[0], segs[2]
	}
	return routeNone, "", ""
}

var allowed = map[route]string{
	routeContainers: "GET, POST",
	routeContainer:  "DELETE, GET",
	routeFiles:      "GET, POST",
	routeFile:       "DELETE, GET",
	routeContent:    "GET",
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, id, fileID := split(r)
	var err error
	switch m := r.Method; {
	case rt == routeNone:
		err = &apiError{status: http.StatusNotFound, typ: "invalid_request_error", code: "route_not_found", msg: "no such route"}
	case rt == routeContainers && m == http.MethodPost:
		err = h.create(w, r)
	case rt == routeContainers && m == http.MethodGet:
		err = h.list(w, r)
	case rt == routeContainer && m == http.MethodGet:
		err = h.retrieve(w, r, id)
	case rt == routeContainer && m == http.MethodDelete:
		err = h.delete(w, r, id)
	case rt == routeFiles && m == http.MethodPost:
		err = h.upload(w, r, id)
	case rt == routeFiles && m == http.MethodGet:
		err = h.listFiles(w, r, id)
	case rt == routeFile && m == http.MethodGet:
		err = h.retrieveFile(w, r, id, fileID)
	case rt == routeFile && m == http.MethodDelete:
		err = h.deleteFile(w, r, id, fileID)
	case rt == routeContent && m == http.MethodGet:
		err = h.content(w, r, id, fileID)
	default:
		w.Header().Set("Allow", allowed[rt])
		err = &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request_error", code: "method_not_allowed",
			msg: fmt.Sprintf("method %s is not allowed here; allowed: %s", short(r.Method), allowed[rt])}
	}
	if err != nil {
		h.fail(w, r, rt, id, err)
	}
}

// The objects of OpenAI's API.

type expiresAfterJSON struct {
	Anchor  string `json:"anchor"`
	Minutes int64  `json:"minutes"`
}

type networkPolicyJSON struct {
	Type string `json:"type"`
}

type containerJSON struct {
	ID            string             `json:"id"`
	Object        string             `json:"object"`
	CreatedAt     int64              `json:"created_at"`
	Status        string             `json:"status"`
	Name          string             `json:"name"`
	ExpiresAfter  expiresAfterJSON   `json:"expires_after"`
	LastActiveAt  int64              `json:"last_active_at"`
	MemoryLimit   string             `json:"memory_limit,omitempty"`
	NetworkPolicy *networkPolicyJSON `json:"network_policy,omitempty"`
}

type fileJSON struct {
	ID          string `json:"id"`
	Object      string `json:"object"`
	CreatedAt   int64  `json:"created_at"`
	Bytes       int64  `json:"bytes"`
	ContainerID string `json:"container_id"`
	Path        string `json:"path"`
	Source      string `json:"source"`
}

type listJSON[T any] struct {
	Object  string  `json:"object"`
	Data    []T     `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

type deletedJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// memoryLimits are the values of OpenAI's memory_limit, in bytes.
var memoryLimits = []struct {
	name  string
	bytes int64
}{{"1g", 1 << 30}, {"4g", 4 << 30}, {"16g", 16 << 30}, {"64g", 64 << 30}}

// memoryLimitName is OpenAI's name of a memory limit of exactly n bytes,
// "" when n is none of them: the field is then left out rather than
// rounded to a limit the container does not have.
func memoryLimitName(n int64) string {
	for _, m := range memoryLimits {
		if m.bytes == n {
			return m.name
		}
	}
	return ""
}

func (h *handler) containerObject(ctx context.Context, c Container) containerJSON {
	o := containerJSON{
		ID: c.ID, Object: "container", CreatedAt: c.CreatedAt.Unix(), Status: "running", Name: c.Name,
		ExpiresAfter: expiresAfterJSON{Anchor: "last_active_at", Minutes: max(int64(c.Expiry/time.Minute), 1)},
		LastActiveAt: c.LastActiveAt.Unix(),
		MemoryLimit:  memoryLimitName(c.MemoryLimit),
	}
	if caps, err := h.s.capabilities(ctx); err == nil && !caps.Network {
		o.NetworkPolicy = &networkPolicyJSON{Type: "disabled"}
	}
	return o
}

func fileObject(f File) fileJSON {
	return fileJSON{ID: f.ID, Object: "container.file", CreatedAt: f.CreatedAt.Unix(), Bytes: f.Bytes, ContainerID: f.ContainerID, Path: f.Path, Source: f.Source}
}

func listObject[T any](data []T, more bool, id func(T) string) listJSON[T] {
	l := listJSON[T]{Object: "list", Data: data, HasMore: more}
	if l.Data == nil {
		l.Data = []T{}
	}
	if len(data) > 0 {
		first, last := id(data[0]), id(data[len(data)-1])
		l.FirstID, l.LastID = &first, &last
	}
	return l
}

// Requests.

// decodeObject reads a JSON object body (application/json, at most
// maxJSONBytes, no duplicate keys) into its members.
func decodeObject(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, error) {
	if err := requireMediaType(r, "application/json"); err != nil {
		return nil, err
	}
	if r.ContentLength > maxJSONBytes {
		return nil, &http.MaxBytesError{Limit: maxJSONBytes}
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBytes))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, invalid("", "the request body is empty; it must be a JSON object")
	}
	if !json.Valid(b) {
		var v any
		err := json.Unmarshal(b, &v)
		return nil, invalid("", "the request body is not valid JSON: %v", err)
	}
	if err := contract.CheckDuplicateKeys(b); err != nil {
		return nil, invalid("", "%v", strings.TrimPrefix(err.Error(), port.ErrInvalidRequest.Error()+": "))
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil || members == nil {
		return nil, invalid("", "the request body must be a JSON object")
	}
	return members, nil
}

// requireMediaType refuses a body not declared as want.
func requireMediaType(r *http.Request, want string) error {
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err == nil && mt == want {
		if cs, ok := params["charset"]; !ok || want != "application/json" || strings.EqualFold(cs, "utf-8") {
			return nil
		}
	}
	if ct == "" {
		ct = "none"
	}
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: "unsupported_media_type",
		msg: fmt.Sprintf("the request body must be %s; its Content-Type is %s", want, short(ct))}
}

// stringField reads members[key] as a string; ok false when absent or
// null.
func stringField(members map[string]json.RawMessage, key string) (s string, ok bool, err error) {
	raw, present := members[key]
	if !present || string(raw) == "null" {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, invalid(key, "%s must be a string", key)
	}
	return s, true, nil
}

// createRequest is a container's creation, checked.
type createRequest struct {
	params      CreateParams
	memoryLimit string
}

func (h *handler) parseCreate(ctx context.Context, members map[string]json.RawMessage) (createRequest, error) {
	var req createRequest
	for k := range members {
		switch k {
		case "name", "expires_after", "file_ids", "memory_limit", "network_policy", "skills":
		default:
			return req, invalid(k, "unknown parameter %q", short(k))
		}
	}
	name, ok, err := stringField(members, "name")
	switch {
	case err != nil:
		return req, err
	case !ok || strings.TrimSpace(name) == "":
		return req, invalid("name", "name is required: a non-empty string")
	}
	if err := checkName(name); err != nil {
		return req, withParam{err, "name"}
	}
	req.params.Name = name
	if raw, ok := members["expires_after"]; ok && string(raw) != "null" {
		d, err := parseExpiresAfter(raw)
		if err != nil {
			return req, err
		}
		req.params.Expiry = d
	}
	if raw, ok := members["file_ids"]; ok && string(raw) != "null" {
		var ids []string
		if err := json.Unmarshal(raw, &ids); err != nil {
			return req, invalid("file_ids", "file_ids must be an array of strings")
		}
		if len(ids) > 0 && !h.s.hasSource() {
			return req, invalid("file_ids", "file_ids cannot be used here: this gateway has no file store to copy files from; upload files with POST /v1/containers/{id}/files")
		}
		req.params.FileIDs = ids
	}
	if ml, ok, err := stringField(members, "memory_limit"); err != nil {
		return req, err
	} else if ok {
		if err := h.checkMemoryLimit(ctx, ml); err != nil {
			return req, err
		}
		req.memoryLimit = ml
	}
	if raw, ok := members["network_policy"]; ok && string(raw) != "null" {
		if err := h.checkNetworkPolicy(ctx, raw); err != nil {
			return req, err
		}
	}
	if raw, ok := members["skills"]; ok && string(raw) != "null" {
		var skills []json.RawMessage
		if err := json.Unmarshal(raw, &skills); err != nil {
			return req, invalid("skills", "skills must be an array")
		}
		if len(skills) > 0 {
			return req, invalid("skills", "skills are not supported by this backend")
		}
	}
	return req, nil
}

func parseExpiresAfter(raw json.RawMessage) (time.Duration, error) {
	var ea map[string]json.RawMessage
	if err := json.Unmarshal(raw, &ea); err != nil || ea == nil {
		return 0, invalid("expires_after", "expires_after must be an object {\"anchor\": \"last_active_at\", \"minutes\": N}")
	}
	for k := range ea {
		if k != "anchor" && k != "minutes" {
			return 0, invalid("expires_after."+short(k), "unknown parameter expires_after.%s", short(k))
		}
	}
	anchor, ok, err := stringField(ea, "anchor")
	switch {
	case err != nil:
		return 0, invalid("expires_after.anchor", "expires_after.anchor must be a string")
	case !ok:
		return 0, invalid("expires_after.anchor", "expires_after.anchor is required")
	case anchor != "last_active_at":
		return 0, invalid("expires_after.anchor", "expires_after.anchor must be \"last_active_at\", not %q", short(anchor))
	}
	mraw, ok := ea["minutes"]
	if !ok || string(mraw) == "null" {
		return 0, invalid("expires_after.minutes", "expires_after.minutes is required")
	}
	var minutes int64
	if err := json.Unmarshal(mraw, &minutes); err != nil || minutes < 1 || minutes > maxExpiryMinutes {
		return 0, invalid("expires_after.minutes", "expires_after.minutes must be a whole number of minutes from 1 to %d", maxExpiryMinutes)
	}
	return time.Duration(minutes) * time.Minute, nil
}

// checkMemoryLimit accepts only the memory limit the port gives every
// session: a container cannot be given another.
func (h *handler) checkMemoryLimit(ctx context.Context, ml string) error {
	want := int64(-1)
	var names []string
	for _, m := range memoryLimits {
		names = append(names, m.name)
		if m.name == ml {
			want = m.bytes
		}
	}
	if want < 0 {
		return invalid("memory_limit", "memory_limit must be one of %s, not %q", strings.Join(names, ", "), short(ml))
	}
	caps, err := h.s.capabilities(ctx)
	if err != nil {
		return err
	}
	if caps.Limits.MemoryBytes != want {
		have := "an unknown amount of memory"
		if caps.Limits.MemoryBytes > 0 {
			have = fmt.Sprintf("%d MiB", caps.Limits.MemoryBytes>>20)
		}
		return invalid("memory_limit", "memory_limit %q cannot be honoured: this backend gives every container %s", ml, have)
	}
	return nil
}

// checkNetworkPolicy accepts "disabled" where programs have no network;
// nothing else can be honoured.
func (h *handler) checkNetworkPolicy(ctx context.Context, raw json.RawMessage) error {
	var np map[string]json.RawMessage
	if err := json.Unmarshal(raw, &np); err != nil || np == nil {
		return invalid("network_policy", "network_policy must be an object {\"type\": \"disabled\"}")
	}
	typ, _, err := stringField(np, "type")
	if err != nil {
		return invalid("network_policy.type", "network_policy.type must be a string")
	}
	for k := range np {
		if k != "type" {
			return invalid("network_policy."+short(k), "network_policy.%s is not supported: only {\"type\": \"disabled\"} is", short(k))
		}
	}
	if typ != "disabled" {
		return invalid("network_policy.type", "network_policy.type %q is not supported: programs here have no network, so only \"disabled\" is", short(typ))
	}
	caps, err := h.s.capabilities(ctx)
	if err != nil {
		return err
	}
	if caps.Network {
		return invalid("network_policy.type", "network_policy \"disabled\" cannot be honoured: this backend gives programs the network")
	}
	return nil
}

func (h *handler) create(w http.ResponseWriter, r *http.Request) error {
	members, err := decodeObject(w, r)
	if err != nil {
		return err
	}
	req, err := h.parseCreate(r.Context(), members)
	if err != nil {
		return err
	}
	c, err := h.s.Create(r.Context(), req.params)
	if err != nil {
		if len(req.params.FileIDs) > 0 && errors.Is(err, port.ErrInvalidRequest) {
			err = withParam{err, "file_ids"}
		}
		return err
	}
	writeJSON(w, http.StatusOK, h.containerObject(r.Context(), c))
	return nil
}

// listParams reads the query of a list: after, limit, order and, when
// names is set, name. Any other parameter, or one given twice, is
// refused.
func listParams(r *http.Request, names bool) (ListParams, error) {
	var p ListParams
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return p, invalid("", "the query string is malformed")
	}
	for k, vs := range q {
		switch {
		case k == "after" || k == "limit" || k == "order" || k == "name" && names:
		default:
			return p, invalid(short(k), "unknown query parameter %q", short(k))
		}
		if len(vs) > 1 {
			return p, invalid(k, "query parameter %s is given %d times", k, len(vs))
		}
	}
	if v, ok := q["limit"]; ok {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 1 || n > 100 {
			return p, invalid("limit", "limit must be a whole number from 1 to 100, not %q", short(v[0]))
		}
		p.Limit = n
	}
	if v, ok := q["order"]; ok {
		switch v[0] {
		case "asc":
			p.Ascending = true
		case "desc":
		default:
			return p, invalid("order", "order must be \"asc\" or \"desc\", not %q", short(v[0]))
		}
	}
	if v, ok := q["after"]; ok {
		if v[0] == "" || len(v[0]) > maxCursorBytes || !printable(v[0]) {
			return p, invalid("after", "after must be the id of an object of this list")
		}
		p.After = v[0]
	}
	if v, ok := q["name"]; ok {
		if err := checkName(v[0]); err != nil || v[0] == "" {
			return p, invalid("name", "name must be a container's name: printable text of at most %d bytes", MaxNameBytes)
		}
		p.Name = v[0]
	}
	return p, nil
}

// pageError names the param of a store's refusal of a page: with the
// limit checked, only the cursor can be wrong.
func pageError(err error, p ListParams) error {
	if p.After != "" && errors.Is(err, port.ErrInvalidRequest) {
		return withParam{err, "after"}
	}
	return err
}

func (h *handler) list(w http.ResponseWriter, r *http.Request) error {
	p, err := listParams(r, true)
	if err != nil {
		return err
	}
	pg, err := h.s.List(r.Context(), p)
	if err != nil {
		return pageError(err, p)
	}
	data := make([]containerJSON, len(pg.Data))
	for i, c := range pg.Data {
		data[i] = h.containerObject(r.Context(), c)
	}
	writeJSON(w, http.StatusOK, listObject(data, pg.HasMore, func(c containerJSON) string { return c.ID }))
	return nil
}

func (h *handler) retrieve(w http.ResponseWriter, r *http.Request, id string) error {
	if err := noQuery(r); err != nil {
		return err
	}
	c, err := h.s.Get(r.Context(), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h.containerObject(r.Context(), c))
	return nil
}

func (h *handler) delete(w http.ResponseWriter, r *http.Request, id string) error {
	if err := noQuery(r); err != nil {
		return err
	}
	if err := h.s.Delete(r.Context(), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deletedJSON{ID: id, Object: "container.deleted", Deleted: true})
	return nil
}

// noQuery refuses a query string on a route that takes none.
func noQuery(r *http.Request) error {
	if r.URL.RawQuery != "" {
		q, _ := url.ParseQuery(r.URL.RawQuery)
		for k := range q {
			return invalid(short(k), "unknown query parameter %q", short(k))
		}
		return invalid("", "this route takes no query parameters")
	}
	return nil
}

// upload puts a file into the container: a multipart/form-data body with
// a file part (streamed to the port, never held whole) or a file_id
// field, or a JSON body {"file_id": ...}; exactly one of the two.
func (h *handler) upload(w http.ResponseWriter, r *http.Request, id string) error {
	if err := noQuery(r); err != nil {
		return err
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/json" {
		members, err := decodeObject(w, r)
		if err != nil {
			return err
		}
		for k := range members {
			if k != "file_id" && k != "file" {
				return invalid(short(k), "unknown parameter %q", short(k))
			}
		}
		if _, ok := members["file"]; ok {
			return invalid("file", "file must be sent as a part of a multipart/form-data body")
		}
		fileID, ok, err := stringField(members, "file_id")
		switch {
		case err != nil:
			return err
		case !ok || fileID == "":
			return invalid("file_id", "give file (a multipart/form-data upload) or file_id")
		}
		return h.addFile(w, r, id, fileID)
	}
	if mt != "multipart/form-data" {
		return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", code: "unsupported_media_type",
			msg: fmt.Sprintf("the request body must be multipart/form-data (with a file part) or application/json (with file_id); its Content-Type is %s", short(cmpOr(r.Header.Get("Content-Type"), "none")))}
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return invalid("", "the multipart/form-data body cannot be read: %v", err)
	}
	var fileID string
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return bodyError(err, "the multipart/form-data body is malformed")
		}
		switch part.FormName() {
		case "file_id":
			if fileID != "" {
				return invalid("file_id", "file_id is given more than once")
			}
			b, err := io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
			if err != nil {
				return bodyError(err, "the multipart/form-data body is malformed")
			}
			if len(b) > maxFieldBytes || len(b) == 0 {
				return invalid("file_id", "file_id must be a file's id")
			}
			fileID = string(b)
		case "file":
			if fileID != "" {
				return invalid("file", "give file or file_id, not both")
			}
			return h.uploadPart(w, r, mr, part, id)
		default:
			return invalid(short(part.FormName()), "unknown form field %q: the form takes file or file_id", short(part.FormName()))
		}
	}
	if fileID == "" {
		return invalid("file", "the form has no file part (and no file_id)")
	}
	return h.addFile(w, r, id, fileID)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// uploadPart streams the file part into the container. The file must be
// the form's last part: one after it is refused, and the file, already
// in the container, removed again. When it cannot be (the container is
// running a call), the refusal says that the file stays, and its id, so
// that the client can delete it rather than believe it gone.
func (h *handler) uploadPart(w http.ResponseWriter, r *http.Request, mr *multipart.Reader, part *multipart.Part, id string) error {
	// The name as sent: Part.FileName would strip a path ("../x" or
	// "a/b" to its last element) instead of refusing it.
	_, params, err := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
	name, ok := params["filename"]
	if err != nil || !ok {
		return invalid("file", "the file part has no filename")
	}
	if err := CheckFileName(name); err != nil {
		return withParam{err, "file"}
	}
	body := &bodyReader{r: part}
	f, err := h.s.Upload(r.Context(), id, name, body)
	if err != nil {
		if body.err != nil {
			// The client's body failed (cut short, over a cap), whatever
			// the port made of it.
			return bodyError(body.err, "the multipart/form-data body is malformed")
		}
		return bodyError(err, "")
	}
	extra, err := mr.NextPart()
	if !errors.Is(err, io.EOF) {
		fate := "the file was not kept"
		if derr := h.s.DeleteFile(r.Context(), id, f.ID); derr != nil {
			h.log.WarnContext(context.WithoutCancel(r.Context()), "removing a refused upload failed", "container", id, "file", f.ID, "error_code", errorCode(derr))
			fate = fmt.Sprintf("the file could not be removed again (%s) and is in the container as %s", errorCode(derr), f.ID)
		}
		if err != nil {
			return bodyError(err, "the multipart/form-data body is malformed; "+fate)
		}
		return invalid(short(extra.FormName()), "the file part must be the form's last part; %s", fate)
	}
	writeJSON(w, http.StatusOK, fileObject(f))
	return nil
}

// bodyReader reads a file part, keeping the first error of the body's
// other than its end: the port reports a failing reader as a failure of
// its own, which would answer a client's malformed body as a server
// error.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

// bodyError turns a failure to read the body into its answer: over the
// cap, a 413; a malformed body, a 400 saying what; any other error is
// the store's.
func bodyError(err error, malformed string) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return tooLarge
	case malformed != "" && port.ErrorCode(err) == "":
		return invalid("", "%s", malformed)
	}
	return err
}

func (h *handler) addFile(w http.ResponseWriter, r *http.Request, id, fileID string) error {
	if !h.s.hasSource() {
		return invalid("file_id", "file_id cannot be used here: this gateway has no file store to copy files from; upload the file as a multipart/form-data file part")
	}
	if !printable(fileID) || len(fileID) > MaxNameBytes {
		return invalid("file_id", "file_id must be a file's id")
	}
	f, err := h.s.AddFile(r.Context(), id, fileID)
	if err != nil {
		if errors.Is(err, port.ErrInvalidRequest) {
			err = withParam{err, "file_id"}
		}
		return err
	}
	writeJSON(w, http.StatusOK, fileObject(f))
	return nil
}

func (h *handler) listFiles(w http.ResponseWriter, r *http.Request, id string) error {
	p, err := listParams(r, false)
	if err != nil {
		return err
	}
	pg, err := h.s.Files(r.Context(), id, p)
	if err != nil {
		return pageError(err, p)
	}
	data := make([]fileJSON, len(pg.Data))
	for i, f := range pg.Data {
		data[i] = fileObject(f)
	}
	writeJSON(w, http.StatusOK, listObject(data, pg.HasMore, func(f fileJSON) string { return f.ID }))
	return nil
}

func (h *handler) retrieveFile(w http.ResponseWriter, r *http.Request, id, fileID string) error {
	if err := noQuery(r); err != nil {
		return err
	}
	f, err := h.s.File(r.Context(), id, fileID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, fileObject(f))
	return nil
}

func (h *handler) deleteFile(w http.ResponseWriter, r *http.Request, id, fileID string) error {
	if err := noQuery(r); err != nil {
		return err
	}
	if err := h.s.DeleteFile(r.Context(), id, fileID); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deletedJSON{ID: fileID, Object: "container.file.deleted", Deleted: true})
	return nil
}

func (h *handler) content(w http.ResponseWriter, r *http.Request, id, fileID string) error {
	if err := noQuery(r); err != nil {
		return err
	}
	rc, f, err := h.s.Content(r.Context(), id, fileID)
	if err != nil {
		return err
	}
	defer rc.Close()
	hd := w.Header()
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("Content-Length", strconv.FormatInt(f.Bytes, 10))
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, rc); err != nil && r.Context().Err() == nil {
		// The status is sent: the client sees a short body.
		h.log.WarnContext(context.WithoutCancel(r.Context()), "sending a container file failed", "container", id, "file", fileID, "error_code", errorCode(err))
	}
	return nil
}

// Answers.

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a bug gets here: every body is one of this file's types.
		status, b = http.StatusInternalServerError, []byte(`{"error":{"message":"internal error","type":"server_error","param":null,"code":"internal_error"}}`)
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

type errorBody struct {
	Error errorJSON `json:"error"`
}

type errorJSON struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// errorCode names err for the log: the port's code, the handler's own,
// or its kind.
func errorCode(err error) string {
	var ae *apiError
	var le *LimitError
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &ae):
		return cmpOr(ae.code, ae.typ)
	case errors.Is(err, ErrContainerNotFound):
		return "container_not_found"
	case errors.Is(err, ErrFileNotFound):
		return "file_not_found"
	case errors.Is(err, ErrClosed):
		return "closed"
	case errors.As(err, &le):
		return limitCode(le)
	case errors.As(err, &tooLarge):
		return "request_too_large"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	}
	return cmpOr(port.ErrorCode(err), "internal_error")
}

// answer is the OpenAI error that answers err, with the seconds of a
// Retry-After (0: none).
func answer(err error) (ae apiError, retryAfter int) {
	var own *apiError
	var wp withParam
	var le *LimitError
	var tooLarge *http.MaxBytesError
	param := ""
	if errors.As(err, &wp) {
		param = wp.param
	}
	bad := func(status int, code string) apiError {
		return apiError{status: status, typ: "invalid_request_error", code: code, param: param, msg: message(err)}
	}
	switch {
	case errors.As(err, &own):
		return *own, 0
	case errors.As(err, &le):
		return bad(http.StatusBadRequest, limitCode(le)), 0
	case errors.Is(err, ErrContainerNotFound):
		return bad(http.StatusNotFound, "container_not_found"), 0
	case errors.Is(err, ErrFileNotFound), errors.Is(err, port.ErrFileNotFound):
		return bad(http.StatusNotFound, "file_not_found"), 0
	case errors.Is(err, ErrClosed), errors.Is(err, port.ErrClosed):
		return apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: "shutting_down", msg: "the server is shutting down; retry"}, 1
	case errors.As(err, &tooLarge):
		return apiError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request_error", code: "request_too_large",
			msg: fmt.Sprintf("the request body is over the %d-byte limit", tooLarge.Limit)}, 0
	}
	switch port.ErrorCode(err) {
	case "rate_limited":
		return apiError{status: http.StatusTooManyRequests, typ: "rate_limit_error", code: "rate_limit_exceeded", msg: message(err)}, retryAfterSeconds(err)
	case "at_capacity":
		return apiError{status: http.StatusServiceUnavailable, typ: "server_error", code: "at_capacity", msg: message(err)}, retryAfterSeconds(err)
	case "unauthorized":
		return apiError{status: http.StatusUnauthorized, typ: "invalid_request_error", code: "invalid_api_key", msg: "the request is not authenticated"}, 0
	case "session_busy":
		return bad(http.StatusConflict, "container_busy"), 0
	case "file_too_large":
		return bad(http.StatusRequestEntityTooLarge, "file_too_large"), 0
	case "invalid_request":
		// As the handler's own refusals: the message and the param say
		// what.
		return bad(http.StatusBadRequest, ""), 0
	case "path_escapes_workspace", "is_directory", "unsupported_tool", "unsupported":
		return bad(http.StatusBadRequest, port.ErrorCode(err)), 0
	case "backend_unreachable":
		return apiError{status: http.StatusBadGateway, typ: "server_error", code: "backend_unreachable", msg: "the code-execution backend could not be reached"}, 0
	}
	return apiError{status: http.StatusInternalServerError, typ: "server_error", code: "internal_error", msg: "internal error"}, 0
}

// limitCode is the code of a limit of the store's.
func limitCode(le *LimitError) string {
	if le.What == "files" {
		return "file_limit_reached"
	}
	return "container_limit_reached"
}

// message is a client error's text, without the sentinel's prefix.
func message(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, port.ErrInvalidRequest.Error()+": ")
	return s
}

func retryAfterSeconds(err error) int {
	var ce *port.CapacityError
	if !errors.As(err, &ce) || ce.RetryAfter <= 0 {
		return 1
	}
	return int(max(math.Ceil(min(ce.RetryAfter.Seconds(), math.MaxInt32)), 1))
}

// fail answers err and logs the refusal: ids and codes only.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, rt route, id string, err error) {
	a, retryAfter := answer(err)
	if r.Context().Err() != nil && errors.Is(err, r.Context().Err()) {
		// Nobody reads the answer.
		a = apiError{status: 499, typ: "invalid_request_error", code: "client_closed_request", msg: "client closed request"}
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	if a.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	level := slog.LevelInfo
	if a.status >= 500 {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("method", short(r.Method)), slog.String("route", string(rt)), slog.Int("status", a.status), slog.String("error_code", errorCode(err))}
	if id != "" && routeRE.MatchString(id) {
		attrs = append(attrs, slog.String("container", id))
	}
	h.log.LogAttrs(context.WithoutCancel(r.Context()), level, "containers API request refused", attrs...)
	writeJSON(w, a.status, newErrorBody(a.msg, a.typ, a.param, a.code))
}

func newErrorBody(msg, typ, param, code string) errorBody {
	body := errorBody{Error: errorJSON{Message: msg, Type: typ}}
	if param != "" {
		body.Error.Param = &param
	}
	if code != "" {
		body.Error.Code = &code
	}
	return body
}

// ErrorBody is OpenAI's error body for an answer of status with code and
// message, from no parameter in particular: what a guard in front of the
// API answers its own refusals with (server.WithErrorBody), as the API
// answers its errors.
func ErrorBody(status int, code, message string) any {
	typ := "invalid_request_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case status >= 500:
		typ = "server_error"
	}
	return newErrorBody(message, typ, "", code)
}
