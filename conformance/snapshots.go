package conformance

import (
	"bytes"
	"errors"
	"strings"

	"github.com/codeport/codeport/port"
)

// snapshotChecks run on a port that offers session snapshots
// (port.SessionSnapshots with SnapshotsOffered); elsewhere they skip.
func snapshotChecks() []Check {
	return []Check{
		{"snapshot/round-trip", check(snapshotRoundTrip)},
		{"snapshot/open-files", check(snapshotOpenFiles)},
		{"snapshot/refused", check(snapshotRefused)},
	}
}

// snapshots returns the port's snapshot operations, or skips the check.
func (e *env) snapshots() port.SessionSnapshots {
	e.requireTool(port.ToolCodeExecution)
	s, ok := e.p.(port.SessionSnapshots)
	if !ok || !s.SnapshotsOffered(e.ctx) {
		e.t.Skipf("the backend offers no session snapshots")
	}
	return s
}

// snapshot saves a session, failing the check if it cannot.
func (e *env) snapshot(s port.SessionSnapshots, id string, opt port.SnapshotOptions) []byte {
	var buf bytes.Buffer
	if err := s.SnapshotSession(e.ctx, id, &buf, opt); err != nil {
		e.t.Fatalf("SnapshotSession: %v", err)
	}
	return buf.Bytes()
}

// restore makes a session from a snapshot, destroyed when the check ends.
func (e *env) restore(s port.SessionSnapshots, b []byte, opt port.SnapshotOptions) string {
	sess, err := s.RestoreSession(e.ctx, bytes.NewReader(b), opt)
	if err != nil {
		e.t.Fatalf("RestoreSession: %v", err)
	}
	e.destroyLater(sess.ID)
	return sess.ID
}

// snapshotState is a session's state that a pickle of its variables would
// lose: a generator part-way through, a closure, a class defined in the
// session and its instance, a module imported, the working directory, and
// files in the workspace and in /tmp.
const snapshotState = "import json, os\n" +
	"counter = 41\n" +
	"def gen():\n    for i in range(10):\n        yield i * i\n" +
	"g = gen()\n" +
	"first = [next(g), next(g), next(g)]\n" +
	"def make_adder(n):\n    return lambda x: x + n\n" +
	"add7 = make_adder(7)\n" +
	"class Point:\n    def __init__(self, x, y):\n        self.x, self.y = x, y\n    def norm2(self):\n        return self.x * self.x + self.y * self.y\n" +
	"p = Point(3, 4)\n" +
	"big = list(range(200000))\n" +
	"os.makedirs('snap/dir', exist_ok=True)\n" +
	"open('snap/dir/data.txt', 'w').write('workspace file')\n" +
	"open('/tmp/snap-tmp.txt', 'w').write('tmp file')\n" +
	"os.chdir('snap')\n" +
	"print('ready')"

const snapshotProbe = "print(counter + 1, next(g), add7(35), p.norm2(), type(p).__name__, json.dumps({'a': 1}), len(big), big[-1])\n" +
	"print(os.getcwd(), open('dir/data.txt').read(), open('/tmp/snap-tmp.txt').read())"

const snapshotProbeOut = "42 9 42 25 Point {\"a\": 1} 200000 199999\n" +
	"/workspace/snap workspace file tmp file\n"

