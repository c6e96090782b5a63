package shell

import (
	"strings"
	"testing"
)

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
