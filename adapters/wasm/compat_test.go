package wasm

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/testkit/pyvenv"
	"github.com/codeport/codeport/port"
)

// pyCase is a cell and what it must print, completing.
type pyCase struct{ name, code, want string }

// runCases runs each case in the session, as a subtest.
func runCases(t *testing.T, a *testAdapter, id string, cases []pyCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			expect(t, run(t, a, id, c.code), c.want, 0, port.OutcomeCompleted)
		})
	}
}

// TestPathsBehaveAsOnLinux: a path outside the sandbox's mounts is
// missing, as on a machine whose user owns only its home and /tmp; it is
// not a capability error (PermissionError "Capabilities insufficient",
// which is what WASI gives a path no preopened directory covers), which
// made exists() raise, os.makedirs of the workspace fail and os.devnull
// unusable.
func TestPathsBehaveAsOnLinux(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	runCases(t, a, id, []pyCase{
		{"missing path", "from pathlib import Path\nprint(Path('/nonexistent/x').exists(), Path('/nonexistent/x').is_file(), Path('/etc/passwd').exists())", "False False False\n"},
		{"missing file", "try:\n    open('/etc/passwd')\nexcept FileNotFoundError as e:\n    print(e.errno == __import__('errno').ENOENT)", "True\n"},
		{"root", "import os\nprint(os.path.exists('/'), os.path.isdir('/'), sorted(os.listdir('/')))", "True True ['dev', 'tmp', 'usr', 'workspace']\n"},
		{"walk up", "import os\nprint(os.path.isdir('/usr/local/lib'), os.path.isdir('/usr'), os.path.ismount('/workspace'))", "True True True\n"},
		{"makedirs workspace", "import os\nos.makedirs('/workspace', exist_ok=True)\nos.makedirs(os.path.dirname(os.path.abspath('out.csv')), exist_ok=True)\nos.makedirs('/workspace/a/b', exist_ok=True)\nprint(os.path.isdir('a/b'))", "True\n"},
		{"devnull", "import os\nwith open(os.devnull, 'w') as f:\n    print(f.write('x' * 100), file=__import__('sys').stdout)\nprint(repr(open(os.devnull).read()), os.path.exists(os.devnull))", "100\n'' True\n"},
		{"devnull subprocess style", "import os\nfd = os.open(os.devnull, os.O_RDWR)\nprint(os.write(fd, b'abc'), os.read(fd, 10))\nos.close(fd)", "3 b''\n"},
		{"root is not writable", "try:\n    open('/x.txt', 'w')\nexcept PermissionError:\n    print('refused')", "refused\n"},
		{"missing parent", "try:\n    open('/nonexistent/x.txt', 'w')\nexcept FileNotFoundError:\n    print('missing')", "missing\n"},
		{"mkdir in root", "import os\ntry:\n    os.mkdir('/data')\nexcept PermissionError:\n    print('refused')", "refused\n"},
		{"links explained", "import os\nopen('l.txt', 'w').close()\nfor f in (os.link, os.symlink):\n    try:\n        f('l.txt', 'm.txt')\n    except PermissionError as e:\n        print('not supported' in str(e), e.filename, e.filename2)\nprint(os.symlink in os.supports_dir_fd, os.path.exists('m.txt'))", "True l.txt m.txt\nTrue l.txt m.txt\nTrue False\n"},
		{"zoneinfo fallback", "import os\nprint(os.path.exists('/usr/share/zoneinfo/UTC'))", "False\n"},
	})
}

// TestUtimeAndTouchSetTheTime: os.utime(path) and Path.touch() of an
// existing file set its times to now (they set the epoch: the runtime's
// libc passes zeros for "now"), and explicit times still arrive intact.
func TestUtimeAndTouchSetTheTime(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	runCases(t, a, id, []pyCase{
		{"utime", "import os, time\nopen('u.txt', 'w').close()\nos.utime('u.txt', (1, 1))\nbefore = time.time()\nos.utime('u.txt')\nst = os.stat('u.txt')\nprint(abs(st.st_mtime - before) < 60, abs(st.st_atime - before) < 60)", "True True\n"},
		{"touch", "import os, time\nfrom pathlib import Path\nos.utime('u.txt', (1, 1))\nPath('u.txt').touch()\nprint(abs(os.stat('u.txt').st_mtime - time.time()) < 60)", "True\n"},
		{"by descriptor", "import os, time\nos.utime('u.txt', (1, 1))\nfd = os.open('u.txt', os.O_RDONLY)\nos.utime(fd)\nos.close(fd)\nprint(abs(os.stat('u.txt').st_mtime - time.time()) < 60, os.utime in os.supports_fd)", "True True\n"},
		{"explicit", "import os\nos.utime('u.txt', (1000, 2000))\nprint(os.stat('u.txt').st_mtime)\nos.utime('u.txt', ns=(5, 3_000_000_000))\nprint(os.stat('u.txt').st_mtime_ns)", "2000.0\n3000000000\n"},
		{"both refused", "import os\ntry:\n    os.utime('u.txt', (1, 2), ns=(1, 2))\nexcept ValueError:\n    print('refused')", "refused\n"},
		{"missing", "import os\ntry:\n    os.utime('nothing.txt')\nexcept FileNotFoundError:\n    print('missing')", "missing\n"},
	})
}

