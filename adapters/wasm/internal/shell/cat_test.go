package shell

import "testing"

func TestCatOptions(t *testing.T) {
	files := map[string]string{"in": "a\tb\x01\x80\xff\x7f\n\n\n\nc\r\n", "two": "x\n\n"}
	runTable(t, []tc{
		{name: "A", files: files, cmd: "cat -A in", stdout: "a^Ib^AM-^@M-^?^?$\n$\n$\n$\nc^M$\n"},
		{name: "v", files: files, cmd: "cat -v in", stdout: "a\tb^AM-^@M-^?^?\n\n\n\nc^M\n"},
		{name: "E", files: files, cmd: "cat -E in", stdout: "a\tb\x01\x80\xff\x7f$\n$\n$\n$\nc^M$\n"},
		{name: "T", files: files, cmd: "cat -T in", stdout: "a^Ib\x01\x80\xff\x7f\n\n\n\nc\r\n"},
		{name: "e", files: files, cmd: "cat -e in", stdout: "a\tb^AM-^@M-^?^?$\n$\n$\n$\nc^M$\n"},
		{name: "t", files: files, cmd: "cat -t in", stdout: "a^Ib^AM-^@M-^?^?\n\n\n\nc^M\n"},
		{name: "n", files: files, cmd: "cat -n two two", stdout: "     1\tx\n     2\t\n     3\tx\n     4\t\n"},
		{name: "b", files: files, cmd: "cat -b in", stdout: "     1\ta\tb\x01\x80\xff\x7f\n\n\n\n     2\tc\r\n"},
		{name: "s", files: files, cmd: "cat -s in", stdout: "a\tb\x01\x80\xff\x7f\n\nc\r\n"},
		{name: "ns", files: files, cmd: "cat -ns in", stdout: "     1\ta\tb\x01\x80\xff\x7f\n     2\t\n     3\tc\r\n"},
		{name: "no newline E", cmd: "printf 'a' | cat -E", stdout: "a"},
		{name: "bad option", cmd: "cat -q", stderr: "cat: invalid option -- 'q'\nTry 'cat --help' for more information.\n", code: 1},
	})
}
