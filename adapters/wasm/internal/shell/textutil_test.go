package shell

import (
	"strings"
	"testing"
)

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

func TestTr(t *testing.T) {
	runTable(t, []tc{
		{name: "upper", cmd: "echo hello | tr a-z A-Z", stdout: "HELLO\n"},
		{name: "classes", cmd: "echo 'Hello World' | tr '[:lower:]' '[:upper:]'", stdout: "HELLO WORLD\n"},
		{name: "to lower", cmd: "echo 'Hello World' | tr '[:upper:]' '[:lower:]'", stdout: "hello world\n"},
		{name: "squeeze spaces", cmd: "echo 'a   b    c' | tr -s ' '", stdout: "a b c\n"},
		{name: "delete cr", cmd: "printf 'a\\r\\nb\\r\\n' | tr -d '\\r'", stdout: "a\nb\n"},
		{name: "delete digits", cmd: "echo 'a1b2c3' | tr -d '[:digit:]'", stdout: "abc\n"},
		{name: "cd alnum", cmd: "echo 'Ab1!? x' | tr -cd '[:alnum:]'", stdout: "Ab1x"},
		{name: "complement", cmd: "echo 'a b' | tr -c 'a' 'x'", stdout: "axxx"},
		{name: "newlines", cmd: "echo 'a b c' | tr ' ' '\\n'", stdout: "a\nb\nc\n"},
		{name: "tabs", cmd: "printf 'a\\tb\\n' | tr '\\t' ,", stdout: "a,b\n"},
		{name: "backslash", cmd: "echo 'a\\b' | tr '\\\\' /", stdout: "a/b\n"},
		{name: "short set2", cmd: "echo abc | tr abc xy", stdout: "xyy\n"},
		{name: "truncate", cmd: "echo abc | tr -t abc xy", stdout: "xyc\n"},
		{name: "squeeze translate", cmd: "echo 'aabbcc' | tr -s a-c x", stdout: "x\n"},
		{name: "delete squeeze", cmd: "echo 'a11b22' | tr -ds a 12", stdout: "1b2\n"},
		{name: "punct space", cmd: "echo 'a, b.  c!' | tr -d '[:punct:]' | tr -s '[:space:]'", stdout: "a b c\n"},
		{name: "repeat", cmd: "echo abcd | tr 'a-d' '[x*2]y'", stdout: "xxyy\n"},
		{name: "fill", cmd: "echo abcd | tr 'a-d' 'A[-*]'", stdout: "A---\n"},
		{name: "rot13", cmd: "echo Hello | tr 'A-Za-z' 'N-ZA-Mn-za-m'", stdout: "Uryyb\n"},
		{name: "octal", cmd: "echo 'a b' | tr ' ' '\\137'", stdout: "a_b\n"},
		{name: "missing", cmd: "tr", stderr: "tr: missing operand\nTry 'tr --help' for more information.\n", code: 1},
		{name: "missing second", cmd: "tr a", stderr: "tr: missing operand after 'a'\nTwo strings must be given when translating.\n", code: 1},
		{name: "extra", cmd: "tr a b c", stderr: "tr: extra operand 'c'", code: 1},
		{name: "extra delete", cmd: "tr -d a b", stderr: "Only one string may be given when deleting without squeezing repeats.", code: 1},
		{name: "empty set2", cmd: "tr a ''", stderr: "tr: when not truncating set1, string2 must be non-empty\n", code: 1},
		{name: "bad class", cmd: "tr '[:foo:]' x", stderr: "tr: invalid character class 'foo'", code: 1},
		{name: "class in set2", cmd: "tr 'a' '[:digit:]'", stderr: "the only character classes that may appear in", code: 1},
		{name: "reverse range", cmd: "tr 'z-a' x", stderr: "tr: range-endpoints of 'z-a' are in reverse collating sequence order", code: 1},
	})
}

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

