package wasm

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/internal/workspace/claimtest"
	"github.com/codeport/codeport/port"
)

// hostEntries counts the files and directories a session holds on the
// host: everything below its workspace and its tmp directory.
func hostEntries(t *testing.T, a *testAdapter) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(a.d.sessionsDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(a.d.sessionsDir, p)
		// <sandbox>/workspace/... and <sandbox>/tmp/...: below the roots.
		if parts := strings.Split(rel, string(filepath.Separator)); len(parts) > 2 {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue #13: 51,000 empty files fitted in a 5 MiB workspace, and 20,000
// directories took 79 MB of the host's disk. Files and directories are
// now limited in number, directories charged bytes, and a program that
// meets either limit sees EIO (WASI has no ENOSPC), told why on stderr.
func TestWorkspaceEntriesAreLimited(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config {
		return c.WithWorkspaceLimit(200<<10).WithWorkspaceEntries(40).WithWarmPool(0, nil)
	})
	ctx := context.Background()
	id := newSession(t, a)

	// Empty files: the entry limit.
	res := run(t, a, id, `import errno, os
n = 0
try:
    for i in range(51000):
        open(f'f{i}', 'w').close()
        n += 1
except OSError as e:
    print(n, errno.errorcode[e.errno], e)`)
	expect(t, res, "40 EIO [Errno 29] I/O error: 'f40'\n", 0, port.OutcomeCompleted)
	if !strings.Contains(res.Stderr, "workspace limit of 40 files and directories") || !strings.Contains(res.Stderr, "EIO") {
		t.Errorf("entry refusal not explained: %q", res.Stderr)
	}
	if n := hostEntries(t, a); n != 40 {
		t.Errorf("%d entries on the host, want 40", n)
	}

	// Full, through the port: a new file is 413 with a clear message, an
	// existing one can still be replaced; the editor cannot create.
	_, err := a.PutFile(ctx, id, "new.txt", strings.NewReader("x"))
	if !errors.Is(err, port.ErrFileTooLarge) || port.ErrorCode(err) != "file_too_large" ||
		!strings.Contains(err.Error(), "limit of 40 files and directories") {
		t.Errorf("PutFile of a new file when full: %v", err)
	}
	if _, err := a.PutFile(ctx, id, "f1", strings.NewReader("replaced")); err != nil {
		t.Errorf("PutFile over an existing file when full: %v", err)
	}
	text := "print(1)\n"
	eres, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution,
		Editor: &port.EditorInput{Command: port.EditorCreate, Path: "new.py", FileText: &text}})
	if err != nil || eres.ReturnCode == 0 {
		t.Errorf("editor create when full: %v, %+v", err, eres)
	}
	if _, _, err := a.GetFile(ctx, id, "new.py"); !errors.Is(err, port.ErrFileNotFound) {
		t.Errorf("the editor created a file over the limit: %v", err)
	}
	if n := hostEntries(t, a); n != 40 {
		t.Errorf("%d entries on the host, want 40", n)
	}

	// Directories: the entry limit again, once the files are gone...
	res = run(t, a, id, `import errno, os
for f in os.listdir('.'):
    os.remove(f)
n = 0
try:
    for i in range(20000):
        os.mkdir(f'd{i}')
        n += 1
except OSError as e:
    print(n, errno.errorcode[e.errno], e)
os.makedirs('d0', exist_ok=True)  # an existing directory is no new entry
print('exist_ok')`)
	expect(t, res, "40 EIO [Errno 29] I/O error: 'd40'\nexist_ok\n", 0, port.OutcomeCompleted)

	// ...and the byte limit, since each directory counts 4 KiB: 100 KiB
	// of data leaves room for 25 directories of the 200 KiB.
	res = run(t, a, id, `import errno, os
for i in range(40):
    os.rmdir(f'd{i}')
open('data', 'wb').write(b'x' * (100 << 10))
n = 0
try:
    for i in range(20000):
        os.mkdir(f'd{i}')
        n += 1
except OSError as e:
    print(n, errno.errorcode[e.errno], e)`)
	expect(t, res, "25 EIO [Errno 29] I/O error: 'd25'\n", 0, port.OutcomeCompleted)
	if !strings.Contains(res.Stderr, "workspace limit of 200KiB") {
		t.Errorf("byte refusal of a directory not explained: %q", res.Stderr)
	}
	var uploadErr error
	if _, uploadErr = a.PutFile(ctx, id, "sub/new.txt", strings.NewReader("x")); !errors.Is(uploadErr, port.ErrFileTooLarge) {
		t.Errorf("PutFile needing a directory when full: %v", uploadErr)
	}

	// The limits are described.
	caps, err := a.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if caps.Limits.WorkspaceEntries != 40 || caps.Limits.WorkspaceBytes != 200<<10 {
		t.Errorf("limits %+v", caps.Limits)
	}
	if lim := strings.Join(caps.Limitations, "\n"); !strings.Contains(lim, "40 files and directories") || !strings.Contains(lim, "EIO") {
		t.Errorf("limitations do not state the workspace limits:\n%s", lim)
	}
}