// TestTheSandboxUser: a program that asks who runs it gets the sandbox's
// user, "user", in Python and in a python run by the bash tool, whose
// environment has no USER, as the shell's whoami does; it owns the files
// it makes (WASI reports every owner as
// uid 0, the user's); a umask can be set and read back, and a chown
// succeeds as root's does (tarfile goes on after one) but changes nothing.
func TestTheSandboxUser(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	const code = "import getpass, os, pwd, pathlib\nopen('mine.txt', 'w').close()\nprint(getpass.getuser(), os.getuid(), os.getgid(), pwd.getpwuid(os.getuid()).pw_dir, os.path.expanduser('~user'), pathlib.Path('mine.txt').owner(), os.stat('mine.txt').st_uid == os.getuid())"
	const want = "user 0 0 /workspace /workspace user True\n"
	expect(t, run(t, a, id, code), want, 0, port.OutcomeCompleted)
	expect(t, run(t, a, id, "import pwd\ntry:\n    pwd.getpwnam('nobody')\nexcept KeyError:\n    print('unknown')"), "unknown\n", 0, port.OutcomeCompleted)
	expect(t, run(t, a, id, "import os\nold = os.umask(0o077)\nprint(oct(old), oct(os.umask(old)))"), "0o22 0o77\n", 0, port.OutcomeCompleted)
	// A chown succeeds as root's would and changes nothing: every file is
	// uid 0's. Its arguments are checked as os.chown checks them.
	expect(t, run(t, a, id, "import os, shutil\nos.chown('mine.txt', 1000, 1000)\nshutil.chown('mine.txt', user='user')\nprint(os.stat('mine.txt').st_uid)\nfor args in (('mine.txt', 1.5, 0), ('gone.txt', 0, 0)):\n    try:\n        os.chown(*args)\n    except (TypeError, FileNotFoundError) as e:\n        print(type(e).__name__)"),
		"0\nTypeError\nFileNotFoundError\n", 0, port.OutcomeCompleted)
	if _, err := a.PutFile(context.Background(), id, "who.py", strings.NewReader(code)); err != nil {
		t.Fatal(err)
	}
	res := bash(t, a, id, "python who.py", 0)
	if res.Stdout != want || res.ReturnCode != 0 {
		t.Fatalf("python who.py: %+v", res)
	}
	// The shell names the same user.
	if res := bash(t, a, id, "whoami; ls -l mine.txt | cut -d' ' -f3", 0); res.Stdout != "user\nuser\n" {
		t.Fatalf("whoami and ls -l: %+v", res)
	}
}

// TestAbsentCapabilitiesFailAsOSError: network, child processes and
// threads fail with errors that name the sandbox, of the types a program
// catches (URLError and OSError, RuntimeError for a thread as CPython
// raises when it can start no more), not AttributeError (os.system, which
// this build leaves out, included); os still lacks what programs test for
// (pipe, fork).
func TestAbsentCapabilitiesFailAsOSError(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	runCases(t, a, id, []pyCase{
		{"urlopen", "import urllib.request, urllib.error\ntry:\n    urllib.request.urlopen('http://example.com', timeout=5)\nexcept urllib.error.URLError as e:\n    print('sandbox' in str(e.reason))", "True\n"},
		{"resolve", "import socket\ntry:\n    socket.getaddrinfo('example.com', 80)\nexcept socket.gaierror as e:\n    print('no network' in str(e))\ntry:\n    socket.gethostbyname('localhost')\nexcept OSError as e:\n    print('no network' in str(e))", "True\nTrue\n"},
		{"socket", "import socket, errno\nfor f in (socket.socket, socket.socketpair):\n    try:\n        f()\n    except OSError as e:\n        print(e.errno == errno.ENOTSUP, 'no network' in str(e))", "True True\nTrue True\n"},
		{"connect", "import socket\ntry:\n    socket.create_connection(('127.0.0.1', 80), timeout=2)\nexcept OSError as e:\n    print('refused')", "refused\n"},
		{"pool", "import multiprocessing\ntry:\n    multiprocessing.Pool(2)\nexcept OSError as e:\n    print('sandbox' in str(e))", "True\n"},
		{"process", "import multiprocessing, os\ntry:\n    multiprocessing.Process(target=print).start()\nexcept OSError as e:\n    print('sandbox' in str(e), hasattr(os, 'pipe'), hasattr(os, 'fork'))", "True False False\n"},
		{"queue and lock", "import multiprocessing\nfor f in (multiprocessing.Queue, multiprocessing.Lock, multiprocessing.Manager):\n    try:\n        f()\n    except OSError as e:\n        print('sandbox' in str(e))", "True\nTrue\nTrue\n"},
		{"subprocess", "import subprocess, os, errno\nfor f in (lambda: subprocess.run(['ls']), lambda: subprocess.check_output('ls', shell=True), lambda: os.popen('ls')):\n    try:\n        f()\n    except OSError as e:\n        print(e.errno == errno.ENOTSUP, 'sandbox' in str(e))", "True True\nTrue True\nTrue True\n"},
		{"system", "import os\ntry:\n    os.system('pip install numpy')\nexcept OSError as e:\n    print('sandbox' in str(e), hasattr(os, 'fork'), hasattr(os, 'execv'))", "True False False\n"},
		{"libc_ver", "import platform\nprint(platform.libc_ver())", "('', '')\n"},
		{"thread", "import threading\ntry:\n    threading.Thread(target=print).start()\nexcept RuntimeError as e:\n    print('sandbox' in str(e))", "True\n"},
		{"executor", "from concurrent.futures import ThreadPoolExecutor\ntry:\n    ThreadPoolExecutor(2).submit(print, 1).result()\nexcept RuntimeError as e:\n    print('sandbox' in str(e))", "True\n"},
	})
}

