package subprocess_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// A caller that gives up on its own call (a client that hung up) costs
// that call, not the worker: with sessions sharing a worker, a
// DestroySession or CreateSession whose context is already cancelled
// must not take the other sessions of the worker with it.
func TestCancelledCallLeavesASharedWorkerAlone(t *testing.T) {
	if workerBin == "" {
		t.Fatal("no worker binary: see TestMain's output")
	}
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(1, 1).WithSessionsPerWorker(3).WithRecycleAfter(10)
	})
	keep := newSession(t, a)
	run(t, a, keep, "y = 7")
	pid := subprocess.SessionPID(a, keep)
	gone, cancel := context.WithCancel(context.Background())
	cancel()

	kept := func(call string) {
		t.Helper()
		if got := subprocess.SessionPID(a, keep); got != pid {
			t.Fatalf("after %s, the kept session's worker %d is now %d", call, pid, got)
		}
	}
	victim := newSession(t, a)
	if err := a.DestroySession(gone, victim); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("DestroySession with a cancelled context: %v", err)
	}
	kept("a DestroySession with a cancelled context")
	if _, err := a.CreateSession(gone, port.CreateSessionRequest{}); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateSession with a cancelled context: %v, want context.Canceled", err)
	}
	kept("a CreateSession with a cancelled context")
	// The destroyed session's slot is free again, and the refused one
	// took none: the worker takes two more sessions.
	newSession(t, a)
	newSession(t, a)
	kept("filling the worker")
	if got := run(t, a, keep, "print(y)"); got.Stdout != "7\n" {
		t.Errorf("the kept session after the cancelled calls: %+v", got)
	}
}

// A file call whose caller has gone fails with the caller's reason, not
// as a failure of the runtime (which the port logs as a backend fault),
// and the session is kept.
func TestCancelledFileCallsSayCancelled(t *testing.T) {
	if workerBin == "" {
		t.Fatal("no worker binary: see TestMain's output")
	}
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(1, 2) })
	id := newSession(t, a)
	run(t, a, id, "open('kept.txt', 'w').write('x')")
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	check := func(call string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) || errors.Is(err, port.ErrRuntimeFailure) {
			t.Errorf("%s with a cancelled context: %v, want context.Canceled", call, err)
		}
	}
	_, err := a.ListFiles(gone, id, "")
	check("ListFiles", err)
	rc, _, err := a.GetFile(gone, id, "kept.txt")
	if rc != nil {
		rc.Close()
	}
	check("GetFile", err)
	_, err = a.PutFile(gone, id, "new.txt", strings.NewReader("y"))
	check("PutFile", err)
	if got := run(t, a, id, "print(open('kept.txt').read())"); got.Stdout != "x\n" {
		t.Errorf("the session after the cancelled calls: %+v", got)
	}
}

// A CreateSession given up while the worker it started is still
// starting says so, and the worker is not left behind: giving up is the
// caller's doing, not a failure of the runtime to start.
func TestCreateGivenUpDuringAWorkersStart(t *testing.T) {
	// A worker that never answers the handshake: the start lasts until
	// the caller gives up.
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithWorkers(0, 1).WithWorkerCommand("/bin/sleep", "3600").WithStartTimeout(time.Hour)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := a.CreateSession(ctx, port.CreateSessionRequest{})
		errc <- err
	}()
	testwait.For(t, "the worker process to start", func() bool { kids, _ := children(t); return len(kids) > 0 })
	cancel()
	err := testwait.Receive(t, errc, "CreateSession")
	if !errors.Is(err, context.Canceled) || errors.Is(err, port.ErrRuntimeFailure) {
		t.Errorf("CreateSession given up during the start: %v, want context.Canceled", err)
	}
	testwait.For(t, "the worker process to be reaped", func() bool { kids, _ := children(t); return len(kids) == 0 })
}

// A configuration no worker can start under (here a worker that exits at
// once; in practice a worker-memory-limit below what a worker needs) is
// reported by WaitReady, which would otherwise wait for ever for the
// minimum of workers.
func TestWaitReadyReportsWorkersThatCannotStart(t *testing.T) {
	a, err := subprocess.New(subprocess.NewConfig().WithWorkerCommand("/bin/false").WithWorkers(1, 1).WithSessionsDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := testwait.Context(t)
	defer cancel()
	err = a.WaitReady(ctx)
	if !errors.Is(err, port.ErrRuntimeFailure) || ctx.Err() != nil {
		t.Fatalf("WaitReady with workers that cannot start: %v, want ErrRuntimeFailure", err)
	}
}

// A session is not idle while a file operation runs in it: an upload
// slower than the idle timeout keeps its session, as a call does.
func TestAnUploadKeepsItsSessionFromIdling(t *testing.T) {
	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config { return c.WithWorkers(1, 2) })
	ctx := context.Background()
	short := port.CreateSessionRequest{IdleTimeout: 300 * time.Millisecond}
	up, err := a.CreateSession(ctx, short)
	if err != nil {
		t.Fatal(err)
	}
	body := testwait.NewBody(strings.NewReader("uploaded"))
	t.Cleanup(body.Release)
	done := make(chan error, 1)
	go func() {
		_, err := a.PutFile(ctx, up.ID, "slow.txt", body)
		done <- err
	}()
	<-body.Started()
	// A session made after the upload started, and idle since: once it
	// is reclaimed, the uploading one has been idle as long.
	witness, err := a.CreateSession(ctx, short)
	if err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the idle witness session to be reclaimed", func() bool {
		return subprocess.SessionPID(a, witness.ID) == 0
	})
	if subprocess.SessionPID(a, up.ID) == 0 {
		t.Fatal("the session of an upload under way was reclaimed")
	}
	body.Release()
	if err := <-done; err != nil {
		t.Fatalf("PutFile: %v", err)
	}
	rc, _, err := a.GetFile(ctx, up.ID, "slow.txt")
	if err != nil {
		t.Fatalf("GetFile after the upload: %v", err)
	}
	defer rc.Close()
	if b, _ := io.ReadAll(rc); string(b) != "uploaded" {
		t.Errorf("the upload's content: %q", b)
	}
}
