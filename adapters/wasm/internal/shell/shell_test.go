package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/workspace"
)

// env is a shell over a fresh workspace, with a directory "outside" next to
// the workspace root that no command may reach. The shell runs as it does
// in a session: a WASI guest (a fresh build of this package's sources, see
// TestMain) over the workspace and a temporary directory.
type env struct {
	t       *testing.T
	ws      *workspace.Workspace
	sh      testShell
	root    string // host path of the workspace
	outside string // host path of a sibling directory
}

// testShell runs scripts in the guest with the old Run's conventions: an
// error when ctx ended first (status 124 or 130).
type testShell struct{ sh *wasmshell.Shell }

func (s testShell) Run(ctx context.Context, command string, stdout, stderr io.Writer) (int, error) {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	res, err := s.sh.Run(ctx, command, stdout, stderr)
	if err != nil {
		return 1, err
	}
	if res.Stop != wasmshell.StopNone {
		return res.Code, ctx.Err()
	}
	return res.Code, nil
}

// pythonFunc runs the shell's python commands in a test.
type pythonFunc = func(ctx context.Context, call wasmshell.PythonCall) wasmshell.PythonResult

// echoPython is the Python stub: it reports what it was given and exits
// with the status in $PYSTATUS (default 0).
func echoPython(ctx context.Context, call wasmshell.PythonCall) wasmshell.PythonResult {
	status := 0
	for _, kv := range call.Env {
		if v, ok := strings.CutPrefix(kv, "PYSTATUS="); ok {
			fmt.Sscan(v, &status)
		}
	}
	return wasmshell.PythonResult{
		Stdout: fmt.Appendf(nil, "argv=%q stdin=%q dir=%s\n", call.Argv, call.Stdin, call.Dir),
		Stderr: []byte("py-stderr\n"),
		Code:   status,
	}
}

// guest is the shell engine every test shares, built at its first use
// from this package's sources (so that the tests test them), once per test
// process: TestCommittedGuestIsThisBuild compares the same build with the
// committed artifact. Tests that need no shell (the parsers' fuzz targets)
// do not build it. Its compiled code is kept where the adapter keeps its
// own (the user's cache directory), so that each fuzzing worker, a process
// of its own, loads it instead of spending its fuzz time compiling 12 MB.
var guest struct {
	once  sync.Once
	mod   []byte // the build
	cache wazero.CompilationCache
	eng   *wasmshell.Engine
	err   error
}

func guestEngine(t testing.TB) *wasmshell.Engine {
	t.Helper()
	guest.once.Do(func() {
		dir, err := os.MkdirTemp("", "shell-test-")
		if err != nil {
			guest.err = err
			return
		}
		defer os.RemoveAll(dir)
		wasm := filepath.Join(dir, "shell.wasm")
		if out, err := exec.Command("wasmshell/runtime/build.sh", "--out", wasm).CombinedOutput(); err != nil {
			guest.err = fmt.Errorf("building the shell guest: %v\n%s", err, out)
			return
		}
		if guest.mod, guest.err = os.ReadFile(wasm); guest.err != nil {
			return
		}
		guest.cache = testcache.Cache()
		guest.eng, guest.err = wasmshell.NewEngine(context.Background(), wasmshell.Config{MemoryBytes: 256 << 20, Module: guest.mod, Cache: guest.cache})
	})
	if guest.err != nil {
		t.Fatal(guest.err)
	}
	return guest.eng
}

// The committed shell.wasm, which wasmshell embeds and the adapter runs,
// is what build.sh makes from the sources in this tree, byte for byte.
func TestCommittedGuestIsThisBuild(t *testing.T) {
	guestEngine(t)
	committed, err := os.ReadFile("wasmshell/runtime/shell.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, guest.mod) {
		t.Fatalf("wasmshell/runtime/shell.wasm (%d bytes) differs from a fresh build of the guest's sources (%d bytes): run make shell-rebuild and commit the result", len(committed), len(guest.mod))
	}
}

// The guest links none of codeport's packages but the shell and its
// protocol: a change elsewhere (package port, say) must not change the
// committed shell.wasm.
func TestGuestLinksOnlyTheShell(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "./guest")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/codeport/codeport/adapters/wasm/internal/shell":                    true,
		"github.com/codeport/codeport/adapters/wasm/internal/shell/guest":              true,
		"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell/protocol": true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/codeport/codeport/") && !allowed[pkg] {
			t.Errorf("the guest links %s", pkg)
		}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if guest.eng != nil {
		guest.eng.Close(context.Background())
	}
	if guest.cache != nil {
		guest.cache.Close(context.Background())
	}
	os.Exit(code)
}

func newEnv(t *testing.T, quota, maxFile int64, py pythonFunc) *env {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	q := workspace.NewQuota(quota)
	ws, err := workspace.New(root, q)
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	sh, err := guestEngine(t).Start(wasmshell.Options{
		Workspace:    workspace.NewSysFS(root, q),
		Tmp:          workspace.NewSysFS(tmp, q),
		MaxFileBytes: maxFile,
		Python:       py,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Close)
	return &env{t: t, ws: ws, sh: testShell{sh}, root: root, outside: outside}
}

// put writes a workspace file through the workspace (charging the quota).
// A name ending in "/" makes a directory.
func (e *env) put(files map[string]string) {
	e.t.Helper()
	for name, content := range files {
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(filepath.Join(e.root, name), 0o755); err != nil {
				e.t.Fatal(err)
			}
			continue
		}
		if err := e.ws.WriteFile(name, []byte(content), 0); err != nil {
			e.t.Fatal(err)
		}
	}
}

// file returns the content of a workspace file and whether it exists.
func (e *env) file(rel string) (string, bool) {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, filepath.FromSlash(rel)))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		return "<" + err.Error() + ">", true
	}
	return string(data), true
}

// run runs command and fails the test on an error. It has no deadline of
// its own (a fixed one failed slow commands on a loaded machine): go test
// -timeout bounds it.
func (e *env) run(command string) (stdout, stderr string, code int) {
	e.t.Helper()
	ctx, cancel := testwait.Context(e.t)
	defer cancel()
	var o, er bytes.Buffer
	code, err := e.sh.Run(ctx, command, &o, &er)
	if err != nil {
		e.t.Fatalf("Run(%q) error %v (stdout %q, stderr %q)", command, err, o.String(), er.String())
	}
	return o.String(), er.String(), code
}

// checkOutside fails if anything outside the workspace changed.
func (e *env) checkOutside() {
	e.t.Helper()
	entries, err := os.ReadDir(e.outside)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, d := range entries {
			names = append(names, d.Name())
		}
		e.t.Errorf("outside directory holds %v, want only secret", names)
	}
	data, err := os.ReadFile(filepath.Join(e.outside, "secret"))
	if err != nil || string(data) != "SECRET\n" {
		e.t.Errorf("outside/secret = %q, %v", data, err)
	}
	fi, err := os.Stat(filepath.Join(e.outside, "secret"))
	if err == nil && fi.Mode().Perm() != 0o644 {
		e.t.Errorf("outside/secret mode %v", fi.Mode())
	}
	siblings, _ := os.ReadDir(filepath.Dir(e.root))
	if len(siblings) != 2 {
		e.t.Errorf("%d entries next to the workspace root, want 2 (ws, outside)", len(siblings))
	}
}

// tc is a table row: files to put, a command, and what it must give.
type tc struct {
	name    string
	files   map[string]string
	cmd     string
	stdout  string            // exact, unless match is set
	match   string            // a regexp stdout must match instead
	stderr  string            // a substring stderr must contain; "" means empty stderr
	code    int               // exit status
	after   map[string]string // workspace files that must then hold this
	gone    []string          // workspace paths that must then not exist
	anyErr  bool              // stderr may hold anything
	noCheck bool              // stdout is not checked
}