// TestZoneInfoReadsTheSameFiles: zoneinfo reads a zone's file through
// the zip importer's directory rather than importlib.resources' new
// parse of the whole zip (20 ms a key); the bytes and every error are
// zoneinfo's own.
func TestZoneInfoReadsTheSameFiles(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	const code = `import zoneinfo, zoneinfo._common as c, datetime
load = c.load_tzdata
for key in ('Europe/Paris', 'America/New_York', 'UTC', 'Asia/Kolkata', 'America/Argentina/Buenos_Aires'):
    with load(key) as f, load.__wrapped__(key) as g:
        assert f.read() == g.read(), key
print(zoneinfo.ZoneInfo('Europe/Paris').utcoffset(datetime.datetime(2024, 7, 1)))
for key in ('Europe/Nowhere', 'Europe', 'Europe/Paris/', 'a\udc80b'):
    errs = []
    for f in (load, load.__wrapped__):
        try:
            f(key)
            errs.append(None)
        except Exception as e:
            errs.append(type(e).__name__)
    print(key.encode('utf-8', 'backslashreplace').decode(), errs[0], errs[0] == errs[1])
`
	expect(t, run(t, a, id, code), "2:00:00\nEurope/Nowhere ZoneInfoNotFoundError True\nEurope IsADirectoryError True\nEurope/Paris/ ZoneInfoNotFoundError True\na\\udc80b ZoneInfoNotFoundError True\n", 0, port.OutcomeCompleted)
}

// TestDiskUsageIsTheWorkspaceQuota: shutil.disk_usage (which needs
// statvfs, which WASI lacks) reports the workspace's limit and its use as
// the quota counts it, exactly: a file of the free bytes fits, one byte
// more does not (after a restore: TestRestoredDiskUsageIsTheRestoringLimit).
func TestDiskUsageIsTheWorkspaceQuota(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithWorkspaceLimit(1 << 20) })
	id := newSession(t, a)
	const code = `import os, shutil
os.makedirs('d/e', exist_ok=True)
with open('/tmp/t.bin', 'wb') as f:
    f.write(b'x' * 1000)
with open('d/e/f.bin', 'wb') as f:
    f.write(b'y' * 100000)
u = shutil.disk_usage('/workspace')
print(u.total, u == shutil.disk_usage('/tmp'), u.used)
with open('fits.bin', 'wb') as f:
    f.write(b'z' * u.free)
os.remove('fits.bin')
try:
    with open('over.bin', 'wb') as f:
        f.write(b'z' * (u.free + 1))
    print('wrote one byte more than free')
except OSError:
    print('one byte more refused')
`
	expect(t, run(t, a, id, code), "1048576 True 109192\none byte more refused\n", 0, port.OutcomeCompleted)
	expect(t, run(t, a, id, "import shutil\ntry:\n    shutil.disk_usage('/nowhere')\nexcept FileNotFoundError:\n    print('missing')"), "missing\n", 0, port.OutcomeCompleted)
}

// TestSQLiteLocksAsNative: the connections of one session lock one
// another as a native process's do: a reader proceeds beside another
// connection's open write transaction and sees the committed state, a
// second writer waits (here: timeout 0, so "database is locked" at once),
// and two databases never share a lock. The runtime's sqlite used to lock
// with dot-files, one level for everything, so the read failed too; it
// now has FTS4 and FTS3 as native builds do.
func TestSQLiteLocksAsNative(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	runCases(t, a, id, []pyCase{
		{"reader beside a writer", `import sqlite3, os
a = sqlite3.connect('s.db', isolation_level=None)
a.execute('create table t(x)')
a.execute('insert into t values (1)')
b = sqlite3.connect('s.db', timeout=0)
a.execute('begin')
a.execute('insert into t values (2)')
print(b.execute('select count(*) from t').fetchone()[0])
try:
    b.execute('insert into t values (3)')
except sqlite3.OperationalError as e:
    print('second writer:', e)
b.rollback()
a.execute('commit')
print(b.execute('select count(*) from t').fetchone()[0])
c = sqlite3.connect('other.db', isolation_level=None)
c.execute('create table u(y)')
c.execute('begin')
c.execute('insert into u values (1)')
a.execute('begin')
a.execute('insert into t values (4)')
a.execute('commit')
c.execute('commit')
print(sorted(n for n in os.listdir('.') if n.startswith(('s.db', 'other.db'))))
`, "1\nsecond writer: database is locked\n2\n['other.db', 's.db']\n"},
		{"fts4 and fts3", `import sqlite3
d = sqlite3.connect(':memory:')
d.execute('create virtual table f using fts4(body)')
d.execute("insert into f values ('the quick brown fox'), ('lazy dog'), ('a cat')")
print(d.execute("select body from f where f match 'quick OR (lazy AND dog)' order by rowid").fetchall())
d.execute('create virtual table g using fts3(body)')
d.execute('create virtual table h using fts5(body)')
print(d.execute("select count(*) from f where f match 'cat'").fetchone()[0])
`, "[('the quick brown fox',), ('lazy dog',)]\n1\n"},
	})
}

