package shell

import "testing"

// coreutilsFiles are the files of TestCoreutils's cases.
var coreutilsFiles = map[string]string{
	"w.txt": "apple\nbanana\nApple\ncherry\nbanana\n",
	"n.txt": "10\n2\n33\n",
	"t.tsv": "a\tbb\tc\nddd\te\tf\n",
}

// TestCoreutils checks the smaller coreutils (tac, rev, nl, fold, comm,
// join, expand, unexpand, printenv, expr, od, cksum, split and column,
// each in a file named after it) and the fixes to wc, uniq, basename, seq
// and printf %q. Every expected output is GNU's (coreutils 9.1, util-linux
// 2.38, bash 5.2 in C.UTF-8), taken on a host.
func TestCoreutils(t *testing.T) {
	tests := []tc{
		{name: "tac", cmd: "tac w.txt; printf 'x\\ny' | tac", stdout: "banana\ncherry\nApple\nbanana\napple\nyx\n", code: 0},
		{name: "rev", cmd: "printf 'héllo\\nab' | rev", stdout: "olléh\nba", code: 0},
		{name: "nl default", cmd: "printf 'a\\n\\nb\\n' | nl", stdout: "     1\ta\n       \n     2\tb\n", code: 0},
		{name: "nl options", cmd: "nl -b a -n ln -w 2 -s '|' w.txt", stdout: "1 |apple\n2 |banana\n3 |Apple\n4 |cherry\n5 |banana\n", code: 0},
		{name: "fold", cmd: "echo 'one two three four' | fold -s -w 8; echo abcdefg | fold -w 3 -b", stdout: "one two \nthree \nfour\nabc\ndef\ng\n", code: 0},
		{name: "comm", cmd: "printf 'a\\nb\\n' > x; printf 'b\\nc\\n' > y; comm x y; comm -3 x y", stdout: "a\n\t\tb\n\tc\na\n\tc\n", code: 0},
		{name: "join", cmd: "printf '1 a\\n2 b\\n3 c\\n' > x; printf '1 X\\n3 Z\\n4 W\\n' > y; join x y; join -a2 -e- -o 0,1.2,2.2 x y; join -v1 x y", stdout: "1 a X\n3 c Z\n1 a X\n3 c Z\n4 - W\n2 b\n", code: 0},
		{name: "join -t", cmd: "printf 'k,1\\n' > x; printf 'k,2\\n' > y; join -t, x y", stdout: "k,1,2\n", code: 0},
		{name: "expand", cmd: "expand -t 4 t.tsv", stdout: "a   bb  c\nddd e   f\n", code: 0},
		{name: "unexpand", cmd: "printf '        x\\n' | unexpand | od -c", stdout: "0000000  \\t   x  \\n\n0000003\n", code: 0},
		{name: "printenv", cmd: "export ZZ=1; printenv ZZ; printenv NOPE; echo $?", stdout: "1\n1\n", code: 0},
		{name: "expr arith", cmd: "expr 2 + 3 \\* 4; expr \\( 2 + 3 \\) \\* 4; expr -7 % 3", stdout: "14\n20\n-1\n", code: 0},
		{name: "expr strings", cmd: "expr length abc; expr substr hello 2 2; expr index hello le; expr hello : 'he\\(.*\\)'; expr hello : 'h.*'", stdout: "3\nel\n2\nllo\n5\n", code: 0},
		{name: "expr null", cmd: "expr 0; echo $?; expr '' \\| 0; echo $?", stdout: "0\n1\n0\n1\n", code: 0},
		{name: "expr errors", cmd: "expr 1 + x; echo $?; expr 1 /0; echo $?; expr 4 / 0; echo $?", stdout: "2\n2\n2\n", code: 0, stderr: "expr: division by zero"},
		{name: "od default", cmd: "printf 'hello\\n' | od", stdout: "0000000 062550 066154 005157\n0000006\n", code: 0},
		{name: "od -c", cmd: "printf 'a\\tb\\n\\001' | od -c", stdout: "0000000   a  \\t   b  \\n 001\n0000005\n", code: 0},
		{name: "od -A x -t x1z", cmd: "printf 'abc' | od -A x -t x1z", stdout: "000000 61 62 63                                         >abc<\n000003\n", code: 0},
		{name: "od -An -tx2 -N", cmd: "od -An -tx2 -N6 w.txt", stdout: " 7061 6c70 0a65\n", code: 0},
		{name: "od dup", cmd: "printf '%032d' 0 | od -c", stdout: "0000000   0   0   0   0   0   0   0   0   0   0   0   0   0   0   0   0\n*\n0000040\n", code: 0},
		{name: "cksum", cmd: "cksum w.txt; printf '' | cksum", stdout: "1996699773 33 w.txt\n4294967295 0\n", code: 0},
		{name: "split -l", cmd: "split -l 2 w.txt p_; ls p_*; cat p_ac", stdout: "p_aa\np_ab\np_ac\nbanana\n", code: 0},
		{name: "split -b -d", cmd: "split -b 10 -d -a 1 w.txt b; ls b?; cat b2", stdout: "b0\nb1\nb2\nb3\nherry\nbana", code: 0},
		{name: "split -n", cmd: "split -n 2 w.txt h; wc -c haa hab", stdout: "16 haa\n17 hab\n33 total\n", code: 0},
		{name: "column -t", cmd: "column -t -s, <<'E'\nname,age\nbob,5\nE", stdout: "name  age\nbob   5\n", code: 0},
		{name: "column fill", cmd: "seq 12 | column -c 30", stdout: "1\t5\t9\n2\t6\t10\n3\t7\t11\n4\t8\t12\n", code: 0},
		{name: "wc -L", cmd: "wc -L w.txt t.tsv", stdout: " 6 w.txt\n17 t.tsv\n17 total\n", code: 0},
		{name: "wc missing", cmd: "wc -l nope w.txt; echo $?", stdout: " 5 w.txt\n 5 total\n1\n", code: 0, stderr: "wc: nope: No such file or directory"},
		{name: "uniq -f", cmd: "printf '1 a\\n2 a\\n3 b\\n' | uniq -f1 -c", stdout: "      2 1 a\n      1 3 b\n", code: 0},
		{name: "uniq -s -w", cmd: "printf 'xa1\\nya2\\nzb3\\n' | uniq -s1 -w1", stdout: "xa1\nzb3\n", code: 0},
		{name: "basename -a -s", cmd: "basename -a a/b c/d.py; basename -s .py x/y.py z.py", stdout: "b\nd.py\ny\nz\n", code: 0},
		{name: "seq -f", cmd: "seq -f 'f%03g.txt' 3; seq -f '%.1f' 0 0.5 1", stdout: "f001.txt\nf002.txt\nf003.txt\n0.0\n0.5\n1.0\n", code: 0},
		{name: "printf %q", cmd: "printf '%q\\n' 'hello world' \"it's\" 'a$b' '' $'a\\tb' '~x'", stdout: "hello\\ world\nit\\'s\na\\$b\n''\n$'a\\tb'\n\\~x\n", code: 0},
		// Errors.
		{name: "tac missing", cmd: "tac nope", stderr: "tac: nope: No such file or directory", code: 1},
		{name: "fold bad width", cmd: "fold -w x w.txt", stderr: "fold: invalid number of columns: 'x'", code: 1},
		{name: "nl bad style", cmd: "nl -b q w.txt", stderr: "nl: invalid body numbering style: 'q'", code: 1},
		{name: "comm one operand", cmd: "comm w.txt", stderr: "comm: missing operand", code: 1},
		{name: "join bad field", cmd: "join -1 0 w.txt w.txt", stderr: "join: invalid field number: '0'", code: 1},
		{name: "expr syntax", cmd: "expr 1 +", stderr: "expr: syntax error: missing argument after '+'", code: 2},
		{name: "expr no operand", cmd: "expr", stderr: "expr: missing operand", code: 2},
		{name: "expr bad regex", cmd: "expr a : 'a\\{1'", anyErr: true, code: 2},
		{name: "od bad type", cmd: "od -t q w.txt", stderr: "od: invalid character 'q' in type string 'q'", code: 1},
		{name: "od skip past end", cmd: "od -j 100 w.txt", stderr: "od: cannot skip past end of combined input", code: 1},
		{name: "split bad count", cmd: "split -l 0 w.txt", stderr: "split: invalid number of lines: '0'", code: 1},
		{name: "split suffixes exhausted", cmd: "seq 30 | split -l 1 -a 1 -d; echo $?; ls x? | wc -l", stdout: "1\n10\n", stderr: "split: output file suffixes exhausted"},
		{name: "cksum missing", cmd: "cksum nope w.txt", stdout: "1996699773 33 w.txt\n", stderr: "cksum: nope: No such file or directory", code: 1},
		{name: "uniq bad field count", cmd: "uniq -f x w.txt", stderr: "uniq: x: invalid number of fields to skip", code: 1},
		{name: "seq bad format", cmd: "seq -f '%d' 3", stderr: "seq: format '%d' has unknown %d directive", code: 1},
		{name: "seq two directives", cmd: "seq -f '%g %g' 3", stderr: "seq: format '%g %g' has too many % directives", code: 1},
		{name: "column unknown flag", cmd: "column -Q", stderr: "column: invalid option -- 'Q'", code: 1},
	}
	for i := range tests {
		if tests[i].files == nil {
			tests[i].files = coreutilsFiles
		}
	}
	runTable(t, tests)
}
