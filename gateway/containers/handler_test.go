package containers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/internal/testkit/fakeclock"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// api is a Containers API served over a real in-process adapter. The
// tenant of a request is the X-Tenant header, put in its context as an
// authenticating guard would.
type api struct {
	t     *testing.T
	url   string
	store *containers.Store
	clock *fakeclock.Clock
}

func newAPI(t *testing.T, tweak func(wasm.Config) wasm.Config, opts ...containers.Option) *api {
	t.Helper()
	p := wasmtest.New(t, func(c wasm.Config) wasm.Config {
		c = c.WithShellAtStart(false)
		if tweak != nil {
			c = tweak(c)
		}
		return c
	})
	clk := fakeclock.New(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	s := containers.New(p, append([]containers.Option{containers.WithTenantOf(tenantOf), containers.WithClock(clk.Now)}, opts...)...)
	h := containers.NewHandler(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tenantKey{}, r.Header.Get("X-Tenant"))))
	}))
	t.Cleanup(func() {
		srv.Close()
		if err := s.Close(); err != nil {
			t.Errorf("store Close: %v", err)
		}
	})
	return &api{t: t, url: srv.URL, store: s, clock: clk}
}

// reply is an answer of the API.
type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("answer %d is not a JSON object: %v\n%s", r.status, err, r.body)
	}
	return v
}