func runTable(t *testing.T, tests []tc) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, 0, 0, echoPython)
			e.put(tt.files)
			stdout, stderr, code := e.run(tt.cmd)
			switch {
			case tt.noCheck:
			case tt.match != "":
				if !regexp.MustCompile(tt.match).MatchString(stdout) {
					t.Errorf("stdout %q does not match %q", stdout, tt.match)
				}
			case stdout != tt.stdout:
				t.Errorf("stdout\n got %q\nwant %q", stdout, tt.stdout)
			}
			switch {
			case tt.anyErr:
			case tt.stderr == "" && stderr != "":
				t.Errorf("stderr %q, want none", stderr)
			case !strings.Contains(stderr, tt.stderr):
				t.Errorf("stderr %q, want it to contain %q", stderr, tt.stderr)
			}
			if code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			for rel, want := range tt.after {
				got, ok := e.file(rel)
				if !ok {
					t.Errorf("%s does not exist, want %q", rel, want)
				} else if got != want {
					t.Errorf("%s = %q, want %q", rel, got, want)
				}
			}
			for _, rel := range tt.gone {
				if _, err := os.Lstat(filepath.Join(e.root, rel)); err == nil {
					t.Errorf("%s still exists", rel)
				}
			}
			e.checkOutside()
		})
	}
}

