package shell

import (
	"archive/tar"
	"strings"
	"testing"
	"time"
)

// fixture is a tree whose files carry known times: it is extracted from a
// tar archive (tar restores modification times) before the command runs.
func fixture(t *testing.T) map[string]string {
	old := time.Date(2024, 1, 2, 3, 4, 5, 0, time.Local)
	return map[string]string{"fx.tar": makeTar(t, false,
		tarMember{name: "a.txt", body: "one\ntwo\n", mtime: old},
		tarMember{name: ".h", body: "x", mtime: old},
		tarMember{name: "d/", typ: tar.TypeDir, mode: 0o755, mtime: old},
		tarMember{name: "d/b.txt", body: "bee\n", mtime: old},
		tarMember{name: "d/e/", typ: tar.TypeDir, mode: 0o755, mtime: old},
		tarMember{name: "d/e/empty", mtime: old},
		tarMember{name: "s.sh", body: "echo hi\n", mode: 0o755, mtime: old},
		tarMember{name: "big", body: strings.Repeat("x", 5000), mtime: old})}
}

// fx prefixes a command with the extraction of the fixture.
func fx(cmd string) string { return "tar xf fx.tar && rm fx.tar && " + cmd }

func TestDuDf(t *testing.T) {
	f := fixture(t)
	runTable(t, []tc{
		// Each file takes whole 4 KiB blocks, each directory one.
		{name: "du dir", files: f, cmd: fx("du d"), stdout: "4\td/e\n12\td\n"},
		{name: "du -a", files: f, cmd: fx("du -a d"), stdout: "4\td/b.txt\n0\td/e/empty\n4\td/e\n12\td\n"},
		{name: "du -s", files: f, cmd: fx("du -s . d; du d ."), stdout: "36\t.\n4\td/e\n12\td\n24\t.\n"}, // as GNU, each directory counts once
		{name: "du -sh", files: f, cmd: fx("du -sh d big a.txt"), stdout: "12K\td\n8.0K\tbig\n4.0K\ta.txt\n"},
		{name: "du -c", files: f, cmd: fx("du -c a.txt big"), stdout: "4\ta.txt\n8\tbig\n12\ttotal\n"},
		{name: "du -b", files: f, cmd: fx("du -b d"), stdout: "4096\td/e\n8196\td\n"},
		{name: "du apparent", files: f, cmd: fx("du --apparent-size d"), stdout: "4\td/e\n9\td\n"},
		{name: "du -d", files: f, cmd: fx("du -d 0 d; du --max-depth=1 ."), stdout: "12\td\n12\t./d\n36\t.\n"},
		{name: "du -m -k", files: f, cmd: fx("du -m big; du -k big"), stdout: "1\tbig\n8\tbig\n"},
		{name: "du missing", cmd: "du nope", code: 1, stderr: "du: cannot access 'nope': No such file or directory\n"},
		{name: "df quota", cmd: "CODEPORT_WORKSPACE_BYTES=104857600 CODEPORT_WORKSPACE_USED=12345 df",
			stdout: "Filesystem     1K-blocks Used Available Use% Mounted on\nworkspace         102400   13    102388   1% /workspace\n"},
		{name: "df -h", cmd: "CODEPORT_WORKSPACE_BYTES=104857600 CODEPORT_WORKSPACE_USED=52428800 df -h .",
			stdout: "Filesystem     Size Used Avail Use% Mounted on\nworkspace      100M  50M   50M  50% /workspace\n"},
		{name: "df unknown", files: map[string]string{"x": strings.Repeat("y", 3000)}, cmd: "df",
			stdout: "Filesystem     1K-blocks Used Available Use% Mounted on\nworkspace              -    3         -    - /workspace\n"},
		{name: "df missing", cmd: "df nope", code: 1, stderr: "df: nope: No such file or directory\n"},
	})
}

func TestLinksAndPaths(t *testing.T) {
	f := map[string]string{"a.txt": "a", "d/b.txt": "b"}
	runTable(t, []tc{
		{name: "ln -s", files: f, cmd: "ln -s a.txt b", code: 1, stderr: "ln: failed to create symbolic link 'b': links are not supported in this sandbox's workspace\n", gone: []string{"b"}},
		{name: "ln -sf into dir", files: f, cmd: "ln -sf a.txt d", code: 1, stderr: "ln: failed to create symbolic link 'd/a.txt': links are not supported in this sandbox's workspace\n"},
		{name: "ln hard", files: f, cmd: "ln a.txt c", code: 1, stderr: "ln: failed to create hard link 'c' => 'a.txt': links are not supported in this sandbox's workspace\n"},
		{name: "ln hard missing", cmd: "ln nope c", code: 1, stderr: "ln: failed to access 'nope': No such file or directory\n"},
		{name: "ln no operand", cmd: "ln", code: 1, stderr: "ln: missing file operand\n"},
		{name: "readlink plain", files: f, cmd: "readlink a.txt", code: 1},
		{name: "readlink -f", files: f, cmd: "cd d && readlink -f b.txt ../a.txt ../nope . /workspace/d/../a.txt", stdout: "/workspace/d/b.txt\n/workspace/a.txt\n/workspace/nope\n/workspace/d\n/workspace/a.txt\n"},
		{name: "readlink -f missing dir", files: f, cmd: "readlink -f nope/x", code: 1},
		{name: "readlink -e", files: f, cmd: "readlink -e a.txt nope", stdout: "/workspace/a.txt\n", code: 1},
		{name: "readlink -m", cmd: "readlink -m /x/../y nope/../z", stdout: "/y\n/workspace/z\n"},
		{name: "readlink -n", files: f, cmd: "readlink -fn a.txt", stdout: "/workspace/a.txt"},
		{name: "realpath", files: f, cmd: "realpath a.txt nope d/", stdout: "/workspace/a.txt\n/workspace/nope\n/workspace/d\n"},
		{name: "realpath -e", files: f, cmd: "realpath -e nope", code: 1, stderr: "realpath: nope: No such file or directory\n"},
		{name: "realpath not dir", files: f, cmd: "realpath a.txt/x", code: 1, stderr: "realpath: a.txt/x: Not a directory\n"},
		{name: "realpath relative", files: f, cmd: "realpath --relative-to=d a.txt d/b.txt d; realpath --relative-to=/workspace/d/b.txt /", stdout: "../a.txt\nb.txt\n.\n../../..\n"},
		{name: "realpath -m", cmd: "realpath -m a/../../b", stdout: "/b\n"},
	})
}
