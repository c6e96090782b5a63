package shell

import "testing"

// The expected outputs below were produced by GNU diffutils 3.8 on the
// same inputs.

func TestCmp(t *testing.T) {
	files := map[string]string{"a": "abc\n", "b": "abd\n", "c": "ab", "f1": "abc\nx", "empty": "",
		"long1": "abcdefghijklmnopqrstuvwxyz0123456789\n", "long2": "Abcdefghijklmnopqrstuvwxyz0123456789XX\n"}
	runTable(t, []tc{
		{name: "differ", files: files, cmd: "cmp a b", code: 1, stdout: "a b differ: byte 3, line 1\n"},
		{name: "same", files: files, cmd: "cmp a a", code: 0},
		{name: "eof in line", files: files, cmd: "cmp a c", code: 1, stderr: "cmp: EOF on c after byte 2, in line 1\n"},
		{name: "eof at line end", files: files, cmd: "cmp a f1", code: 1, stderr: "cmp: EOF on a after byte 4, line 1\n"},
		{name: "eof empty", files: files, cmd: "cmp empty a", code: 1, stderr: "cmp: EOF on empty which is empty\n"},
		{name: "verbose", files: files, cmd: "cmp -l long1 long2", code: 1,
			stdout: " 1 141 101\n37  12 130\n", stderr: "cmp: EOF on long1 after byte 37\n"},
		{name: "verbose bytes", files: files, cmd: "cmp -bl long1 long2", code: 1,
			stdout: " 1 141 a    101 A\n37  12 ^J   130 X\n", stderr: "cmp: EOF on long1 after byte 37\n"},
		{name: "print bytes", files: files, cmd: "cmp -b a b", code: 1, stdout: "a b differ: byte 3, line 1 is 143 c 144 d\n"},
		{name: "silent", files: files, cmd: "cmp -s a b", code: 1},
		{name: "limit", files: files, cmd: "cmp -n 2 a b", code: 0},
		{name: "skip", files: files, cmd: "cmp -i 1:0 c a", code: 1, stdout: "c a differ: byte 1, line 1\n"},
		{name: "stdin", files: files, cmd: "cmp - a < b", code: 1, stdout: "- a differ: byte 3, line 1\n"},
		{name: "missing", files: files, cmd: "cmp a nope", code: 2, stderr: "cmp: nope: No such file or directory\n"},
		{name: "bad option", files: files, cmd: "cmp -x a b", code: 2, stderr: "cmp: invalid option -- 'x'\n"},
		{name: "no operand", cmd: "cmp", code: 2, stderr: "cmp: missing operand after 'cmp'\n"},
	})
}