func TestFileCommands(t *testing.T) {
	three := map[string]string{"a.txt": "one\ntwo\nthree\n", "d/b.txt": "bee\n", "d/e/c.txt": "sea\n", ".hidden": "h"}
	runTable(t, []tc{
		{name: "pwd", cmd: "pwd", stdout: "/workspace\n"},
		{name: "cd and pwd", files: three, cmd: "cd d/e && pwd && cd .. && pwd && cd && pwd", stdout: "/workspace/d/e\n/workspace/d\n/workspace\n"},
		{name: "cd missing", cmd: "cd nope", stderr: "bash: cd: nope: No such file or directory", code: 1},
		{name: "cd file", files: three, cmd: "cd a.txt", stderr: "cd: a.txt: Not a directory", code: 1},
		{name: "cat", files: three, cmd: "cat a.txt d/b.txt", stdout: "one\ntwo\nthree\nbee\n"},
		{name: "cat -n", files: three, cmd: "cat -n a.txt", stdout: "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{name: "cat stdin dash", files: three, cmd: "echo mid | cat d/b.txt - d/e/c.txt", stdout: "bee\nmid\nsea\n"},
		{name: "cat missing", files: three, cmd: "cat a.txt nope", stdout: "one\ntwo\nthree\n", stderr: "cat: nope: No such file or directory", code: 1},
		{name: "cat directory", files: three, cmd: "cat d", stderr: "cat: d: Is a directory", code: 1},
		{name: "ls", files: three, cmd: "ls", stdout: "a.txt\nd\n"},
		{name: "ls -a", files: three, cmd: "ls -a", stdout: ".\n..\n.hidden\na.txt\nd\n"},
		{name: "ls -A -1", files: three, cmd: "ls -A1", stdout: ".hidden\na.txt\nd\n"},
		{name: "ls dir and file", files: three, cmd: "ls a.txt d", stdout: "a.txt\n\nd:\nb.txt\ne\n"},
		{name: "ls -l", files: three, cmd: "ls -l d", match: `^total \d+\n-rw-r--r-- 1 user user +4 \w{3} [ \d]\d \d\d:\d\d b\.txt\ndrwxr-xr-x \d+ user user +\d+ .* e\n$`},
		{name: "ls -F", files: three, cmd: "ls -F", stdout: "a.txt\nd/\n"},
		{name: "ls -R", files: three, cmd: "ls -R d", stdout: "d:\nb.txt\ne\n\nd/e:\nc.txt\n"},
		{name: "ls missing", cmd: "ls nope", stderr: "ls: cannot access 'nope': No such file or directory", code: 2},
		{name: "mkdir", cmd: "mkdir x && ls", stdout: "x\n"},
		{name: "mkdir -p", cmd: "mkdir -p x/y/z && mkdir -p x/y && ls x/y", stdout: "z\n"},
		{name: "mkdir exists", files: three, cmd: "mkdir d", stderr: "mkdir: cannot create directory 'd': File exists", code: 1},
		{name: "mkdir no parent", cmd: "mkdir a/b", stderr: "mkdir: cannot create directory 'a/b': No such file or directory", code: 1},
		{name: "rm", files: three, cmd: "rm a.txt", gone: []string{"a.txt"}},
		{name: "rm dir needs -r", files: three, cmd: "rm d", stderr: "rm: cannot remove 'd': Is a directory", code: 1},
		{name: "rm -r", files: three, cmd: "rm -r d && ls", stdout: "a.txt\n", gone: []string{"d"}},
		{name: "rm -rf missing", cmd: "rm -rf nope; echo $?", stdout: "0\n"},
		{name: "rm missing", cmd: "rm nope", stderr: "rm: cannot remove 'nope': No such file or directory", code: 1},
		{name: "rm dot", cmd: "rm -rf .", stderr: "refusing to remove '.'", code: 1},
		{name: "rm root", files: three, cmd: "rm -rf /workspace", stderr: "refusing to remove the workspace root", code: 1, after: map[string]string{"a.txt": "one\ntwo\nthree\n"}},
		{name: "rmdir", files: map[string]string{"x/": ""}, cmd: "rmdir x", gone: []string{"x"}},
		{name: "rmdir not empty", files: three, cmd: "rmdir d", stderr: "rmdir: failed to remove 'd': Directory not empty", code: 1},
		{name: "cp", files: three, cmd: "cp a.txt b.txt", after: map[string]string{"b.txt": "one\ntwo\nthree\n", "a.txt": "one\ntwo\nthree\n"}},
		{name: "cp into dir", files: three, cmd: "cp a.txt d/e", after: map[string]string{"d/e/a.txt": "one\ntwo\nthree\n"}},
		{name: "cp dir needs -r", files: three, cmd: "cp d z", stderr: "cp: -r not specified; omitting directory 'd'", code: 1},
		{name: "cp -r", files: three, cmd: "cp -r d z", after: map[string]string{"z/b.txt": "bee\n", "z/e/c.txt": "sea\n"}},
		{name: "cp -r into itself", files: three, cmd: "cp -r d d/e", stderr: "into itself", code: 1},
		{name: "cp several", files: three, cmd: "mkdir t && cp a.txt d/b.txt t && ls t", stdout: "a.txt\nb.txt\n"},
		{name: "mv", files: three, cmd: "mv a.txt z.txt", after: map[string]string{"z.txt": "one\ntwo\nthree\n"}, gone: []string{"a.txt"}},
		{name: "mv replaces", files: three, cmd: "mv a.txt d/b.txt", after: map[string]string{"d/b.txt": "one\ntwo\nthree\n"}, gone: []string{"a.txt"}},
		{name: "mv dir into dir", files: map[string]string{"x/f": "f", "y/": ""}, cmd: "mv x y", after: map[string]string{"y/x/f": "f"}, gone: []string{"x"}},
		{name: "mv into itself", files: three, cmd: "mv d d/e", stderr: "subdirectory of itself", code: 1},
		{name: "mv missing", cmd: "mv nope x", stderr: "mv: cannot stat 'nope': No such file or directory", code: 1},
		{name: "touch new", cmd: "touch n.txt && cat n.txt && ls", stdout: "n.txt\n", after: map[string]string{"n.txt": ""}},
		{name: "touch existing", files: three, cmd: "touch a.txt", after: map[string]string{"a.txt": "one\ntwo\nthree\n"}},
		{name: "touch no dir", cmd: "touch x/y", stderr: "touch: cannot touch 'x/y': No such file or directory", code: 1},
		{name: "touch -d", cmd: "touch -d @86400 n && touch a && touch -d '2002-12-31 23:59:59 UTC' a && stat -c %Y n a", stdout: "86400\n1041379199\n", after: map[string]string{"n": "", "a": ""}},
		{name: "touch -d in TZ", cmd: "TZ=JST-9 touch -d '2003-01-01 08:59:59' n && stat -c %Y n", stdout: "1041379199\n", after: map[string]string{"n": ""}},
		{name: "touch -t", cmd: "TZ=UTC0 touch -t 200212312359.59 n && TZ=UTC0 touch -t 0212312359 m && stat -c %Y n m", stdout: "1041379199\n1041379140\n", after: map[string]string{"n": "", "m": ""}},
		{name: "touch -r", files: three, cmd: "touch -d @5000 a.txt && touch -r a.txt n && stat -c %Y n", stdout: "5000\n", after: map[string]string{"a.txt": "one\ntwo\nthree\n", "n": ""}},
		{name: "touch -t bad", cmd: "touch -t 201302301200 n", stderr: "touch: invalid date format '201302301200'", code: 1},
		{name: "touch -d bad", cmd: "touch -d 'the day after' n", stderr: "touch: invalid date format 'the day after'", code: 1},
		{name: "touch two sources", cmd: "touch -d @1 -t 200001010000 n", stderr: "touch: cannot specify times from more than one source", code: 1},
		{name: "touch -r missing", cmd: "touch -r nothing n", stderr: "touch: failed to get attributes of 'nothing': No such file or directory", code: 1},
		{name: "chmod and run", cmd: "printf 'echo ran $1\\n' > s.sh; ./s.sh; echo $?; chmod +x s.sh; ./s.sh a", stdout: "126\nran a\n", stderr: "bash: ./s.sh: Permission denied"},
		{name: "chmod octal", files: three, cmd: "chmod 600 a.txt && ls -l a.txt", match: `^-rw------- `},
		{name: "tee", cmd: "echo hi | tee t1 t2", stdout: "hi\n", after: map[string]string{"t1": "hi\n", "t2": "hi\n"}},
		{name: "tee -a", files: map[string]string{"t": "a\n"}, cmd: "echo b | tee -a t >/dev/null", after: map[string]string{"t": "a\nb\n"}},
		{name: "find", files: three, cmd: "find .", stdout: ".\n./.hidden\n./a.txt\n./d\n./d/b.txt\n./d/e\n./d/e/c.txt\n"},
		{name: "find -name -type", files: three, cmd: "find d -name '*.txt' -type f", stdout: "d/b.txt\nd/e/c.txt\n"},
		{name: "find -maxdepth", files: three, cmd: "find . -maxdepth 1 -type d", stdout: ".\n./d\n"},
		{name: "basename dirname", cmd: "basename /workspace/a/b.txt .txt; dirname a/b/c; dirname c", stdout: "b\na/b\n.\n"},
	})
}

func TestTextCommands(t *testing.T) {
	nums := map[string]string{"n": "10\n9\n100\n9\n2\n", "w": "b x\na y\nc z\nb x\n", "t": "k:3\nk:1\nj:2\n"}
	text := map[string]string{"f": "alpha\nBeta\ngamma\nbeta2\ndelta\n", "g": "one\n", "d/x.py": "import os\n", "d/y.txt": "import nothing\n"}
	lines := "printf '1\\n2\\n3\\n4\\n5\\n6\\n7\\n8\\n9\\n10\\n11\\n12\\n' > l; "
	runTable(t, []tc{
		{name: "echo", cmd: "echo a  b 'c  d'", stdout: "a b c  d\n"},
		{name: "echo -n", cmd: "echo -n x; echo y", stdout: "xy\n"},
		{name: "echo -e", cmd: `echo -e 'a\tb\nc\x41\0101'; echo 'a\tb'; echo -e 'stop\cnot'`, stdout: "a\tb\ncAA\na\\tb\nstop"},
		{name: "printf", cmd: `printf '%s=%d;' a 1 b 2; printf '\n%5.2f|%-3s|%x\n' 3.14159 ab 255`, stdout: "a=1;b=2;\n 3.14|ab |ff\n"},
		{name: "printf no args", cmd: "printf", stderr: "usage", code: 2},
		{name: "head", cmd: lines + "head l", stdout: "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"},
		{name: "head -n", cmd: lines + "head -n 2 l; head -3 l; head -n -10 l", stdout: "1\n2\n1\n2\n3\n1\n2\n"},
		{name: "head -c", cmd: lines + "head -c 4 l", stdout: "1\n2\n"},
		{name: "head stdin", cmd: lines + "cat l | head -n1", stdout: "1\n"},
		{name: "head several", files: map[string]string{"a": "1\n2\n", "b": "3\n"}, cmd: "head -n1 a b", stdout: "==> a <==\n1\n\n==> b <==\n3\n"},
		{name: "tail", cmd: lines + "tail l", stdout: "3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"},
		{name: "tail -n", cmd: lines + "tail -n 2 l; tail -1 l", stdout: "11\n12\n12\n"},
		{name: "tail -n +", cmd: lines + "tail -n +11 l", stdout: "11\n12\n"},
		{name: "tail -c", cmd: lines + "tail -c 3 l", stdout: "12\n"},
		{name: "tail no final newline", cmd: "printf 'a\\nb' | tail -n 1", stdout: "b"},
		{name: "tail -f", cmd: "tail -f l", stderr: "not supported", code: 1},
		{name: "wc", files: text, cmd: "wc f", stdout: " 5  5 29 f\n"},
		{name: "wc -l", files: text, cmd: "wc -l f; wc -l < f; cat f | wc -l", stdout: "5 f\n5\n5\n"},
		{name: "wc -w -c", files: text, cmd: "echo 'a b  c' | wc -w; echo abc | wc -c; wc -lw f g", stdout: "3\n4\n 5  5 f\n 1  1 g\n 6  6 total\n"},
		{name: "wc stdin default", cmd: "printf 'a b\\nc\\n' | wc", stdout: "      2       3       6\n"},
		{name: "grep", files: text, cmd: "grep eta f", stdout: "Beta\nbeta2\n"},
		{name: "grep -i", files: text, cmd: "grep -i BETA f", stdout: "Beta\nbeta2\n"},
		{name: "grep -v", files: text, cmd: "grep -v a f", stdout: "", code: 1},
		{name: "grep -v2", files: text, cmd: "grep -v eta f", stdout: "alpha\ngamma\ndelta\n"},
		{name: "grep -n", files: text, cmd: "grep -n mm f", stdout: "3:gamma\n"},
		{name: "grep -c", files: text, cmd: "grep -c eta f", stdout: "2\n"},
		{name: "grep -E", files: text, cmd: "grep -E '^(al|de)' f", stdout: "alpha\ndelta\n"},
		{name: "grep basic", files: text, cmd: `grep '^\(al\|de\)' f; grep 'a+' f; grep 'ta2\?$' f`, stdout: "alpha\ndelta\nBeta\nbeta2\ndelta\n"},
		{name: "grep -F", cmd: "printf 'a.c\\nabc\\n' | grep -F a.c", stdout: "a.c\n"},
		{name: "grep -w -x", cmd: "printf 'foo bar\\nfoobar\\nfoo\\n' | grep -w foo; printf 'foo bar\\nfoo\\n' | grep -x foo", stdout: "foo bar\nfoo\nfoo\n"},
		{name: "grep -o", cmd: "echo 'a1b22c333' | grep -oE '[0-9]+'", stdout: "1\n22\n333\n"},
		{name: "grep -l and files", files: text, cmd: "grep -l one f g; grep alpha f g", stdout: "g\nf:alpha\n"},
		{name: "grep -r", files: text, cmd: "grep -r import .; grep -rn --include='*.py' import d", stdout: "./d/x.py:import os\n./d/y.txt:import nothing\nd/x.py:1:import os\n"},
		{name: "grep -r no operand", files: text, cmd: "grep -rl import", stdout: "d/x.py\nd/y.txt\n"},
		{name: "grep context", cmd: "seq 10 | grep -A1 -B1 -e 3 -e 8", stdout: "2\n3\n4\n--\n7\n8\n9\n"},
		{name: "grep no match", files: text, cmd: "grep zzz f", code: 1},
		{name: "grep literal star", cmd: "printf '*a\\nb\\n' | grep '*a'; printf '*x\\n' | grep -E '^*x|(*x)'", stdout: "*a\n*x\n"},
		{name: "grep binary", cmd: "printf 'a\\0b\\nxa\\n' > bin; grep a bin; grep -c a bin", stdout: "2\n", stderr: "grep: bin: binary file matches\n"},
		{name: "grep -q", files: text, cmd: "grep -q alpha f && echo yes", stdout: "yes\n"},
		{name: "grep missing file", cmd: "grep x nope", stderr: "grep: nope: No such file or directory", code: 2},
		{name: "grep bad regexp", cmd: "grep -E '(' f", stderr: "grep: Unmatched ( or \\(", code: 2},
		{name: "sort", files: nums, cmd: "sort n", stdout: "10\n100\n2\n9\n9\n"},
		{name: "sort -n", files: nums, cmd: "sort -n n", stdout: "2\n9\n9\n10\n100\n"},
		{name: "sort -rn", files: nums, cmd: "sort -rn n", stdout: "100\n10\n9\n9\n2\n"},
		{name: "sort -u", files: nums, cmd: "sort -u w", stdout: "a y\nb x\nc z\n"},
		{name: "sort -nu", files: nums, cmd: "sort -nu n", stdout: "2\n9\n10\n100\n"},
		{name: "sort -k -t", files: nums, cmd: "sort -t: -k2n t; sort -k2 w", stdout: "k:1\nj:2\nk:3\nb x\nb x\na y\nc z\n"},
		{name: "sort -r stdin", cmd: "printf 'b\\nc\\na' | sort -r", stdout: "c\nb\na\n"},
		{name: "sort -o", files: nums, cmd: "sort -n -o n n && cat n", stdout: "2\n9\n9\n10\n100\n"},
		{name: "uniq", cmd: "printf 'a\\na\\nb\\na\\n' | uniq", stdout: "a\nb\na\n"},
		{name: "uniq -c", cmd: "printf 'a\\na\\nb\\n' | uniq -c", stdout: "      2 a\n      1 b\n"},
		{name: "uniq -d -u", cmd: "printf 'a\\na\\nb\\n' | uniq -d; printf 'a\\na\\nb\\n' | uniq -u", stdout: "a\nb\n"},
		{name: "seq", cmd: "seq 3; seq 2 2 6; seq -s, 3; seq -w 8 10", stdout: "1\n2\n3\n2\n4\n6\n1,2,3\n08\n09\n10\n"},
		{name: "env", cmd: "export Z=1; env", stdout: "HOME=/workspace\nLANG=C.UTF-8\nPATH=/usr/bin:/bin\nPWD=/workspace\nTMPDIR=/tmp\nZ=1\n"},
		{name: "env with assignment", cmd: "env A=b env | grep ^A=", stdout: "A=b\n"},
		{name: "no host environment", cmd: "echo \"[$USER][$SHELL][$TMPDIR][$GOPATH]\"", stdout: "[][][/tmp][]\n"},
		{name: "true false", cmd: "true; echo $?; false; echo $?", stdout: "0\n1\n"},
		{name: "test", files: text, cmd: "test -f f && echo file; [ -d d ] && echo dir; [ -e nope ] || echo none; [ 2 -lt 10 ] && echo lt; [ -s g ] && echo nonempty; [ -x f ] || echo noexec", stdout: "file\ndir\nnone\nlt\nnonempty\nnoexec\n"},
		{name: "sleep", cmd: "sleep 0.01 && echo slept", stdout: "slept\n"},
		{name: "which type command", cmd: "which ls grep; type cd; type -t ls; command -v sort; which nope; echo $?", stdout: "/usr/bin/ls\n/usr/bin/grep\ncd is a shell builtin\nfile\n/usr/bin/sort\n1\n"},
		{name: "unknown command", cmd: "nosuchcmd arg", stderr: "bash: nosuchcmd: command not found", code: 127},
		{name: "host binaries are not run", cmd: "gcc --version", stderr: "bash: gcc: command not found", code: 127},
		{name: "no package manager", cmd: "pip install requests", stderr: "bash: pip: command not found (this sandbox has no network and installs no packages: use the modules python3 already has)", code: 127},
		{name: "no downloader", cmd: "curl -s https://example.com", stderr: "bash: curl: command not found (this sandbox has no network access)", code: 127},
		{name: "absolute host binary", cmd: "/bin/ls", stderr: "bash: /bin/ls: outside the workspace", code: 126},
	})
}

func TestShellFeatures(t *testing.T) {
	runTable(t, []tc{
		{name: "pipe sort uniq", cmd: `printf 'b\na\nb\n' | sort | uniq -c`, stdout: "      1 a\n      2 b\n"},
		{name: "redirect and append", cmd: "echo a > f; echo b >> f; cat f", stdout: "a\nb\n", after: map[string]string{"f": "a\nb\n"}},
		{name: "truncate", files: map[string]string{"f": "old content\n"}, cmd: "echo new > f", after: map[string]string{"f": "new\n"}},
		{name: "empty redirect creates", cmd: "> f; ls", stdout: "f\n", after: map[string]string{"f": ""}},
		{name: "input redirect", files: map[string]string{"f": "x\ny\n"}, cmd: "cat < f; wc -l < f", stdout: "x\ny\n2\n"},
		{name: "stderr redirect", cmd: "cat nope 2> err; echo st=$?; cat err", stdout: "st=1\ncat: nope: No such file or directory\n"},
		{name: "2>&1 into pipe", cmd: "cat nope 2>&1 | wc -l", stdout: "1\n"},
		{name: "&> file", cmd: "{ echo out; echo err >&2; } &> both; sort both", stdout: "err\nout\n"},
		{name: "dev null", cmd: "echo gone > /dev/null; cat /dev/null; cat nope 2>/dev/null; echo $?; echo err > /dev/stderr", stdout: "1\n", stderr: "err\n"},
		{name: "redirect to missing dir", cmd: "echo x > nodir/f", stderr: "bash: nodir/f: No such file or directory", code: 1},
		{name: "redirect to directory", files: map[string]string{"d/": ""}, cmd: "echo x > d", stderr: "bash: d: Is a directory", code: 1},
		{name: "heredoc", cmd: "x=v; cat <<EOF\nval $x\nEOF\ncat <<'EOF'\nraw $x\nEOF", stdout: "val v\nraw $x\n"},
		{name: "here string", cmd: "grep -c a <<< 'banana'", stdout: "1\n"},
		{name: "false status", cmd: "false; echo $?", stdout: "1\n"},
		{name: "and or", cmd: "true && echo a || echo b; false && echo c || echo d", stdout: "a\nd\n"},
		{name: "last status", cmd: "false", code: 1},
		{name: "exit", cmd: "echo a; exit 3; echo b", stdout: "a\n", code: 3},
		{name: "pipeline status", cmd: "false | true; echo $?; true | false; echo $?; set -o pipefail; false | true; echo $?", stdout: "0\n1\n1\n"},
		{name: "negation", cmd: "! false && echo neg", stdout: "neg\n"},
		{name: "subshell", cmd: "(cd /workspace/d && pwd; x=1); pwd; echo x=$x; (exit 4); echo $?", files: map[string]string{"d/": ""}, stdout: "/workspace/d\n/workspace\nx=\n4\n"},
		{name: "variables and loops", cmd: "n=0; for i in 1 2 3; do n=$((n+i)); done; while [ $n -gt 4 ]; do n=$((n-1)); done; echo $n", stdout: "4\n"},
		{name: "command substitution", cmd: "x=$(echo hi | tr_missing 2>/dev/null || echo fallback); echo \"$x\"; echo \"$(printf 'a\\nb\\n' | wc -l)\"", stdout: "fallback\n2\n"},
		{name: "cat shortcut substitution", files: map[string]string{"f": "content\n"}, cmd: "echo \"[$(<f)]\"", stdout: "[content]\n"},
		{name: "functions", cmd: "f() { echo \"f:$1\"; return 2; }; f x; echo $?", stdout: "f:x\n2\n"},
		{name: "set -e", cmd: "set -e; echo a; false; echo b", stdout: "a\n", code: 1},
		{name: "glob", files: map[string]string{"a.txt": "", "b.txt": "", "c.md": ""}, cmd: "echo *.txt; echo *.none", stdout: "a.txt b.txt\n*.none\n"},
		{name: "glob in subdir", files: map[string]string{"d/a.txt": "", "d/b.txt": ""}, cmd: "cd d; ls *.txt; echo /workspace/d/*", stdout: "a.txt\nb.txt\n/workspace/d/a.txt /workspace/d/b.txt\n"},
		{name: "tilde", cmd: "echo ~ ~/x", stdout: "/workspace /workspace/x\n"},
		{name: "no host user lookup", cmd: "echo ~root ~nobody/x", stdout: "~root ~nobody/x\n"},
		{name: "device tests", cmd: "[ -c /dev/null ] && echo chr; [ -e /dev/null ] && echo exists; [ /dev/null -ef /dev/null ]; ls /dev/null", stdout: "chr\nexists\n/dev/null\n"},
		{name: "xtrace", cmd: "set -x; echo hi", stdout: "hi\n", stderr: "+ echo hi"},
		{name: "exec redirect", cmd: "exec > out; echo one; echo two", stdout: "", after: map[string]string{"out": "one\ntwo\n"}},
		{name: "syntax error", cmd: "echo (", stderr: "bash:", code: 2},
		{name: "process substitution", cmd: "cat <(echo x)", stderr: "not supported", code: 2},
		{name: "source", files: map[string]string{"lib.sh": "LIBVAR=set\n"}, cmd: "source lib.sh; echo $LIBVAR; . ./lib.sh; echo ok", stdout: "set\nok\n"},
		{name: "bash -c", cmd: "bash -c 'echo $0 $1; exit 7' me arg; echo $?", stdout: "me arg\n7\n"},
		{name: "sh script", files: map[string]string{"s.sh": "echo script $1\ncd /workspace/d\npwd\n", "d/": ""}, cmd: "sh s.sh A; pwd", stdout: "script A\n/workspace/d\n/workspace\n"},
		{name: "bash stdin script", cmd: "echo 'echo from stdin' | bash", stdout: "from stdin\n"},
		{name: "bash -e", cmd: "bash -ec 'false; echo no'; echo $?", stdout: "1\n"},
		{name: "child sees exports only", cmd: "export E=1; L=2; bash -c 'echo [$E][$L]'", stdout: "[1][]\n"},
		{name: "background jobs", cmd: "echo x > f & wait; cat f; (sleep 0.01; echo bg) & wait", stdout: "x\nbg\n"},
		{name: "eval", cmd: "eval 'echo $((1+2))'", stdout: "3\n"},
		{name: "read", cmd: "printf 'a b\\n' | { read x y; echo \"$y-$x\"; }", stdout: "b-a\n"},
	})
}

// TestEscapes runs every command that touches files with paths that lead
// outside the workspace: each is refused, and nothing outside changes.
func TestEscapes(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	e.put(map[string]string{"in.txt": "inside\n", "d/": ""})
	outside := "../outside/secret" // the host sibling, as a relative path
	cases := []struct {
		cmd    string
		code   int
		stderr string
	}{
		{"cat ../../etc/passwd", 1, "cat: ../../etc/passwd: outside the workspace"},
		{"cat " + outside, 1, "outside the workspace"},
		{"cat /etc/passwd", 1, "cat: /etc/passwd: outside the workspace"},
		{"(cd d; cat ../../etc/hostname)", 1, "outside the workspace"},
		{"echo x > /etc/x", 1, "bash: /etc/x: outside the workspace"},
		{"echo x > ../x", 1, "bash: ../x: outside the workspace"},
		{"echo x >> ../outside/secret", 1, "outside the workspace"},
		{"echo x > /var/x", 1, "bash: /var/x: outside the workspace"},
		{"cat < /etc/passwd", 1, "bash: /etc/passwd: outside the workspace"},
		{"echo \"$(< /etc/passwd)\"", 0, "outside the workspace"},
		{"ls /", 2, "ls: cannot access '/': outside the workspace"},
		{"ls ..", 2, "outside the workspace"},
		{"ls /etc", 2, "outside the workspace"},
		{"cd /", 1, "bash: cd: /: outside the workspace"},
		{"cd ..", 1, "bash: cd: ..: outside the workspace"},
		{"cd /etc", 1, "outside the workspace"},
		{"pushd /etc", 1, ""},
		{"builtin cd /", 1, ""},
		{"mkdir /var/x", 1, "outside the workspace"},
		{"mkdir -p ../newdir", 1, "outside the workspace"},
		{"rm " + outside, 1, "outside the workspace"},
		{"rm -rf ../outside", 1, "outside the workspace"},
		{"rm -rf ..", 1, "refusing"},
		{"rmdir ../outside", 1, "outside the workspace"},
		{"cp /etc/passwd x", 1, "outside the workspace"},
		{"cp in.txt ../outside/", 1, "outside the workspace"},
		{"cp -r d /var/d", 1, "outside the workspace"},
		{"mv in.txt /var/in.txt", 1, "outside the workspace"},
		{"mv " + outside + " in2.txt", 1, "outside the workspace"},
		{"touch /var/x", 1, "outside the workspace"},
		{"touch ../outside/new", 1, "outside the workspace"},
		{"chmod 777 " + outside, 1, "outside the workspace"},
		{"head /etc/passwd", 1, "outside the workspace"},
		{"tail " + outside, 1, "outside the workspace"},
		{"wc -l /etc/passwd", 1, "outside the workspace"},
		{"grep root /etc/passwd", 2, "outside the workspace"},
		{"grep -r SECRET ..", 2, "outside the workspace"},
		{"grep -f /etc/passwd in.txt", 2, "outside the workspace"},
		{"sort /etc/passwd", 2, "outside the workspace"},
		{"uniq /etc/passwd", 1, "outside the workspace"},
		{"uniq in.txt /var/out", 1, "outside the workspace"},
		{"sort -o /var/out in.txt", 2, "outside the workspace"},
		{"echo x | tee /var/x", 1, "outside the workspace"},
		{"find /", 1, "outside the workspace"},
		{"find ..", 1, "outside the workspace"},
		{"source /etc/profile", 1, "outside the workspace"},
		{". ../outside/secret", 1, "outside the workspace"},
		{"bash /etc/profile", 127, "outside the workspace"},
		{"/usr/bin/env", 126, "outside the workspace"},
		{"../outside/secret", 126, "outside the workspace"},
		{"[ -e /etc/passwd ]", 1, ""},
		{"test -r " + outside, 1, ""},
		{"echo /etc/*", 0, ""},
		{"ls ../*", 2, "outside the workspace"},
	}
	for _, c := range cases {
		stdout, stderr, code := e.run(c.cmd)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%s: code %d stderr %q; want %d and %q", c.cmd, code, stderr, c.code, c.stderr)
		}
		if strings.Contains(stdout, "SECRET") || strings.Contains(stdout, "root:") {
			t.Errorf("%s: stdout %q leaks a file outside", c.cmd, stdout)
		}
	}
	if stdout, _, _ := e.run("echo /etc/*"); stdout != "/etc/*\n" {
		t.Errorf("a glob outside expanded to %q", stdout)
	}
	if stdout, _, _ := e.run("pwd; ls"); stdout != "/workspace\nd\nin.txt\n" {
		t.Errorf("after the refusals: %q", stdout)
	}
	if got, _ := e.file("in.txt"); got != "inside\n" {
		t.Errorf("in.txt = %q", got)
	}
	e.checkOutside()
}

