//go:build unix

package shell

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWorkspaceRefusalsAreWorded runs commands the workspace refuses for
// a typed reason and checks the words the shell prints for each, as bash
// would print them where bash has words for it.
func TestWorkspaceRefusalsAreWorded(t *testing.T) {
	e := newEnv(t, 0, 0, nil)
	e.put(map[string]string{"a.txt": "a\n"})
	if err := syscall.Mkfifo(filepath.Join(e.root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	long := strings.Repeat("d", 5000)
	for _, c := range []struct{ cmd, stderr string }{
		{"cat fifo", "cat: fifo: not a regular file\n"},
		{"cat " + long, long + ": File name too long\n"},
		{`cat $'bad\xffname'`, ": file name is not valid UTF-8\n"},
	} {
		_, stderr, code := e.run(c.cmd)
		if code == 0 || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%.60s: status %d, stderr %q; want it to contain %q", c.cmd, code, stderr, c.stderr)
		}
		if strings.Contains(stderr, "workspace:") || strings.Contains(stderr, "invalid request") {
			t.Errorf("%.60s: stderr %q quotes the workspace's message", c.cmd, stderr)
		}
	}

	// What the shell checks itself first (a file used as a directory) can
	// still come from the workspace: the same words.
	_, err := e.ws.List("a.txt")
	if got := errText(err); got != "Not a directory" {
		t.Errorf("List(file): %q from %v", got, err)
	}
	_, err = e.ws.Write("a.txt/child", strings.NewReader("x"), 0)
	if got := errText(err); got != "Not a directory" {
		t.Errorf("Write(file/child): %q from %v", got, err)
	}
}
