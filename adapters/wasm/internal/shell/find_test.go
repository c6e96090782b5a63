package shell

import (
	"strings"
	"testing"
	"unicode/utf8"
)

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