// TestSymlinks plants symbolic links that lead outside: no command follows
// them.
func TestSymlinks(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	e.put(map[string]string{"in.txt": "inside\n"})
	if err := os.Symlink(e.outside, filepath.Join(e.root, "dirlink")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if err := os.Symlink(filepath.Join(e.outside, "secret"), filepath.Join(e.root, "filelink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside/secret", filepath.Join(e.root, "rellink")); err != nil {
		t.Fatal(err)
	}
	const msg = "symbolic links are not followed"
	cases := []struct {
		cmd    string
		code   int
		stderr string
	}{
		{"cat filelink", 1, msg},
		{"cat rellink", 1, msg},
		{"cat dirlink/secret", 1, msg},
		{"cat < filelink", 1, msg},
		{"ls dirlink/", 2, msg},
		{"cd dirlink", 1, msg},
		{"echo x > filelink", 1, msg},
		{"echo x >> filelink", 1, msg},
		{"echo x > dirlink/new", 1, msg},
		{"cp filelink copy", 1, msg},
		{"cp in.txt dirlink/", 1, msg},
		{"cp -r . ../copy", 1, "outside the workspace"},
		{"mkdir dirlink/sub", 1, msg},
		{"touch filelink", 1, msg},
		{"touch dirlink/new", 1, msg},
		{"chmod 777 filelink", 1, msg},
		{"head filelink", 1, msg},
		{"wc filelink", 1, msg},
		{"grep SECRET filelink", 2, msg},
		{"sort filelink", 2, msg},
		{"grep -r SECRET .", 1, ""},
		{"find . -name secret", 0, ""},
		{"[ -f filelink ]", 1, ""},
		{"[ -L filelink ] && echo link", 0, ""},
		{"rm dirlink/secret", 1, msg},
		{"mv filelink dirlink/", 1, msg},
		{"bash filelink", 127, msg},
		{"source filelink", 1, msg},
		// The commands that write files of their own, not through a
		// redirection.
		{"sort -o dirlink/sorted in.txt", 2, msg},
		{"sort -o filelink in.txt", 2, msg},
		{"sed -n 'w dirlink/sedw' in.txt", 4, msg},
		{"split in.txt dirlink/part", 1, msg},
	}
	for _, c := range cases {
		stdout, stderr, code := e.run(c.cmd)
		if code != c.code || !strings.Contains(stderr, c.stderr) {
			t.Errorf("%s: code %d stderr %q; want %d and %q", c.cmd, code, stderr, c.code, c.stderr)
		}
		if strings.Contains(stdout, "SECRET") || strings.Contains(stdout, "./dirlink/") {
			t.Errorf("%s: stdout %q went through a link", c.cmd, stdout)
		}
	}
	// Removing a link removes the link, not what it points to.
	if _, stderr, code := e.run("rm filelink rellink && rm -r dirlink && ls"); code != 0 {
		t.Errorf("rm of links: %d %q", code, stderr)
	}
	for _, l := range []string{"filelink", "rellink", "dirlink"} {
		if _, err := os.Lstat(filepath.Join(e.root, l)); err == nil {
			t.Errorf("%s survived rm", l)
		}
	}
	e.checkOutside()
}

func TestStatePersistsAcrossRuns(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	steps := []struct{ cmd, stdout string }{
		{"mkdir -p a/b && cd a/b && export EXP=1 && LOCAL=2 && f() { echo fn; }", ""},
		{"pwd; echo $EXP $LOCAL; env | grep EXP; f", "/workspace/a/b\n1 2\nEXP=1\nfn\n"},
		{"cd ..; false", ""},
		{"echo $? $PWD $OLDPWD", "1 /workspace/a /workspace/a/b\n"},
		{"trap 'echo bye' EXIT; echo hi", "hi\nbye\n"},
		{"echo next", "next\n"}, // the EXIT trap was the previous command's
		{"set -x", ""},
		{"set +x 2>/dev/null; echo quiet", "quiet\n"},
		// $? carries each status to the next command, and setting it runs
		// neither the ERR trap nor set -e of the session.
		{"true", ""},
		{"echo $?", "0\n"},
		{"(exit 5)", ""},
		{"echo $?", "5\n"},
		// A script that exits, starts a background job or sets an EXIT
		// trap leaves its status as well.
		{"exit 3", ""},
		{"echo $?", "3\n"},
		{"(exit 4); exit", ""},
		{"echo $?", "4\n"},
		{"exit 0", ""},
		{"echo $?", "0\n"},
		{"echo bg & wait; (exit 6)", "bg\n"},
		{"echo $?", "6\n"},
		{"trap 'echo bye' EXIT; (exit 8)", "bye\n"},
		{"echo $?", "8\n"},
		{"trap 'echo ERR' ERR; set -e; false", "ERR\n"},
		{"echo $?", "1\n"},
		{"(exit 7)", "ERR\n"},
		{"echo $?", "7\n"},
		{"true; echo $?", "0\n"},
	}
	for _, s := range steps {
		stdout, stderr, _ := e.run(s.cmd)
		if stdout != s.stdout {
			t.Errorf("%s: stdout %q, want %q (stderr %q)", s.cmd, stdout, s.stdout, stderr)
		}
	}
}

func TestDeadline(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	for _, cmd := range []string{
		"while true; do :; done",
		"sleep 1000",
		"echo started; sleep 1000 | cat",
		"for i in $(seq 1000000000); do :; done",
		"x=$(sleep 1000)",
		"bash -c 'while :; do :; done'",
		"sleep 1000 & wait",
		"cat <<EOF | while read l; do sleep 1000; done\na\nEOF",
	} {
		// The guest's own goroutines live as long as it does: it runs
		// before the count is taken. A call ended at its deadline keeps
		// the guest when the guest stops within its grace and ends it by
		// force otherwise (under load, it may not stop in time); the next
		// call starts another, which is this one, not the timed out one.
		e.run("true")
		before := runtime.NumGoroutine()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		var o, er bytes.Buffer
		code, err := e.sh.Run(ctx, cmd, &o, &er)
		elapsed := time.Since(start)
		cancel()
		if code != 124 || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: code %d err %v, want 124 and the deadline (stderr %q)", cmd, code, err, er.String())
		}
		if elapsed > stuckAfter {
			t.Errorf("%s: took %v to stop", cmd, elapsed)
		}
		waitGoroutines(t, cmd, before)
	}
	// The shell goes on after a timeout.
	if stdout, _, code := e.run("echo alive"); stdout != "alive\n" || code != 0 {
		t.Errorf("after the timeouts: %q %d", stdout, code)
	}
	// A cancellation (not a deadline) is status 130.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	code, err := e.sh.Run(ctx, "sleep 1000", io.Discard, io.Discard)
	if code != 130 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancel: %d %v", code, err)
	}
	// An already ended ctx does not run anything.
	code, err = e.sh.Run(ctx, "echo x > f", io.Discard, io.Discard)
	if code != 130 || err == nil {
		t.Errorf("ended ctx: %d %v", code, err)
	}
	if _, ok := e.file("f"); ok {
		t.Error("a command ran with an ended ctx")
	}
}

