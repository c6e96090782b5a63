package shell

import "testing"

func TestPaste(t *testing.T) {
	files := map[string]string{"a": "1\n2\n3\n", "b": "x\ny\n", "c": "p\nq"}
	runTable(t, []tc{
		{name: "parallel", files: files, cmd: "paste a b", stdout: "1\tx\n2\ty\n3\t\n"},
		{name: "delim", files: files, cmd: "paste -d, a b c", stdout: "1,x,p\n2,y,q\n3,,\n"},
		{name: "delim list", files: files, cmd: "paste -d ':;' a b c", stdout: "1:x;p\n2:y;q\n3:;\n"},
		{name: "serial", files: files, cmd: "paste -s a b", stdout: "1\t2\t3\nx\ty\n"},
		{name: "serial comma", files: files, cmd: "paste -sd, a", stdout: "1,2,3\n"},
		{name: "serial plus", cmd: "seq 4 | paste -sd+", stdout: "1+2+3+4\n"},
		{name: "stdin columns", cmd: "seq 6 | paste - - -", stdout: "1\t2\t3\n4\t5\t6\n"},
		{name: "stdin with file", files: files, cmd: "printf 'k\\nl\\n' | paste a -", stdout: "1\tk\n2\tl\n3\t\n"},
		{name: "newline delim", files: files, cmd: "paste -d '\\n' a b", stdout: "1\nx\n2\ny\n3\n\n"},
		{name: "empty delim", files: files, cmd: "paste -d '\\0' a b", stdout: "1x\n2y\n3\n"},
		{name: "missing", files: files, cmd: "paste a nope", stderr: "paste: nope: No such file or directory", code: 1},
	})
}