// apiErr is the error of an answer in OpenAI's shape; the test fails on
// another shape.
func (r reply) apiErr(t *testing.T) (typ, code, param, msg string) {
	t.Helper()
	var v struct {
		Error *struct {
			Message *string `json:"message"`
			Type    *string `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(r.body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || v.Error == nil || v.Error.Message == nil || v.Error.Type == nil {
		t.Fatalf("answer %d is not an OpenAI error: %v\n%s", r.status, err, r.body)
	}
	var raw map[string]map[string]json.RawMessage
	_ = json.Unmarshal(r.body, &raw)
	for _, k := range []string{"message", "type", "param", "code"} {
		if _, ok := raw["error"][k]; !ok {
			t.Fatalf("error lacks %q: %s", k, r.body)
		}
	}
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return *v.Error.Type, deref(v.Error.Code), deref(v.Error.Param), *v.Error.Message
}

func (a *api) do(tenant, method, path, contentType string, body io.Reader) reply {
	a.t.Helper()
	req, err := http.NewRequest(method, a.url+path, body)
	if err != nil {
		a.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("X-Tenant", tenant)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

func (a *api) post(tenant, path, body string) reply {
	a.t.Helper()
	return a.do(tenant, http.MethodPost, path, "application/json", strings.NewReader(body))
}

func (a *api) get(tenant, path string) reply {
	a.t.Helper()
	return a.do(tenant, http.MethodGet, path, "", nil)
}

func (a *api) del(tenant, path string) reply {
	a.t.Helper()
	return a.do(tenant, http.MethodDelete, path, "", nil)
}

// form is a multipart body: fields, then a file part named "file" when
// filename is not "".
func form(t *testing.T, fields map[string]string, filename, data string) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if err := mw.WriteField(k, fields[k]); err != nil {
			t.Fatal(err)
		}
	}
	if filename != "" {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, filename))
		h.Set("Content-Type", "application/octet-stream")
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(w, data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), &buf
}

func (a *api) upload(tenant, id, filename, data string) reply {
	a.t.Helper()
	ct, body := form(a.t, nil, filename, data)
	return a.do(tenant, http.MethodPost, "/v1/containers/"+id+"/files", ct, body)
}

// create makes a container and returns its object.
func (a *api) create(tenant, body string) map[string]any {
	a.t.Helper()
	r := a.post(tenant, "/v1/containers", body)
	if r.status != http.StatusOK {
		a.t.Fatalf("create %s: %d %s", body, r.status, r.body)
	}
	return r.json(a.t)
}

// wantError checks that r is an OpenAI error of status, code and param.
func wantError(t *testing.T, what string, r reply, status int, code, param string) string {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d, want %d: %s", what, r.status, status, r.body)
		return ""
	}
	_, gotCode, gotParam, msg := r.apiErr(t)
	if gotCode != code || gotParam != param {
		t.Errorf("%s: code %q param %q, want %q %q: %s", what, gotCode, gotParam, code, param, msg)
	}
	return msg
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// TestContainersAPILifecycle: a container made, listed, retrieved; a
// file uploaded, seen by a program in the container, listed, retrieved,
// downloaded and deleted; the container deleted and then unknown.
func TestContainersAPILifecycle(t *testing.T) {
	a := newAPI(t, nil)
	start := a.clock.Now()
	c := a.create("acme", `{"name":"analysis","expires_after":{"anchor":"last_active_at","minutes":30}}`)
	id, _ := c["id"].(string)
	if _, ok := containers.NodeOf(id); !ok {
		t.Fatalf("id %q is not a container id", id)
	}
	// The wasm adapter's sessions have 256 MiB, which is no value of
	// OpenAI's memory_limit: it is left out rather than rounded.
	if got, want := keys(c), []string{"created_at", "expires_after", "id", "last_active_at", "name", "network_policy", "object", "status"}; !slices.Equal(got, want) {
		t.Errorf("container keys %v, want %v", got, want)
	}
	if c["object"] != "container" || c["status"] != "running" || c["name"] != "analysis" ||
		c["created_at"] != float64(start.Unix()) || c["last_active_at"] != float64(start.Unix()) {
		t.Errorf("container %v", c)
	}
	if ea, _ := c["expires_after"].(map[string]any); ea["anchor"] != "last_active_at" || ea["minutes"] != float64(30) {
		t.Errorf("expires_after %v", c["expires_after"])
	}
	if np, _ := c["network_policy"].(map[string]any); np["type"] != "disabled" {
		t.Errorf("network_policy %v", c["network_policy"])
	}
	if r := a.get("acme", "/v1/containers/"+id); r.status != http.StatusOK || r.json(t)["id"] != id {
		t.Fatalf("retrieve: %d %s", r.status, r.body)
	}
	l := a.get("acme", "/v1/containers").json(t)
	if l["object"] != "list" || l["first_id"] != id || l["last_id"] != id || l["has_more"] != false || len(l["data"].([]any)) != 1 {
		t.Errorf("list %v", l)
	}

	a.clock.Advance(time.Minute)
	data := "a,b\n1,2\n"
	r := a.upload("acme", id, "data.csv", data)
	if r.status != http.StatusOK {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	f := r.json(t)
	fid, _ := f["id"].(string)
	if got, want := keys(f), []string{"bytes", "container_id", "created_at", "id", "object", "path", "source"}; !slices.Equal(got, want) {
		t.Errorf("file keys %v, want %v", got, want)
	}
	if !strings.HasPrefix(fid, containers.FileIDPrefix) || f["object"] != "container.file" || f["bytes"] != float64(len(data)) ||
		f["container_id"] != id || f["source"] != "user" || !strings.HasSuffix(f["path"].(string), "/data.csv") ||
		f["created_at"] != float64(start.Add(time.Minute).Unix()) {
		t.Errorf("file %v", f)
	}
	// The upload is activity.
	if got := a.get("acme", "/v1/containers/"+id).json(t)["last_active_at"]; got != float64(start.Add(time.Minute).Unix()) {
		t.Errorf("last_active_at %v after the upload", got)
	}
	// A program in the container reads it where path says.
	ctx := context.WithValue(context.Background(), tenantKey{}, "acme")
	res, _, err := a.store.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: fmt.Sprintf("print(open(%q).read(), end='')", f["path"])})
	if err != nil || res.Stdout != data {
		t.Fatalf("reading the upload in the container: %v %q %q", err, res.Stdout, res.Stderr)
	}

	if r := a.get("acme", "/v1/containers/"+id+"/files"); r.status != http.StatusOK || r.json(t)["first_id"] != fid {
		t.Errorf("files list: %d %s", r.status, r.body)
	}
	if r := a.get("acme", "/v1/containers/"+id+"/files/"+fid); r.status != http.StatusOK || r.json(t)["id"] != fid {
		t.Errorf("file retrieve: %d %s", r.status, r.body)
	}
	r = a.get("acme", "/v1/containers/"+id+"/files/"+fid+"/content")
	if r.status != http.StatusOK || string(r.body) != data || r.header.Get("Content-Type") != "application/octet-stream" {
		t.Errorf("content: %d %q %v", r.status, r.body, r.header)
	}
	r = a.del("acme", "/v1/containers/"+id+"/files/"+fid)
	if v := r.json(t); r.status != http.StatusOK || v["id"] != fid || v["object"] != "container.file.deleted" || v["deleted"] != true {
		t.Errorf("file delete: %d %s", r.status, r.body)
	}
	res, _, err = a.store.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: fmt.Sprintf("import os; print(os.path.exists(%q))", f["path"])})
	if err != nil || res.Stdout != "False\n" {
		t.Errorf("the deleted file is still in the workspace: %v %q", err, res.Stdout)
	}
	wantError(t, "deleted file", a.get("acme", "/v1/containers/"+id+"/files/"+fid), http.StatusNotFound, "file_not_found", "")
	wantError(t, "deleted file's content", a.get("acme", "/v1/containers/"+id+"/files/"+fid+"/content"), http.StatusNotFound, "file_not_found", "")
	if l := a.get("acme", "/v1/containers/"+id+"/files").json(t); len(l["data"].([]any)) != 0 || l["first_id"] != nil || l["has_more"] != false {
		t.Errorf("files after the delete: %v", l)
	}

	r = a.del("acme", "/v1/containers/"+id)
	if v := r.json(t); r.status != http.StatusOK || v["id"] != id || v["object"] != "container.deleted" || v["deleted"] != true {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	wantError(t, "deleted container", a.get("acme", "/v1/containers/"+id), http.StatusNotFound, "container_not_found", "")
	wantError(t, "deleted container, again", a.del("acme", "/v1/containers/"+id), http.StatusNotFound, "container_not_found", "")
	wantError(t, "upload to a deleted container", a.upload("acme", id, "x.txt", "x"), http.StatusNotFound, "container_not_found", "")
}

// TestContainersAPIPages: lists page by limit and after, in either order,
// and filter by name.
func TestContainersAPIPages(t *testing.T) {
	a := newAPI(t, nil)
	var ids []string
	for i, name := range []string{"a", "b", "a"} {
		a.clock.Advance(time.Second)
		ids = append(ids, a.create("acme", fmt.Sprintf(`{"name":%q}`, name))["id"].(string))
		if i == 0 {
			for _, fn := range []string{"1.txt", "2.txt", "3.txt"} {
				if r := a.upload("acme", ids[0], fn, fn); r.status != http.StatusOK {
					t.Fatalf("upload: %d %s", r.status, r.body)
				}
			}
		}
	}
	page := func(path string) ([]string, bool) {
		t.Helper()
		r := a.get("acme", path)
		if r.status != http.StatusOK {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		v := r.json(t)
		var got []string
		for _, d := range v["data"].([]any) {
			got = append(got, d.(map[string]any)["id"].(string))
		}
		return got, v["has_more"].(bool)
	}
	if got, more := page("/v1/containers?limit=1"); !slices.Equal(got, ids[2:3]) || !more {
		t.Errorf("first page, newest first: %v %v", got, more)
	}
	if got, more := page("/v1/containers?limit=1&after=" + ids[2]); !slices.Equal(got, ids[1:2]) || !more {
		t.Errorf("second page: %v %v", got, more)
	}
	if got, more := page("/v1/containers?limit=2&after=" + ids[1]); !slices.Equal(got, ids[0:1]) || more {
		t.Errorf("last page: %v %v", got, more)
	}
	if got, _ := page("/v1/containers?order=asc"); !slices.Equal(got, ids) {
		t.Errorf("ascending: %v, want %v", got, ids)
	}
	if got, _ := page("/v1/containers?name=a&order=asc"); !slices.Equal(got, []string{ids[0], ids[2]}) {
		t.Errorf("by name: %v", got)
	}
	files, _ := page("/v1/containers/" + ids[0] + "/files?order=asc")
	if len(files) != 3 {
		t.Fatalf("files: %v", files)
	}
	if got, more := page("/v1/containers/" + ids[0] + "/files?order=asc&limit=2&after=" + files[0]); !slices.Equal(got, files[1:]) || more {
		t.Errorf("files page: %v %v", got, more)
	}
	if got, _ := page("/v1/containers/" + ids[0] + "/files"); !slices.Equal(got, []string{files[2], files[1], files[0]}) {
		t.Errorf("files, newest first: %v", got)
	}
}

// TestContainersAPIRefusesBadInput: every malformed or refused input is a
// 400 (or 404, 405, 413) in OpenAI's shape naming the parameter, and
// changes nothing.
func TestContainersAPIRefusesBadInput(t *testing.T) {
	a := newAPI(t, nil)
	id := a.create("acme", `{"name":"x"}`)["id"].(string)
	for _, c := range []struct {
		what, ct, body string
		status         int
		code, param    string
	}{
		{"no content type", "", `{"name":"x"}`, 400, "unsupported_media_type", ""},
		{"text/plain", "text/plain", `{"name":"x"}`, 400, "unsupported_media_type", ""},
		{"form", "application/x-www-form-urlencoded", `name=x`, 400, "unsupported_media_type", ""},
		{"latin-1 JSON", "application/json; charset=iso-8859-1", `{"name":"x"}`, 400, "unsupported_media_type", ""},
		{"empty body", "application/json", ``, 400, "", ""},
		{"bad JSON", "application/json", `{"name":`, 400, "", ""},
		{"trailing data", "application/json", `{"name":"x"} {}`, 400, "", ""},
		{"an array", "application/json", `["x"]`, 400, "", ""},
		{"null", "application/json", `null`, 400, "", ""},
		{"duplicate key", "application/json", `{"name":"x","name":"y"}`, 400, "", ""},
		{"duplicate key by case", "application/json", `{"name":"x","Name":"y"}`, 400, "", ""},
		{"duplicate nested key", "application/json", `{"name":"x","expires_after":{"anchor":"last_active_at","minutes":5,"minutes":6}}`, 400, "", ""},
		{"unknown field", "application/json", `{"name":"x","colour":"red"}`, 400, "", "colour"},
		{"no name", "application/json", `{}`, 400, "", "name"},
		{"empty name", "application/json", `{"name":""}`, 400, "", "name"},
		{"name not a string", "application/json", `{"name":7}`, 400, "", "name"},
		{"name with a control character", "application/json", `{"name":"a\u0000b"}`, 400, "", "name"},
		{"name too long", "application/json", `{"name":"` + strings.Repeat("n", containers.MaxNameBytes+1) + `"}`, 400, "", "name"},
		{"expires_after not an object", "application/json", `{"name":"x","expires_after":5}`, 400, "", "expires_after"},
		{"another anchor", "application/json", `{"name":"x","expires_after":{"anchor":"created_at","minutes":5}}`, 400, "", "expires_after.anchor"},
		{"no anchor", "application/json", `{"name":"x","expires_after":{"minutes":5}}`, 400, "", "expires_after.anchor"},
		{"no minutes", "application/json", `{"name":"x","expires_after":{"anchor":"last_active_at"}}`, 400, "", "expires_after.minutes"},
		{"zero minutes", "application/json", `{"name":"x","expires_after":{"anchor":"last_active_at","minutes":0}}`, 400, "", "expires_after.minutes"},
		{"negative minutes", "application/json", `{"name":"x","expires_after":{"anchor":"last_active_at","minutes":-5}}`, 400, "", "expires_after.minutes"},
		{"fractional minutes", "application/json", `{"name":"x","expires_after":{"anchor":"last_active_at","minutes":1.5}}`, 400, "", "expires_after.minutes"},
		{"minutes as a string", "application/json", `{"name":"x","expires_after":{"anchor":"last_active_at","minutes":"5"}}`, 400, "", "expires_after.minutes"},
		{"huge minutes", "application/json", `{"name":"x","expires_after":{"anchor":"last_active_at","minutes":99999999999999999999}}`, 400, "", "expires_after.minutes"},
		{"memory the backend does not give", "application/json", `{"name":"x","memory_limit":"4g"}`, 400, "", "memory_limit"},
		{"memory of no value", "application/json", `{"name":"x","memory_limit":"2g"}`, 400, "", "memory_limit"},
		{"an allowlist", "application/json", `{"name":"x","network_policy":{"type":"allowlist","allowed_domains":["example.com"]}}`, 400, "", "network_policy.allowed_domains"},
		{"an allowlist alone", "application/json", `{"name":"x","network_policy":{"type":"allowlist"}}`, 400, "", "network_policy.type"},
		{"skills", "application/json", `{"name":"x","skills":[{"type":"skill_reference","skill_id":"s"}]}`, 400, "", "skills"},
		{"file_ids without a file store", "application/json", `{"name":"x","file_ids":["file-1"]}`, 400, "", "file_ids"},
		{"file_ids not strings", "application/json", `{"name":"x","file_ids":[1]}`, 400, "", "file_ids"},
	} {
		r := a.do("acme", http.MethodPost, "/v1/containers", c.ct, strings.NewReader(c.body))
		wantError(t, c.what, r, c.status, c.code, c.param)
	}
	// What can be honoured is accepted.
	a.create("acme", `{"name":"y","network_policy":{"type":"disabled"},"skills":[],"file_ids":[],"expires_after":null}`)

	for _, c := range []struct {
		path  string
		param string
	}{
		{"/v1/containers?limit=0", "limit"},
		{"/v1/containers?limit=101", "limit"},
		{"/v1/containers?limit=99999999999999999999999", "limit"},
		{"/v1/containers?limit=ten", "limit"},
		{"/v1/containers?limit=1&limit=2", "limit"},
		{"/v1/containers?order=up", "order"},
		{"/v1/containers?after=cntr_nosuch", "after"},
		{"/v1/containers?after=" + strings.Repeat("a", 300), "after"},
		{"/v1/containers?colour=red", "colour"},
		{"/v1/containers?name=" + strings.Repeat("n", 300), "name"},
		{"/v1/containers/" + id + "/files?name=x", "name"},
		{"/v1/containers/" + id + "/files?after=cfile_nosuch", "after"},
		{"/v1/containers/" + id + "?x=1", "x"},
	} {
		wantError(t, c.path, a.get("acme", c.path), http.StatusBadRequest, "", c.param)
	}

	// Uploads.
	for _, c := range []struct {
		what     string
		fields   map[string]string
		filename string
		param    string
	}{
		{"a path up", nil, "../x", "file"},
		{"a path down", nil, "a/b", "file"},
		{"a backslash", nil, `a\b`, "file"},
		{"dot-dot", nil, "..", "file"},
		{"neither file nor file_id", nil, "", "file"},
		{"both", map[string]string{"file_id": "file-1"}, "x.txt", "file"},
		{"file_id without a file store", map[string]string{"file_id": "file-1"}, "", "file_id"},
		{"an unknown field", map[string]string{"purpose": "x"}, "x.txt", "purpose"},
	} {
		ct, body := form(t, c.fields, c.filename, "data")
		wantError(t, "upload: "+c.what, a.do("acme", http.MethodPost, "/v1/containers/"+id+"/files", ct, body), http.StatusBadRequest, "", c.param)
	}
	// A part with no filename.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("file", "data")
	_ = mw.Close()
	wantError(t, "upload: a file part without a filename", a.do("acme", http.MethodPost, "/v1/containers/"+id+"/files", mw.FormDataContentType(), &buf), http.StatusBadRequest, "", "file")
	// A part after the file: refused, and the file not kept.
	buf.Reset()
	mw = multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "late.txt")
	_, _ = io.WriteString(fw, "data")
	_ = mw.WriteField("file_id", "file-1")
	_ = mw.Close()
	wantError(t, "upload: a field after the file", a.do("acme", http.MethodPost, "/v1/containers/"+id+"/files", mw.FormDataContentType(), &buf), http.StatusBadRequest, "", "file_id")
	wantError(t, "upload: text/plain", a.do("acme", http.MethodPost, "/v1/containers/"+id+"/files", "text/plain", strings.NewReader("data")), http.StatusBadRequest, "unsupported_media_type", "")
	wantError(t, "upload: a broken form", a.do("acme", http.MethodPost, "/v1/containers/"+id+"/files", "multipart/form-data; boundary=xyz", strings.NewReader("--xyz\r\nbroken")), http.StatusBadRequest, "", "")
	wantError(t, "upload: JSON file_id without a file store", a.post("acme", "/v1/containers/"+id+"/files", `{"file_id":"file-1"}`), http.StatusBadRequest, "", "file_id")
	wantError(t, "upload: JSON without file_id", a.post("acme", "/v1/containers/"+id+"/files", `{}`), http.StatusBadRequest, "", "file_id")
	if l := a.get("acme", "/v1/containers/"+id+"/files").json(t); len(l["data"].([]any)) != 0 {
		t.Errorf("refused uploads left files: %v", l)
	}

	// Routes and methods.
	r := a.do("acme", http.MethodPut, "/v1/containers/"+id, "", nil)
	wantError(t, "PUT", r, http.StatusMethodNotAllowed, "method_not_allowed", "")
	if r.header.Get("Allow") != "DELETE, GET" {
		t.Errorf("Allow %q", r.header.Get("Allow"))
	}
	for _, p := range []string{"/v1/containers/", "/v1/containers//files", "/v1/containers/" + id + "/files/", "/v1/containers/" + id + "/nope",
		"/v1/containers/" + id + "/files/x/content/more", "/v1/containersx", "/v1/containers/%2e%2e"} {
		wantError(t, "GET "+p, a.get("acme", p), http.StatusNotFound, "route_not_found", "")
	}
	for _, p := range []string{"/v1/containers/cntr_nosuch", "/v1/containers/" + strings.Repeat("x", 5000), "/v1/containers/a%2Fb"} {
		wantError(t, "GET "+p, a.get("acme", p), http.StatusNotFound, "container_not_found", "")
	}
	wantError(t, "unknown file", a.get("acme", "/v1/containers/"+id+"/files/cfile_nosuch"), http.StatusNotFound, "file_not_found", "")

	// A JSON body over the handler's cap.
	big := `{"name":"x","file_ids":["` + strings.Repeat("f", 2<<20) + `"]}`
	wantError(t, "a huge body", a.post("acme", "/v1/containers", big), http.StatusRequestEntityTooLarge, "request_too_large", "")

	// Only the two containers made above exist.
	if l := a.get("acme", "/v1/containers").json(t); len(l["data"].([]any)) != 2 {
		t.Errorf("refused creations made containers: %v", l)
	}
}

// TestContainersAPITenants: another tenant's container answers exactly as
// an unknown one, on every route, and is left as it was.
func TestContainersAPITenants(t *testing.T) {
	a := newAPI(t, nil)
	id := a.create("acme", `{"name":"secret"}`)["id"].(string)
	fid := a.upload("acme", id, "s.txt", "secret").json(t)["id"].(string)
	unknown := "cntr_" + strings.Repeat("0", 32)
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, "/v1/containers/%s"},
		{http.MethodDelete, "/v1/containers/%s"},
		{http.MethodGet, "/v1/containers/%s/files"},
		{http.MethodGet, "/v1/containers/%s/files/" + fid},
		{http.MethodGet, "/v1/containers/%s/files/" + fid + "/content"},
		{http.MethodDelete, "/v1/containers/%s/files/" + fid},
		{http.MethodPost, "/v1/containers/%s/files"},
	} {
		send := func(cid string) reply {
			if c.method == http.MethodPost {
				return a.upload("globex", cid, "x.txt", "x")
			}
			return a.do("globex", c.method, fmt.Sprintf(c.path, cid), "", nil)
		}
		theirs, none := send(id), send(unknown)
		wantError(t, c.method+" "+c.path+" of another tenant", theirs, http.StatusNotFound, "container_not_found", "")
		if want := strings.ReplaceAll(string(none.body), unknown, id); string(theirs.body) != want || theirs.status != none.status {
			t.Errorf("%s %s: another tenant's container answers\n%s\nan unknown one\n%s", c.method, c.path, theirs.body, none.body)
		}
	}
	if l := a.get("globex", "/v1/containers").json(t); len(l["data"].([]any)) != 0 {
		t.Errorf("globex lists acme's container: %v", l)
	}
	wantError(t, "after naming another tenant's container", a.get("globex", "/v1/containers?after="+id), http.StatusBadRequest, "", "after")
	// acme's container and file are untouched.
	if r := a.get("acme", "/v1/containers/"+id+"/files/"+fid+"/content"); r.status != http.StatusOK || string(r.body) != "secret" {
		t.Errorf("acme's file after globex's calls: %d %q", r.status, r.body)
	}
}

// TestContainersAPIExpiry: a container idle past its expiry is gone,
// from every route and from the list; activity keeps one alive.
func TestContainersAPIExpiry(t *testing.T) {
	a := newAPI(t, nil)
	short := a.create("acme", `{"name":"short","expires_after":{"anchor":"last_active_at","minutes":2}}`)["id"].(string)
	long := a.create("acme", `{"name":"long"}`)["id"].(string)
	a.clock.Advance(90 * time.Second)
	if r := a.upload("acme", short, "keep.txt", "x"); r.status != http.StatusOK {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	a.clock.Advance(90 * time.Second) // 3 minutes after creation, 1.5 after the upload
	if r := a.get("acme", "/v1/containers/"+short); r.status != http.StatusOK {
		t.Fatalf("the upload did not keep the container alive: %d %s", r.status, r.body)
	}
	a.clock.Advance(time.Minute)
	wantError(t, "expired container", a.get("acme", "/v1/containers/"+short), http.StatusNotFound, "container_not_found", "")
	wantError(t, "expired container's files", a.get("acme", "/v1/containers/"+short+"/files"), http.StatusNotFound, "container_not_found", "")
	l := a.get("acme", "/v1/containers").json(t)
	if d := l["data"].([]any); len(d) != 1 || d[0].(map[string]any)["id"] != long {
		t.Errorf("list after the expiry: %v", l)
	}
	a.clock.Advance(containers.DefaultExpiry)
	wantError(t, "expired default container", a.get("acme", "/v1/containers/"+long), http.StatusNotFound, "container_not_found", "")
}

// TestContainersAPILimits: the store's counts are 400s naming the limit,
// the port's file limit a 413.
func TestContainersAPILimits(t *testing.T) {
	a := newAPI(t, func(c wasm.Config) wasm.Config { return c.WithFileLimit(1 << 10) },
		containers.WithMaxContainers(1), containers.WithMaxFiles(1))
	id := a.create("acme", `{"name":"one"}`)["id"].(string)
	msg := wantError(t, "a second container", a.post("acme", "/v1/containers", `{"name":"two"}`), http.StatusBadRequest, "container_limit_reached", "")
	if !strings.Contains(msg, "1") {
		t.Errorf("the limit's message does not say it: %q", msg)
	}
	// Another tenant has its own count.
	a.create("globex", `{"name":"one"}`)

	wantError(t, "a file over the port's limit", a.upload("acme", id, "big.bin", strings.Repeat("x", 2<<10)), http.StatusRequestEntityTooLarge, "file_too_large", "")
	if r := a.upload("acme", id, "one.txt", "1"); r.status != http.StatusOK {
		t.Fatalf("upload: %d %s", r.status, r.body)
	}
	wantError(t, "a second file", a.upload("acme", id, "two.txt", "2"), http.StatusBadRequest, "file_limit_reached", "")
	// Replacing the file of the same name is no new file.
	if r := a.upload("acme", id, "one.txt", "11"); r.status != http.StatusOK {
		t.Errorf("replacing: %d %s", r.status, r.body)
	}
	// Deleting the container frees its slot.
	if r := a.del("acme", "/v1/containers/"+id); r.status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	a.create("acme", `{"name":"two"}`)
}

// TestContainersAPIFileIDs: with a file store, files come in by id, at
// creation, as JSON and as a form field; an unknown id and another
// tenant's file are not found.
func TestContainersAPIFileIDs(t *testing.T) {
	a := newAPI(t, nil, containers.WithFileSource(files{
		"file-a": {owner: "acme", name: "report.csv", data: "x,y\n"},
		"file-b": {owner: "acme", name: "notes.txt", data: "notes"},
		"file-g": {owner: "globex", name: "theirs.txt", data: "theirs"},
	}))
	c := a.create("acme", `{"name":"seeded","file_ids":["file-a"]}`)
	id := c["id"].(string)
	l := a.get("acme", "/v1/containers/"+id+"/files").json(t)
	if d := l["data"].([]any); len(d) != 1 || !strings.HasSuffix(d[0].(map[string]any)["path"].(string), "/report.csv") {
		t.Fatalf("files of a seeded container: %v", l)
	}
	r := a.post("acme", "/v1/containers/"+id+"/files", `{"file_id":"file-b"}`)
	if r.status != http.StatusOK {
		t.Fatalf("file_id as JSON: %d %s", r.status, r.body)
	}
	fid := r.json(t)["id"].(string)
	if r := a.get("acme", "/v1/containers/"+id+"/files/"+fid+"/content"); string(r.body) != "notes" {
		t.Errorf("content of a file by id: %d %q", r.status, r.body)
	}
	ct, body := form(t, map[string]string{"file_id": "file-a"}, "", "")
	if r := a.do("acme", http.MethodPost, "/v1/containers/"+id+"/files", ct, body); r.status != http.StatusOK {
		t.Errorf("file_id as a form field: %d %s", r.status, r.body)
	}
	wantError(t, "an unknown file id", a.post("acme", "/v1/containers/"+id+"/files", `{"file_id":"file-x"}`), http.StatusNotFound, "file_not_found", "")
	theirs := a.post("acme", "/v1/containers/"+id+"/files", `{"file_id":"file-g"}`)
	unknown := a.post("acme", "/v1/containers/"+id+"/files", `{"file_id":"file-x"}`)
	wantError(t, "another tenant's file id", theirs, http.StatusNotFound, "file_not_found", "")
	if strings.ReplaceAll(string(theirs.body), "file-g", "file-x") != string(unknown.body) {
		t.Errorf("another tenant's file answers\n%s\nan unknown one\n%s", theirs.body, unknown.body)
	}
	wantError(t, "creation with an unknown file id", a.post("acme", "/v1/containers", `{"name":"x","file_ids":["file-x"]}`), http.StatusNotFound, "file_not_found", "")
	wantError(t, "repeated file ids", a.post("acme", "/v1/containers", `{"name":"x","file_ids":["file-a","file-a"]}`), http.StatusBadRequest, "", "file_ids")
	if l := a.get("acme", "/v1/containers").json(t); len(l["data"].([]any)) != 1 {
		t.Errorf("failed creations left containers: %v", l)
	}
}

// An upload refused for a part after its file, when the file, already in
// the container, cannot be removed again (the container is running a
// call): the answer says the file is there, and names it, rather than
// that it was not kept.
func TestContainersAPIRefusedUploadThatStays(t *testing.T) {
	a := newAPI(t, nil)
	id := a.create("acme", `{"name":"busy"}`)["id"].(string)
	const boundary = "b0undary"
	pr, pw := io.Pipe()
	defer pr.Close()
	replies := make(chan reply, 1)
	go func() {
		req, err := http.NewRequest(http.MethodPost, a.url+"/v1/containers/"+id+"/files", pr)
		if err != nil {
			panic(err)
		}
		req.Header.Set("Content-Type", "multipart/form-data; boundary="+boundary)
		req.Header.Set("X-Tenant", "acme")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			replies <- reply{status: -1, body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		replies <- reply{status: resp.StatusCode, body: b}
	}()
	// The file part, whole, and the start of another part.
	if _, err := io.WriteString(pw, "--"+boundary+"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello\r\n--"+boundary+"\r\n"); err != nil {
		t.Fatal(err)
	}
	var files containers.Page[containers.File]
	testwait.For(t, "the file to be in the container", func() bool {
		files, _ = a.store.Files(as("acme"), id, containers.ListParams{})
		return len(files.Data) == 1
	})
	// A call runs in the container while the rest of the form arrives.
	callCtx, cancel := context.WithCancel(as("acme"))
	defer cancel()
	started := make(chan struct{})
	var once sync.Once
	callDone := make(chan error, 1)
	go func() {
		_, _, err := a.store.Execute(callCtx, id, port.ExecuteRequest{
			Tool:     port.ToolCodeExecution,
			Code:     "import time\nprint('started', flush=True)\ntime.sleep(3600)",
			Timeout:  5 * time.Minute,
			OnOutput: func(port.Stream, []byte) { once.Do(func() { close(started) }) },
		})
		callDone <- err
	}()
	select {
	case <-started:
	case err := <-callDone:
		t.Fatalf("the call ended before it started: %v", err)
	}
	if _, err := io.WriteString(pw, "Content-Disposition: form-data; name=\"extra\"\r\n\r\nx\r\n--"+boundary+"--\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = pw.Close()
	r := <-replies
	cancel()
	if err := <-callDone; err != nil {
		t.Fatalf("Execute: %v", err)
	}
	msg := wantError(t, "a part after the file, the file not removable", r, http.StatusBadRequest, "", "extra")
	files, err := a.store.Files(as("acme"), id, containers.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(files.Data) == 1 && (strings.Contains(msg, "not kept") || !strings.Contains(msg, files.Data[0].ID)) {
		t.Errorf("the refusal says %q, but the container lists the file %s", msg, files.Data[0].ID)
	}
}

// A file part cut short (the body ends before its closing boundary) is
// the client's malformed body: a 400 saying so, as any other malformed
// form, not a server error; and no file is left.
func TestContainersAPIRefusesACutUpload(t *testing.T) {
	a := newAPI(t, nil)
	id := a.create("acme", `{"name":"cut"}`)["id"].(string)
	r := a.do("acme", http.MethodPost, "/v1/containers/"+id+"/files", "multipart/form-data; boundary=B",
		strings.NewReader("--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello"))
	wantError(t, "upload: a file part cut short", r, http.StatusBadRequest, "", "")
	if l := a.get("acme", "/v1/containers/"+id+"/files").json(t); len(l["data"].([]any)) != 0 {
		t.Errorf("a cut upload left files: %v", l)
	}
}
