//go:build unix

package shell

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWorkspaceRefusalsAreWorded runs commands the mounts refuse and
// checks the words the shell prints for each, as bash would print them.
func TestWorkspaceRefusalsAreWorded(t *testing.T) {
	e := newEnv(t, 0, 0, nil)
	e.put(map[string]string{"a.txt": "a\n"})
	if err := syscall.Mkfifo(filepath.Join(e.root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	long := strings.Repeat("d", 5000)
	for _, c := range []struct{ cmd, stderr string }{
		// The mount refuses to open a FIFO at all (it would block).
		{"cat fifo", "cat: fifo: Permission denied\n"},
		{"cat " + long, long + ": File name too long\n"},
		{`cat $'bad\xffname'`, "Permission denied\n"},
	} {
		_, stderr, code := e.run(c.cmd)
		if code == 0 || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%.60s: status %d, stderr %q; want it to contain %q", c.cmd, code, stderr, c.stderr)
		}
		if strings.Contains(stderr, "workspace:") || strings.Contains(stderr, "invalid request") {
			t.Errorf("%.60s: stderr %q quotes the workspace's message", c.cmd, stderr)
		}
	}

}
