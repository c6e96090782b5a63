package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// codeport mcp over stdio in the hostile phase (issue 27, defect 7): one
// child process per phase, fed the malformed messages (malformedMessages)
// one line at a time, each followed by a valid tool call that reads a
// session variable set at the start. Each malformed line must be answered
// with a JSON-RPC error, the variable must survive them all, and the
// child must stay alive until its stdin is closed, then exit 0.

// stdioConfig is how the phase starts codeport mcp over stdio.
type stdioConfig struct {
	binary, isolation string
	// dir holds each child's directories.
	dir  string
	logf io.Writer
}

// stdioChild is a running codeport mcp over stdio.
type stdioChild struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	// msgs are the lines it writes, closed at the end of its stdout.
	msgs chan []byte
	// exited is closed once it has exited; err is then Wait's.
	exited chan struct{}
	err    error
	nextID int
}

func startStdio(c *stdioConfig) (*stdioChild, error) {
	dir, err := os.MkdirTemp(c.dir, "stdio-")
	if err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd := exec.Command(c.binary, "mcp", "--sessions-dir", filepath.Join(dir, "sessions"), "--isolation", c.isolation,
		"--memory-limit", "128MiB", "--max-sessions", "2", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, c.logf
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	ch := &stdioChild{cmd: cmd, stdin: inW, msgs: make(chan []byte, 64), exited: make(chan struct{}), nextID: 100}
	// Both end when the child does: its stdout closes, and it is waited
	// for.
	go func() {
		defer close(ch.msgs)
		defer outR.Close()
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			ch.msgs <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	go func() {
		ch.err = cmd.Wait()
		close(ch.exited)
	}()
	return ch, nil
}

// alive reports whether the child is still running.
func (ch *stdioChild) alive() bool {
	select {
	case <-ch.exited:
		return false
	default:
		return true
	}
}

// rpcReply is a JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// send writes one line.
func (ch *stdioChild) send(line string) error {
	_, err := io.WriteString(ch.stdin, line+"\n")
	return err
}

// reply is the next response the child writes, skipping its
// notifications and requests, within hostileBound.
func (ch *stdioChild) reply() (rpcReply, error) {
	t := time.NewTimer(hostileBound)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return rpcReply{}, fmt.Errorf("no response within %s", hostileBound)
		case b, ok := <-ch.msgs:
			if !ok {
				return rpcReply{}, errors.New("its stdout ended: the process is gone")
			}
			var r rpcReply
			if err := json.Unmarshal(b, &r); err != nil {
				return rpcReply{}, fmt.Errorf("it wrote a line that is not JSON: %.200q", b)
			}
			if r.Method != "" {
				continue
			}
			return r, nil
		}
	}
}

// call sends a request and returns its result.
func (ch *stdioChild) call(method string, params any) (json.RawMessage, error) {
	ch.nextID++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": ch.nextID, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if err := ch.send(string(b)); err != nil {
		return nil, err
	}
	r, err := ch.reply()
	switch {
	case err != nil:
		return nil, err
	case string(r.ID) != fmt.Sprint(ch.nextID):
		return nil, fmt.Errorf("%s: answered with id %s, want %d", method, r.ID, ch.nextID)
	case r.Error != nil:
		return nil, fmt.Errorf("%s: error %d %s", method, r.Error.Code, r.Error.Message)
	}
	return r.Result, nil
}

// tool calls a tool and returns its text and structured content.
func (ch *stdioChild) tool(name string, args map[string]any) (string, map[string]any, error) {
	res, err := ch.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return "", nil, err
	}
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Structured map[string]any `json:"structuredContent"`
		IsError    bool           `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", nil, fmt.Errorf("%s: result %.200q: %w", name, res, err)
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	if r.IsError {
		return "", nil, fmt.Errorf("%s: tool error: %s", name, b.String())
	}
	return b.String(), r.Structured, nil
}

// mcpStdio runs one codeport mcp over stdio for the phase.
func (h *hostile) mcpStdio(ctx context.Context, rng *rand.Rand) {
	ch, err := startStdio(h.stdio)
	if err != nil {
		h.fail("mcp stdio: start: %v", err)
		return
	}
	// However the phase goes, the child is ended: its stdin closed, and
	// killed if it does not exit.
	closed := false
	defer func() {
		if !closed {
			ch.stdin.Close()
		}
		select {
		case <-ch.exited:
		case <-time.After(hostileBound):
			_ = ch.cmd.Process.Kill()
			<-ch.exited
		}
	}()
	fail := func(after string, err error) {
		if !ch.alive() {
			h.note("mcp stdio: process", "ENDED")
			h.fail("mcp stdio: the process ended (%v) after %s, with its stdin open: %v", ch.err, after, err)
			return
		}
		h.fail("mcp stdio: after %s: %v", after, err)
	}
	if _, err := ch.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "soak", "version": "0"}}); err != nil {
		fail("initialize", err)
		return
	}
	if err := ch.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		fail("initialized", err)
		return
	}
	_, sc, err := ch.tool("create_session", nil)
	if err != nil {
		fail("create_session", err)
		return
	}
	sid, _ := sc["session_id"].(string)
	if sid == "" {
		h.fail("mcp stdio: create_session gave no session_id: %v", sc)
		return
	}
	x := rng.IntN(1 << 30)
	if _, _, err := ch.tool("run_python", map[string]any{"code": fmt.Sprintf("x = %d", x), "session_id": sid}); err != nil {
		fail("run_python", err)
		return
	}
	want := fmt.Sprintf("stdout:\n%d\nreturn_code: 0", x)
	for ctx.Err() == nil {
		m := malformedMessages[rng.IntN(len(malformedMessages))]
		what := "mcp stdio: " + m.what
		if err := ch.send(m.body); err != nil {
			fail(m.what, err)
			return
		}
		r, err := ch.reply()
		switch {
		case err != nil:
			h.note(what, "no answer")
			fail(m.what, err)
			return
		case r.Error == nil:
			h.note(what, "accepted")
			h.fail("%s: answered without an error: %s", what, r.Result)
		default:
			h.note(what, fmt.Sprintf("error %d", r.Error.Code))
		}
		got, _, err := ch.tool("run_python", map[string]any{"code": "print(x)", "session_id": sid})
		if err != nil {
			fail(m.what+" and a valid call", err)
			return
		}
		if got != want {
			h.note("mcp stdio: variables kept", "LOST")
			h.fail("mcp stdio: print(x) after %s answered %q, want %q", m.what, got, want)
			return
		}
		h.note("mcp stdio: variables kept", "kept")
	}
	if _, _, err := ch.tool("destroy_session", map[string]any{"session_id": sid}); err != nil {
		fail("destroy_session", err)
	}
	if !ch.alive() {
		h.fail("mcp stdio: the process ended (%v) before its stdin was closed", ch.err)
		return
	}
	closed = true
	ch.stdin.Close()
	select {
	case <-ch.exited:
		if ch.err != nil {
			h.fail("mcp stdio: at the end of its stdin the process exited with %v", ch.err)
		} else {
			h.note("mcp stdio: process", "alive until stdin closed, exit 0")
		}
	case <-time.After(hostileBound):
		h.fail("mcp stdio: the process did not exit within %s of the end of its stdin", hostileBound)
	}
}
