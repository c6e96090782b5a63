package shell

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// sedLines is the workspace of the sed table.
var sedLines = map[string]string{"l": "one\ntwo\nthree\nfour\nfive\n", "a": "1\n2\n", "b": "3\n4\n"}

// TestSedGNU compares sed with what GNU sed 4.9 printed for the same
// command lines (LC_ALL=C.UTF-8).
func TestSedGNU(t *testing.T) {
	runTable(t, []tc{
		{name: "s basic", cmd: `echo 'hello world' | sed 's/o/0/'`, stdout: "hell0 world\n"},
		{name: "s g", cmd: `echo 'hello world' | sed 's/o/0/g'`, stdout: "hell0 w0rld\n"},
		{name: "s nth", cmd: `echo 'hello world' | sed 's/o/0/2'; echo aaa | sed 's/a/b/2g'`, stdout: "hello w0rld\nabb\n"},
		{name: "s empty matches g", cmd: `echo hello | sed 's/l*/X/g'; echo baaac | sed 's/a*/-/g'`, stdout: "XhXeXoX\n-b-c-\n"},
		{name: "s empty nth", cmd: `echo abc | sed 's/b*/X/2'`, stdout: "aXc\n"},
		{name: "s groups", cmd: `echo 'foo bar' | sed 's/\(foo\) \(bar\)/\2 \1/'; echo 'hello world' | sed -E 's/(l+)(o)/[\2\1]/g'`, stdout: "bar foo\nhe[oll] world\n"},
		{name: "s ampersand", cmd: `echo abc | sed 's/b/[&]/; s/c/\&/'`, stdout: "a[b]&\n"},
		{name: "s newline tab", cmd: `echo 'foo bar' | sed 's/ /\n/; s/o/\t/'`, stdout: "f\to\nbar\n"},
		{name: "s case conv", cmd: `echo 'hello world' | sed 's/\w\+/\u&/g'; echo 'Hello World' | sed 's/.*/\L&/; s/w/\U&x\Ey/'; echo 'foo bar' | sed -E 's/(\w+) (\w+)/\u\1 \U\2\E!/'`, stdout: "Hello World\nhello WXyorld\nFoo BAR!\n"},
		{name: "s case lower first", cmd: `echo 'ABC' | sed 's/.*/\l&/'`, stdout: "aBC\n"},
		{name: "s I flag", cmd: `echo 'Hello' | sed 's/hello/X/I'; echo 'Hello' | sed 's/hello/X/'`, stdout: "X\nHello\n"},
		{name: "s p flag", cmd: `echo abc | sed -n 's/b/B/p;s/c/C/p'`, stdout: "aBc\naBC\n"},
		{name: "s w stdout", cmd: `seq 3 | sed 's/2/X/w /dev/stdout'`, stdout: "1\nX\nX\n3\n"},
		{name: "s w file", cmd: `seq 3 | sed -n 's/2/X/w out'`, stdout: "", after: map[string]string{"out": "X\n"}},
		{name: "s other delimiter", cmd: `echo /usr/bin | sed 's|/usr|/opt|; s,b,\,,'`, stdout: "/opt/,in\n"},
		{name: "s bracket with delimiter", cmd: `echo a/b | sed 's/[/]/X/'`, stdout: "aXb\n"},
		{name: "s escaped delimiter", cmd: `echo a/b | sed 's/\//_/'`, stdout: "a_b\n"},
		{name: "s leftmost longest", cmd: `echo ab | sed 's/a\|ab/X/'`, stdout: "X\n"},
		{name: "s backref in regex", cmd: `echo 'abab cdcd' | sed -E 's/(..)\1/<&>/g'`, stdout: "<abab> <cdcd>\n"},
		{name: "s backref star", cmd: `echo aaaa | sed 's/\(a*\)\1/X/'`, stdout: "X\n"},
		{name: "s newline in pattern space", cmd: `printf 'a\nb\n' | sed 'N;s/\n/+/'`, stdout: "a+b\n"},
		{name: "s dot matches newline", cmd: `printf 'a\nb\n' | sed 'N;s/a.b/X/'`, stdout: "X\n"},
		{name: "s anchors with N", cmd: `printf 'a\nb\n' | sed 'N;s/^/>/g;s/$/</'`, stdout: ">a\nb<\n"},
		{name: "s M flag", cmd: `printf 'a\nb\n' | sed 'N;s/^/>/Mg'`, stdout: ">a\n>b\n"},
		{name: "ere", cmd: `echo 'aaa bbb' | sed -E 's/a+|b+/X/g'; echo 'aaa' | sed -r 's/a{2}/X/'`, stdout: "X X\nXa\n"},
		{name: "d and p", files: sedLines, cmd: `sed '2d;4p' l`, stdout: "one\nthree\nfour\nfour\nfive\n"},
		{name: "-n p", files: sedLines, cmd: `sed -n '2p;$p' l`, stdout: "two\nfive\n"},
		{name: "addresses ranges", files: sedLines, cmd: `sed -n '2,4p' l; sed -n '/two/,/four/p' l; sed -n '4,2p' l`, stdout: "two\nthree\nfour\ntwo\nthree\nfour\nfour\n"},
		{name: "address plus tilde", cmd: `seq 10 | sed -n '/5/,+2p'; seq 10 | sed -n '2,~4p'; seq 10 | sed -n '4,~4p'`, stdout: "5\n6\n7\n2\n3\n4\n4\n5\n6\n7\n8\n"},
		{name: "address step", cmd: `seq 10 | sed -n '1~3p'; seq 10 | sed -n '0~4p'; seq 10 | sed -n '2~0p'`, stdout: "1\n4\n7\n10\n4\n8\n2\n"},
		{name: "address zero", cmd: `seq 10 | sed -n '0,/[0-9]/p'; seq 10 | sed -n '1,/[0-9]/p'`, stdout: "1\n1\n2\n"},
		{name: "address negation", files: sedLines, cmd: `sed -n '2,4!p' l; sed '$!d' l`, stdout: "one\nfive\nfive\n"},
		{name: "address regex I", cmd: `printf 'Foo\nbar\n' | sed -n '/foo/Ip'; printf 'a/b\nc\n' | sed -n '\,a/b,p'`, stdout: "Foo\na/b\n"},
		{name: "address regex range to end", cmd: `seq 5 | sed -n '/3/,$p'`, stdout: "3\n4\n5\n"},
		{name: "empty regex reuses last", cmd: `printf 'foo\nbar\n' | sed -n '/foo/s//X/p'`, stdout: "X\n"},
		{name: "blocks", cmd: `seq 6 | sed -n '2,5{/3/d;p}'`, stdout: "2\n4\n5\n"},
		{name: "nested blocks", cmd: `seq 6 | sed -n '1,4{/2/,/3/{p;p}}'`, stdout: "2\n2\n3\n3\n"},
		{name: "semicolons spaces", cmd: `echo x | sed -n ' p ; p;;p '`, stdout: "x\nx\nx\n"},
		{name: "comments", cmd: `echo x | sed -n 'p # comment
p'`, stdout: "x\nx\n"},
		{name: "#n first line", cmd: `echo x | sed '#n
p'`, stdout: "x\n"},
		{name: "a i c", cmd: `seq 3 | sed '2a\
after
2i before
3c\
changed'`, stdout: "1\nbefore\n2\nafter\nchanged\n"},
		{name: "a one-liner", cmd: `echo x | sed 'a   foo; p'; echo x | sed 'a\  foo'; echo x | sed -e 'a\' -e '  foo'`, stdout: "x\nfoo; p\nx\n  foo\nx\n  foo\n"},
		{name: "a multi-line", cmd: `echo x | sed 'a\
   foo\
bar'`, stdout: "x\n   foo\nbar\n"},
		{name: "c range", cmd: `seq 3 | sed '1,2c\
changed'; seq 3 | sed '1,2!c\
changed'`, stdout: "changed\n3\n1\n2\nchanged\n"},
		{name: "a at last line without newline", cmd: `printf '1\n2' | sed '$a foo'`, stdout: "1\n2\nfoo\n"},
		{name: "missing newline kept", cmd: `printf '1\n2' | sed p; echo; printf 'x' | sed 's/x/y/'`, stdout: "1\n1\n2\n2\ny"},
		{name: "y", cmd: `echo hello | sed 'y/abcdefghij/ABCDEFGHIJ/'; echo abc | sed 'y/abc/\n\t\\/'`, stdout: "HEllo\n\n\t\\\n"},
		{name: "equals", files: sedLines, cmd: `sed -n '$=' l; sed -n '/t/=' l`, stdout: "5\n2\n3\n"},
		{name: "l", cmd: `printf 'é\001\tab\\\n' | sed -n l; seq -s, 30 | sed -n 'l;l 0;l 20'`, stdout: "\\303\\251\\001\\tab\\\\$\n1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,\\\n27,28,29,30$\n1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30$\n1,2,3,4,5,6,7,8,9,1\\\n0,11,12,13,14,15,16\\\n,17,18,19,20,21,22,\\\n23,24,25,26,27,28,2\\\n9,30$\n"},
		{name: "h H g G x", cmd: `printf 'a\nb\n' | sed 'H;$!d;x;s/\n/,/g'; printf 'a\nb\n' | sed -n 'h;G;p'; printf 'a\nb\n' | sed x`, stdout: ",a,b\na\na\nb\nb\n\na\n"},
		{name: "n N", cmd: `seq 3 | sed n; seq 3 | sed -n 'n;p'; seq 3 | sed 'N;s/\n/-/'; seq 3 | sed '$!d;n;s/^/X/'`, stdout: "1\n2\n3\n2\n1-2\n3\n3\n"},
		{name: "N at end", cmd: `printf '1\n2\n3\n' | sed 'N;N;N;s/\n/+/g'`, stdout: "1\n2\n3\n"},
		{name: "D P", cmd: `seq 5 | sed '$!N;P;D'; printf 'a\nb\nc\n' | sed -n '$!N;P;D'`, stdout: "1\n2\n3\n4\n5\na\nb\nc\n"},
		{name: "join lines", cmd: `seq 5 | sed ':a;N;$!ba;s/\n/,/g'`, stdout: "1,2,3,4,5\n"},
		{name: "tac", cmd: `seq 4 | sed -n '1!G;h;$p'`, stdout: "4\n3\n2\n1\n"},
		{name: "q Q", cmd: `seq 3 | sed 2q; seq 3 | sed 2Q; seq 3 | sed -n '2{p;q}'; seq 3 | sed '2q5'; echo $?; seq 3 | sed 1Q7; echo $?`, stdout: "1\n2\n1\n2\n1\n2\n5\n7\n"},
		{name: "b t T", cmd: `printf 'ab\n' | sed 's/a/1/;ta;s/b/2/;:a;s/b/3/'; printf 'ab\n' | sed 's/x/1/;Ta;s/b/2/;:a;s/b/3/'; echo x | sed 'ba;:a;s/x/y/;p'`, stdout: "13\na3\ny\ny\n"},
		{name: "t loop", cmd: `echo 1234567 | sed -E ':a;s/([0-9])([0-9]{3})($|,)/\1,\2\3/;ta'`, stdout: "1,234,567\n"},
		{name: "b to end", cmd: `seq 3 | sed -n '2b;p'`, stdout: "1\n3\n"},
		{name: "z F", cmd: `echo x | sed 'z;s/^$/empty/'; printf 'a\n' | sed -n 'F;='`, stdout: "empty\n-\n1\n"},
		{name: "r R w", files: sedLines, cmd: `seq 3 | sed '2r a'; seq 3 | sed 'R a'; seq 3 | sed -n '/2/w out'`, stdout: "1\n2\n1\n2\n3\n1\n1\n2\n2\n3\n", after: map[string]string{"out": "2\n"}},
		{name: "multiple files", files: sedLines, cmd: `sed -n '1p;$p' a b; sed -s -n '1p;$p' a b`, stdout: "1\n4\n1\n2\n3\n4\n"},
		{name: "-e -f order", files: sedLines, cmd: `printf 's/1/one/\n' > s.sed; sed -e 's/2/two/' -f s.sed a`, stdout: "one\ntwo\n"},
		{name: "-z", cmd: `printf 'a\0b\0' | sed -z 's/^/x/' > out`, stdout: "", after: map[string]string{"out": "xa\u0000xb\u0000"}},
		{name: "-i", files: sedLines, cmd: `sed -i 's/1/X/' a; cat a`, stdout: "X\n2\n", after: map[string]string{"a": "X\n2\n"}},
		{name: "-i suffix", files: sedLines, cmd: `sed -i.bak -e 's/3/Y/' b; cat b b.bak`, stdout: "Y\n4\n3\n4\n", after: map[string]string{"b": "Y\n4\n", "b.bak": "3\n4\n"}},
		{name: "-i several -s", files: sedLines, cmd: `sed -i '1d' a b; cat a b`, stdout: "2\n4\n"},
		{name: "--in-place", files: sedLines, cmd: `sed --in-place=.orig -n '$p' a; cat a a.orig`, stdout: "2\n1\n2\n"},
		{name: "--posix -s accepted", files: sedLines, cmd: `sed --posix -n 1p a`, stdout: "1\n"},
		{name: "i at end of script", cmd: `echo x | sed 'i\'`, stdout: "x\n"},
		{name: "nth with case conversion", cmd: `echo 'hello' | sed 's/./\U&/3g'; echo 'CamelCase' | sed -E 's/([A-Z])/_\l\1/g'`, stdout: "heLLO\n_camel_case\n"},
		{name: "unset groups", cmd: `echo 'abc' | sed -E 's/(a)(b)?(x)?/[\3]/'; echo abc | sed 's/\(b\)\(x\)*/[\2]/'`, stdout: "[]c\na[]c\n"},
		{name: "block split over -e", cmd: `echo x | sed -n -e '/x/ {' -e p -e '}'; seq 5 | sed '2,3{s/^/x/;}'`, stdout: "x\n1\nx2\nx3\n4\n5\n"},
		{name: "unknown command", cmd: `echo x | sed k`, stdout: "", stderr: "sed: -e expression #1, char 1: unknown command: `k'", code: 1},
		{name: "second expression error", cmd: `echo x | sed -e p -e k`, stdout: "", stderr: "sed: -e expression #2, char 1: unknown command: `k'", code: 1},
		{name: "unterminated s", cmd: `echo x | sed 's/a/b'`, stdout: "", stderr: "sed: -e expression #1, char 5: unterminated `s' command", code: 1},
		{name: "unknown option to s", cmd: `echo x | sed 's/x/y/q'`, stdout: "", stderr: "sed: -e expression #1, char 7: unknown option to `s'", code: 1},
		{name: "unmatched brace", cmd: `echo x | sed -n '/x/{p'`, stdout: "", stderr: "sed: -e expression #1, char 0: unmatched `{'", code: 1},
		{name: "unexpected brace", cmd: `echo x | sed 'p}'`, stdout: "", stderr: "sed: -e expression #1, char 2: unexpected `}'", code: 1},
		{name: "extra characters", cmd: `echo x | sed 'pq'`, stdout: "", stderr: "sed: -e expression #1, char 2: extra characters after command", code: 1},
		{name: "y lengths", cmd: `echo x | sed 'y/ab/c/'`, stdout: "", stderr: "sed: -e expression #1, char 7: strings for `y' command are different lengths", code: 1},
		{name: "invalid reference", cmd: `echo x | sed 's/x/\1/'`, stdout: "", stderr: "sed: -e expression #1, char 7: invalid reference \\1 on `s' command's RHS", code: 1},
		{name: "multiple g", cmd: `echo x | sed 's/x/y/gg'`, stdout: "", stderr: "sed: -e expression #1, char 8: multiple `g' options to `s' command", code: 1},
		{name: "zero nth", cmd: `echo x | sed 's/x/y/0'`, stdout: "", stderr: "sed: -e expression #1, char 7: number option to `s' command may not be zero", code: 1},
		{name: "unterminated address", cmd: `echo x | sed '/x'`, stdout: "", stderr: "sed: -e expression #1, char 2: unterminated address regex", code: 1},
		{name: "line zero", cmd: `echo x | sed '0p'`, stdout: "", stderr: "sed: -e expression #1, char 2: invalid usage of line address 0", code: 1},
		{name: "expected backslash", cmd: `echo x | sed 'a'`, stdout: "", stderr: "sed: -e expression #1, char 1: expected \\ after `a', `c' or `i'", code: 1},
		{name: "missing label", cmd: `echo x | sed ':a;bb'`, stdout: "", stderr: "sed: can't find label for jump to `b'", code: 4},
		{name: "unexpected comma", cmd: `echo x | sed '1,p'`, stdout: "", stderr: "sed: -e expression #1, char 3: unexpected `,'", code: 1},
		{name: "comment address", cmd: `echo x | sed '1#foo'`, stdout: "", stderr: "sed: -e expression #1, char 2: comments don't accept any addresses", code: 1},
		{name: "colon address", cmd: `echo x | sed '1:x'`, stdout: "", stderr: "sed: -e expression #1, char 2: : doesn't want any addresses", code: 1},
		{name: "missing filename", cmd: `echo x | sed 'r'`, stdout: "", stderr: "sed: -e expression #1, char 1: missing filename in r/R/w/W commands", code: 1},
		{name: "multiple bang", cmd: `echo x | sed '1!!p'`, stdout: "", stderr: "sed: -e expression #1, char 3: multiple `!'s", code: 1},
		{name: "no previous regex", cmd: `echo x | sed '//p'`, stdout: "", stderr: "sed: -e expression #1, char 0: no previous regular expression", code: 1},
		{name: "regex error", cmd: `echo x | sed 's/\(/y/'; echo x | sed -E 's/(/y/'; echo 'a)' | sed -E 's/a)/X/'`, stdout: "", stderr: "sed: -e expression #1, char 7: Unmatched ( or \\(", code: 1},
		{name: "unterminated bracket s", cmd: `echo x | sed 's/[/y/'`, stdout: "", stderr: "sed: -e expression #1, char 6: unterminated `s' command", code: 1},
		{name: "missing file", cmd: `echo x | sed -n p nofile -; echo $?`, stdout: "x\n2\n", stderr: "sed: can't read nofile: No such file or directory"},
		{name: "no script", cmd: `sed`, stdout: "", stderr: "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...", code: 1},
		{name: "bad option", cmd: `sed --foo p`, stdout: "", stderr: "sed: unrecognized option '--foo'", code: 1},
	})
}