// snapshotRoundTrip: a restored session is the session it was saved from,
// under a new id, and the original goes on independently.
func snapshotRoundTrip(e *env) {
	s := e.snapshots()
	id := e.session()
	e.expectStdout(id, snapshotState, "ready\n")
	b := e.snapshot(s, id, port.SnapshotOptions{Tenant: "tenant-a"})
	restored := e.restore(s, b, port.SnapshotOptions{Tenant: "tenant-a"})
	if restored == id {
		e.t.Fatalf("the restored session has the id of the one it was saved from")
	}
	res := e.code(restored, snapshotProbe)
	if res.ReturnCode != 0 || !sameOutput(res.Stdout, snapshotProbeOut) || res.StateLost {
		e.t.Errorf("restored session: stdout %q, stderr %q, state_lost %v; want %q", clip(res.Stdout), clip(res.Stderr), res.StateLost, snapshotProbeOut)
	}
	// The two sessions are independent from here on.
	e.expectStdout(restored, "counter = 1000\nprint(next(g))", "16\n")
	e.expectStdout(id, "print(counter, next(g))", "41 9\n")
	// A restore is repeatable: the same snapshot gives the same state again.
	again := e.restore(s, b, port.SnapshotOptions{Tenant: "tenant-a"})
	e.expectStdout(again, "print(counter, next(g))", "41 9\n")
}

// snapshotOpenFiles: what a program sees of the files it held open when
// the snapshot was taken. Their objects are closed (ValueError on use), a
// raw descriptor number fails with OSError, and neither reaches a file
// opened after the restore; what was written and flushed is in the file.
func snapshotOpenFiles(e *env) {
	s := e.snapshots()
	id := e.session()
	e.expectStdout(id, "import os\n"+
		"f = open('held.txt', 'w')\nf.write('before\\n')\nf.flush()\n"+
		"fd = os.open('raw.txt', os.O_WRONLY | os.O_CREAT)\nos.write(fd, b'raw\\n')\n"+
		"print('open')", "open\n")
	b := e.snapshot(s, id, port.SnapshotOptions{})
	restored := e.restore(s, b, port.SnapshotOptions{})
	e.expectStdout(restored, "new = open('new.txt', 'w')\n"+
		"try:\n    f.write('after\\n')\n    print('file object: wrote')\nexcept ValueError as err:\n    print('file object: ValueError')\n"+
		"try:\n    os.write(fd, b'after\\n')\n    print('descriptor: wrote')\nexcept OSError as err:\n    print('descriptor: OSError')\n"+
		"new.write('new\\n')\nnew.close()\n"+
		"print(repr(open('held.txt').read()), repr(open('raw.txt').read()), repr(open('new.txt').read()))",
		"file object: ValueError\ndescriptor: OSError\n'before\\n' 'raw\\n' 'new\\n'\n")
}

// snapshotRefused: a snapshot that was altered, truncated, made for
// another tenant, or is not a snapshot at all, is refused with
// ErrInvalidSnapshot and makes no session.
func snapshotRefused(e *env) {
	s := e.snapshots()
	id := e.session()
	e.expectStdout(id, "secret = 'kept'\nprint('ok')", "ok\n")
	b := e.snapshot(s, id, port.SnapshotOptions{Tenant: "tenant-a"})
	flipped := bytes.Clone(b)
	flipped[len(flipped)/2] ^= 0x01
	cases := []struct {
		name   string
		b      []byte
		tenant string
	}{
		{"another tenant's", b, "tenant-b"},
		{"no tenant's", b, ""},
		{"altered", flipped, "tenant-a"},
		{"truncated", b[:len(b)-100], "tenant-a"},
		{"cut to its header", b[:64], "tenant-a"},
		{"empty", nil, "tenant-a"},
		{"not a snapshot", []byte(strings.Repeat("codeport-snapshot-v1\n", 10)), "tenant-a"},
	}
	for _, c := range cases {
		sess, err := s.RestoreSession(e.ctx, bytes.NewReader(c.b), port.SnapshotOptions{Tenant: c.tenant})
		if err == nil {
			e.destroyLater(sess.ID)
			e.t.Errorf("%s snapshot: restored as session %s", c.name, sess.ID)
			continue
		}
		if !errors.Is(err, port.ErrInvalidSnapshot) {
			e.t.Errorf("%s snapshot: error %v, want ErrInvalidSnapshot", c.name, err)
		}
	}
	// The snapshot itself is still good.
	restored := e.restore(s, b, port.SnapshotOptions{Tenant: "tenant-a"})
	e.expectStdout(restored, "print(secret)", "kept\n")
}