// Issue #13: the README promised ENOSPC where Python saw EIO. What Python
// sees when the byte limit refuses a write, stated and checked.
func TestQuotaRefusedWriteIsEIOAndExplained(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWorkspaceLimit(64<<10).WithWarmPool(0, nil) })
	id := newSession(t, a)
	res := run(t, a, id, `import errno
try:
    with open('big.bin', 'wb') as f:
        f.write(b'x' * (1 << 20))
except OSError as e:
    print(errno.errorcode[e.errno], e.errno == errno.EIO, e.strerror)
import os
print(os.path.getsize('big.bin'))`)
	expect(t, res, "EIO True I/O error\n65536\n", 0, port.OutcomeCompleted)
	want := "[codeport: a write was refused because the session's files reached the workspace limit of 64KiB (/tmp included); the program saw EIO, as WASI has no ENOSPC]"
	if !strings.Contains(res.Stderr, want) {
		t.Errorf("stderr %q lacks %q", res.Stderr, want)
	}
}

// Issue #13: a name component over 255 bytes was a 500 from PutFile,
// GetFile and ListFiles. It is an invalid request (422) everywhere.
func TestLongNameComponentIsInvalidRequest(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWarmPool(0, nil) })
	ctx := context.Background()
	id := newSession(t, a)
	long := strings.Repeat("n", 300)
	for _, p := range []string{long, "dir/" + long, long + "/f.txt", "/workspace/" + long} {
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, port.ErrInvalidRequest) || port.ErrorCode(err) != "invalid_request" ||
				!strings.Contains(err.Error(), "file name component over 255 bytes") {
				t.Errorf("%s(%d-byte path): %v", op, len(p), err)
			}
		}
		_, err := a.PutFile(ctx, id, p, strings.NewReader("x"))
		check("PutFile", err)
		_, _, err = a.GetFile(ctx, id, p)
		check("GetFile", err)
		_, err = a.ListFiles(ctx, id, p)
		check("ListFiles", err)
		for _, in := range []port.EditorInput{
			{Command: port.EditorView, Path: p},
			{Command: port.EditorCreate, Path: p, FileText: &long},
		} {
			res, err := a.Execute(ctx, id, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &in})
			if err != nil || res.ReturnCode != 1 || res.Outcome != port.OutcomeProgramError {
				t.Errorf("editor %s (%d-byte path): %v %+v", in.Command, len(p), err, res)
			}
		}
	}
	// The guest gets the host's answer, and the longest name works.
	res := run(t, a, id, `import errno
try:
    open('n' * 300, 'w')
except OSError as e:
    print(errno.errorcode[e.errno])
_ = open('k' * 255, 'w').write('fits')`)
	expect(t, res, "ENAMETOOLONG\n", 0, port.OutcomeCompleted)
	if _, _, err := a.GetFile(ctx, id, strings.Repeat("k", 255)); err != nil {
		t.Errorf("GetFile of a 255-byte name: %v", err)
	}
}