func TestSort(t *testing.T) {
	files := map[string]string{
		"k.txt": "b 10\na 9\nc 100\n",
		"c.csv": "x,3,z\ny,1,z\nw,2,a\n",
	}
	runTable(t, []tc{
		{name: "key numeric", files: files, cmd: "sort -k2,2n k.txt", stdout: "a 9\nb 10\nc 100\n"},
		{name: "key numeric reverse", files: files, cmd: "sort -k2,2nr k.txt", stdout: "c 100\nb 10\na 9\n"},
		{name: "global reverse numeric key", files: files, cmd: "sort -rn -k2 k.txt", stdout: "c 100\nb 10\na 9\n"},
		{name: "separator", files: files, cmd: "sort -t, -k2 c.csv", stdout: "y,1,z\nw,2,a\nx,3,z\n"},
		{name: "long separator", files: files, cmd: "sort --field-separator=, -k3,3 -k1,1 c.csv", stdout: "w,2,a\nx,3,z\ny,1,z\n"},
		{name: "multiple keys", cmd: "printf 'a 2\\nb 1\\na 1\\n' | sort -k1,1 -k2,2n", stdout: "a 1\na 2\nb 1\n"},
		{name: "plain", cmd: "printf 'b\\nB\\na\\n_\\n' | sort", stdout: "B\n_\na\nb\n"},
		{name: "numeric", cmd: "printf '10\\n9\\n-1\\n1.5\\nx\\n' | sort -n", stdout: "-1\nx\n1.5\n9\n10\n"},
		{name: "unique", cmd: "printf 'b\\na\\nb\\n' | sort -u", stdout: "a\nb\n"},
		{name: "fold unique", cmd: "printf 'B\\na\\nb\\nA\\n' | sort -fu", stdout: "a\nB\n"},
		{name: "fold", cmd: "printf 'B\\na\\nb\\nA\\n' | sort -f", stdout: "A\na\nB\nb\n"},
		{name: "human", cmd: "printf '10K\\n1M\\n5\\n-2K\\n' | sort -h", stdout: "-2K\n5\n10K\n1M\n"},
		{name: "version", cmd: "printf '1.10\\n1.9\\n1.2a\\n1.2\\n1.2~rc\\n' | sort -V", stdout: "1.2~rc\n1.2\n1.2a\n1.9\n1.10\n"},
		{name: "month", cmd: "printf 'Feb\\njan\\nxx\\nDEC\\n' | sort -M", stdout: "xx\njan\nFeb\nDEC\n"},
		{name: "general", cmd: "printf '1e3\\n2\\nabc\\nnan\\n-inf\\n' | sort -g", stdout: "abc\nnan\n-inf\n2\n1e3\n"},
		{name: "stable", cmd: "printf 'x 1\\ny 1\\nx 0\\n' | sort -s -k2,2", stdout: "x 0\nx 1\ny 1\n"},
		{name: "last resort", cmd: "printf 'y 1\\nx 1\\n' | sort -k2,2", stdout: "x 1\ny 1\n"},
		{name: "blanks", cmd: "printf ' b\\na\\n  c\\n' | sort -b", stdout: "a\n b\n  c\n"},
		{name: "char position", cmd: "printf 'xb2\\nya1\\n' | sort -k1.2,1.2", stdout: "ya1\nxb2\n"},
		{name: "dictionary", cmd: "printf 'a-c\\nab\\n' | sort -d", stdout: "ab\na-c\n"},
		{name: "zero", cmd: "printf 'b\\000a\\000' | sort -z | tr '\\0' '\\n'", stdout: "a\nb\n"},
		{name: "output file", files: files, cmd: "sort -o k.txt k.txt && cat k.txt", stdout: "a 9\nb 10\nc 100\n", after: map[string]string{"k.txt": "a 9\nb 10\nc 100\n"}},
		{name: "check ok", cmd: "printf 'a\\nb\\n' | sort -c", code: 0},
		{name: "check disorder", cmd: "printf 'b\\na\\n' | sort -c", stderr: "sort: -:2: disorder: a\n", code: 1},
		{name: "check quiet", cmd: "printf 'b\\na\\n' | sort -C", code: 1},
		{name: "key zero", cmd: "sort -k0 /dev/null", stderr: "sort: field number is zero: invalid field specification '0'\n", code: 2},
		{name: "key junk", cmd: "sort -k a /dev/null", stderr: "sort: invalid number at field start: invalid count at start of 'a'\n", code: 2},
		{name: "key stray", cmd: "sort -k1z /dev/null", stderr: "sort: stray character in field spec: invalid field specification '1z'\n", code: 2},
		{name: "multichar tab", cmd: "sort -t ab /dev/null", stderr: "sort: multi-character tab 'ab'\n", code: 2},
		{name: "incompatible", cmd: "sort -nM /dev/null", stderr: "sort: options '-Mn' are incompatible\n", code: 2},
		{name: "missing", cmd: "sort nope", stderr: "sort: cannot read: nope: No such file or directory\n", code: 2},
		{name: "no trailing newline", cmd: "printf 'b\\na' | sort", stdout: "a\nb\n"},
	})
}

func FuzzSortKey(f *testing.F) {
	for _, s := range []string{"1", "2,2n", "1.2,3.4bnr", "0", "1.0", "3,1", "a", "1,", "1z", "99999999999999999999", "2b,3b", "1.1,1.0"} {
		f.Add(s, "a b  c\td,e")
	}
	f.Fuzz(func(t *testing.T, spec, line string) {
		k, msg := parseSortKey(spec)
		if msg != "" {
			return
		}
		for _, tab := range []int{-1, ','} {
			span := keySpan([]byte(line), &k, tab)
			if len(span) > len(line) || !strings.Contains(line, string(span)) {
				t.Fatalf("key %q of %q = %q", spec, line, span)
			}
			if r := compareSortKey(span, span, &k); r != 0 {
				t.Fatalf("key %q compares %d with itself", spec, r)
			}
		}
	})
}

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
