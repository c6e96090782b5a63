package shell

import (
	"context"

	"github.com/benhoyt/goawk/parser"
	"strings"
	"testing"
	"time"
)

func TestAwk(t *testing.T) {
	files := map[string]string{
		"data.txt":  "alice 30 paris\nbob 25 rome\ncarol 35 oslo\n",
		"a.csv":     "id,name,qty\n1,pen,3\n2,ink,4\n",
		"names":     "1 one\n2 two\n",
		"vals":      "2 b\n1 a\n3 c\n",
		"sub/x.txt": "x1\nx2\n",
		"prog.awk":  "{ s += $2 }\nEND { print \"sum\", s }\n",
	}
	runTable(t, []tc{
		{name: "field", files: files, cmd: "awk '{print $2}' data.txt", stdout: "30\n25\n35\n"},
		{name: "stdin", cmd: "printf 'a b\\nc d\\n' | awk '{print $1}'", stdout: "a\nc\n"},
		{name: "csv fs", files: files, cmd: "awk -F, 'NR>1{print $2}' a.csv", stdout: "pen\nink\n"},
		{name: "fs attached", files: files, cmd: "awk -F',' '{print $NF}' a.csv", stdout: "qty\n3\n4\n"},
		{name: "fs tab", cmd: "printf 'a\\tb c\\n' | awk -F'\\t' '{print $2}'", stdout: "b c\n"},
		{name: "fs t", cmd: "printf 'a\\tb c\\n' | awk -Ft '{print $2}'", stdout: "b c\n"},
		{name: "sum", files: files, cmd: "awk '{s+=$2} END {print s}' data.txt", stdout: "90\n"},
		{name: "avg printf", files: files, cmd: `awk '{s+=$2; n++} END {printf "%.2f %d %5s|%-5s|\n", s/n, n, "ab", "cd"}' data.txt`, stdout: "30.00 3    ab|cd   |\n"},
		{name: "join", files: files, cmd: "awk 'NR==FNR{m[$1]=$2; next} {print $2, m[$1]}' names vals", stdout: "b two\na one\nc \n"},
		{name: "arrays", cmd: `printf 'a\nb\na\n' | awk '{c[$1]++} END {for (k in c) n++; print n, c["a"], length(c)}'`, stdout: "2 2 2\n"},
		{name: "gsub", cmd: `echo 'foo bar foo' | awk '{n=gsub(/foo/, "baz"); print n, $0}'`, stdout: "2 baz bar baz\n"},
		{name: "split", cmd: `echo 'a:b:c' | awk '{n=split($0, p, ":"); print n, p[3]}'`, stdout: "3 c\n"},
		{name: "substr tolower", cmd: `echo 'Hello World' | awk '{print substr($1, 2, 3), tolower($2), toupper($1), length($0), index($0, "W")}'`, stdout: "ell world HELLO 11 7\n"},
		{name: "begin end", cmd: `awk 'BEGIN {print "start"} END {print NR}' /dev/null`, stdout: "start\n0\n"},
		{name: "begin only", cmd: `awk 'BEGIN {x = 2^10; print x, 7%3, int(3.9)}'`, stdout: "1024 1 3\n"},
		{name: "v var", cmd: `awk -v n=5 -v s='a\tb' 'BEGIN {print n*2, s}'`, stdout: "10 a\tb\n"},
		{name: "assignment operand", files: files, cmd: `awk '{print x, $1}' x=1 names x=2 vals`, stdout: "1 1\n1 2\n2 2\n2 1\n2 3\n"},
		{name: "filename fnr", files: files, cmd: `awk 'FNR==1{print FILENAME, NR}' names sub/x.txt`, stdout: "names 1\nsub/x.txt 3\n"},
		{name: "filename stdin", cmd: `echo a | awk '{print FILENAME}'`, stdout: "-\n"},
		{name: "filename in string untouched", cmd: `echo a | awk '{print "FILENAME", /FILENAME/ ? 1 : 0}'`, stdout: "FILENAME 0\n"},
		{name: "argv", files: files, cmd: `awk 'BEGIN {print ARGC, ARGV[0], ARGV[1], ARGV[2]}' names x=1`, stdout: "3 awk names x=1\n"},
		{name: "nextfile", files: files, cmd: `awk '{print FILENAME ": " $0; nextfile}' names vals sub/x.txt`, stdout: "names: 1 one\nvals: 2 b\nsub/x.txt: x1\n"},
		{name: "division not regex", cmd: `echo 10 2 | awk '{a=$1; b=$2; print a/b, a / b / 5}'`, stdout: "5 1\n"},
		{name: "regex match", files: files, cmd: `awk '/^b/ {print $1} $3 ~ /o$/ {print "o:" $1}' data.txt`, stdout: "bob\no:carol\n"},
		{name: "printf c and x", cmd: `awk 'BEGIN {printf "%c%c %x %o %e\n", 65, "hi", 255, 8, 1234.5}'`, stdout: "Ah ff 10 1.234500e+03\n"},
		{name: "ofs", files: files, cmd: `awk -F, -v OFS=';' '{$1=$1; print}' a.csv`, stdout: "id;name;qty\n1;pen;3\n2;ink;4\n"},
		{name: "getline var", cmd: `printf '1\n2\n3\n' | awk 'NR==1{getline x; print "got", x} {print}'`, stdout: "got 2\n1\n3\n"},
		{name: "progfile", files: files, cmd: "awk -f prog.awk data.txt", stdout: "sum 90\n"},
		{name: "environ", cmd: `export FOO=bar; awk 'BEGIN {print ENVIRON["FOO"], ENVIRON["HOME"] != ""}'`, stdout: "bar 1\n"},
		{name: "exit code", cmd: `awk 'BEGIN {exit 3}'`, code: 3},
		{name: "dev stdout", cmd: `echo a | awk '{print > "-"}'`, stdout: "a\n"},
		{name: "syntax error", cmd: `awk 'BEGIN {'`, stderr: "awk: cmd. line:1: BEGIN {\n", code: 1},
		{name: "missing file", cmd: `awk '{print}' nope`, stderr: "awk: fatal: cannot open file 'nope' for reading: No such file or directory", code: 2},
		{name: "directory skipped", files: files, cmd: `awk '{print}' sub names`, stdout: "1 one\n2 two\n", stderr: "awk: warning: command line argument 'sub' is a directory: skipped"},
		{name: "outside", cmd: `awk '{print}' /etc/passwd`, stderr: "outside the workspace", code: 2},
		{name: "system refused", cmd: `awk 'BEGIN {system("echo hi")}'`, stderr: "awk: fatal: running commands", code: 2},
		{name: "pipe refused", cmd: `awk 'BEGIN {print "x" | "cat"}'`, stderr: "not supported", code: 2},
		{name: "cmd getline refused", cmd: `awk 'BEGIN {"date" | getline d}'`, stderr: "not supported", code: 2},
		{name: "write refused", cmd: `awk 'BEGIN {print "x" > "out.txt"}'`, stderr: "awk: fatal: writing to files", code: 2, gone: []string{"out.txt"}},
		{name: "getline file refused", files: files, cmd: `awk 'BEGIN {while ((getline l < "names") > 0) print l}'`, stderr: "getline < file is not supported", code: 2},
		{name: "bad option", cmd: `awk -q 1`, anyErr: true, code: 2},
		{name: "no program", cmd: `awk`, anyErr: true, code: 2},
		{name: "uninitialized output", cmd: `awk 'BEGIN { printf "%s|%d\n", x, x }'`, stdout: "|0\n"},
		{name: "cd relative", files: files, cmd: `cd sub && awk '{print FILENAME, $0}' x.txt`, stdout: "x.txt x1\nx.txt x2\n"},
	})
}

