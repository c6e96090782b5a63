package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runFor runs command under a timeout, returning what Run returned and how
// long it took.
func (e *env) runFor(command string, timeout time.Duration) (stdout, stderr string, code int, took time.Duration, err error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var o, er bytes.Buffer
	start := time.Now()
	code, err = e.sh.Run(ctx, command, &o, &er)
	return o.String(), er.String(), code, time.Since(start), err
}

// The guard stops far below the guest's limits but far above what scripts
// use: 500 levels of recursion through each construct still run.
func TestStackGuardAllowsDeepScripts(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	e.put(map[string]string{"count.sh": "if [ $1 -lt 500 ]; then . ./count.sh $(( $1 + 1 )); else echo $1; fi\n"})
	for _, c := range []struct{ cmd, want string }{
		{`f() { if [ $1 -lt 500 ]; then f $(( $1 + 1 )); else echo $1; fi; }; f 0`, "500"},
		{`f() { if [ $1 -lt 500 ]; then eval "f $(( $1 + 1 ))"; else echo $1; fi; }; f 0`, "500"},
		{`f() { if [ $1 -lt 500 ]; then echo "$(f $(( $1 + 1 )))"; else echo $1; fi; }; f 0`, "500"},
		// Two constructs a level: about half as deep.
		{`f() { if [ $1 -lt 250 ]; then x=$(eval "f $(( $1 + 1 ))"); echo "$x"; else echo $1; fi; }; f 0`, "250"},
		{`. ./count.sh 0`, "500"},
		{`eval "$(printf 'echo $(%.0s' $(seq 250)) echo 500 $(printf ')%.0s' $(seq 250))"`, "500"},
	} {
		if out, stderr, code := e.run(c.cmd); out != c.want+"\n" || code != 0 {
			t.Errorf("%.60s: %q %d %.200q", c.cmd, out, code, stderr)
		}
	}
}