// TestStdlibSourceInTracebacks: the standard library's sources are in the
// runtime's zip beside its bytecode, so a traceback through stdlib frames
// shows their lines (to the program and in an uncaught error's stderr)
// and inspect.getsource finds stdlib functions, as natively; the bytecode
// is still what runs.
func TestStdlibSourceInTracebacks(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	runCases(t, a, id, []pyCase{
		{"frames have lines", `import json, traceback
try:
    json.loads('[1, 2')
except ValueError as e:
    frames = traceback.extract_tb(e.__traceback__)
stdlib = [f for f in frames if 'python313.zip' in f.filename]
print(len(stdlib) >= 2, all(f.line for f in stdlib), stdlib[0].line)
`, "True True return _default_decoder.decode(s)\n"},
		{"getsource", "import inspect, json, textwrap\nprint(inspect.getsource(json.loads).splitlines()[0], inspect.getsourcefile(textwrap.dedent).endswith('python313.zip/textwrap.py'))", "def loads(s, *, cls=None, object_hook=None, parse_float=None, True\n"},
		{"bytecode runs", "import json\nprint(json.__spec__.origin.endswith('python313.zip/json/__init__.pyc'))", "True\n"},
	})
	res := run(t, a, id, "import json\njson.loads('{')")
	if res.Outcome != port.OutcomeProgramError || !strings.Contains(res.Stderr, "return _default_decoder.decode(s)") {
		t.Fatalf("an uncaught error's traceback lacks the stdlib line: %+v", res)
	}
}

