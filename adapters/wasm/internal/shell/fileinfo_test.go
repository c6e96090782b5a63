package shell

import (
	"archive/tar"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
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

func TestStat(t *testing.T) {
	f := fixture(t)
	runTable(t, []tc{
		{name: "format", files: f, cmd: fx("stat -c '%n %s %F %a %A %U %G %u %b %B %o %N' a.txt d d/e/empty s.sh"), stdout: "a.txt 8 regular file 644 -rw-r--r-- user user 1000 8 512 4096 'a.txt'\n" +
			"d 4096 directory 755 drwxr-xr-x user user 1000 8 512 4096 'd'\n" +
			"d/e/empty 0 regular empty file 644 -rw-r--r-- user user 1000 0 512 4096 'd/e/empty'\n" +
			"s.sh 8 regular file 755 -rwxr-xr-x user user 1000 8 512 4096 's.sh'\n"},
		{name: "times", files: f, cmd: fx("TZ=UTC stat -c '%y|%Y|%w|%W' a.txt"), match: `^2024-01-02 03:04:05\.000000000 [+-]\d{4}\|\d+\|-\|0\n$`},
		{name: "big blocks", files: f, cmd: fx("stat --format=%b:%s big"), stdout: "16:5000\n"},
		{name: "printf", files: f, cmd: fx(`stat --printf '%n\t%s\n' a.txt d/b.txt`), stdout: "a.txt\t8\nd/b.txt\t4\n"},
		{name: "default", files: f, cmd: fx("stat a.txt"), match: `^  File: a\.txt\n  Size: 8         \tBlocks: 8          IO Block: 4096   regular file\n` +
			`Device: \d+,\d+\tInode: \d+ +Links: 1\nAccess: \(0644/-rw-r--r--\)  Uid: \( 1000/    user\)   Gid: \( 1000/    user\)\n` +
			`Access: .*\nModify: 2024-01-02 03:04:05\.000000000 .*\nChange: .*\n Birth: -\n$`},
		{name: "terse", files: f, cmd: fx("stat -t a.txt"), match: `^a\.txt 8 8 81a4 1000 1000 [0-9a-f]+ \d+ 1 0 0 \d+ \d+ \d+ 0 4096\n$`},
		{name: "missing", cmd: "stat nope", code: 1, stderr: "stat: cannot statx 'nope': No such file or directory\n"},
		{name: "no operand", cmd: "stat", code: 1, stderr: "stat: missing operand\nTry 'stat --help' for more information.\n"},
	})
}

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

func TestTree(t *testing.T) {
	f := fixture(t)
	runTable(t, []tc{
		{name: "default", files: f, cmd: fx("tree"), stdout: ".\n├── a.txt\n├── big\n├── d\n│\u00a0\u00a0 ├── b.txt\n│\u00a0\u00a0 └── e\n│\u00a0\u00a0     └── empty\n└── s.sh\n\n3 directories, 5 files\n"},
		{name: "-a -L", files: f, cmd: fx("tree -a -L 1 --noreport d ."), stdout: "d\n├── b.txt\n└── e\n.\n├── .h\n├── a.txt\n├── big\n├── d\n└── s.sh\n"},
		{name: "-d", files: f, cmd: fx("tree -d"), stdout: ".\n└── d\n    └── e\n\n3 directories\n"},
		{name: "-f", files: f, cmd: fx("tree -f d"), stdout: "d\n├── d/b.txt\n└── d/e\n    └── d/e/empty\n\n2 directories, 2 files\n"},
		{name: "-I", files: f, cmd: fx("tree -I '*.txt|big' ."), stdout: ".\n├── d\n│\u00a0\u00a0 └── e\n│\u00a0\u00a0     └── empty\n└── s.sh\n\n3 directories, 2 files\n"},
		{name: "-P", files: f, cmd: fx("tree -P '*.sh'"), stdout: ".\n├── d\n│\u00a0\u00a0 └── e\n└── s.sh\n\n3 directories, 1 file\n"},
		{name: "-F --dirsfirst", files: f, cmd: fx("tree -F --dirsfirst"), stdout: "./\n├── d/\n│\u00a0\u00a0 ├── e/\n│\u00a0\u00a0 │\u00a0\u00a0 └── empty\n│\u00a0\u00a0 └── b.txt\n├── a.txt\n├── big\n└── s.sh*\n\n3 directories, 5 files\n"},
		{name: "-h", files: f, cmd: fx("tree -h d"), stdout: "[4.0K]  d\n├── [   4]  b.txt\n└── [4.0K]  e\n    └── [   0]  empty\n\n2 directories, 2 files\n"},
		{name: "C order", files: map[string]string{"t/B": "", "t/C": "", "t/a": "", "t/b": ""}, cmd: "tree t", stdout: "t\n├── B\n├── C\n├── a\n└── b\n\n1 directory, 4 files\n"},
		{name: "missing", cmd: "tree nope", code: 2, stdout: "nope  [error opening dir]\n\n0 directories, 0 files\n"},
		{name: "file operand", files: f, cmd: fx("tree a.txt"), stdout: "a.txt  [error opening dir]\n\n0 directories, 1 file\n"},
	})
}

func TestFile(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x03\x00\x00\x00\x02\x08\x06\x00\x00\x00"
	files := map[string]string{
		"a.txt": "one\n", "empty": "", "j.json": "{\"a\": 1}\n", "crlf.txt": "a\r\nb\r\n", "u.txt": "h\u00e9llo\n",
		"p.py": "#!/usr/bin/env python3\nprint(1)\n", "s.sh": "#!/bin/sh\necho\n", "bin.dat": "\x00\x01\x02",
		"i.png": png, "g.gif": "GIF89a\x05\x00\x07\x00" + strings.Repeat("\x00", 10), "x.pdf": "%PDF-1.4\n",
		"h.html": "<html>\n", "cr.txt": "a\rb", "nnl": "no newline", "d/": "",
		"long.txt": strings.Repeat("w", 400) + "\n",
	}
	runTable(t, []tc{
		{name: "kinds", files: files, cmd: "file a.txt d empty j.json crlf.txt u.txt p.py s.sh bin.dat i.png g.gif x.pdf h.html cr.txt nnl long.txt nope", stdout: "" +
			"a.txt:    ASCII text\n" +
			"d:        directory\n" +
			"empty:    empty\n" +
			"j.json:   JSON text data\n" +
			"crlf.txt: ASCII text, with CRLF line terminators\n" +
			"u.txt:    Unicode text, UTF-8 text\n" +
			"p.py:     Python script, ASCII text executable\n" +
			"s.sh:     POSIX shell script, ASCII text executable\n" +
			"bin.dat:  data\n" +
			"i.png:    PNG image data, 3 x 2, 8-bit/color RGBA, non-interlaced\n" +
			"g.gif:    GIF image data, version 89a, 5 x 7\n" +
			"x.pdf:    PDF document, version 1.4\n" +
			"h.html:   HTML document, ASCII text\n" +
			"cr.txt:   ASCII text, with CR line terminators\n" +
			"nnl:      ASCII text, with no line terminators\n" +
			"long.txt: ASCII text, with very long lines (400)\n" +
			"nope:     cannot open `nope' (No such file or directory)\n"},
		{name: "brief", files: files, cmd: "file -b a.txt", stdout: "ASCII text\n"},
		{name: "mime", files: files, cmd: "file -i a.txt j.json i.png empty d", stdout: "a.txt:  text/plain; charset=us-ascii\nj.json: application/json; charset=us-ascii\ni.png:  image/png; charset=binary\nempty:  inode/x-empty; charset=binary\nd:      inode/directory; charset=binary\n"},
		{name: "archives", files: files, cmd: "tar cf x.tar a.txt && gzip -k a.txt && file x.tar a.txt.gz", match: `^x\.tar:    POSIX tar archive\na\.txt\.gz: gzip compressed data, was "a\.txt", last modified: .*, original size modulo 2\^32 4\n$`},
		{name: "stdin", cmd: "echo hi | file -", stdout: "/dev/stdin: ASCII text\n"},
	})
}

func TestFindPrimaries(t *testing.T) {
	f := fixture(t)
	runTable(t, []tc{
		{name: "or", files: f, cmd: fx("find . -name '*.txt' -o -type d"), stdout: ".\n./a.txt\n./d\n./d/b.txt\n./d/e\n"},
		{name: "parens printf", files: f, cmd: fx(`find . \( -name a.txt -o -name b.txt \) -printf '%p %f %s %m %P %h %d %y\n'`), stdout: "./a.txt a.txt 8 644 a.txt . 1 f\n./d/b.txt b.txt 4 644 d/b.txt ./d 2 f\n"},
		{name: "printf widths", files: f, cmd: fx(`find d -printf '%-10p|%5s|\n'`), stdout: "d         | 4096|\nd/b.txt   |    4|\nd/e       | 4096|\nd/e/empty |    0|\n"},
		{name: "printf time", files: f, cmd: fx(`find a.txt -printf '%TY-%Tm-%Td %TH:%TM|%t\n'`), stdout: "2024-01-02 03:04|Tue Jan  2 03:04:05.0000000000 2024\n"},
		{name: "empty", files: f, cmd: fx("mkdir z && find . -empty"), stdout: "./d/e/empty\n./z\n"},
		{name: "path", files: f, cmd: fx("find . -path '*e*' -print"), stdout: "./d/e\n./d/e/empty\n"},
		{name: "ipath iname", files: f, cmd: fx("find . -ipath './D/*' -iname 'B.TXT'"), stdout: "./d/b.txt\n"},
		{name: "not", files: f, cmd: fx("find . -maxdepth 1 -not -name '.*'"), stdout: "./a.txt\n./big\n./d\n./s.sh\n"},
		{name: "prune", files: f, cmd: fx("find . -name e -prune -o -type f -print"), stdout: "./.h\n./a.txt\n./big\n./d/b.txt\n./s.sh\n"},
		{name: "mindepth", files: f, cmd: fx("find . -mindepth 2 -maxdepth 2"), stdout: "./d/b.txt\n./d/e\n"},
		{name: "exec", files: f, cmd: fx(`find d -type f -exec echo X {} \;`), stdout: "X d/b.txt\nX d/e/empty\n"},
		{name: "exec plus", files: f, cmd: fx(`find d -type f -exec echo Y {} +`), stdout: "Y d/b.txt d/e/empty\n"},
		{name: "exec sh", files: f, cmd: fx(`find . -name '*.txt' -exec sh -c 'echo got $1' _ {} \;`), stdout: "got ./a.txt\ngot ./d/b.txt\n"},
		{name: "exec builtin as test", files: f, cmd: fx(`find . -type f -exec test -s {} \; -print`), stdout: "./.h\n./a.txt\n./big\n./d/b.txt\n./s.sh\n"},
		{name: "exec inner braces", files: f, cmd: fx(`find d -name b.txt -exec echo pre{}post \;`), stdout: "pred/b.txtpost\n"},
		{name: "execdir", files: f, cmd: fx(`find . -name b.txt -execdir pwd \; -execdir echo {} +`), stdout: "/workspace/d\n./b.txt\n"},
		{name: "exec missing command", files: f, cmd: fx(`find d -name b.txt -exec nosuch {} \;`), stderr: "find: 'nosuch': No such file or directory\n"},
		{name: "exec plus fails", files: f, cmd: fx(`find d -exec false {} +`), code: 1},
		{name: "exec unterminated", files: f, cmd: fx(`find d -exec echo {}`), code: 1, stderr: "find: missing argument to `-exec'\n"},
		{name: "ok refused", cmd: `find . -ok echo {} \;`, code: 1, stderr: "-ok is not supported here"},
		{name: "delete", files: f, cmd: fx("find . -name '*.txt' -delete && find . -type f"), stdout: "./.h\n./big\n./d/e/empty\n./s.sh\n", gone: []string{"a.txt", "d/b.txt"}},
		{name: "delete dir not empty", files: f, cmd: fx("find . -name d -delete"), code: 1, stderr: "find: cannot delete './d': Directory not empty\n"},
		{name: "depth", files: f, cmd: fx("find d -depth"), stdout: "d/b.txt\nd/e/empty\nd/e\nd\n"},
		// GNU rounds sizes up to the unit: -size -1k is only empty files.
		{name: "size", files: f, cmd: fx("find . -type f -size -1k; echo; find . -type f -size 1; echo; find . -size +4k; echo; find . -type f -size -2c; echo; find . -size 5000c"),
			stdout: "./d/e/empty\n\n./.h\n./a.txt\n./d/b.txt\n./s.sh\n\n./big\n\n./.h\n./d/e/empty\n\n./big\n"},
		{name: "regex", files: f, cmd: fx(`find . -regex '.*/[ab].*'; find . -iregex '.*B\.TXT'`), stdout: "./a.txt\n./big\n./d/b.txt\n./d/b.txt\n"},
		{name: "regex basic", files: f, cmd: fx(`find . -regex '.*\.\(txt\|sh\)'; find . -regextype posix-extended -regex '.*\.(txt|sh)' -name 'a*'; find . -regex '.*(.*'`), stdout: "./a.txt\n./d/b.txt\n./s.sh\n./a.txt\n"},
		{name: "regextype unknown", cmd: "find . -regextype foo -regex x", code: 1, stderr: "find: Unknown regular expression type 'foo'"},
		{name: "mtime", files: f, cmd: fx("touch new; find . -type f -mtime -1; echo; find . -mtime +400 -name '*.txt'; echo; find . -mmin -10 -type f"), stdout: "./new\n\n./a.txt\n./d/b.txt\n\n./new\n"},
		{name: "newer", files: f, cmd: fx("touch new && find . -newer a.txt"), stdout: ".\n./new\n"},
		{name: "newer missing", cmd: "find . -newer nope", code: 1, stderr: "find: 'nope': No such file or directory\n"},
		{name: "perm", files: f, cmd: fx("find . -perm 755 -type f; find . -perm -u+x -type f; find . -perm /111 -name '*.txt'"), stdout: "./s.sh\n./s.sh\n"},
		{name: "print0", files: f, cmd: fx("find d -type f -print0 | tr '\\0' ,"), stdout: "d/b.txt,d/e/empty,"},
		{name: "quit", files: f, cmd: fx("find . -type f -print -quit"), stdout: "./.h\n"},
		{name: "comma", files: f, cmd: fx("find d -maxdepth 1 -name b.txt -printf 'B %p\\n' , -name e -printf 'E %p\\n'"), stdout: "B d/b.txt\nE d/e\n"},
		{name: "unknown predicate", cmd: "find . -foo", code: 1, stderr: "find: unknown predicate `-foo'\n"},
		{name: "unbalanced", cmd: `find . \( -name a`, code: 1, stderr: "find: invalid expression; I was expecting to find a ')' somewhere but did not see one.\n"},
		{name: "missing argument", cmd: "find . -name", code: 1, stderr: "find: missing argument to `-name'\n"},
		{name: "bad regex", cmd: `find . -regex '\('`, code: 1, anyErr: true},
		{name: "type list", files: f, cmd: fx("find d -type f,d"), stdout: "d\nd/b.txt\nd/e\nd/e/empty\n"},
	})
}

// FuzzFindExpr parses random find expressions: no panic, and a parse
// error is a message and status 1.
func FuzzFindExpr(f *testing.F) {
	for _, s := range []string{"-name a -o ( -type d -prune )", "! -size -1k -mtime +2", "-printf %p%T+%", "-exec echo {} +", "-regex ( , -a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if len(expr) > 200 || !utf8.ValidString(expr) || strings.ContainsAny(expr, "'\\\x00\n") || strings.Contains(expr, "-delete") || strings.Contains(expr, "exec") {
			return
		}
		e := newEnv(t, 1<<20, 1<<16, nil)
		e.put(map[string]string{"a": "x", "d/b": ""})
		args := strings.Fields(expr)
		_, stderr, code := e.run("find . '" + strings.Join(args, "' '") + "' >/dev/null")
		if strings.Contains(stderr, "internal error") {
			t.Fatalf("panic: %s", stderr)
		}
		if code != 0 && code != 1 {
			t.Fatalf("status %d: %s", code, stderr)
		}
	})
}