// deepTree makes a chain of depth directories "d/d/...", with a file every
// 50 levels, and at depth wideAt a directory "w" of n files.
func deepTree(t *testing.T, root string, depth, wideAt, n int) (wide string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, strings.Repeat("d/", depth)), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= depth; i += 50 {
		if err := os.WriteFile(filepath.Join(root, strings.Repeat("d/", i), "x.txt"), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wide = strings.Repeat("d/", wideAt) + "w"
	if err := os.Mkdir(filepath.Join(root, wide), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := os.WriteFile(filepath.Join(root, wide, strconv.Itoa(i)), []byte("y\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wide
}

// Every command that walks a tree or loops over files stops at the
// deadline. On a 2000-deep tree one path lookup used to cost O(depth²)
// system calls (13 s at the bottom), and the walks checked the deadline
// nowhere or only between whole subtrees: ls -R ran for hours. Each
// command here has far more than the deadline's worth of work on any
// machine (thousands of lookups 1000 directories deep).
func TestFileCommandsStopAtTheDeadline(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	wide := deepTree(t, e.root, 2000, 1000, 5000)
	// A path at the bottom resolves.
	if stdout, _, code := e.run("cd " + strings.Repeat("d/", 2000) + " && pwd | wc -c; cd /workspace"); code != 0 || stdout != fmt.Sprintf("%d\n", len("/workspace/")+2000*2) {
		t.Errorf("cd to the bottom: %q %d", stdout, code)
	}
	const timeout = 500 * time.Millisecond
	for _, cmd := range []string{
		"ls -R | wc -l",
		"ls -laR d > /dev/null",
		"find . -type d | wc -l",
		"find d -name nothing",
		"grep -r nothing .",
		"cp -r d copy",
		"chmod -R 700 d",
		"wc -l " + wide + "/* | tail -1",
		"cat " + wide + "/* | wc -l",
		"head -q -n1 " + wide + "/* | wc -l",
		"grep -c y " + wide + "/* | wc -l",
		"sort " + wide + "/* | uniq -c",
		"for f in " + wide + "/*; do [ -s $f ] || echo empty; done",
		"rm -rf d",
	} {
		// A command that outlives its grace ends the guest, and the next
		// call starts another with its own two goroutines: count from a
		// live guest.
		e.run("true")
		before := runtime.NumGoroutine()
		_, _, code, took, err := e.runFor(cmd, timeout)
		if code != 124 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%.40s: code %d, err %v; want 124 and the deadline", cmd, code, err)
		}
		// The bound is far from both the deadline plus one step of a
		// walk (milliseconds, seconds under load) and a walk to its end:
		// minutes at least (on a loaded machine none of these was done in
		// 30 s, ls -R ran over 3 minutes, and head got a third of the way
		// through the 5000 files in 10).
		if took > timeout+stuckAfter {
			t.Errorf("%.40s: returned %v after its %v deadline", cmd, took-timeout, timeout)
		}
		waitGoroutines(t, cmd, before)
	}
}

// chmod cannot touch the workspace root, nor make anything group- or
// world-writable, setuid, setgid or sticky on the host, nor take a
// directory away from its owner (the gateway, which removes it with the
// session).
func TestChmodCannotLoosenTheHost(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	e.put(map[string]string{"f": "x", "g": "y", "d/": "", "d/in": "z"})
	mode := func(rel string) fs.FileMode {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(e.root, rel))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode()
	}
	rootMode := mode(".")
	steps := []struct {
		cmd    string
		code   int
		stderr string // substring
		rel    string
		want   fs.FileMode
	}{
		{"chmod 777 .", 1, "changing permissions of '.': Operation not permitted", ".", rootMode},
		{"chmod 000 /workspace", 1, "Operation not permitted", ".", rootMode},
		{"chmod 777 f", 0, "note: in the workspace nothing is group- or world-writable", "f", 0o755},
		{"chmod 4755 f", 0, "note:", "f", 0o755},
		{"chmod u+s,g+s,+t g", 0, "note:", "g", 0o644},
		{"chmod 600 g", 0, "", "g", 0o600},
		{"chmod a+w g", 0, "note:", "g", 0o600},
		{"chmod 000 d", 0, "note:", "d", fs.ModeDir | 0o700},
		{"chmod -R 777 .", 1, "Operation not permitted", "d/in", 0o755},
		{"chmod -Rf 777 .", 1, "", "d", fs.ModeDir | 0o755},
	}
	for _, s := range steps {
		_, stderr, code := e.run(s.cmd)
		if code != s.code {
			t.Errorf("%s: code %d, want %d (stderr %q)", s.cmd, code, s.code, stderr)
		}
		if s.stderr == "" && stderr != "" || !strings.Contains(stderr, s.stderr) {
			t.Errorf("%s: stderr %q, want %q", s.cmd, stderr, s.stderr)
		}
		if got := mode(s.rel); got != s.want {
			t.Errorf("%s: %s has mode %v, want %v", s.cmd, s.rel, got, s.want)
		}
		if got := mode("."); got != rootMode {
			t.Errorf("%s: the workspace root's mode changed to %v", s.cmd, got)
		}
	}
	if stdout, _, _ := e.run("chmod 700 f && ./f; ls -l f"); !strings.HasPrefix(stdout, "-rwx------ ") {
		t.Errorf("owner bits: %q", stdout)
	}
	e.checkOutside()
}

// $$ and $PPID are fixed (3 and 2, the process IDs of Go on wasip1), whatever
// route the script takes to read them: the gateway's process IDs are none of
// its business, and the guest has no way to learn them.
func TestProcessIDsAreHidden(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	e.put(map[string]string{"ids.sh": "echo $$ $PPID\n"})
	pid, ppid := strconv.Itoa(os.Getpid()), strconv.Itoa(os.Getppid())
	for _, tt := range []struct{ cmd, want string }{
		{`echo $$ "$$" ${$} "${PPID}" $PPID`, "3 3 3 2 2\n"},
		{`echo $(( $$ + PPID )) $(( PPID )); (( PPID == 2 )) && echo two`, "5 2\ntwo\n"},
		{`eval 'echo $$ $PPID'`, "3 2\n"},
		{`bash -c 'echo $$ $PPID'`, "3 2\n"},
		{`bash ids.sh; . ./ids.sh; source ids.sh a b`, "3 2\n3 2\n3 2\n"},
		{`trap 'echo $$' EXIT; echo x`, "x\n3\n"},
		{`x=$(echo $$); echo "$x"`, "3\n"},
		{`echo "${#$}${PPID:+set}"`, "1set\n"},
	} {
		stdout, stderr, code := e.run(tt.cmd)
		if stdout != tt.want || code != 0 {
			t.Errorf("%s: %q %d (stderr %q), want %q", tt.cmd, stdout, code, stderr, tt.want)
		}
		for _, real := range []string{pid, ppid} {
			if real != "2" && real != "3" && strings.Contains(stdout, real) {
				t.Errorf("%s: the output %q holds the real ID %s", tt.cmd, stdout, real)
			}
		}
	}
}