// TestFStringsCompileAsNative: f-strings mean what they mean natively after
// the runtime's tokenizer stopped copying the rest of a string's source at
// every replacement field (it made compiling many fields quadratic: see
// BenchmarkFStringCompile): debug expressions (=) with conversions, format
// specs, spaces, comments and newlines, nested fields, errors, a source in
// another encoding; from a string, an imported module and a script the
// bash tool's python reads from a file (whose tokenizer is unchanged).
// The expected lines are what native CPython 3.13 prints.
func TestFStringsCompileAsNative(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	const code = `x, w, y = 3.14159, 10, 'ab'
print(f'{x=}', f'{x = }', f'{x=!r:>12}', f'{x=:.2f}', f'{y!r}', f'{x:{w}.{2}f}')
print(f'{ x  =  }', f'''{
x # comment
=}''')
print(f"{'a' if x else 'b'=}", f'{[i for i in range(3)]=}', f'{(lambda: 1)()=}')
print(f'{x!s:{w}}|', f'{f"{x=}"=}', f'{x=!s:{w}}|', f'{y=}{x=}')
s = "f'" + '{x} ' * 20000 + "'"
print(len(eval(s)))
src = ''.join(f"v{i} = f'{{x}}{{y=}}{{w:>{i % 5 + 1}}}'\n" for i in range(2000))
ns = {'x': 1, 'y': 2, 'w': 3}
exec(src, ns)
print(ns['v1999'], ns['v7'])
for bad in ("f'{'", "f'{x=!z}'", "f'{}'", "f'{x!}'", "f'{x=:{'"):
    try:
        compile(bad, 'b', 'eval')
    except SyntaxError as e:
        print(e.msg)
import tokenize, io
print([t.string for t in tokenize.generate_tokens(io.StringIO("f'{x=}'\n").readline)][:5])
print(eval(b"# -*- coding: latin-1 -*-\nf'{x=}\xe9'".decode('latin-1')))
exec(compile(b"# -*- coding: latin-1 -*-\nprint(f'{x=}\xe9', f'''{\nx\n=}''')\n", 'e', 'exec'))
`
	const want = "x=3.14159 x = 3.14159 x=     3.14159 x=3.14 'ab'       3.14\n" +
		" x  =  3.14159 \nx \n=3.14159\n" +
		"'a' if x else 'b'='a' [i for i in range(3)]=[0, 1, 2] (lambda: 1)()=1\n" +
		"3.14159   | f\"{x=}\"='x=3.14159' x=3.14159   | y='ab'x=3.14159\n" +
		"160000\n" +
		"1y=2    3 1y=2  3\n" +
		"f-string: expecting '}'\n" +
		"f-string: invalid conversion character 'z': expected 's', 'r', or 'a'\n" +
		"f-string: valid expression required before '}'\n" +
		"f-string: missing conversion character\n" +
		"f-string: expecting '}'\n" +
		"[\"f'\", '{', 'x', '=', '}']\n" +
		"x=3.14159\u00e9\n" +
		"x=3.14159\u00e9 \nx\n=3.14159\n"
	expect(t, run(t, a, id, code), want, 0, port.OutcomeCompleted)
	for _, f := range []struct{ name, body string }{{"fmod.py", code}, {"fscript.py", "import fmod\n" + code}} {
		if _, err := a.PutFile(context.Background(), id, f.name, strings.NewReader(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	expect(t, run(t, a, id, "import fmod"), want, 0, port.OutcomeCompleted)
	res := bash(t, a, id, "python fscript.py", 0)
	if res.Stdout != want+want || res.ReturnCode != 0 {
		t.Fatalf("python fscript.py: %+v", res)
	}
}

// TestPytestRunsWithItsDefaults: pytest, from its wheels uploaded to the
// workspace, runs a test file with its default options, from Python and
// as python -m pytest in the bash tool. Its default capture and its
// faulthandler plugin duplicate descriptors, which WASI cannot: here they
// capture at the sys level and run without the plugin, and a test that
// asks for descriptor capture (capfd) errs saying why.
func TestPytestRunsWithItsDefaults(t *testing.T) {
	wheels := pyvenv.Wheels(t, "pytest", "pytest==8.3.5", "pluggy==1.5.0", "iniconfig==2.1.0", "packaging==25.0")
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	ctx := context.Background()
	found, err := filepath.Glob(filepath.Join(wheels, "*.whl"))
	if err != nil || len(found) != 4 {
		t.Fatalf("wheels in %s: %v %v", wheels, found, err)
	}
	for _, w := range found {
		f, err := os.Open(w)
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.PutFile(ctx, id, "wheels/"+filepath.Base(w), f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	const tests = `def test_tmp_path(tmp_path):
    (tmp_path / 'a.txt').write_text('hi')
    assert (tmp_path / 'a.txt').read_text() == 'hi'

def test_capsys(capsys):
    print('to capsys')
    assert capsys.readouterr().out == 'to capsys\n'

def test_fails():
    print('shown because the test fails')
    assert 1 + 1 == 3

def test_capfd(capfd):
    pass
`
	if _, err := a.PutFile(ctx, id, "test_sample.py", strings.NewReader(tests)); err != nil {
		t.Fatal(err)
	}
	check := func(how, out string) {
		t.Helper()
		for _, want := range []string{"test_sample.py ..FE", "shown because the test fails", "needs os.dup", "1 failed, 2 passed, 1 error"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the output lacks %q:\n%s", how, want, out)
				return
			}
		}
	}
	res := run(t, a, id, "import glob, sys\nsys.path[:0] = sorted(glob.glob('/workspace/wheels/*.whl'))\nimport pytest\ncode = pytest.main(['test_sample.py'])\nprint('exit', int(code))")
	if res.Outcome != port.OutcomeCompleted || !strings.HasSuffix(res.Stdout, "exit 1\n") {
		t.Fatalf("pytest.main: %+v", res)
	}
	check("pytest.main", res.Stdout)
	sh := bash(t, a, id, "PYTHONPATH=$(ls wheels/*.whl | tr '\\n' ':') python -m pytest test_sample.py", 0)
	if sh.ReturnCode != 1 {
		t.Errorf("python -m pytest: exit status %d, want 1 (a test failed): %+v", sh.ReturnCode, sh)
	}
	check("python -m pytest", sh.Stdout+sh.Stderr)
}

// TestBashPythonReadsPYTHONPATH: python in the bash tool puts PYTHONPATH's
// entries (relative ones from the shell's directory) before the standard
// library for that command, as python does at start, unless -E or -I.
// Each command has an interpreter of its own: the session's code_execution
// interpreter neither has those entries nor the modules they gave.
func TestBashPythonReadsPYTHONPATH(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	for _, c := range []struct{ cmd, want string }{
		{"mkdir -p lib/pkg && echo 'x = 42' > lib/pkg/m.py && PYTHONPATH=/nowhere:lib python -c 'import sys, pkg.m; print(sys.path[1:3], pkg.m.x)'", "['/nowhere', '/workspace/lib'] 42\n"},
		{"cd lib && PYTHONPATH=. python -m pkg.m && echo ran", "ran\n"},
		{"PYTHONPATH=lib python -E -c 'import sys; print(\"/workspace/lib\" in sys.path)'", "False\n"},
	} {
		if res := bash(t, a, id, c.cmd, 0); res.Stdout != c.want || res.ReturnCode != 0 {
			t.Errorf("%s: %+v, want stdout %q", c.cmd, res, c.want)
		}
	}
	expect(t, run(t, a, id, "import sys\nprint([p for p in sys.path if 'lib' in p or 'nowhere' in p], 'pkg.m' in sys.modules)"), "['/usr/local/lib/python313.zip'] False\n", 0, port.OutcomeCompleted)
}

// TestPermissionBits: os.stat, os.lstat, os.DirEntry.stat and pathlib
// report a file's permission bits, which os.chmod sets (WASI has neither:
// the runtime asks the host), and os.open and os.mkdir give a new file the
// mode asked for under the umask (tempfile's 0600 and 0700), within the
// bash tool's rules: nothing group- or world-writable, set-id or sticky,
// a directory keeps its owner's rwx,
// a mount's root and what is outside the mounts keep theirs (the system's,
// read-only: r-x and r--). Python and the bash tool see the same bits.
func TestPermissionBits(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	const code = `import os, stat, shutil, pathlib, errno
def bits(p):
    return oct(stat.S_IMODE(os.stat(p).st_mode))
open("f.txt", "w").close()
os.chmod("f.txt", 0o600)
print(bits("f.txt"), oct(stat.S_IMODE(os.lstat("f.txt").st_mode)), oct(stat.S_IMODE(pathlib.Path("f.txt").stat().st_mode)),
      [oct(stat.S_IMODE(e.stat().st_mode)) for e in os.scandir(".") if e.name == "f.txt"])
for m in (0o640, 0o777, 0o4755, 0o000):
    os.chmod("f.txt", m)
    print(oct(m), bits("f.txt"))
os.mkdir("d")
os.chmod("d", 0o500)
print("dir", bits("d"), stat.S_ISDIR(os.stat("d").st_mode))
open("d/g.txt", "w").close()
os.chdir("d")
os.chmod("g.txt", 0o604)
os.chmod("../f.txt", 0o640)
os.chdir("/workspace")
print(bits("d/g.txt"), bits("f.txt"), bits("/workspace/d/../f.txt"))
shutil.copymode("d/g.txt", "f.txt")
print("copymode", bits("f.txt"))
open("/tmp/t.txt", "w").close()
os.chmod("/tmp/t.txt", 0o700)
print("tmp", bits("/tmp/t.txt"))
for p in ("/workspace", "/tmp", "/usr/local/lib", "/nonexistent/x", "/workspace/missing"):
    try:
        os.chmod(p, 0o700)
        print(p, "changed")
    except OSError as e:
        print(p, type(e).__name__, errno.errorcode[e.errno])
print(bits("/workspace") != "0o0", bits("/usr/local/lib"), bits("/usr/local/lib/python313.zip"), bits("/"))
import tempfile
fd, name = tempfile.mkstemp(dir=".")
os.close(fd)
old = os.umask(0o077)
pathlib.Path("t").touch()
os.mkdir("pd")
os.umask(old)
print("created", bits(name), bits(tempfile.mkdtemp(dir=".")), bits("t"), bits("pd"), bits("d/g.txt"))
`
	const want = `0o600 0o600 0o600 ['0o600']
0o640 0o640
0o777 0o755
0o4755 0o755
0o0 0o0
dir 0o700 True
0o604 0o640 0o640
copymode 0o604
tmp 0o700
/workspace PermissionError EPERM
/tmp PermissionError EPERM
/usr/local/lib PermissionError EPERM
/nonexistent/x FileNotFoundError ENOENT
/workspace/missing FileNotFoundError ENOENT
True 0o555 0o444 0o555
created 0o600 0o700 0o600 0o700 0o604
`
	expect(t, run(t, a, id, code), want, 0, port.OutcomeCompleted)
	if res := bash(t, a, id, "stat -c '%a %n' f.txt d d/g.txt; chmod 750 d/g.txt", 0); res.Stdout != "604 f.txt\n700 d\n604 d/g.txt\n" || res.ReturnCode != 0 {
		t.Errorf("bash stat: %+v", res)
	}
	expect(t, run(t, a, id, "import os, stat\nprint(oct(stat.S_IMODE(os.stat('d/g.txt').st_mode)))"), "0o750\n", 0, port.OutcomeCompleted)
}

// TestArchivesHaveReadableModes: tarfile and zipfile (and so
// shutil.make_archive) give the files and directories they archive their
// permission bits, which a new file has as natively under the usual umask
// (0644, 0755), not the none WASI reports: with mode 000 an extracted
// file was unreadable and a directory impassable. Bits os.chmod set are
// kept, also for a file tarfile reads through its descriptor (os.fstat
// has no bits). Read back on the host, by Go's readers.
func TestArchivesHaveReadableModes(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	expect(t, run(t, a, id, `import os, tarfile, zipfile, shutil
os.makedirs('out/sub', exist_ok=True)
open('out/a.txt', 'w').write('a')
open('out/sub/b.txt', 'w').write('b')
open('secret.txt', 'w').write('s')
os.chmod('secret.txt', 0o600)
with tarfile.open('o.tar', 'w') as t:
    t.add('out')
    with open('secret.txt', 'rb') as f:  # through the descriptor (os.fstat)
        t.addfile(t.gettarinfo(arcname='via_fd.txt', fileobj=f), f)
shutil.make_archive('m', 'zip', 'out')
os.chmod('out/a.txt', 0o600)
os.chmod('out/sub', 0o700)
with zipfile.ZipFile('private.zip', 'w') as z:
    z.write('out/a.txt')
    z.write('out/sub')
print('ok')`), "ok\n", 0, port.OutcomeCompleted)
	read := func(name string) []byte {
		t.Helper()
		rc, _, err := a.GetFile(context.Background(), id, name)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	got := map[string]string{}
	tr := tar.NewReader(bytes.NewReader(read("o.tar")))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got["tar "+h.Name] = os.FileMode(h.Mode).String()
	}
	for _, name := range []string{"m.zip", "private.zip"} {
		b := read(name)
		zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range zr.File {
			got[name+" "+f.Name] = f.Mode().String()
		}
	}
	want := map[string]string{
		"tar out/": "-rwxr-xr-x", "tar out/a.txt": "-rw-r--r--", "tar out/sub/": "-rwxr-xr-x", "tar out/sub/b.txt": "-rw-r--r--",
		"tar via_fd.txt": "-rw-------",
		"m.zip sub/":     "drwxr-xr-x", "m.zip a.txt": "-rw-r--r--", "m.zip sub/b.txt": "-rw-r--r--",
		"private.zip out/a.txt": "-rw-------", "private.zip out/sub/": "drwx------",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: mode %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("members %v, want %v", got, want)
	}
}

// TestLocalTimeFollowsTZ: time.tzset exists and local time follows TZ as
// on Linux: a zone name (the tzdata zoneinfo reads), a POSIX rule, a name
// glibc reads as UTC under that name, and unset or empty as UTC; for
// time.localtime, mktime, strftime's %Z and %z, time.tzname, timezone,
// altzone and daylight, and datetime's local conversions. The wanted
// lines are what CPython 3.13 on glibc prints (runtime/localtime.c
// replaces wasi-libc's UTC-only time zone).
func TestLocalTimeFollowsTZ(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	const code = `import os, time, datetime
print(time.tzname, time.timezone, time.daylight)
for tz in ["Europe/Paris", "America/New_York", "Australia/Sydney", "Asia/Kolkata", ":Asia/Tokyo",
           "EST+05EDT,M4.1.0,M10.5.0", "AEST-10AEDT-11,M10.5.0,M3.5.0", "<+0330>-3:30", "Luna/Tycho", "UTC", ""]:
    os.environ["TZ"] = tz
    time.tzset()
    xmas, summer = time.localtime(1040774400), time.localtime(1751371200)
    print(repr(tz), time.tzname, time.timezone, time.altzone, time.daylight,
          time.strftime("%Y-%m-%d %H:%M %Z %z", xmas), time.strftime("%H:%M %Z %z", summer),
          int(time.mktime(xmas)), int(time.mktime(summer)),
          datetime.datetime.fromtimestamp(1751371200).isoformat(),
          datetime.datetime(2025, 1, 15, 12).astimezone().isoformat())
`
	const want = `('UTC', 'UTC') 0 0
'Europe/Paris' ('CET', 'CEST') -3600 -7200 1 2002-12-25 01:00 CET +0100 14:00 CEST +0200 1040774400 1751371200 2025-07-01T14:00:00 2025-01-15T12:00:00+01:00
'America/New_York' ('EST', 'EDT') 18000 14400 1 2002-12-24 19:00 EST -0500 08:00 EDT -0400 1040774400 1751371200 2025-07-01T08:00:00 2025-01-15T12:00:00-05:00
'Australia/Sydney' ('AEST', 'AEDT') -36000 -39600 1 2002-12-25 11:00 AEDT +1100 22:00 AEST +1000 1040774400 1751371200 2025-07-01T22:00:00 2025-01-15T12:00:00+11:00
'Asia/Kolkata' ('IST', 'IST') -19800 -19800 0 2002-12-25 05:30 IST +0530 17:30 IST +0530 1040774400 1751371200 2025-07-01T17:30:00 2025-01-15T12:00:00+05:30
':Asia/Tokyo' ('JST', 'JST') -32400 -32400 0 2002-12-25 09:00 JST +0900 21:00 JST +0900 1040774400 1751371200 2025-07-01T21:00:00 2025-01-15T12:00:00+09:00
'EST+05EDT,M4.1.0,M10.5.0' ('EST', 'EDT') 18000 14400 1 2002-12-24 19:00 EST -0500 08:00 EDT -0400 1040774400 1751371200 2025-07-01T08:00:00 2025-01-15T12:00:00-05:00
'AEST-10AEDT-11,M10.5.0,M3.5.0' ('AEST', 'AEDT') -36000 -39600 1 2002-12-25 11:00 AEDT +1100 22:00 AEST +1000 1040774400 1751371200 2025-07-01T22:00:00 2025-01-15T12:00:00+11:00
'<+0330>-3:30' ('+0330', '+0330') -12600 -12600 0 2002-12-25 03:30 +0330 +0330 15:30 +0330 +0330 1040774400 1751371200 2025-07-01T15:30:00 2025-01-15T12:00:00+03:30
'Luna/Tycho' ('Luna', 'Luna') 0 0 0 2002-12-25 00:00 Luna +0000 12:00 Luna +0000 1040774400 1751371200 2025-07-01T12:00:00 2025-01-15T12:00:00+00:00
'UTC' ('UTC', 'UTC') 0 0 0 2002-12-25 00:00 UTC +0000 12:00 UTC +0000 1040774400 1751371200 2025-07-01T12:00:00 2025-01-15T12:00:00+00:00
'' ('UTC', 'UTC') 0 0 0 2002-12-25 00:00 UTC +0000 12:00 UTC +0000 1040774400 1751371200 2025-07-01T12:00:00 2025-01-15T12:00:00+00:00
`
	expect(t, run(t, a, id, code), want, 0, port.OutcomeCompleted)

	// Every zone zoneinfo offers gives, through TZ, the offset, name and
	// daylight-saving flag zoneinfo computes from the same file, from 1900
	// to 2100 (TZif transitions, then the file's POSIX rule).
	const everyZone = `import os, time, datetime, zoneinfo
keys = sorted(zoneinfo.available_timezones())
bad = []
for key in keys:
    os.environ["TZ"] = key
    time.tzset()
    z = zoneinfo.ZoneInfo(key)
    for t in range(-2208988800, 4102444800, 86400 * 4093 + 3599):
        tm = time.localtime(t)
        d = datetime.datetime.fromtimestamp(t, z)
        if (tm.tm_gmtoff, tm.tm_zone, tm.tm_isdst) != (d.utcoffset().total_seconds(), d.tzname(), int(bool(d.dst()))):
            bad.append((key, t))
print(len(keys) > 500, bad[:5])
`
	expect(t, run(t, a, id, everyZone), "True []\n", 0, port.OutcomeCompleted)

	// TZ and a file it names are a program's to write: nothing it writes
	// crashes the interpreter or reads past the data; what is not a zone
	// is UTC, as glibc gives. A TZif file by absolute path is read.
	const hostile = `import os, time, importlib.resources
paris = importlib.resources.files("tzdata.zoneinfo").joinpath("Europe/Paris").read_bytes()
files = {
    "truncated": paris[:60],
    "huge-counts": b"TZif2" + b"\0" * 15 + b"\xff" * 24 + paris[44:],
    "bad-index": paris[:44] + b"\x7f" * (len(paris) - 44),
    "copy": paris,
    "empty": b"",
}
for name, data in files.items():
    with open(name, "wb") as f:
        f.write(data)
for tz in ["/workspace/" + n for n in files] + ["A" * 5000, "<", "../../usr/local/lib/python313.zip",
           "/usr/local/lib/python313.zip", "tzdata/__init__.py", "__init__.py", "Europe/../Europe/Paris",
           "EST5EDT,M13.1.0,M1.1.0", "\udc80"]:
    os.environ["TZ"] = tz
    time.tzset()
    tm = time.localtime(1751371200)
    print(ascii(tz[:12]), tm.tm_zone[:12], tm.tm_gmtoff, time.strftime("%Z", tm)[:12])
`
	const hostileWant = `'/workspace/t' UTC 0 UTC
'/workspace/h' UTC 0 UTC
'/workspace/b' UTC 0 UTC
'/workspace/c' CEST 7200 CEST
'/workspace/e' UTC 0 UTC
'AAAAAAAAAAAA' UTC 0 UTC
'<' UTC 0 UTC
'../../usr/lo' UTC 0 UTC
'/usr/local/l' UTC 0 UTC
'tzdata/__ini' tzdata 0 tzdata
'__init__.py' UTC 0 UTC
'Europe/../Eu' Europe 0 Europe
'EST5EDT,M13.' EST -18000 EST
'\udc80' UTC 0 UTC
`
	expect(t, run(t, a, id, hostile), hostileWant, 0, port.OutcomeCompleted)

	// The bash tool's python starts with the shell's TZ, and the shell's
	// date, ls and stat read the same zones (the host gives its guest the
	// tzdata Python reads).
	for _, c := range []struct{ cmd, want string }{
		{"TZ=Asia/Tokyo python -c 'import time; print(time.strftime(\"%H %Z\", time.localtime(0)), time.timezone, time.tzname)'", "09 JST -32400 ('JST', 'JST')\n"},
		{"export TZ=Europe/Paris; date -d @1751371200 '+%H:%M %Z %z'; python -c 'import time; print(time.strftime(\"%H:%M %Z %z\", time.localtime(1751371200)))'", "14:00 CEST +0200\n14:00 CEST +0200\n"},
		{"TZ=:America/New_York date -d @1040774400 '+%F %R %Z'; TZ=EST+05EDT,M4.1.0,M10.5.0 date -d @1751371200 +%Z%z", "2002-12-24 19:00 EST\nEDT-0400\n"},
		{"TZ=Asia/Kolkata touch -d '2003-01-01 05:29:59' e && stat -c %Y e && TZ=Asia/Kolkata stat -c %y e && TZ=UTC0 ls -l e | awk '{print $6, $7, $8}' && TZ=Asia/Kolkata ls -l e | awk '{print $6, $7, $8}'",
			"1041379199\n2003-01-01 05:29:59.000000000 +0530\nDec 31 2002\nJan 1 2003\n"},
		{"TZ=Europe/../Europe/Paris date -d @0 +%Z; TZ=Nowhere/Zone date -d @0 +%Z", "UTC\nUTC\n"},
	} {
		if res := bash(t, a, id, c.cmd, 0); res.Stdout != c.want || res.ReturnCode != 0 {
			t.Errorf("%s: %+v, want stdout %q", c.cmd, res, c.want)
		}
	}
}