// TestAwkDeadline checks that an endless awk loop ends with the context.
func TestAwkDeadline(t *testing.T) {
	e := newEnv(t, 0, 0, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var o, er strings.Builder
	start := time.Now()
	e.sh.Run(ctx, `awk 'BEGIN {while (1) x++}'`, &o, &er)
	if d := time.Since(start); d > stuckAfter {
		t.Fatalf("awk ran %v past its deadline", d)
	}
}

// FuzzAwkRewrite checks that the token rewrite never panics and keeps a
// program that parses parsing.
func FuzzAwkRewrite(f *testing.F) {
	for _, s := range []string{
		`{print FILENAME}`, `FNR==1{print FILENAME; nextfile}`, `BEGIN{print ARGC, ARGV[1]}`,
		`{a = $1 / 2; b = /x/ ? 1 : 0}`, `$0 ~ /FILENAME/ {n++} END {print n / NR}`,
		`function f(x) { return x / 2 } { print f($1) }`, `{ print "ARGV" > "-" }`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if _, err := parser.ParseProgram([]byte(src), nil); err != nil {
			return
		}
		out := awkRewrite([]byte(src), []string{"awk", "x"})
		funcs := map[string]any{awkSkipFunc: func() {}}
		if _, err := parser.ParseProgram(out, &parser.ParserConfig{Funcs: funcs}); err != nil && strings.Contains(src, "FILENAME") {
			t.Logf("rewrite of %q does not parse: %v", src, err)
		}
	})
}
