package wasm_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/port"
)

// A program that spins inside the interpreter's restored step (its
// sys.stdout's flush, which the step calls, waits while the host's request
// is the restore's) is stopped at the step's deadline, seconds, not the
// 30 s it used to get per restore, replayable at will. The program spins
// for 10 s of its own clock: under the old deadline it finished, and the
// restore succeeded with spun == [1]; now the deadline ends it first and
// the restore fails, whatever the machine's load, since both clocks run
// from the step's start. (If the driver stops calling the program's flush
// in the step, the restore succeeds with spun == [], which is as good.)
// Either way the adapter's slot is free again.
func TestRestoredStepIsBounded(t *testing.T) {
	ctx := context.Background()
	p := snapshotPort(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(1) })
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, s.ID, `import sys, time
class Spin:
    def __init__(self, real):
        self.real = real
    def write(self, s):
        return self.real.write(s)
    def flush(self):
        try:
            kind = sys._getframe(2).f_locals.get("kind")
        except Exception:
            kind = None
        if kind == 82:  # the host's restored request
            end = time.monotonic() + 10
            while time.monotonic() < end:
                pass
            spun.append(1)
        self.real.flush()
spun = []
sys.stdout = Spin(sys.stdout)
print("armed")`, "armed\n")
	var snap bytes.Buffer
	if err := p.SnapshotSession(ctx, s.ID, &snap, port.SnapshotOptions{Release: true}); err != nil {
		t.Fatal(err)
	}
	r, err := p.RestoreSession(ctx, bytes.NewReader(snap.Bytes()), port.SnapshotOptions{})
	switch {
	case errors.Is(err, port.ErrRuntimeFailure):
	case err != nil:
		t.Fatalf("restore: %v; want the restored step stopped (ErrRuntimeFailure)", err)
	default:
		res, err := p.Execute(ctx, r.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "sys.stdout = sys.__stdout__\nprint(len(spun))"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Stdout != "0\n" {
			t.Fatalf("the restored step let the program spin for 10 s (spun %q): its deadline is too long", res.Stdout)
		}
		if err := p.DestroySession(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	// The failed restore gave its slot back: a session can be made.
	s2, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatalf("after the restore, the adapter has no room: %v", err)
	}
	_ = p.DestroySession(ctx, s2.ID)
}