// stuckAfter is how long past its deadline a call may return, or how long
// a computation that must end may run, before a test calls it stuck. A
// call that observes its deadline returns milliseconds after it on a
// quiet machine and seconds after it under any load (the guest is also
// ended by force 2 s after being told to stop); what the tests rule out
// takes far longer: a sleep of 1000 s, an endless loop, minutes to hours
// of walking a deep tree. A bound nearer the deadline (2 s, 5 s) made the
// verdict depend on the machine's load.
const stuckAfter = 100 * time.Second

// waitGoroutines fails if the goroutine count does not come back to before.
// Run must have ended its own goroutines; the wait is for the runtime's
// bookkeeping: goroutines told to end only need to be scheduled, which
// load delays by milliseconds, not by the minute allowed here.
func waitGoroutines(t *testing.T, what string, before int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			t.Errorf("%s: %d goroutines after Run, %d before\n%s", what, runtime.NumGoroutine(), before, buf[:n])
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBackgroundJobsDoNotOutliveRun(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	e.run("true") // the guest's own goroutines live as long as it does
	before := runtime.NumGoroutine()
	start := time.Now()
	stdout, _, code := e.run("sleep 1000 & while true; do :; done & echo launched")
	if stdout != "launched\n" || code != 0 {
		t.Errorf("got %q %d", stdout, code)
	}
	// A Run that waited for its jobs would take 1000 s or never return.
	if d := time.Since(start); d > stuckAfter {
		t.Errorf("Run took %v", d)
	}
	waitGoroutines(t, "background", before)
	// Redirections left open by exec are closed, with their file in place.
	stdout, _, _ = e.run("exec 2> err.txt; echo to-err >&2")
	if got, _ := e.file("err.txt"); got != "to-err\n" || stdout != "" {
		t.Errorf("err.txt = %q, stdout %q", got, stdout)
	}
	if stdout, stderr, _ := e.run("echo back; echo e >&2"); stdout != "back\n" || stderr != "e\n" {
		t.Errorf("next call: %q %q", stdout, stderr)
	}
	// A here-string kept by exec, bigger than a pipe holds, and never read:
	// its pipe is closed at the end, which ends the interpreter's feeder.
	if stdout, _, _ := e.run("exec <<< $(seq 100000); echo kept"); stdout != "kept\n" {
		t.Errorf("exec here-string: %q", stdout)
	}
	if stdout, _, _ := e.run("exec < err.txt; cat"); stdout != "to-err\n" {
		t.Errorf("exec < file: %q", stdout)
	}
	if stdout, _, _ := e.run("cat; echo empty"); stdout != "empty\n" {
		t.Errorf("stdin after exec: %q", stdout)
	}
	waitGoroutines(t, "exec", before)
}

func TestQuota(t *testing.T) {
	e := newEnv(t, 100, 60, echoPython)
	e.put(map[string]string{"keep": strings.Repeat("k", 30)})
	q := e.ws.Quota()
	// A refusal of the quota reaches the guest as EIO (WASI has no ENOSPC
	// a host can return): "I/O error" here, and the adapter adds the
	// cause to the call's stderr. MaxFileBytes is the shell's own.
	steps := []struct {
		cmd    string
		code   int
		stderr string
	}{
		{"printf '%050d' 0 > a", 0, ""},          // 80 of 100
		{"printf '%030d' 0 > b", 1, "I/O error"}, // over the quota
		{"cp a c", 1, "I/O error"},
		{"printf '%051d' 0 > keep", 1, "I/O error"},     // keep's 30 bytes are credited: 21 more do not fit
		{"printf '%070d' 0 > big", 1, "File too large"}, // over MaxFileBytes
		{"cat a a > big", 1, "File too large"},
		{"seq 1000 | tee t >/dev/null", 1, ""},
		{"echo x >> a; echo $?", 0, ""},
		{"printf '%030d' 0 | sort > s", 1, "I/O error"},
	}
	for _, s := range steps {
		_, stderr, code := e.run(s.cmd)
		if code != s.code || !strings.Contains(stderr, s.stderr) {
			t.Errorf("%s: code %d stderr %q; want %d and %q", s.cmd, code, stderr, s.code, s.stderr)
		}
	}
	for _, gone := range []string{"b", "c", "big", "s"} {
		if _, ok := e.file(gone); ok {
			t.Errorf("%s was written despite the refusal", gone)
		}
	}
	if got, _ := e.file("keep"); got != strings.Repeat("k", 30) {
		t.Errorf("a refused overwrite changed keep: %q", got)
	}
	if got, _ := e.file("a"); got != strings.Repeat("0", 50)+"x\n" {
		t.Errorf("a = %q", got)
	}
	// rm gives the bytes back.
	used := q.Used()
	if _, stderr, code := e.run("rm a && printf '%060d' 0 > n"); code != 0 {
		t.Errorf("after rm: %d %q", code, stderr)
	}
	if got := q.Used(); got != used-52+60 {
		t.Errorf("quota used %d, want %d", got, used-52+60)
	}
	// A full quota fails an append loop instead of running away.
	_, stderr, code := e.run("for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo line$i >> log || break; done; echo st=$?")
	if code != 0 || !strings.Contains(stderr, "I/O error") {
		t.Errorf("append loop: %d %q", code, stderr)
	}
	if q.Used() > q.Limit() {
		t.Errorf("quota used %d over its limit %d", q.Used(), q.Limit())
	}
}

func TestMaxFileBytesOnReads(t *testing.T) {
	e := newEnv(t, 0, 10, echoPython)
	e.put(map[string]string{"big": "0123456789abcdef\n", "small": "b\na\n"})
	_, stderr, code := e.run("sort big")
	if code != 2 || !strings.Contains(stderr, "input too large") {
		t.Errorf("sort of a big file: %d %q", code, stderr)
	}
	// Streaming commands read any size.
	stdout, _, code := e.run("cat big | head -c 4; sort small")
	if stdout != "0123a\nb\n" || code != 0 {
		t.Errorf("got %q %d", stdout, code)
	}
}

func TestCommandSubstitutionCap(t *testing.T) {
	e := newEnv(t, 0, 100, echoPython)
	stdout, stderr, code := e.run(`x=$(seq 1000); echo "${#x} $?"; y=$(seq 10); echo ${#y}`)
	if stdout != "100 1\n20\n" || code != 0 || !strings.Contains(stderr, "command substitution output over 100 bytes") {
		t.Errorf("got %q %q %d", stdout, stderr, code)
	}
}

func TestPython(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	e.put(map[string]string{"sub/run.py": "#!/usr/bin/env python3\nprint(1)\n"})
	cases := []struct{ cmd, stdout, stderr string }{
		{`python -c 'print(1)' a`, `argv=["python" "-c" "print(1)" "a"] stdin="" dir=/workspace` + "\n", "py-stderr\n"},
		{`echo data | python3 -`, `argv=["python3" "-"] stdin="data\n" dir=/workspace` + "\n", "py-stderr\n"},
		{`(cd sub && python3 run.py x y 2>/dev/null)`, `argv=["python3" "run.py" "x" "y"] stdin="" dir=/workspace/sub` + "\n", ""},
		{`chmod +x sub/run.py && sub/run.py z 2>&1 | sort`, "argv=[\"python3\" \"sub/run.py\" \"z\"] stdin=\"\" dir=/workspace\npy-stderr\n", ""},
		{`python3 -c x > out.txt 2>&1; cat out.txt`, "argv=[\"python3\" \"-c\" \"x\"] stdin=\"\" dir=/workspace\npy-stderr\n", ""},
	}
	for _, c := range cases {
		stdout, stderr, code := e.run(c.cmd)
		if stdout != c.stdout || stderr != c.stderr || code != 0 {
			t.Errorf("%s:\n got %q %q %d\nwant %q %q 0", c.cmd, stdout, stderr, code, c.stdout, c.stderr)
		}
	}
	// The status comes back; exported variables reach Python.
	if _, _, code := e.run("PYSTATUS=5 python -c x 2>/dev/null"); code != 5 {
		t.Errorf("python status %d, want 5", code)
	}
	if stdout, _, _ := e.run("PYSTATUS=3 python -c x >/dev/null 2>&1 || echo failed $?"); stdout != "failed 3\n" {
		t.Errorf("got %q", stdout)
	}
	// Without an interpreter python is not available.
	n := newEnv(t, 0, 0, nil)
	for _, cmd := range []string{"python -c 1", "python3 x.py"} {
		_, stderr, code := n.run(cmd)
		if code != 127 || !strings.Contains(stderr, ": not available") {
			t.Errorf("%s without Python: %d %q", cmd, code, stderr)
		}
	}
	if _, _, code := n.run("which python3"); code != 1 {
		t.Errorf("which python3 without Python: %d", code)
	}
	// A Python error is the command's failure, not the shell's.
	failing := newEnv(t, 0, 0, func(context.Context, wasmshell.PythonCall) wasmshell.PythonResult {
		return wasmshell.PythonResult{Error: "interpreter crashed"}
	})
	if _, stderr, code := failing.run("python -c 1"); code != 1 || !strings.Contains(stderr, "interpreter crashed") {
		t.Errorf("failing Python: %d %q", code, stderr)
	}
}

// TestConcurrentWrites has pipeline stages and background jobs write to the
// caller's writers (plain bytes.Buffers) at once: -race checks the locking.
func TestConcurrentWrites(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	cmd := `for i in $(seq 200); do echo a$i >&2; done | { for i in $(seq 200); do echo b$i >&2; done; cat; } &
for i in $(seq 200); do echo c$i; done > f &
for i in $(seq 200); do echo d$i >&2; done
wait
python -c x | python -c y | wc -l`
	stdout, stderr, code := e.run(cmd)
	if code != 0 || stdout != "1\n" {
		t.Errorf("got %q %d", stdout, code)
	}
	for _, p := range []string{"a200\n", "b200\n", "d200\n"} {
		if !strings.Contains(stderr, p) {
			t.Errorf("stderr lacks %q", p)
		}
	}
	if got, _ := e.file("f"); strings.Count(got, "\n") != 200 {
		t.Errorf("f has %d lines", strings.Count(got, "\n"))
	}
}

func TestNilWriters(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	code, err := e.sh.Run(context.Background(), "echo x; echo y >&2; false", nil, nil)
	if code != 1 || err != nil {
		t.Fatalf("got %d %v", code, err)
	}
}

// TestOutputWriterErrors has the caller's writer fail (as an output limit
// would): commands stop writing and the script goes on.
func TestOutputWriterErrors(t *testing.T) {
	e := newEnv(t, 0, 0, echoPython)
	w := &failAfter{n: 10}
	var er bytes.Buffer
	ctx, cancel := testwait.Context(t)
	defer cancel()
	code, err := e.sh.Run(ctx, "seq 100000; echo done >&2", w, &er)
	if err != nil || code != 0 || !strings.Contains(er.String(), "done") {
		t.Fatalf("got %d %v %q", code, err, er.String())
	}
	if !strings.Contains(er.String(), "write error") {
		t.Errorf("no write error reported: %q", er.String())
	}
}

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("output limit reached")
	}
	f.n--
	return len(p), nil
}

