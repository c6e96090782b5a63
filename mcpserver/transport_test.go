package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/mcpserver"
)

// CheckMessage: what is refused, with which code and id.
func TestCheckMessage(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		code int64 // 0: taken
		id   string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"k":[1,{"x":2}]}}}`, 0, ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, 0, ""},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, 0, ""},
		{`{"jsonrpc":"2.0","id":1,"method":`, -32700, "null"},
		{"\ufeff{}", -32700, "null"},
		{`{"a":1} {"b":2}`, -32700, "null"},
		{`[]`, -32600, "null"},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, -32600, "null"},
		{`"x"`, -32600, "null"},
		{`{"jsonrpc":"1.0","id":"q","method":"tools/list"}`, -32600, `"q"`},
		{`{"id":2,"method":"tools/list"}`, -32600, "2"},
		{`{"jsonrpc":"2.0","id":[1],"method":"tools/list"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":1e3,"method":"tools/list"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":1,"ID":2,"method":"tools/list"}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":4,"method":"a","method":"b"}`, -32600, "4"},
		{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"arguments":{"code":"a","code":"b"}}}`, -32600, "5"},
		{`{"jsonrpc":"2.0","id":7,"method":"x","params":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":8,"method":"x","params":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}`, 0, ""},
	} {
		rf := mcpserver.CheckMessage([]byte(tc.msg))
		switch {
		case tc.code == 0 && rf != nil:
			t.Errorf("%.60q refused: %v", tc.msg, rf)
		case tc.code == 0:
		case rf == nil:
			t.Errorf("%.60q taken", tc.msg)
		default:
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code    int64  `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(rf.Response(), &resp); err != nil || resp.JSONRPC != "2.0" || string(resp.ID) != tc.id ||
				resp.Error.Code != tc.code || resp.Error.Message == "" {
				t.Errorf("%.60q: %s, want code %d id %s", tc.msg, rf.Response(), tc.code, tc.id)
			}
		}
	}
}

// Over IOTransport, a line over the limit is answered and skipped, blank
// lines are skipped, CRLF ends a line as LF does, and the session goes on
// with the real runtime behind it.
func TestIOTransportReadsOn(t *testing.T) {
	p := wasmtest.New(t, nil)
	caps, err := p.Describe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpserver.New(p, caps)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ss, err := srv.Connect(context.Background(), &mcpserver.IOTransport{Reader: inR, Writer: outW, MaxMessageBytes: 4096}, nil)
	if err != nil {
		t.Fatal(err)
	}
	answers := make(chan map[string]any)
	go func() {
		defer close(answers)
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"not JSON": sc.Text()}
			}
			answers <- m
		}
	}()
	defer func() {
		inW.Close()
		ss.Wait()
		outW.Close()
		for range answers {
		}
	}()
	wait, cancel := testwait.Context(t)
	defer cancel()
	send := func(raw string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(inW, raw); err != nil {
			t.Fatal(err)
		}
		for {
			select {
			case m, ok := <-answers:
				if !ok {
					t.Fatalf("after %.60q: the connection ended", raw)
				}
				if _, ok := m["id"]; ok {
					return m
				}
			case <-wait.Done():
				t.Fatalf("no answer to %.60q", raw)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\r\n")
	if _, err := io.WriteString(inW, "\n  \n"+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	long := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"# ` + strings.Repeat("x", 70000) + `"}}}` + "\n"
	m := send(long)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != -32600.0 || m["id"] != nil || !strings.Contains(e["message"].(string), "over 4096 bytes") {
		t.Fatalf("a line over the limit: %v", m)
	}
	m = send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_python","arguments":{"code":"print(6 * 7)"}}}` + "\r\n")
	res, _ := m["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 || !strings.HasPrefix(content[0].(map[string]any)["text"].(string), "stdout:\n42\n") {
		t.Fatalf("after the long line: %v", m)
	}
}
