package wasm

import (
	"testing"

	"github.com/codeport/codeport/port"
)

// TestPathsBehaveAsOnLinux: a path outside the sandbox's mounts is
// missing, as on a machine whose user owns only its home and /tmp; it is
// not a capability error (PermissionError "Capabilities insufficient",
// which is what WASI gives a path no preopened directory covers), which
// made exists() raise, os.makedirs of the workspace fail and os.devnull
// unusable.
func TestPathsBehaveAsOnLinux(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	for _, c := range []struct{ name, code, want string }{
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
		{"zoneinfo fallback", "import os\nprint(os.path.exists('/usr/share/zoneinfo/UTC'))", "False\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			expect(t, run(t, a, id, c.code), c.want, 0, port.OutcomeCompleted)
		})
	}
}