func TestCommandsTableIsDocumented(t *testing.T) {
	// Every command is mentioned in the package documentation.
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for name := range commands {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(name) + `\b`).Match(doc) {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("doc.go does not mention %v", missing)
	}
}

// TestTypeKnowsFunctions: type and command -v find the shell's functions
// (functions reads them from the interpreter, whose HandlerContext hides
// them: this fails when a new mvdan.cc/sh keeps them elsewhere), a
// subshell's own among them, before builtins and commands of that name.
func TestTypeKnowsFunctions(t *testing.T) {
	runTable(t, []tc{
		{name: "type -t", cmd: "f() { echo hi; }; type -t f; command -v f; command -V f", stdout: "function\nf\nf is a function\nf () \n{ \n    echo hi\n}\n"},
		{name: "a function named as a command", cmd: "ls() { echo mine; }; type -t ls; ls", stdout: "function\nmine\n"},
		{name: "in a subshell", cmd: "( g() { :; }; type -t g ); type -t g; echo $?", stdout: "function\n1\n"},
		{name: "unset", cmd: "f() { :; }; unset -f f; type -t f; echo $?", stdout: "1\n"},
	})
}

// TestTime: time prints its report on stderr, as bash does (the
// interpreter's own printed it on stdout, into the call's output and into
// command substitutions), and the clause has its statement's status.
func TestTime(t *testing.T) {
	report := `(?s)^\nreal\t0m\d+\.\d{3}s\nuser\t0m0\.000s\nsys\t0m0\.000s\n$`
	posix := `(?s)^real \d+\.\d{2}\nuser 0\.00\nsys 0\.00\n$`
	runTable(t, []tc{
		{name: "report on stderr", cmd: "time echo hi", stdout: "hi\n", anyErr: true},
		{name: "not in a substitution", cmd: `x=$(time echo hi 2>/dev/null); echo "[$x]"`, stdout: "[hi]\n", anyErr: true},
		{name: "the report as bash formats it", cmd: "{ time echo hi >/dev/null; } 2>&1 | sed 's/[0-9]/N/g'", stdout: "\nreal\tNmN.NNNs\nuser\tNmN.NNNs\nsys\tNmN.NNNs\n"},
		{name: "posix format", cmd: "{ time -p true; } 2>&1 | sed 's/[0-9]/N/g'", stdout: "real N.NN\nuser N.NN\nsys N.NN\n"},
		{name: "status", cmd: "time false; echo $?; time (exit 3); echo $?; ! time false; echo $?", stdout: "1\n3\n0\n", anyErr: true},
		{name: "set -e reports, then ends", cmd: "set -e; { time false; } 2>&1 | grep -c real; time false 2>/dev/null; echo not here", stdout: "1\n", code: 1, anyErr: true},
		{name: "a pipeline", cmd: "time printf 'a\\nb\\n' | wc -l", stdout: "2\n", anyErr: true},
		{name: "nested and in a function", cmd: "f() { time echo in; }; { time f; } 2>&1 | grep -c real", stdout: "2\n"},
		{name: "recursion", cmd: "f() { if [ $1 -gt 0 ]; then time f $(($1 - 1)); fi; }; { f 3; } 2>&1 | grep -c real", stdout: "3\n"},
		{name: "left by return", cmd: "f() { time return 4; }; for i in 1 2 3; do f; done; echo $?; { time true; } 2>&1 | grep -c real", stdout: "4\n1\n", anyErr: true},
		{name: "type shows it as written", cmd: "f() { time -p echo hi | wc -l; }; type f; g() { time; }; type g", stdout: "f is a function\nf () \n{ \n    time -p echo hi | wc -l\n}\ng is a function\ng () \n{ \n    time\n}\n"},
		{name: "set -x shows the statement only", cmd: "set -x; time echo hi", stdout: "hi\n", stderr: "+ echo hi\n\nreal\t"},
	})
	// The stack guard stops clauses nested too deep, when the script is
	// parsed or when it runs; the latter names time as typed.
	for _, n := range []int{2000, 4000, 8000} {
		e := newEnv(t, 0, 0, echoPython)
		_, stderr, code := e.run(strings.Repeat("time ", n) + "echo hi")
		switch {
		case code == 0:
		case strings.Contains(stderr, "while parsing"):
		case !strings.Contains(stderr, "bash: time: maximum function nesting level exceeded"):
			t.Errorf("%d nested: status %d, stderr %q", n, code, stderr)
		}
	}
	for _, tt := range []struct{ cmd, re string }{{"time true", report}, {"time -p true", posix}, {"time", report}} {
		e := newEnv(t, 0, 0, echoPython)
		if _, stderr, code := e.run(tt.cmd); code != 0 || !regexp.MustCompile(tt.re).MatchString(stderr) {
			t.Errorf("%s: status %d, stderr %q, want it to match %q", tt.cmd, code, stderr, tt.re)
		}
	}
}

