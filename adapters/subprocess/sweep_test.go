package subprocess_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/internal/workspace/claimtest"
)

// Issue #13: kill -9 of the server leaves its workers' directories (they
// die with it), with their sessions' files, for good. An adapter starting
// over the same sessions directory removes those of dead processes, and
// only those.
func TestSessionsDirOfDeadServerIsSwept(t *testing.T) {
	if workerBin == "" {
		t.Fatal("no worker binary: see TestMain's output")
	}
	parent := t.TempDir()
	// What a killed server leaves: its claim, whose lock nobody holds,
	// with a worker's claim and a session's file in it.
	dead := claimtest.Dead(t, parent, "worker-1/codeport-1000000-fedcba9876543210/"+workspace.ClaimSessions+"/s/workspace/user-data.csv")
	// Another server's, alive: its lock is held (by this process).
	live, err := workspace.ClaimDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	// Not codeport's: the name without the lock file, and a user's file.
	foreign := filepath.Join(parent, "codeport-7-0123456789abcdef")
	if err := os.Mkdir(foreign, 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(parent, "notes.txt")
	if err := os.WriteFile(other, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}

	a := wasmtest.NewSubprocess(t, workerBin, func(c subprocess.Config) subprocess.Config {
		return c.WithSessionsDir(parent).WithWorkers(1, 1)
	})
	if _, err := os.Stat(dead); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dead server's directory is still there: %v", err)
	}
	for _, p := range []string{live.Dir(), foreign, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
	// This adapter's workers live in a claim of its own.
	id := newSession(t, a)
	if got := run(t, a, id, "open('x', 'w').write('x'); print('ok')"); got.Stdout != "ok\n" {
		t.Fatalf("%+v", got)
	}
	mine := claimsBesides(t, parent, live.Dir())
	if len(mine) != 1 {
		t.Fatalf("claims of the adapter: %v", mine)
	}
	if _, err := os.Stat(filepath.Join(parent, mine[0], workspace.ClaimSessions, "worker-1")); err != nil {
		t.Errorf("no worker directory in the adapter's claim: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if left := claimsBesides(t, parent, live.Dir()); len(left) != 0 {
		t.Errorf("left after Close: %v", left)
	}
	if _, err := os.Stat(live.Dir()); err != nil {
		t.Errorf("the live server's directory was removed: %v", err)
	}
}

// claimsBesides lists the claim directories under parent other than the
// one named and the foreign one the test made.
func claimsBesides(t *testing.T, parent, except string) []string {
	t.Helper()
	es, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		n := e.Name()
		if strings.HasPrefix(n, "codeport-") && n != filepath.Base(filepath.Dir(except)) && n != "codeport-7-0123456789abcdef" {
			out = append(out, n)
		}
	}
	return out
}
