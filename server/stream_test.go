package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/sse"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// sseEvent is one event of a streamed exec.
type sseEvent struct {
	name string
	data string
}

// openStream posts an exec asking for events and returns the response,
// whose body the caller reads with readEvent and closes.
func openStream(t *testing.T, h *harness, id, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", h.srv.URL+"/sessions/"+id+"/exec", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := h.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// readEvent reads the next event, holding the server to the canonical
// form (sse.Options.Canonical); ok is false at the end of the stream.
func readEvent(t *testing.T, r *sse.Reader) (ev sseEvent, ok bool) {
	t.Helper()
	e, err := r.Next()
	if err == io.EOF {
		return ev, false
	}
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	return sseEvent{name: e.Type, data: string(e.Data)}, true
}

// newEventReader reads a streamed exec's body as `codeport conformance`
// does.
func newEventReader(body io.Reader) *sse.Reader {
	return sse.NewReader(body, sse.Options{Canonical: true})
}

// Output arrives while the program runs: the cell waits for a file that
// the test puts only once the first stdout event has arrived, so the call
// ends only if that event came before the end. The events add up to the
// result, and the result event is the plain response's body.
func TestExecStreamsEvents(t *testing.T) {
	a := wasmtest.New(t, nil)
	h := servePort(t, a)
	id := h.createSession("")
	code := "import os, sys, time\\nprint(0, flush=True)\\nwhile not os.path.exists('go'):\\n    time.sleep(0.01)\\nprint('warn', file=sys.stderr)\\nprint(1)\\n6*7"
	resp := openStream(t, h, id, `{"tool":"code_execution","input":{"code":"`+code+`"},"timeout_seconds":60,"tool_use_id":"srvtoolu_same"}`)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	r := newEventReader(resp.Body)
	var names []string
	var out, errs strings.Builder
	var result contract.ExecResponse
	for {
		ev, ok := readEvent(t, r)
		if !ok {
			break
		}
		names = append(names, ev.name)
		switch ev.name {
		case "stdout", "stderr":
			var o contract.OutputEvent
			if err := json.Unmarshal([]byte(ev.data), &o); err != nil {
				t.Fatal(err)
			}
			if ev.name == "stdout" {
				if out.Len() == 0 {
					if _, err := a.PutFile(context.Background(), id, "go", strings.NewReader("go")); err != nil {
						t.Fatal(err)
					}
				}
				out.WriteString(o.Text)
			} else {
				errs.WriteString(o.Text)
			}
		case "result":
			if err := json.Unmarshal([]byte(ev.data), &result); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("event %q: %s", ev.name, ev.data)
		}
	}
	if names[len(names)-1] != "result" || names[0] != "stdout" {
		t.Fatalf("events %q", names)
	}
	c := result.ResultBlock.Content
	if c.Stdout != "0\n1\n42\n" || out.String() != c.Stdout || errs.String() != c.Stderr || c.Stderr != "warn\n" {
		t.Fatalf("events add up to %q/%q; result %q/%q", out.String(), errs.String(), c.Stdout, c.Stderr)
	}

	// The same call, plain: the same body but for the time it took.
	code = "print('same')\\n6*7"
	resp = openStream(t, h, id, `{"tool":"code_execution","input":{"code":"`+code+`"},"tool_use_id":"srvtoolu_same"}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var last string
	for _, block := range strings.Split(strings.TrimSpace(string(body)), "\n\n") {
		last = block
	}
	streamed, ok := strings.CutPrefix(last, "event: result\ndata: ")
	if !ok {
		t.Fatalf("last event %q", last)
	}
	_, plain := h.exec(id, `{"tool":"code_execution","input":{"code":"`+code+`"},"tool_use_id":"srvtoolu_same"}`)
	var s contract.ExecResponse
	if err := json.Unmarshal([]byte(streamed), &s); err != nil {
		t.Fatal(err)
	}
	s.ExecutionTimeMS, plain.ExecutionTimeMS = 0, 0
	sj, _ := json.Marshal(s)
	pj, _ := json.Marshal(plain)
	if string(sj) != string(pj) {
		t.Fatalf("streamed result %s\nplain result    %s", sj, pj)
	}
}

// A call refused before any output is answered as without streaming; a
// client that goes away cancels the call.
func TestExecStreamRefusalsAndDisconnects(t *testing.T) {
	a := wasmtest.New(t, nil)
	h := servePort(t, a)
	resp := openStream(t, h, "nope", `{"tool":"code_execution","input":{"code":"print(1)"}}`)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(b), `"session_not_found"`) {
		t.Fatalf("unknown session: %d %s", resp.StatusCode, b)
	}

	id := h.createSession("")
	resp = openStream(t, h, id, `{"tool":"code_execution","input":{"code":"import time\nwhile True:\n    print('tick', flush=True)\n    time.sleep(0.02)"},"timeout_seconds":300}`)
	if ev, ok := readEvent(t, newEventReader(resp.Body)); !ok || ev.name != "stdout" {
		t.Fatalf("first event %+v", ev)
	}
	resp.Body.Close()
	// The session is free again once the cancelled call has stopped.
	var res port.Result
	testwait.For(t, "the session to be free after its client left", func() bool {
		var err error
		res, err = a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print('free')"})
		return err == nil
	})
	if !strings.Contains(res.Stdout, "free") {
		t.Fatalf("after the disconnect: %+v", res)
	}
}

// A port that returns a result without a tool use id, after output has
// been streamed: the stream ends with an error event, never a result with
// an id the server made up (port.Port mints them, in one place).
func TestExecStreamOfAResultWithoutAToolUseID(t *testing.T) {
	fp := newFakePort()
	fp.addSession("s1", nil)
	fp.breaksToolUseIDs = true
	fp.execute = func(_ context.Context, _ string, req port.ExecuteRequest) (port.Result, error) {
		req.OnOutput(port.Stdout, []byte("a"))
		return port.Result{Tool: req.Tool, Stdout: "a", Outcome: port.OutcomeCompleted}, nil
	}
	h := newHarness(t, fp)
	resp := openStream(t, h, "s1", `{"tool":"code_execution","input":{"code":"x"},"tool_use_id":"mine"}`)
	defer resp.Body.Close()
	r := newEventReader(resp.Body)
	var events []sseEvent
	for {
		ev, ok := readEvent(t, r)
		if !ok {
			break
		}
		events = append(events, ev)
	}
	if len(events) != 2 || events[0].name != "stdout" || events[1].name != "error" || !strings.Contains(events[1].data, `"code":"internal_error"`) {
		t.Fatalf("events %+v", events)
	}
}
