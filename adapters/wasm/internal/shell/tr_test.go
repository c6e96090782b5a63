package shell

import "testing"

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
