package wasm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/testkit/hostileprog"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/port"
)

// The bash tool ran in the gateway's own process: a script that recursed
// until Go's 1 GB stack limit ended the process ("fatal error: stack
// overflow"), and with it every session. It runs in a guest now, within
// the session's memory: the call ends with a typed result, the session's
// Python state is kept, and the same adapter goes on serving.
func TestHostileBashRecursionDoesNotEndTheGateway(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	run(t, a, id, "kept = 42")
	const timeout = 3 * time.Minute // the race detector slows the interpreter several times
	for _, cmd := range []string{
		`f() { eval 'eval "eval \"eval \\\"eval f\\\"\""'; }; f`,
		`f() { f; }; f`,
	} {
		start := time.Now()
		res := bash(t, a, id, cmd, timeout)
		took := time.Since(start)
		switch {
		case res.Outcome == port.OutcomeProgramError && res.ReturnCode == 1 && strings.Contains(res.Stderr, "maximum function nesting level exceeded"):
		case res.Outcome == port.OutcomeProgramError && res.StateLost && strings.Contains(res.Stderr, "nested too deep"):
		case res.Outcome == port.OutcomeMemoryLimit && res.StateLost && !strings.Contains(res.Stderr, "goroutine"):
		default:
			t.Errorf("%s: outcome %s rc %d stderr %.300q; want program_error (nesting) or memory_limit", cmd, res.Outcome, res.ReturnCode, res.Stderr)
		}
		if took > timeout {
			t.Errorf("%s: took %v, over its %v timeout", cmd, took, timeout)
		}
		t.Logf("%s: %s after %v", cmd, res.Outcome, took)
	}
	// The session, its Python state, and other sessions all go on.
	if res := bash(t, a, id, "echo still here", 0); res.Stdout != "still here\n" {
		t.Fatalf("same session after: %+v", res)
	}
	expect(t, run(t, a, id, "print(kept)"), "42\n", 0, port.OutcomeCompleted)
	other := newSession(t, a)
	if res := bash(t, a, other, "f() { echo in f; }; f", 0); res.Stdout != "in f\n" || res.Outcome != port.OutcomeCompleted {
		t.Fatalf("other session: %+v", res)
	}
	expect(t, run(t, a, other, "print(6 * 7)"), "42\n", 0, port.OutcomeCompleted)
}

// buildDeepTree makes, from Python in the session, a chain of directories
// "d/d/..." as deep as the host's 4 KB paths allow (about 2000), with a file
// every 100 levels, and halfway down a directory of n files, whose path it
// returns. That takes minutes on a loaded machine: a has a maximum timeout
// far above it (see deepTreeAdapter).
func buildDeepTree(t *testing.T, a *testAdapter, id string, n int) string {
	t.Helper()
	code := fmt.Sprintf(`import os
depth = 0
try:
    while True:
        os.mkdir("d/" * (depth + 1))
        depth += 1
except OSError:
    pass
for i in range(0, depth, 100):
    open("d/" * i + "x.txt", "w").write("x\n")
wide = "d/" * (depth // 2) + "w"
os.mkdir(wide)
for i in range(%d):
    open(wide + "/" + str(i), "w").close()
print(depth, wide)`, n)
	res := runTimeout(t, a, id, code, deepTreeTimeout)
	var depth int
	var wide string
	if _, err := fmt.Sscan(res.Stdout, &depth, &wide); err != nil || res.Outcome != port.OutcomeCompleted || depth < 1500 {
		t.Fatalf("building the tree: %+v", res)
	}
	return wide
}

// deepTreeTimeout is the timeout of the calls that build deep trees or
// are to be stopped in the middle of a walk of one: so far above what
// either takes on a loaded machine (minutes) that the call is not ended
// by its own deadline (the walks are stopped by DestroySession and Close
// long before it).
const deepTreeTimeout = time.Hour

// deepTreeAdapter is an adapter that admits calls of deepTreeTimeout.
func deepTreeAdapter(t *testing.T) *testAdapter {
	return newTestAdapter(t, func(c Config) Config { return c.WithTimeouts(c.settings.Timeout, deepTreeTimeout) })
}

