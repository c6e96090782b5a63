package wasm

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/codeport/codeport/port"
)

// chunks records what OnOutput receives.
type chunks struct {
	mu     sync.Mutex
	got    []string // "stdout:..." in order
	out    strings.Builder
	err    strings.Builder
	first  chan struct{}
	closed bool
}

func newChunks() *chunks { return &chunks{first: make(chan struct{})} }

func (c *chunks) add(s port.Stream, b []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, string(s)+":"+string(b))
	if s == port.Stdout {
		c.out.Write(b)
	} else {
		c.err.Write(b)
	}
	if !c.closed {
		c.closed = true
		close(c.first)
	}
}

// streamWait is the timeout of a call that waits for the test to see its
// first output: the longest the adapter admits, far above what a loaded
// machine takes to start the call and stream a line. Only a call whose
// output is not streamed runs into it.
const streamWait = 300 * time.Second

// Output reaches OnOutput while the cell runs: the cell waits for a file
// that the test writes only once it has received the first line, so the
// call can end only if that line arrived before the end.
func TestOutputIsStreamedWhileTheCellRuns(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	c := newChunks()
	ctx := context.Background()
	go func() {
		select {
		case <-c.first:
			_, _ = a.PutFile(ctx, id, "go", strings.NewReader("go"))
		case <-t.Context().Done():
		}
	}()
	res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, OnOutput: c.add, Timeout: streamWait,
		Code: "import os, sys, time\nprint(0, flush=True)\nwhile not os.path.exists('go'):\n    time.sleep(0.01)\nprint('é' * 3, file=sys.stderr)\nprint(1)\n'shown'"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "0\n1\n'shown'\n" || res.ReturnCode != 0 {
		t.Fatalf("result %q rc %d stderr %q", res.Stdout, res.ReturnCode, res.Stderr)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.out.String() != res.Stdout || c.err.String() != res.Stderr {
		t.Fatalf("chunks add up to %q / %q, the result is %q / %q", c.out.String(), c.err.String(), res.Stdout, res.Stderr)
	}
	if !strings.HasPrefix(c.got[0], "stdout:0") {
		t.Fatalf("first chunk %q", c.got[0])
	}
}

// What the capture streams is always a prefix of what the call returns:
// at the output limit (the notice is the rest), with characters cut by a
// write, and with notes appended after the program.
func TestStreamedOutputIsThePrefixOfTheResult(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithOutputLimit(1000) })
	id := newSession(t, a)
	for _, code := range []string{
		"import sys\nfor i in range(500):\n    sys.stdout.write('é')\n    sys.stdout.flush()",
		"import sys\nb = 'é'.encode()\nsys.stdout.buffer.write(b[:1]); sys.stdout.flush()\nsys.stdout.buffer.write(b[1:] + b'\\xff'); sys.stdout.flush()",
		"print('x' * 5000)",
		"import time\nprint('before', flush=True)\nwhile True: pass",
	} {
		c := newChunks()
		res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, OnOutput: c.add, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		if c.out.String() != res.Stdout || c.err.String() != res.Stderr {
			t.Errorf("%q: chunks %q / %q, result %q / %q", firstLineOf(code), c.out.String(), c.err.String(), res.Stdout, res.Stderr)
		}
		for _, g := range c.got {
			b, _ := strings.CutPrefix(g, "stdout:")
			if b == "" {
				continue
			}
			if utf8.RuneStart(b[0]) == false || completeRunes([]byte(b), 0) != len(b) {
				t.Errorf("%q: a chunk split a character: %q", firstLineOf(code), g)
			}
		}
		c.mu.Unlock()
	}
}

// A bash command's stdout is streamed as it is written too (its stderr
// comes at the end).
func TestBashStdoutIsStreamed(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	c := newChunks()
	ctx := context.Background()
	go func() {
		select {
		case <-c.first:
			_, _ = a.PutFile(ctx, id, "go", strings.NewReader("go"))
		case <-t.Context().Done():
		}
	}()
	res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, OnOutput: c.add, Timeout: streamWait,
		Command: "echo 0; until [ -e go ]; do sleep 0.01; done; echo warn >&2; echo 1"})
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if res.Stdout != "0\n1\n" || c.out.String() != res.Stdout || c.err.String() != res.Stderr || res.Stderr != "warn\n" {
		t.Fatalf("streamed %q/%q, result %q/%q", c.out.String(), c.err.String(), res.Stdout, res.Stderr)
	}
}