// TestUmask: the mask files are made under is printed as bash prints it,
// setting it to itself succeeds, and another mask, which would not be
// applied, is refused with a reason.
func TestUmask(t *testing.T) {
	runTable(t, []tc{
		{name: "print", cmd: "umask; umask -S; umask -p; type -t umask", stdout: "0022\nu=rwx,g=rx,o=rx\numask 0022\nbuiltin\n"},
		{name: "same mask", cmd: "set -e; umask 022; umask 0022; umask u=rwx,go=rx; umask g-w,o-w; echo kept", stdout: "kept\n"},
		{name: "another mask", cmd: "umask 077", stderr: "bash: umask: 077: only the mask 0022 is supported here: files are created 0644 and directories 0755; use chmod to change a file's mode", code: 1},
		{name: "not a mode", cmd: "umask u=q", stderr: "bash: umask: u=q: invalid symbolic mode", code: 1},
		{name: "not octal", cmd: "umask 8", stderr: "bash: umask: 8: octal number out of range", code: 1},
		{name: "empty", cmd: "umask ''", stderr: "bash: umask: : invalid symbolic mode", code: 1},
		{name: "empty clauses", cmd: "umask ,=,", stderr: "bash: umask: ,=,: invalid symbolic mode", code: 1},
		{name: "bad option", cmd: "umask -z", stderr: "bash: umask: -z: invalid option\numask: usage: umask [-p] [-S] [mode]", code: 2},
	})
}