// Bash file commands stop at the call's deadline however much work is
// left: on deep trees they used to run for many minutes past it (an rm -rf
// with a 2 s timeout returned after 42 s; ls -R on a 2015-deep tree ran
// for over 10 minutes), and DestroySession and Close waited for them.
func TestHostileBashDeepTreesObserveTheDeadline(t *testing.T) {
	a := deepTreeAdapter(t)
	id := newSession(t, a)
	wide := buildDeepTree(t, a, id, 3000)
	// The session's first bash call starts its shell, which takes
	// seconds on a loaded machine: not part of what is timed below.
	if res := bash(t, a, id, "true", 0); res.ReturnCode != 0 {
		t.Fatalf("true: %+v", res)
	}
	const timeout = 2 * time.Second
	for _, cmd := range []string{
		"ls -R | wc -l; find . -type d | wc -l",
		"ls -laR d > /dev/null",
		"grep -r nothing .",
		"cp -r d copy",
		"chmod -R 755 d",
		"wc -l " + wide + "/* | tail -1",
		"cat " + wide + "/* | sort | uniq -c",
		"for f in " + wide + "/*; do [ -s $f ] && echo $f; done | wc -l",
		"rm -rf d",
	} {
		start := time.Now()
		res := bash(t, a, id, cmd, timeout)
		took := time.Since(start)
		if res.Outcome != port.OutcomeTimedOut || res.ReturnCode != port.ReturnCodeTimedOut {
			t.Errorf("%.50s: outcome %s rc %d stderr %.200q; want timed_out", cmd, res.Outcome, res.ReturnCode, res.Stderr)
		}
		// Each walk has minutes of work on this tree (ls -R alone over
		// three); a loaded machine stretches the stop by seconds.
		if took > timeout+stuckAfter {
			t.Errorf("%.50s: took %v with a %v timeout", cmd, took, timeout)
		}
	}

	// DestroySession stops a call in progress and returns promptly. The
	// call walks without end: were it waited for, DestroySession would
	// return only at its deadline, an hour away; a loaded machine takes
	// seconds to stop the shell's guest (it polls at every step, or is
	// ended 2 s after being told).
	// A walk (which prints a line before it walks) under way, its result
	// to come on the channel.
	walk := func(id, command string) <-chan port.Result {
		return testwait.StartCall(context.Background(), t, a, id,
			port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: command, Timeout: deepTreeTimeout})
	}
	done := walk(id, "echo walking; while :; do ls -R | wc -l; done")
	start := time.Now()
	if err := a.DestroySession(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > stuckAfter {
		t.Errorf("DestroySession took %v during a deep walk", took)
	}
	if res := testwait.Receive(t, done, "the walk in the destroyed session"); res.Outcome != port.OutcomeCancelled {
		t.Errorf("the walk in the destroyed session: %s", res.Outcome)
	}

	// Close stops the calls of every session and returns promptly.
	id = newSession(t, a)
	wide = buildDeepTree(t, a, id, 1000)
	done = walk(id, "echo walking; while :; do cat "+wide+"/* | wc -l; ls -R | wc -l; done")
	start = time.Now()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > stuckAfter {
		t.Errorf("Close took %v during a deep walk", took)
	}
	testwait.Receive(t, done, "the walk after Close")
}

// Programs that run their own code inside the host's steps around a
// session snapshot (see hostileprog). spinInTrace writes spinning.txt in
// the workspace before it spins, for a test to wait on.
var (
	spinInFlush = hostileprog.SpinInFlush
	spinInTrace = hostileprog.SpinInTrace("/workspace/spinning.txt")
)

// A snapshot used to run the program's sys.stdout.flush() in its 'Z'
// step, under a 30 s deadline; a flush that spun there had its
// interpreter killed, and the snapshot, without the memory, was reported
// as a success: the live session answered NameError with state_lost
// false, and so did the restored copy. Now the driver does not flush in a
// host step, so such a session is saved whole; and a program whose code
// runs in the step all the same (a trace function) fails the snapshot,
// within the step's short deadline, with ErrRuntimeFailure, while the
// session, whose interpreter was stopped, says state_lost at its next
// call, as does a copy restored from a snapshot taken after the loss.
func TestHostileSnapshotStepNeverLosesStateSilently(t *testing.T) {
	ctx := context.Background()
	a := newTestAdapter(t, noPool)
	id := newSession(t, a)
	expect(t, run(t, a, id, "x = 41\n"+spinInFlush+"print('armed')"), "armed\n", 0, port.OutcomeCompleted)
	var buf bytes.Buffer
	if err := a.d.SnapshotSession(ctx, id, &buf); err != nil {
		t.Fatalf("snapshot of a session whose flush spins in host steps: %v", err)
	}
	res := run(t, a, id, "print(x + 1)")
	expect(t, res, "42\n", 0, port.OutcomeCompleted)
	if res.StateLost {
		t.Error("the live session lost its state to a snapshot")
	}
	r, err := a.d.RestoreSession(ctx, bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("restoring it: %v", err)
	}
	if res := run(t, a, r.ID, "print(x + 1)"); res.Stdout != "42\n" || res.StateLost {
		t.Errorf("the restored copy: %+v, want its x", res)
	}

	// A trace function runs in the step whatever the driver does.
	id = newSession(t, a)
	expect(t, run(t, a, id, "x = 41\n"+spinInTrace+"print('armed')"), "armed\n", 0, port.OutcomeCompleted)
	err = a.d.SnapshotSession(ctx, id, io.Discard)
	if !errors.Is(err, port.ErrRuntimeFailure) {
		t.Fatalf("snapshot of a session whose trace function spins in the step: %v, want ErrRuntimeFailure", err)
	}
	t.Logf("the snapshot's error: %v", err)
	// Taken before the session's next call, a snapshot carries the loss.
	buf.Reset()
	if err := a.d.SnapshotSession(ctx, id, &buf); err != nil {
		t.Fatalf("snapshot of the session that lost its interpreter: %v", err)
	}
	res = run(t, a, id, "print('x' in globals())")
	if res.Stdout != "False\n" || !res.StateLost || !strings.Contains(res.Stderr, "[codeport:") {
		t.Errorf("the live session's next call: %+v, want state_lost and a note", res)
	}
	if res := run(t, a, id, "print('again')"); res.StateLost {
		t.Errorf("the loss reported twice: %+v", res)
	}
	r, err = a.d.RestoreSession(ctx, bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("restoring the snapshot taken after the loss: %v", err)
	}
	if res := run(t, a, r.ID, "print('x' in globals())"); res.Stdout != "False\n" || !res.StateLost {
		t.Errorf("the copy restored after the loss: %+v, want state_lost", res)
	}
}
