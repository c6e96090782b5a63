package shell

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// grepFiles is the workspace of the grep table.
var grepFiles = map[string]string{"f": "alpha\nBeta\ngamma\nbeta2\ndelta\n", "g": "one\ntwo\n", "d/x.py": "import os\n", "d/y.txt": "import nothing\n", "d/sub/z.py": "import sys\n", "d/skip/w.py": "import re\n"}

// TestGrepGNU compares grep with what GNU grep 3.8 printed for the same
// command lines (LC_ALL=C.UTF-8).
func TestGrepGNU(t *testing.T) {
	runTable(t, []tc{
		{name: "bre alternation longest", cmd: `echo ab | grep -o 'a\|ab'`, stdout: "ab\n"},
		{name: "ere alternation longest", cmd: `echo abcd | grep -oE 'a|ab|abc'`, stdout: "abc\n"},
		{name: "bre interval", cmd: `printf 'aa\naaa\na\n' | grep -x 'a\{2,3\}'`, stdout: "aa\naaa\n"},
		{name: "bre interval open", cmd: `printf 'aa\naaa\na\n' | grep -xc 'a\{2,\}'`, stdout: "2\n"},
		{name: "ere interval", cmd: `printf 'ab\naab\nb\n' | grep -E '^a{1,2}b$'`, stdout: "ab\naab\n"},
		{name: "ere brace literal", cmd: `printf 'a{1\n' | grep -E 'a{1'`, stdout: "a{1\n"},
		{name: "bre plus question", cmd: `printf 'ac\nabc\nabbc\n' | grep 'ab\+c'; printf 'ac\nabc\nabbc\n' | grep 'ab\?c'`, stdout: "abc\nabbc\nac\nabc\n"},
		{name: "bre literal plus", cmd: `printf 'a+b\nab\n' | grep 'a+b'`, stdout: "a+b\n"},
		{name: "ere literal bre escapes", cmd: `printf 'ab\n(ab)\n' | grep -E '\(ab\)'`, stdout: "(ab)\n"},
		{name: "bre groups backref", cmd: `printf 'abab\nabba\n' | grep '\(ab\)\1'`, stdout: "abab\n"},
		{name: "ere backref", cmd: `printf 'xyxy\nxyyx\n' | grep -E '(x)(y)\2\1'`, stdout: "xyyx\n"},
		{name: "backref -o", cmd: `echo 'aa bb cd' | grep -oE '(.)\1'`, stdout: "aa\nbb\n"},
		{name: "backref -i", cmd: `echo 'aA' | grep -iE '(a)\1'`, stdout: "aA\n"},
		{name: "backref -w", cmd: `printf 'aa\naab\n' | grep -wE '(a)\1'`, stdout: "aa\n"},
		{name: "classes", cmd: `echo 'ab1 C_d-' | grep -o '[[:alpha:]]\+'; echo 'x9y' | grep -o '[[:digit:]]'`, stdout: "ab\nC\nd\n9\n"},
		{name: "class negated", cmd: `echo 'a1b2' | grep -o '[^[:digit:]]'`, stdout: "a\nb\n"},
		{name: "bracket first bracket", cmd: `echo 'a]b' | grep -o '[]a]*'`, stdout: "a]\n"},
		{name: "bracket backslash literal", cmd: `echo 'a\b' | grep -o '[\]'`, stdout: "\\\n"},
		{name: "bracket range dash", cmd: `echo 'a-z' | grep -o '[a-]' `, stdout: "a\n-\n"},
		{name: "bracket upper -i", cmd: `echo 'AbC' | grep -io '[[:upper:]]'`, stdout: "A\nb\nC\n"},
		{name: "anchors", cmd: `printf 'ab\nba\n' | grep '^a'; printf 'ab\nba\n' | grep 'a$'`, stdout: "ab\nba\n"},
		{name: "bre caret literal mid", cmd: `echo 'x^y' | grep -o 'x^y'; echo 'x$y' | grep -o 'x$y'`, stdout: "x^y\nx$y\n"},
		{name: "bre star literal start", cmd: `printf '*a\nb\n' | grep '*a'`, stdout: "*a\n"},
		{name: "bre double star", cmd: `echo aa | grep -o 'a**'`, stdout: "aa\n"},
		{name: "word boundaries", cmd: `echo 'foo foobar barfoo' | grep -o '\<foo\>'; echo 'foo foobar' | grep -o 'foo\b'`, stdout: "foo\nfoo\n"},
		{name: "w and s escapes", cmd: `echo 'ab_1 c-d' | grep -o '\w\+'; echo 'a b' | grep -c 'a\sb'; echo 'a b' | grep -o '\S'`, stdout: "ab_1\nc\nd\n1\na\nb\n"},
		{name: "W escape", cmd: `echo 'ab-cd' | grep -o '\W'`, stdout: "-\n"},
		{name: "unicode alpha", cmd: `echo 'héllo wörld' | grep -o '[[:alpha:]]*'`, stdout: "héllo\nwörld\n"},
		{name: "dot unicode", cmd: `echo 'é' | grep -c '^.$'`, stdout: "1\n"},
		{name: "empty pattern", cmd: `printf 'a\nb\n' | grep -c ''`, stdout: "2\n"},
		{name: "-F", cmd: `printf 'a.c\nabc\n' | grep -F 'a.c'; printf 'x[y\n' | grep -F '['`, stdout: "a.c\nx[y\n"},
		{name: "-F multiple", cmd: `printf 'one\ntwo\nthree\n' | grep -F -e one -e three`, stdout: "one\nthree\n"},
		{name: "-e repeatable", cmd: `printf 'one\ntwo\nthree\n' | grep -e one -e tw`, stdout: "one\ntwo\n"},
		{name: "-e backref numbering", cmd: `printf 'aa\nbcbc\nbc\n' | grep -e '\(a\)\1' -e '\(bc\)\1'`, stdout: "aa\nbcbc\n"},
		{name: "-f file", cmd: `printf 'o\nt\n' > pats; printf 'one\ntwo\nsix\n' | grep -f pats`, stdout: "one\ntwo\n"},
		{name: "-f empty", cmd: `: > pats; printf 'a\n' | grep -f pats; echo $?; printf 'a\n' | grep -vf pats`, stdout: "1\na\n"},
		{name: "-i -v -c", files: grepFiles, cmd: `grep -ic beta f; grep -vc beta f; grep -ivc BETA f`, stdout: "2\n4\n3\n"},
		{name: "-l -L", files: grepFiles, cmd: `grep -l one f g; grep -L one f g; echo $?`, stdout: "g\nf\n0\n"},
		{name: "-n -h -H", files: grepFiles, cmd: `grep -n ta f; grep -H one g; grep -h o f g`, stdout: "2:Beta\n4:beta2\n5:delta\ng:one\none\ntwo\n"},
		{name: "-o -n", cmd: `echo 'a1b22c333' | grep -noE '[0-9]+'`, stdout: "1:1\n1:22\n1:333\n"},
		{name: "-o -v prints nothing", cmd: `printf 'a\nb\n' | grep -ov a; echo $?`, stdout: "0\n"},
		{name: "-q", files: grepFiles, cmd: `grep -q alpha f; echo $?; grep -q zzz f; echo $?; grep -q alpha nope f; echo $?`, stdout: "0\n1\n0\n", stderr: "grep: nope: No such file or directory"},
		{name: "-s", files: grepFiles, cmd: `grep -s x nope; echo $?`, stdout: "2\n"},
		{name: "-r", files: grepFiles, cmd: `grep -r import d | wc -l; grep -r sys d; grep -rh os`, stdout: "4\nd/sub/z.py:import sys\nimport os\n"},
		{name: "-r include exclude", files: grepFiles, cmd: `grep -r --include='*.py' --exclude='x*' --exclude-dir=skip import d`, stdout: "d/sub/z.py:import sys\n"},
		{name: "-R", files: grepFiles, cmd: `grep -Rl sys d`, stdout: "d/sub/z.py\n"},
		{name: "-w", cmd: `printf 'foo bar\nfoobar\nfoo_x\nx-foo\n' | grep -w foo`, stdout: "foo bar\nx-foo\n"},
		{name: "-w -o adjacent", cmd: `echo 'foo foo' | grep -ow foo`, stdout: "foo\nfoo\n"},
		{name: "-w retry", cmd: `echo 'foobar foo' | grep -ow 'foo'`, stdout: "foo\n"},
		{name: "-w shorter", cmd: `echo 'ab abc' | grep -owE 'ab|abc'`, stdout: "ab\nabc\n"},
		{name: "-x", cmd: `printf 'foo\nfoo bar\n' | grep -x foo; printf 'ab\nabab\n' | grep -xE '(ab)+'`, stdout: "foo\nab\nabab\n"},
		{name: "-x alternation", cmd: `printf 'a\nab\nb\n' | grep -x 'a\|b'`, stdout: "a\nb\n"},
		{name: "-A -B -C", cmd: `seq 20 | grep -A1 -B2 -e 5 -e 15; seq 10 | grep -C1 5`, stdout: "3\n4\n5\n6\n--\n13\n14\n15\n16\n4\n5\n6\n"},
		{name: "context num shorthand", cmd: `seq 10 | grep -1 5`, stdout: "4\n5\n6\n"},
		{name: "context overlap", cmd: `seq 10 | grep -A2 -e 3 -e 5`, stdout: "3\n4\n5\n6\n7\n"},
		{name: "-m", cmd: `printf 'a1\na2\na3\n' | grep -m2 a; printf 'a1\nb\na2\n' | grep -m1 -A1 a`, stdout: "a1\na2\na1\nb\n"},
		{name: "-m -c", cmd: `printf 'a\na\na\n' | grep -c -m2 a`, stdout: "2\n"},
		{name: "--color=never", cmd: `echo foo | grep --color=never o`, stdout: "foo\n"},
		{name: "-z", cmd: `printf 'a\nb\0c\0' | grep -z 'a' > out`, stdout: "", after: map[string]string{"out": "a\nb\u0000"}},
		{name: "-P", cmd: `echo 'foobar' | grep -oP 'foo(?=bar)'`, stdout: "foo\n"},
		{name: "-P digit class", cmd: `echo 'ab12' | grep -oP '\d+'`, stdout: "12\n"},
		{name: "bad paren", cmd: `echo a | grep -E '('`, stdout: "", stderr: "grep: Unmatched ( or \\(", code: 2},
		{name: "bad bre paren", cmd: `echo a | grep '\('`, stdout: "", stderr: "grep: Unmatched ( or \\(", code: 2},
		{name: "bad rparen", cmd: `echo a | grep 'a\)'`, stdout: "", stderr: "grep: Unmatched ) or \\)", code: 2},
		{name: "ere stray rparen literal", cmd: `echo 'a)' | grep -E 'a)'`, stdout: "a)\n"},
		{name: "bad bracket", cmd: `echo a | grep 'a[b'`, stdout: "", stderr: "grep: Unmatched [, [^, [:, [., or [=", code: 2},
		{name: "bad class", cmd: `echo a | grep '[[:foo:]]'`, stdout: "", stderr: "grep: Invalid character class name", code: 2},
		{name: "bad range", cmd: `echo a | grep '[z-a]'`, stdout: "", stderr: "grep: Invalid range end", code: 2},
		{name: "bad brace", cmd: `echo a | grep 'a\{1'`, stdout: "", stderr: "grep: Unmatched \\{", code: 2},
		{name: "bad interval", cmd: `echo a | grep 'a\{2,1\}'`, stdout: "", stderr: "grep: Invalid content of \\{\\}", code: 2},
		{name: "bad backref", cmd: `echo a | grep '\(a\)\2'`, stdout: "", stderr: "grep: Invalid back reference", code: 2},
		{name: "trailing backslash", cmd: `echo a | grep 'a\'`, stdout: "", stderr: "grep: Trailing backslash", code: 2},
		{name: "too big", cmd: `echo a | grep -E 'a{99999}'`, stdout: "", stderr: "grep: Regular expression too big", code: 2},
		{name: "bad option", cmd: `grep --foo x`, stdout: "", stderr: "grep: unrecognized option '--foo'", code: 2},
		{name: "bad context", cmd: `echo a | grep -A x a`, stdout: "", stderr: "grep: x: invalid context length argument", code: 2},
		{name: "bad max count", cmd: `echo a | grep -m x a`, stdout: "", stderr: "grep: invalid max count", code: 2},
		{name: "missing file", cmd: `grep x nope; echo $?`, stdout: "2\n", stderr: "grep: nope: No such file or directory"},
		{name: "directory", files: grepFiles, cmd: `grep a d; echo $?`, stdout: "2\n", stderr: "grep: d: Is a directory"},
		{name: "binary", cmd: `printf 'a\0b\nxa\n' > bin; grep a bin; echo $?; grep -c a bin`, stdout: "0\n2\n", stderr: "grep: bin: binary file matches"},
		{name: "no pattern", cmd: `grep`, stdout: "", stderr: "Usage: grep [OPTION]... PATTERNS [FILE]...", code: 2},
	})
}

