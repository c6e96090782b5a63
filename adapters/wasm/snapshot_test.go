package wasm_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

func snapshotPort(t *testing.T, tweak func(wasm.Config) wasm.Config) *port.Port {
	return wasmtest.New(t, tweak, port.WithSnapshotKey(testSnapshotKey))
}

func mustRun(t *testing.T, p *port.Port, id, code, want string) {
	t.Helper()
	res, err := p.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != port.OutcomeCompleted || res.Stdout != want || res.StateLost {
		t.Fatalf("%q: %s stdout %q stderr %q state_lost %v; want %q", code, res.Outcome, res.Stdout, res.Stderr, res.StateLost, want)
	}
}

// moveSession runs code (which must print want) in a new session of a,
// snapshots it, closes a (so that nothing of it is left when b restores),
// and restores the session in b.
func moveSession(ctx context.Context, t *testing.T, a, b *port.Port, code, want string) port.Session {
	t.Helper()
	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, a, s.ID, code, want)
	var buf bytes.Buffer
	if err := a.SnapshotSession(ctx, s.ID, &buf, port.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := b.RestoreSession(ctx, bytes.NewReader(buf.Bytes()), port.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A snapshot made by one adapter restores in another of the same build,
// which booted its own interpreter image (with another str hash secret):
// the snapshot carries the whole memory, so dictionaries and sets built
// before it still find their keys, and new ones agree with them.
func TestSnapshotMovesBetweenAdapters(t *testing.T) {
	ctx := context.Background()
	a, b := snapshotPort(t, nil), snapshotPort(t, nil)
	r := moveSession(ctx, t, a, b, "d = {str(i): i for i in range(50000)}\nseen = set(d)\nprint(len(d))", "50000\n")
	mustRun(t, b, r.ID, "k = ''.join(['4', '2', '1'])\nprint(d[k], k in seen, hash(k) == hash('421'), sum(d[str(i)] for i in range(50000)) == sum(range(50000)))",
		"421 True True True\n")
}

// A session's memory means something only to the build that made it: the
// scientific profile's runtime refuses the default one's snapshot.
func TestSnapshotRefusedByAnotherBuild(t *testing.T) {
	ctx := context.Background()
	def := snapshotPort(t, nil)
	sci := snapshotPort(t, func(c wasm.Config) wasm.Config { return c.WithProfile("scientific") })
	s, err := def.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, def, s.ID, "x = 1\nprint(x)", "1\n")
	var buf bytes.Buffer
	if err := def.SnapshotSession(ctx, s.ID, &buf, port.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = sci.RestoreSession(ctx, bytes.NewReader(buf.Bytes()), port.SnapshotOptions{})
	if !errors.Is(err, port.ErrInvalidSnapshot) || !strings.Contains(err.Error(), "another runtime build") {
		t.Fatalf("restore into another build: %v, want ErrInvalidSnapshot naming the build", err)
	}
}

// Snapshots are off without a key, and a snapshot sealed with one key is
// refused under another.
func TestSnapshotKeys(t *testing.T) {
	ctx := context.Background()
	off := wasmtest.New(t, nil)
	s, err := off.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if off.SnapshotsOffered(ctx) {
		t.Error("snapshots offered without a key")
	}
	if err := off.SnapshotSession(ctx, s.ID, &bytes.Buffer{}, port.SnapshotOptions{}); !errors.Is(err, port.ErrUnsupported) {
		t.Errorf("snapshot without a key: %v, want ErrUnsupported", err)
	}
	short := wasmtest.New(t, nil, port.WithSnapshotKey([]byte("too short")))
	if short.SnapshotsOffered(ctx) {
		t.Error("snapshots offered with a 9-byte key")
	}
	a := snapshotPort(t, nil)
	other := wasmtest.New(t, nil, port.WithSnapshotKey(bytes.Repeat([]byte{7}, 32)))
	s, err = a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.SnapshotSession(ctx, s.ID, &buf, port.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.RestoreSession(ctx, bytes.NewReader(buf.Bytes()), port.SnapshotOptions{}); !errors.Is(err, port.ErrInvalidSnapshot) {
		t.Errorf("restore under another key: %v, want ErrInvalidSnapshot", err)
	}
	if err := a.SnapshotSession(ctx, "no-such-session", &bytes.Buffer{}, port.SnapshotOptions{}); !errors.Is(err, port.ErrSessionNotFound) {
		t.Errorf("snapshot of an unknown session: %v, want ErrSessionNotFound", err)
	}
}

// A session in a call cannot be saved: its memory is changing.
func TestSnapshotOfABusySession(t *testing.T) {
	ctx := context.Background()
	a := snapshotPort(t, nil)
	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	started := make(chan struct{})
	// The call lasts until the snapshot has been tried (it is cancelled
	// then), not for a time a loaded machine may take to get there.
	call, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		_, err := a.Execute(call, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import time\nprint('in', flush=True)\ntime.sleep(1000)",
			OnOutput: func(port.Stream, []byte) {
				select {
				case <-started:
				default:
					close(started)
				}
			}})
		done <- err
	}()
	<-started
	if err := a.SnapshotSession(ctx, s.ID, &bytes.Buffer{}, port.SnapshotOptions{}); !errors.Is(err, port.ErrSessionBusy) {
		t.Errorf("snapshot during a call: %v, want ErrSessionBusy", err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSnapshot: an idle session holding about 50 MB of Python
// objects (a 720,000-entry dict of str to float: the dict, the keys and
// the values come to 53 MB by sys.getsizeof, reported as objects-MB)
// saved and restored:
// the snapshot's time and size (bytes and the ratio to the interpreter's
// non-zero memory), and the time from a restore's start to the restored
// session's first result; each also as the CPU time it used, on every
// core (the process's, and nothing else runs in it meanwhile).
func BenchmarkSnapshot(b *testing.B) {
	ctx := context.Background()
	a := wasmtest.New(b, func(c wasm.Config) wasm.Config { return c.WithWarmPool(0, nil) }, port.WithSnapshotKey(testSnapshotKey))
	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		b.Fatal(err)
	}
	res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution,
		Code: "import sys\nd = {f'key-{i}': i * 0.5 for i in range(720000)}\n" +
			"print(len(d), (sys.getsizeof(d) + sum(sys.getsizeof(k) + sys.getsizeof(v) for k, v in d.items())) // 10**6)"})
	var entries, objectsMB int
	if err != nil || res.ReturnCode != 0 {
		b.Fatalf("setup: %v %+v", err, res)
	}
	if _, err := fmt.Sscan(res.Stdout, &entries, &objectsMB); err != nil || entries != 720000 {
		b.Fatalf("setup printed %q", res.Stdout)
	}
	var snapTimes, restoreTimes []time.Duration
	var snapCPU, restoreCPU time.Duration
	var size int
	for b.Loop() {
		var buf bytes.Buffer
		buf.Grow(96 << 20) // the adapter's time, not the buffer's growth
		t0, c0 := time.Now(), measure.SelfCPU()
		if err := a.SnapshotSession(ctx, s.ID, &buf, port.SnapshotOptions{}); err != nil {
			b.Fatal(err)
		}
		snapTimes = append(snapTimes, time.Since(t0))
		snapCPU += measure.SelfCPU() - c0
		size = buf.Len()
		t0, c0 = time.Now(), measure.SelfCPU()
		r, err := a.RestoreSession(ctx, &buf, port.SnapshotOptions{})
		if err != nil {
			b.Fatal(err)
		}
		res, err := a.Execute(ctx, r.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(d['key-719999'])"})
		if err != nil || res.Stdout != "359999.5\n" {
			b.Fatalf("restored: %v %+v", err, res)
		}
		restoreTimes = append(restoreTimes, time.Since(t0))
		restoreCPU += measure.SelfCPU() - c0
		if err := a.DestroySession(ctx, r.ID); err != nil {
			b.Fatal(err)
		}
	}
	measure.Report(b, "snapshot", snapTimes)
	measure.Report(b, "restore-first-result", restoreTimes)
	// CPU time, all cores, per operation: what a busy machine does not
	// stretch as it does the wall times.
	b.ReportMetric(float64(snapCPU.Microseconds())/1e3/float64(len(snapTimes)), "snapshot-cpu-ms")
	b.ReportMetric(float64(restoreCPU.Microseconds())/1e3/float64(len(restoreTimes)), "restore-cpu-ms")
	b.ReportMetric(float64(size)/(1<<20), "snapshot-MiB")
	b.ReportMetric(float64(objectsMB), "objects-MB")
}

// compact-snapshots decides only how a snapshot's memory is stored: a heap
// that compression halves is stored compressed with it and raw without,
// the compact snapshot is the smaller, and either restores (in an adapter
// set the other way) to the same state, and to a memory whose every byte
// is the snapshot's (a checksum over it, computed by the guest).
func TestCompactSnapshotsOnlyChangeTheStorage(t *testing.T) {
	ctx := context.Background()
	code := "import zlib\nd = {f'key-{i}': i * 0.5 for i in range(150000)}\n" +
		"blob = b''.join(k.encode() for k in d)\nprint(len(d), d['key-149999'], zlib.crc32(blob))"
	sizes := map[bool]int{}
	outputs := map[bool]string{}
	for _, compact := range []bool{false, true} {
		a := snapshotPort(t, func(c wasm.Config) wasm.Config { return c.WithWarmPool(0, nil).WithCompactSnapshots(compact) })
		b := snapshotPort(t, func(c wasm.Config) wasm.Config { return c.WithWarmPool(0, nil).WithCompactSnapshots(!compact) })
		s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
		if err != nil || res.Outcome != port.OutcomeCompleted {
			t.Fatalf("setup: %v %+v", err, res)
		}
		var buf bytes.Buffer
		if err := a.SnapshotSession(ctx, s.ID, &buf, port.SnapshotOptions{}); err != nil {
			t.Fatal(err)
		}
		sizes[compact] = buf.Len()
		r, err := b.RestoreSession(ctx, &buf, port.SnapshotOptions{})
		if err != nil {
			t.Fatalf("compact %v: restore: %v", compact, err)
		}
		mustRun(t, b, r.ID, "print(len(d), d['key-149999'], zlib.crc32(b''.join(k.encode() for k in d)))", res.Stdout)
		outputs[compact] = res.Stdout
	}
	if outputs[false] != outputs[true] {
		t.Fatalf("the two sessions differ: %q and %q", outputs[false], outputs[true])
	}
	t.Logf("snapshot bytes: compact %d, default %d", sizes[true], sizes[false])
	if 4*sizes[true] > 3*sizes[false] {
		t.Fatalf("compact snapshot %d bytes, default %d: compact should be well under three quarters", sizes[true], sizes[false])
	}
}

// A restored session's shutil.disk_usage reports the restoring adapter's
// workspace limit, not the one the snapshot was taken under.
func TestRestoredDiskUsageIsTheRestoringLimit(t *testing.T) {
	ctx := context.Background()
	a := snapshotPort(t, func(c wasm.Config) wasm.Config { return c.WithWorkspaceLimit(1 << 20) })
	b := snapshotPort(t, func(c wasm.Config) wasm.Config { return c.WithWorkspaceLimit(3 << 20) })
	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, a, s.ID, "import shutil\nprint(shutil.disk_usage('.').total)", "1048576\n")
	var buf bytes.Buffer
	if err := a.SnapshotSession(ctx, s.ID, &buf, port.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := b.RestoreSession(ctx, bytes.NewReader(buf.Bytes()), port.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, b, r.ID, "print(shutil.disk_usage('.').total)", "3145728\n")
}

// A snapshot keeps its files' permission bits (within what a guest may
// set), which restore gives them again, in the workspace and in /tmp.
func TestSnapshotKeepsPermissionBits(t *testing.T) {
	ctx := context.Background()
	p := snapshotPort(t, nil)
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	const bits = "import os, stat\nprint(*(oct(stat.S_IMODE(os.stat(f).st_mode)) for f in ('run.sh', 'secret', 'plain', 'd', '/tmp/t')))"
	mustRun(t, p, s.ID, "import os\nfor f in ('run.sh', 'secret', 'plain', '/tmp/t'):\n    open(f, 'w').close()\nos.mkdir('d')\n"+
		"os.chmod('run.sh', 0o755)\nos.chmod('secret', 0o600)\nos.chmod('/tmp/t', 0o640)\n"+bits, "0o755 0o600 0o644 0o755 0o640\n")
	var buf bytes.Buffer
	if err := p.SnapshotSession(ctx, s.ID, &buf, port.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := p.RestoreSession(ctx, bytes.NewReader(buf.Bytes()), port.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, r.ID, bits, "0o755 0o600 0o644 0o755 0o640\n")
}

// A session that drew charts is restored, in another adapter, with its
// figures and fonts usable: matplotlib keeps its fonts open (FT2Font reads
// them through a Python file), and the restored memory's descriptors are
// not the new instance's.
func TestSnapshotOfASessionThatDrewCharts(t *testing.T) {
	ctx := context.Background()
	sci := func(c wasm.Config) wasm.Config { return c.WithProfile("scientific") }
	a, b := snapshotPort(t, sci), snapshotPort(t, sci)
	r := moveSession(ctx, t, a, b, "import io, matplotlib.pyplot as plt\n"+
		"fig, ax = plt.subplots()\nax.plot([1, 3, 2])\nax.set_title('before')\nfig.savefig(io.BytesIO(), format='png')\n"+
		"kept = fig\nprint(len(plt.get_fignums()))", "1\n")
	mustRun(t, b, r.ID, "kept.axes[0].set_title('after, with new text: αβγ')\nb = io.BytesIO()\nkept.savefig(b, format='png')\n"+
		"fig2, ax2 = plt.subplots()\nax2.text(0.5, 0.5, 'a new figure')\nb2 = io.BytesIO()\nfig2.savefig(b2, format='png')\n"+
		"plt.close('all')\nprint(b.getvalue()[:4] == b2.getvalue()[:4] == b'\\x89PNG')", "True\n")
}

// A file the program made unreadable (chmod 000) is kept: its result
// lists a copy of it, a snapshot holds it, and the restored session has
// it with its bits. Root never meets the bits, so the check needs another
// user (the container image runs as one).
func TestSnapshotKeepsAFileTheProgramMadeUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a file whatever its bits; run this test as another user (the Dockerfile's uid 65532) to exercise it")
	}
	ctx := context.Background()
	a := snapshotPort(t, nil)
	s, err := a.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import os\nopen('secret.txt', 'w').write('kept')\nos.chmod('secret.txt', 0)"})
	if err != nil || res.Outcome != port.OutcomeCompleted || len(res.Files) != 1 {
		t.Fatalf("%+v, %v", res, err)
	}
	if rc, _, err := a.GetOutputFile(ctx, s.ID, res.Files[0].FileID); err != nil {
		t.Errorf("the result's copy: %v", err)
	} else {
		rc.Close()
	}
	var buf bytes.Buffer
	if err := a.SnapshotSession(ctx, s.ID, &buf, port.SnapshotOptions{}); err != nil {
		t.Fatalf("SnapshotSession: %v", err)
	}
	r, err := a.RestoreSession(ctx, &buf, port.SnapshotOptions{})
	if err != nil {
		t.Fatalf("RestoreSession: %v", err)
	}
	rc, _, err := a.GetFile(ctx, r.ID, "secret.txt")
	if err != nil {
		t.Fatalf("GetFile in the restored session: %v", err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "kept" {
		t.Errorf("restored content %q", b)
	}
	res, err = a.Execute(ctx, r.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import os, stat\nprint(oct(stat.S_IMODE(os.stat('secret.txt').st_mode)))"})
	if err != nil || res.Stdout != "0o0\n" {
		t.Errorf("the restored file's bits: %+v, %v", res, err)
	}
}