// Issue #13: kill -9 of the server left its session directories, with
// users' files, for good. A server starting over the same sessions
// directory removes them, and only them: not another live server's, not
// what codeport did not make.
func TestSessionsDirOfKilledServerIsSwept(t *testing.T) {
	parent := t.TempDir()
	live, err := workspace.ClaimDir(parent) // another server, alive
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	dead := claimtest.Dead(t, parent, "session/workspace/user-data.csv") // a killed server's
	if _, err := os.Stat(filepath.Join(dead, workspace.ClaimSessions, "session", "workspace", "user-data.csv")); err != nil {
		t.Fatalf("the killed server left nothing: %v", err)
	}
	foreign := filepath.Join(parent, "codeport-7-0123456789abcdef") // the name, but no lock file
	if err := os.MkdirAll(filepath.Join(foreign, "data"), 0o700); err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(parent, "mine.txt")
	if err := os.WriteFile(mine, []byte("not codeport's"), 0o600); err != nil {
		t.Fatal(err)
	}

	a, err := open(NewConfig().WithSessionsDir(parent).WithWarmPool(0, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{live.Dir(), foreign, mine} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed server's directory is still there: %v", err)
	}
	// The new server's sessions live in its own part, removed at Close.
	claim := filepath.Dir(a.d.sessionsDir)
	if filepath.Dir(claim) != parent || a.d.sessionsDir == live.Dir() {
		t.Fatalf("sessions in %s", a.d.sessionsDir)
	}
	ctx, cancel := testwait.Context(t)
	defer cancel()
	if err := a.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	id := newSession(t, a)
	expect(t, run(t, a, id, "open('x', 'w').write('x'); print('ok')"), "ok\n", 0, port.OutcomeCompleted)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(claim); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the server's own directory is left after Close: %v", err)
	}
	if _, err := os.Stat(live.Dir()); err != nil {
		t.Errorf("the live server's directory was removed at Close: %v", err)
	}
}

// A server given no sessions directory keeps its sessions in a claim under
// the user's private directory in the temporary directory: a killed one's
// are removed by the next server to start there, as in a configured one
// (they were left in a temporary directory of its own for good).
func TestDefaultSessionsDirOfKilledServerIsSwept(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	private, ok := workspace.PrivateTempDir()
	if !ok {
		t.Skip("no private directory in the temporary directory on this system")
	}
	dead := claimtest.Dead(t, private, "session/workspace/user-data.csv")
	a, err := open(NewConfig().WithWarmPool(0, nil).WithCompilationCacheDir(testcache.Dir()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the killed server's directory is still there: %v", err)
	}
	claim := filepath.Dir(a.d.sessionsDir)
	if filepath.Dir(claim) != private {
		t.Fatalf("sessions in %s, not in a claim under %s", a.d.sessionsDir, private)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(claim); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the server's own directory is left after Close: %v", err)
	}
}

// A program could make paths longer than the host takes by moving a deep
// directory under another (each call's own paths short enough): its
// session could then never be snapshotted or hibernated (the save failed
// on the host's ENAMETOOLONG, the session stayed awake and was lost at
// shutdown), and a file at such a path could not be restored. Such a move
// is now refused with ENAMETOOLONG, and the session saves.
func TestMoveThatMakesAPathTooLongIsRefused(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	const code = `import os, errno
n = 'd' * 200
a = '/'.join([n] * 15)
os.makedirs('A/' + a)
os.makedirs('B/' + a)
open('B/' + a + '/f.txt', 'w').write('deep')
try:
    os.rename('B', 'A/' + a + '/B')
    print('moved')
except OSError as e:
    print(errno.errorcode[e.errno])
os.rename('B', 'C')
print(open('C/' + a + '/f.txt').read())
`
	expect(t, run(t, a, id, code), "ENAMETOOLONG\ndeep\n", 0, port.OutcomeCompleted)
	var buf bytes.Buffer
	if err := a.d.SnapshotSession(context.Background(), id, &buf); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
}

// PutFile took any path of up to workspace.MaxPathBytes, however long the
// host path it made under the session's directory: a file past the
// host's PATH_MAX, which the program could not reach and which made every
// snapshot and hibernation of the session fail. Such a path is now an
// invalid request, and nothing is written.
func TestUploadPastTheHostsPathLimitIsRefused(t *testing.T) {
	a := newTestAdapter(t, nil)
	ctx := context.Background()
	id := newSession(t, a)
	s, err := a.d.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	// Past PATH_MAX under this root, within MaxPathBytes.
	want := 4096 - len(s.ws.Root()) + 8
	name := strings.Repeat(strings.Repeat("d", 199)+"/", want/200+1)[:want-2] + "/f"
	if len(name) > workspace.MaxPathBytes {
		t.Fatalf("the session's root is too long for this test (%d bytes)", len(s.ws.Root()))
	}
	if _, err := a.d.PutFile(ctx, id, name, strings.NewReader("x")); !errors.Is(err, port.ErrInvalidRequest) {
		t.Errorf("an upload to a %d-byte path under a %d-byte root: %v; want ErrInvalidRequest", len(name), len(s.ws.Root()), err)
	}
	var buf bytes.Buffer
	if err := a.d.SnapshotSession(ctx, id, &buf); err != nil {
		t.Errorf("the snapshot after the upload: %v", err)
	}
}
