package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/internal/testkit/logtest"
	"github.com/codeport/codeport/internal/testkit/testwait"
)

// startMCPListen runs `codeport mcp --listen` in process with args and
// returns its /mcp URL; the command is stopped when the test ends.
func startMCPListen(t *testing.T, args ...string) (url string, log *logtest.Buffer) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	log = &logtest.Buffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(ctx, append([]string{"mcp", "--listen", "127.0.0.1:0", "--sessions-dir", t.TempDir()}, args...), strings.NewReader(""), io.Discard, log)
	}()
	t.Cleanup(func() {
		stop()
		waitDone(t, done, "codeport mcp did not stop", log.String)
	})
	return "http://" + log.Await(t, servingAddr, done) + "/mcp", log
}

// mcpClient connects to url with key as its bearer credential, in the
// protocol version given ("": the newest, without protocol sessions).
func mcpClient(t *testing.T, url, key, version string) *mcp.ClientSession {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "tenant-test"}, nil).Connect(context.Background(), transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// createSession calls create_session; "" and the error text if it failed.
func createSession(t *testing.T, cs *mcp.ClientSession) (string, string) {
	t.Helper()
	res := mcpCall(t, cs, &mcp.CallToolParams{Name: "create_session"})
	if res.IsError {
		return "", resultText(res)
	}
	return res.StructuredContent.(map[string]any)["session_id"].(string), ""
}

func runIn(t *testing.T, cs *mcp.ClientSession, sid, code string) *mcp.CallToolResult {
	t.Helper()
	args := map[string]any{"code": code}
	if sid != "" {
		args["session_id"] = sid
	}
	return mcpCall(t, cs, &mcp.CallToolParams{Name: "run_python", Arguments: args})
}

// post sends body to url with key (none if empty) and returns the status
// and the answer.
func post(t *testing.T, url, key string, body io.Reader, contentLength int64, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = contentLength
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		// The server may close the connection on an oversized body
		// before the client has sent it all.
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// `codeport mcp --listen` with tenants only (no auth-token) applies them
// as serve does: no key, no entry; each tenant's sessions at once and
// executions per second are limited; a tenant reaches only the sessions
// it made (another's id answers as an unknown one, and destroying it ends
// nothing), and only the protocol sessions it began; bodies are capped as
// serve caps them, before and while they are read.
func TestMCPListenAppliesTenants(t *testing.T) {
	yamlFile, _, _ := tenantConfig(t) // acme: 2 sessions at once; globex: 1 execution, then 0.001/s
	url, log := startMCPListen(t, "--config", yamlFile)

	status, _ := post(t, url, "", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), -1, nil)
	if status != http.StatusUnauthorized {
		t.Fatalf("without a key: %d", status)
	}
	status, _ = post(t, url, "not-a-key-of-anyone-0123456789", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), -1, nil)
	if status != http.StatusUnauthorized {
		t.Fatalf("with a wrong key: %d", status)
	}

	// acme in a protocol session, globex without.
	acme, globex := mcpClient(t, url, acmeKey, "2025-06-18"), mcpClient(t, url, globexKey, "")
	a1, msg := createSession(t, acme)
	if a1 == "" {
		t.Fatalf("acme's first session: %s", msg)
	}
	res := runIn(t, acme, a1, "x = 41\nopen('f.txt', 'w').write('acme')")
	files, _ := res.StructuredContent.(map[string]any)["files"].([]any)
	if res.IsError || len(files) != 1 {
		t.Fatalf("acme: %s", resultText(res))
	}
	uri, _ := files[0].(map[string]any)["uri"].(string)
	if _, err := acme.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err != nil {
		t.Fatalf("acme reading its file %s: %v", uri, err)
	}
	if a2, msg := createSession(t, acme); a2 == "" {
		t.Fatalf("acme's second session: %s", msg)
	}
	if a3, msg := createSession(t, acme); a3 != "" || !strings.Contains(msg, "rate limited") {
		t.Fatalf("acme's third session, over its limit of 2: %q %s", a3, msg)
	}
	// A call without a session makes one for itself: over the limit too.
	if res := runIn(t, acme, "", "print(1)"); !res.IsError || !strings.Contains(resultText(res), "rate limited") {
		t.Fatalf("acme's sessionless call, over its limit: %s", resultText(res))
	}

	// globex cannot see, use or end acme's session.
	res = runIn(t, globex, a1, "print(x)")
	if !res.IsError || !strings.Contains(resultText(res), "no session") {
		t.Fatalf("globex on acme's session: %s", resultText(res))
	}
	res = mcpCall(t, globex, &mcp.CallToolParams{Name: "destroy_session", Arguments: map[string]any{"session_id": a1}})
	if res.IsError {
		t.Fatalf("globex destroying an id it does not own (answered as an unknown one): %s", resultText(res))
	}
	if res := runIn(t, acme, a1, "print(x + 1)"); res.IsError || !strings.HasPrefix(resultText(res), "stdout:\n42\n") {
		t.Fatalf("acme's session after globex's destroy: %s", resultText(res))
	}
	if _, err := globex.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri}); err == nil {
		t.Fatalf("globex read a resource of acme's session")
	}

	// globex's executions: a burst of one, then one in 1000 s.
	g1, msg := createSession(t, globex)
	if g1 == "" {
		t.Fatalf("globex's session: %s", msg)
	}
	if res := runIn(t, globex, g1, "print(1)"); res.IsError {
		t.Fatalf("globex's first execution: %s", resultText(res))
	}
	if res := runIn(t, globex, g1, "print(2)"); !res.IsError || !strings.Contains(resultText(res), "rate limited") {
		t.Fatalf("globex's second execution, over its rate: %s", resultText(res))
	}

	// acme's protocol session is acme's: globex's key cannot ride it.
	if acme.ID() == "" {
		t.Fatal("acme has no protocol session")
	}
	status, body := post(t, url, globexKey, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"print(x)","session_id":"`+a1+`"}}}`),
		-1, map[string]string{"Mcp-Session-Id": acme.ID(), "Mcp-Protocol-Version": "2025-06-18"})
	if status == http.StatusOK || strings.Contains(body, "41") {
		t.Fatalf("globex on acme's protocol session: %d %s", status, body)
	}

	// Bodies: over serve's cap (10 MiB), announced or not, refused 413;
	// the key is checked first.
	big := int64(10<<20 + 1)
	if status, _ := post(t, url, "", io.LimitReader(zeros{}, big), big, nil); status != http.StatusUnauthorized {
		t.Errorf("an oversized body without a key: %d", status)
	}
	if status, body := post(t, url, acmeKey, io.LimitReader(zeros{}, big), big, nil); status != http.StatusRequestEntityTooLarge {
		t.Errorf("an oversized body with its length: %d %s", status, body)
	}
	chunked := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"`), io.LimitReader(zeros{}, big))
	if status, body := post(t, url, acmeKey, chunked, -1, nil); status != http.StatusRequestEntityTooLarge && status != 0 {
		t.Errorf("an oversized body, chunked: %d %s", status, body)
	}
	if strings.Contains(log.String(), acmeKey) || strings.Contains(log.String(), globexKey) {
		t.Errorf("the log holds a key:\n%s", log.String())
	}
}

