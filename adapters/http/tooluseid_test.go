package httpadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/sse"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
	"github.com/codeport/codeport/server"
)

// mintedID is the form of the ids port.NewToolUseID mints.
var mintedID = regexp.MustCompile(`^srvtoolu_[A-Z2-7]{26}$`)

// checkToolUseID fails unless got is sent, or a minted id when sent is
// empty.
func checkToolUseID(t *testing.T, where, sent, got string) {
	t.Helper()
	if sent != "" && got != sent || sent == "" && !mintedID.MatchString(got) {
		t.Errorf("%s: tool use id %q for a request with %q", where, got, sent)
	}
}

// Tool use ids are minted in one place, the Port every adapter returns,
// and every path still has one: an in-process execute, plain or
// streaming, on the wasm adapter, on a port over a remote backend
// (adapters/http) and on porttest; and the contract's server over each of
// those ports, answering plain JSON or events, the gateway's chain of
// server, http adapter and server included. A client's id comes back as it
// sent it; without one, a well-formed id is minted.
func TestToolUseIDsOnEveryPath(t *testing.T) {
	ctx, cancel := testwait.Context(t)
	defer cancel()
	inProcess := wasmtest.New(t, nil)
	direct := httptest.NewServer(server.NewHandler(inProcess))
	t.Cleanup(direct.Close)
	remote := newAdapter(t, httpadapter.NewConfig(direct.URL))
	gateway := httptest.NewServer(server.NewHandler(remote))
	t.Cleanup(gateway.Close)
	ran := func(context.Context, porttest.Session, port.ExecuteRequest) (port.Result, error) {
		return port.Result{Stdout: "ran\n"}, nil
	}
	fake := porttest.New(porttest.WithExecutor(ran, port.ToolCodeExecution))
	t.Cleanup(func() { _ = fake.Close() })
	overFake := httptest.NewServer(server.NewHandler(fake))
	t.Cleanup(overFake.Close)

	for _, p := range []struct {
		name string
		port *port.Port
	}{{"wasm in process", inProcess}, {"http adapter", remote}, {"porttest", fake}} {
		s, err := p.port.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		for _, streaming := range []bool{false, true} {
			for _, sent := range []string{"", "toolu_from_the_client"} {
				var streamed bytes.Buffer
				req := port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('ran')", ToolUseID: sent}
				if streaming {
					req.OnOutput = func(_ port.Stream, b []byte) { streamed.Write(b) }
				}
				res, err := p.port.Execute(ctx, s.ID, req)
				where := fmt.Sprintf("%s, streaming %v", p.name, streaming)
				if err != nil || res.Stdout != "ran\n" || streaming && streamed.String() != "ran\n" {
					t.Fatalf("%s: %v %+v, streamed %q", where, err, res, streamed.String())
				}
				checkToolUseID(t, where, sent, res.ToolUseID)
			}
		}
		if err := p.port.DestroySession(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
	}

	for _, srv := range []struct{ name, url string }{
		{"server over wasm", direct.URL},
		{"server over the http adapter", gateway.URL},
		{"server over porttest", overFake.URL},
	} {
		var sess contract.SessionHandle
		if status, b := post(t, ctx, srv.url+"/sessions", "{}", ""); status != http.StatusCreated || json.Unmarshal(b, &sess) != nil {
			t.Fatalf("%s: create: %d %s", srv.name, status, b)
		}
		for _, streaming := range []bool{false, true} {
			for _, sent := range []string{"", "toolu_from_the_client"} {
				where := fmt.Sprintf("%s, streaming %v", srv.name, streaming)
				req := map[string]any{"tool": "code_execution", "input": map[string]string{"code": "print('ran')"}}
				if sent != "" {
					req["tool_use_id"] = sent
				}
				body, _ := json.Marshal(req)
				accept := ""
				if streaming {
					accept = contract.EventStreamType
				}
				status, b := post(t, ctx, srv.url+"/sessions/"+sess.SessionID+"/exec", string(body), accept)
				var resp contract.ExecResponse
				if status != http.StatusOK || json.Unmarshal(b, &resp) != nil || resp.ResultBlock.Content.Stdout != "ran\n" {
					t.Fatalf("%s: %d %s", where, status, b)
				}
				checkToolUseID(t, where, sent, resp.ToolUseID)
				if resp.ResultBlock.ToolUseID != resp.ToolUseID {
					t.Errorf("%s: the result block's id %q is not the response's %q", where, resp.ResultBlock.ToolUseID, resp.ToolUseID)
				}
			}
		}
	}
}

// post sends body to url and returns the status and the response body:
// with accept set to the event stream type, the data of the result
// event, the stream read as `codeport conformance` reads it.
func post(t *testing.T, ctx context.Context, url, body, accept string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != contract.EventStreamType {
		if accept != "" && resp.StatusCode == http.StatusOK {
			t.Fatalf("%s: asked for events, got %s", url, mt)
		}
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	events := sse.NewReader(resp.Body, sse.Options{Canonical: true})
	for {
		ev, err := events.Next()
		if err != nil {
			t.Fatalf("%s: reading the events: %v", url, err)
		}
		if ev.Type == contract.EventResult {
			return resp.StatusCode, ev.Data
		}
	}
}