// TestTrap: a signal never reaches the sandbox's shell, so trap drops the
// signals it names and sets what is left (the EXIT trap of "trap f INT
// TERM EXIT"); trap -p and a bare trap print the traps set as bash does.
func TestTrap(t *testing.T) {
	runTable(t, []tc{
		{name: "signals before EXIT", cmd: "set -e; trap 'echo cleanup' INT sigterm 1 EXIT; echo working", stdout: "working\ncleanup\n"},
		{name: "signals only", cmd: "trap 'echo never' INT; echo $?; trap -p", stdout: "0\n"},
		{name: "print", cmd: `trap 'echo "it'\''s"' EXIT; trap 'echo failed' ERR; trap -p; trap -p ERR; trap - EXIT ERR; trap; echo end`, stdout: "trap -- 'echo \"it'\\''s\"' EXIT\ntrap -- 'echo failed' ERR\ntrap -- 'echo failed' ERR\nend\n"},
		{name: "EXIT by number", cmd: "trap 'echo bye' 0; trap -p 0", stdout: "trap -- 'echo bye' EXIT\nbye\n"},
		{name: "not a signal", cmd: "trap -p NOPE", stderr: "bash: trap: NOPE: invalid signal specification", code: 1},
		{name: "set not a signal", cmd: "trap 'echo x' NOPE", stderr: "trap: NOPE: invalid signal specification", code: 2},
	})
}