// TestSedLimits checks that the spaces are bounded and that an endless
// script ends with the call.
func TestSedLimits(t *testing.T) {
	e := newEnv(t, 0, 1000, nil)
	_, stderr, code := e.run(`seq 2000 | sed -n 'H;${x;p}'`)
	if code == 0 || !strings.Contains(stderr, "sed: ") {
		t.Errorf("hold space over the cap: code %d stderr %q", code, stderr)
	}
	_, stderr, code = e.run(`echo x | sed ':a;s/x*/&x/;ba'`)
	if code == 0 || !strings.Contains(stderr, "pattern space over") {
		t.Errorf("growing pattern space: code %d stderr %q", code, stderr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	var o, er bytes.Buffer
	e.sh.Run(ctx, `echo x | sed ':a;ba'`, &o, &er)
	if d := time.Since(start); d > stuckAfter {
		t.Errorf("an endless script ran %v past a 300ms deadline", d)
	}
}

// FuzzSedScript: any script is refused with a message or runs on a small
// input; none panics, all end within the deadline.
func FuzzSedScript(f *testing.F) {
	for _, s := range []string{"p", "s/a/b/g", "/x/,/y/{p;d}", ":a;N;$!ba;s/\\n/,/g", "$!N;P;D", "1~2d;y/abc/xyz/",
		"a\\\nfoo", "2i bar", "0,/a/s//X/", "s/\\(a*\\)\\1/<\\U&>/2p", "H;x;G;l 5", "s/x/y/w /dev/stdout", "=;q3", "T;b"} {
		f.Add(s, "abc\naab\nxyz\n")
	}
	f.Fuzz(func(t *testing.T, script, input string) {
		e := newEnv(t, 1<<20, 1<<16, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		e.put(map[string]string{"in": input})
		var o, er bytes.Buffer
		start := time.Now()
		code, err := e.sh.Run(ctx, "sed -e "+sedQuote(script)+" in", &o, &er)
		if strings.Contains(er.String(), "internal error") {
			t.Fatalf("script %q: %s", script, er.String())
		}
		if d := time.Since(start); d > stuckAfter {
			t.Fatalf("script %q ran %v", script, d)
		}
		if err == nil && code != 0 && code != 1 && code != 2 && code != 4 && ctx.Err() == nil && !strings.ContainsAny(script, "qQ") {
			t.Fatalf("script %q: status %d (%s)", script, code, er.String())
		}
	})
}

// sedQuote quotes s for the shell.
func sedQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