// TestRegexTranslate checks the translation of POSIX patterns into the
// engines' syntax, and the errors.
func TestRegexTranslate(t *testing.T) {
	for _, tt := range []struct {
		pat  string
		syn  reSyntax
		want string // expression, or "error: message"
	}{
		{`a\|b`, reSyntax{}, `a|b`},
		{`a|b`, reSyntax{}, `a\|b`},
		{`a|b`, reSyntax{ere: true}, `a|b`},
		{`\(a\)*`, reSyntax{}, `(a)*`},
		{`*a`, reSyntax{}, `\*a`},
		{`^*a`, reSyntax{}, `^\*a`},
		{`a**`, reSyntax{}, `(?:a*)*`},
		{`a\{2,\}`, reSyntax{}, `a{2,}`},
		{`a{,3}`, reSyntax{ere: true}, `a{0,3}`},
		{`a{x`, reSyntax{ere: true}, `a\{x`},
		{`x$y`, reSyntax{}, `x\$y`},
		{`x$`, reSyntax{}, `x\z`},
		{`x$`, reSyntax{multiline: true}, `x$`},
		{`[]a-c[:digit:]]`, reSyntax{}, `[\]a-c0-9]`},
		{`[\]`, reSyntax{}, `[\\]`},
		{`[\n]`, reSyntax{sed: true}, "[\n]"},
		{`a\nb`, reSyntax{sed: true}, "a\nb"},
		{`\(a\)\1`, reSyntax{}, `(a)(?:\1)`},
		{`a.b`, reSyntax{fixed: true}, `a\.b`},
		{`(`, reSyntax{ere: true}, "error: " + reMsgParen},
		{`)`, reSyntax{ere: true, sed: true}, "error: " + reMsgRParen},
		{`)`, reSyntax{ere: true}, `\)`},
		{`[a`, reSyntax{}, "error: " + reMsgBracket},
		{`[`, reSyntax{}, "error: " + reMsgInvalid},
		{`[[:nope:]]`, reSyntax{}, "error: " + reMsgClass},
		{`[b-a]`, reSyntax{}, "error: " + reMsgRange},
		{`\{1\}`, reSyntax{}, "error: " + reMsgPreceding},
		{`a\{1`, reSyntax{}, "error: " + reMsgBrace},
		{`a\{1,x\}`, reSyntax{}, "error: " + reMsgInterval},
		{`\1`, reSyntax{}, "error: " + reMsgBackref},
		{`\(a\1\)`, reSyntax{}, "error: " + reMsgBackref},
		{`a\`, reSyntax{}, "error: " + reMsgBackslash},
		{`a{40000}`, reSyntax{ere: true}, "error: " + reMsgBig},
	} {
		tr, err := translateRegex(tt.pat, tt.syn, 0)
		got := tr.expr
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != tt.want {
			t.Errorf("translateRegex(%q, %+v) = %q, want %q", tt.pat, tt.syn, got, tt.want)
		}
	}
}

// TestRegexEngines checks the shared interface on both engines: positions
// in bytes (also after multi-byte characters), groups, empty matches.
func TestRegexEngines(t *testing.T) {
	for _, tt := range []struct {
		pat, in string
		syn     reSyntax
		want    [][]int
	}{
		{`a\|ab`, "xab", reSyntax{}, [][]int{{1, 3}}},
		{`\(é\)\1`, "aééb", reSyntax{}, [][]int{{1, 5, 1, 3}}},
		{`x*`, "ab", reSyntax{}, [][]int{{0, 0}, {1, 1}, {2, 2}}},
		{`\(x\)*\1`, "ab", reSyntax{}, nil},
		{`a*`, "baaac", reSyntax{}, [][]int{{0, 0}, {1, 4}, {5, 5}}},
		{`\(a*\)\1`, "baaac", reSyntax{}, [][]int{{0, 0, 0, 0}, {1, 3, 1, 2}, {4, 4, 4, 4}, {5, 5, 5, 5}}},
		{`(a)|b`, "b", reSyntax{ere: true}, [][]int{{0, 1, -1, -1}}},
		{`(a)|b\1`, "b", reSyntax{ere: true}, nil},
	} {
		re, err := compileRegex([]string{tt.pat}, tt.syn, time.Second)
		if err != nil {
			t.Errorf("%q: %v", tt.pat, err)
			continue
		}
		got, err := re.findAll([]byte(tt.in), -1)
		if err != nil || !equalLocs(got, tt.want) {
			t.Errorf("%q on %q: %v, %v; want %v", tt.pat, tt.in, got, err, tt.want)
		}
	}
}

func equalLocs(a, b [][]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				return false
			}
		}
	}
	return true
}

// TestRegexTimeout checks that a catastrophic pattern on the backtracking
// engine gives up instead of running on.
func TestRegexTimeout(t *testing.T) {
	re, err := compileRegex([]string{`\(a*\)*\1b`}, reSyntax{}, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = re.match(bytes.Repeat([]byte("a"), 5000))
	if err == nil {
		t.Skip("the engine found the answer quickly")
	}
	if err != errRegexTimeout {
		t.Fatalf("err = %v", err)
	}
	// Backtracking over 5000 a's would take astronomically long.
	if d := time.Since(start); d > stuckAfter {
		t.Fatalf("took %v", d)
	}
}

// FuzzRegexTranslate: any pattern either is refused with a message or
// compiles; none panics; a pattern without special characters matches as
// bytes.Index finds it.
func FuzzRegexTranslate(f *testing.F) {
	for _, s := range []string{`a\|b`, `[[:alpha:]]*`, `\(a\)\1`, `a\{1,2\}`, `[]a]`, `^*$`, `x{2}`, `(a|b)+?`, "é[é-ê]", `\<\w+\>`, `[[.a.][=b=]]`} {
		f.Add(s, "some text aab abab é", false, false)
		f.Add(s, "ab", true, true)
	}
	f.Fuzz(func(t *testing.T, pat, text string, ere, icase bool) {
		syn := reSyntax{ere: ere, icase: icase}
		re, err := compileRegex([]string{pat}, syn, 100*time.Millisecond)
		if err != nil {
			if _, ok := err.(*reError); !ok {
				t.Fatalf("%q: error %T %v", pat, err, err)
			}
			return
		}
		locs, err := re.findAll([]byte(text), -1)
		if err != nil {
			return // a timeout
		}
		for _, l := range locs {
			if l[0] < 0 || l[0] > l[1] || l[1] > len(text) {
				t.Fatalf("%q on %q: bad location %v", pat, text, l)
			}
		}
		if icase || pat == "" || strings.ContainsAny(pat, `\.[]*^$+?(){}|`) {
			return
		}
		if !ere && strings.ContainsAny(pat, "\x00") {
			return
		}
		want := strings.Index(text, pat)
		got := -1
		if len(locs) > 0 {
			got = locs[0][0]
		}
		// Not where either holds an invalid byte or U+FFFD (which
		// ContainsRune finds both of), each on its own: "\xd1" and "\xab"
		// are invalid apart but one valid character together. Go's regexp
		// reads runes, so a pattern's invalid byte (reTrans.literal gets
		// utf8.RuneError) matches any invalid byte of the text, where GNU
		// grep matches only the same byte.
		if got != want && !strings.ContainsRune(pat, 0xfffd) && !strings.ContainsRune(text, 0xfffd) {
			t.Fatalf("%q in %q: at %d, bytes.Index says %d", pat, text, got, want)
		}
	})
}
