package shell

import "testing"

func TestCut(t *testing.T) {
	files := map[string]string{
		"p.txt": "root:x:0:0:root:/root:/bin/bash\nbin:x:1:1::/bin:/sbin/nologin\nnodelim\n",
		"t.tsv": "a\tb\tc\n1\t2\t3\n",
	}
	runTable(t, []tc{
		{name: "fields", files: files, cmd: "cut -d: -f1,7 p.txt", stdout: "root:/bin/bash\nbin:/sbin/nologin\nnodelim\n"},
		{name: "field range", files: files, cmd: "cut -d: -f2-3 p.txt", stdout: "x:0\nx:1\nnodelim\n"},
		{name: "open ranges", files: files, cmd: "cut -d: -f-2,6- p.txt", stdout: "root:x:/root:/bin/bash\nbin:x:/bin:/sbin/nologin\nnodelim\n"},
		{name: "only delimited", files: files, cmd: "cut -s -d: -f1 p.txt", stdout: "root\nbin\n"},
		{name: "tab default", files: files, cmd: "cut -f2 t.tsv", stdout: "b\n2\n"},
		{name: "complement", files: files, cmd: "cut --complement -f2 t.tsv", stdout: "a\tc\n1\t3\n"},
		{name: "output delimiter", files: files, cmd: "cut -f1,3 --output-delimiter=' | ' t.tsv", stdout: "a | c\n1 | 3\n"},
		{name: "chars", cmd: "echo abcdef | cut -c2-4", stdout: "bcd\n"},
		{name: "chars list", cmd: "echo abcdef | cut -c1,3,5-", stdout: "acef\n"},
		{name: "bytes", cmd: "echo abcdef | cut -b -2", stdout: "ab\n"},
		{name: "bytes out delim", cmd: "echo abcdef | cut -b 1-2,4-5 --output-delimiter=:", stdout: "ab:de\n"},
		{name: "beyond", cmd: "echo ab | cut -c5", stdout: "\n"},
		{name: "no newline", cmd: "printf 'a,b' | cut -d, -f2", stdout: "b\n"},
		{name: "stdin dash", cmd: "echo 'x y' | cut -d' ' -f2 -", stdout: "y\n"},
		{name: "zero", cmd: "cut -f0 /dev/null", stderr: "cut: fields are numbered from 1\nTry 'cut --help' for more information.\n", code: 1},
		{name: "bad value", cmd: "cut -f a /dev/null", stderr: "cut: invalid field value 'a'", code: 1},
		{name: "decreasing", cmd: "cut -f 3-1 /dev/null", stderr: "cut: invalid decreasing range", code: 1},
		{name: "no list", cmd: "cut /dev/null", stderr: "cut: you must specify a list of bytes, characters, or fields", code: 1},
		{name: "two lists", cmd: "cut -c1 -f1 /dev/null", stderr: "cut: only one list may be specified", code: 1},
		{name: "long delim", cmd: "cut -d ab -f1 /dev/null", stderr: "cut: the delimiter must be a single character", code: 1},
		{name: "delim with chars", cmd: "cut -d, -c1 /dev/null", stderr: "cut: an input delimiter may be specified only when operating on fields", code: 1},
		{name: "missing file", cmd: "cut -f1 nope", stderr: "cut: nope: No such file or directory", code: 1},
	})
}