// zeros reads as an endless run of '0'.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '0'
	}
	return len(p), nil
}

// Over HTTP, a message with a repeated key is refused 400 with a JSON-RPC
// invalid request, as serve refuses a body with one, rather than taken
// with the last value.
func TestMCPListenRefusesRepeatedKeys(t *testing.T) {
	url, _ := startMCPListen(t, "--auth-token-file", writeToken(t, "dup-s3cret\n", 0o600))
	status, body := post(t, url, "dup-s3cret", strings.NewReader(`{"jsonrpc":"2.0","id":1,"id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`), -1, nil)
	var resp struct {
		ID    any `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &resp) != nil || resp.Error.Code != -32600 || resp.ID != nil ||
		!strings.Contains(resp.Error.Message, `duplicate key "id"`) {
		t.Fatalf("a repeated id: %d %s", status, body)
	}
}

// Over stdio, a malformed line is answered with a JSON-RPC error, and the
// server reads on: the session made before it keeps its state.
func TestMCPStdioSurvivesMalformedLines(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr logtest.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		run(context.Background(), []string{"mcp", "--sessions-dir", t.TempDir()}, inR, outW, &stderr)
		outW.Close()
	}()
	// One goroutine reads the answers, until stdout ends.
	answers := make(chan map[string]any)
	go func() {
		defer close(answers)
		lines := bufio.NewReaderSize(outR, 1<<20)
		for {
			b, err := lines.ReadBytes('\n')
			if err != nil {
				return
			}
			var m map[string]any
			if json.Unmarshal(b, &m) != nil {
				m = map[string]any{"not JSON": string(b)}
			}
			answers <- m
		}
	}()
	defer func() {
		inW.Close()
		for range answers { // until stdout ends
		}
		waitDone(t, done, "codeport mcp did not end with its stdin", stderr.String)
	}()
	wait, cancel := testwait.Context(t)
	defer cancel()
	// exchange writes a line and reads the answer: the next message with
	// an id (notifications are skipped).
	exchange := func(line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("writing %.80q: %v\n%s", line, err, stderr.String())
		}
		for {
			select {
			case m, ok := <-answers:
				if !ok {
					t.Fatalf("after %.80q: stdout ended\n%s", line, stderr.String())
				}
				if _, ok := m["id"]; ok {
					return m
				}
			case <-wait.Done():
				t.Fatalf("no answer to %.80q\n%s", line, stderr.String())
			}
		}
	}
	toolText := func(m map[string]any) string {
		res, _ := m["result"].(map[string]any)
		content, _ := res["content"].([]any)
		if len(content) == 0 {
			return ""
		}
		s, _ := content[0].(map[string]any)["text"].(string)
		return s
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	m := exchange(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_session","arguments":{}}}`)
	sid, _ := m["result"].(map[string]any)["structuredContent"].(map[string]any)["session_id"].(string)
	if sid == "" {
		t.Fatalf("create_session: %v", m)
	}
	exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"x = 41","session_id":"` + sid + `"}}}`)

	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	for _, tc := range []struct {
		line string
		code float64
		id   any
	}{
		{`[]`, -32600, nil},
		{`{"jsonrpc":"2.0","id":4,"method":`, -32700, nil},
		{`[{"jsonrpc":"2.0","id":5,"method":"tools/list"}]`, -32600, nil},
		{`{"jsonrpc":"1.0","id":6,"method":"tools/list"}`, -32600, 6.0},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, nil},
		{"\ufeff" + `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`, -32700, nil},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{"a":` + deep + `}}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":9,"id":10,"method":"tools/list"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{},"params":{}}`, -32600, 11.0},
		{`{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}`, -32600, nil},
		{`42`, -32600, nil},
	} {
		m := exchange(tc.line)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || m["id"] != tc.id {
			t.Errorf("%.60q: %v, want code %v id %v", tc.line, m, tc.code, tc.id)
		}
	}

	m = exchange(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"print(x + 1)","session_id":"` + sid + `"}}}`)
	if got := toolText(m); got != "stdout:\n42\nreturn_code: 0" {
		t.Fatalf("the session after the malformed lines: %q (%v)\n%s", got, m, stderr.String())
	}
	if bytes.Contains([]byte(stderr.String()), []byte("MCP session ended")) {
		t.Errorf("the session ended:\n%s", stderr.String())
	}
}
