package shell

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// Expected outputs come from GNU findutils 4.9.0 xargs and GNU coreutils
// 9.1 timeout on the same inputs.

func TestXargs(t *testing.T) {
	runTable(t, []tc{
		{name: "default echo", cmd: "printf 'a b\\nc\\n' | xargs", stdout: "a b c\n"},
		{name: "quotes", cmd: `printf 'a "b c" d\\ e '"'f g'"'\n' | xargs -n1`, stdout: "a\nb c\nd e\nf g\n"},
		{name: "unmatched double", cmd: `printf 'a "b c\n' | xargs`, code: 1, stdout: "a\n",
			stderr: "xargs: unmatched double quote; by default quotes are special to xargs unless you use the -0 option\n"},
		{name: "unmatched single", cmd: `printf "it's\n" | xargs echo`, code: 1,
			stderr: "xargs: unmatched single quote; by default quotes are special to xargs unless you use the -0 option\n"},
		{name: "replace", cmd: "printf '  x y  \\n z\\n' | xargs -I{} echo '[{}]'", stdout: "[x y  ]\n[z]\n"},
		{name: "replace i", cmd: "printf 'a\\nb\\n' | xargs -i echo '<{}>'", stdout: "<a>\n<b>\n"},
		{name: "replace custom", cmd: "printf 'a\\nb\\n' | xargs -I % echo %-%", stdout: "a-a\nb-b\n"},
		{name: "lines", cmd: "printf 'a b \\nc\\nd e\\n' | xargs -L1 echo", stdout: "a b c\nd e\n"},
		{name: "trace", cmd: "printf 'a b c d e\\n' | xargs -n 2 -t echo 2>&1", stdout: "echo a b\na b\necho c d\nc d\necho e\ne\n"},
		{name: "failure 123", cmd: "printf 'a\\nb\\n' | xargs sh -c 'exit 3'", code: 123},
		{name: "not found", cmd: "printf 'a\\n' | xargs nonexist", code: 127, stderr: "xargs: nonexist: No such file or directory\n"},
		{name: "builtin not visible", cmd: "printf 'x\\n' | xargs cd", code: 127, stderr: "xargs: cd: No such file or directory\n"},
		{name: "function not visible", cmd: "f() { echo fn; }; printf 'x\\n' | xargs f", code: 127, stderr: "xargs: f: No such file or directory\n"},
		{name: "255 aborts", cmd: "printf 'a\\nb\\n' | xargs -n1 sh -c 'echo $0; exit 255'", code: 124, stdout: "a\n",
			stderr: "xargs: sh: exited with status 255; aborting\n"},
		{name: "empty runs once", cmd: "printf '' | xargs echo x", stdout: "x\n"},
		{name: "no run if empty", cmd: "printf '' | xargs -r echo x", stdout: ""},
		{name: "eof string", cmd: "printf 'a b\\nSTOP\\nc\\n' | xargs -E STOP echo", stdout: "a b\n"},
		{name: "delimiter", cmd: "printf 'a,b\\n' | xargs -d, -n1 echo", stdout: "a\nb\n\n"},
		{name: "delimiter escape", cmd: "printf 'a b\\nc\\n' | xargs -d '\\n' -n1 echo", stdout: "a b\nc\n"},
		{name: "null", cmd: "printf 'a\\0b c\\0' | xargs -0 -n1 echo", stdout: "a\nb c\n"},
		{name: "backslash newline", cmd: "printf 'a\\\\\\nb\\n' | xargs -n1 echo", stdout: "a\nb\n"},
		{name: "n zero", cmd: "printf 'a\\n' | xargs -n 0", code: 1,
			stderr: "xargs: value 0 for -n option should be >= 1\nTry 'xargs --help' for more information.\n"},
		{name: "too long", cmd: "printf 'a\\n' | xargs -s 5 echo", code: 1, stderr: "xargs: argument line too long\n"},
		{name: "max chars splits", cmd: "printf 'aa bb cc\\n' | xargs -s 13 echo", stdout: "aa bb\ncc\n"},
		{name: "arg file", files: map[string]string{"list": "x\ny\n"}, cmd: "xargs -a list echo", stdout: "x y\n"},
		{name: "arg file missing", cmd: "xargs -a nope echo", code: 1, anyErr: true},
		{name: "parallel serial", cmd: "printf '1\\n2\\n3\\n' | xargs -P 4 -n 1 echo", stdout: "1\n2\n3\n"},
		{name: "stdin is empty", cmd: "printf 'x\\n' | xargs -I{} sh -c 'cat; echo {}'", stdout: "x\n"},
		{name: "runs files", files: map[string]string{"d/a": "1\n", "d/b": "2\n"}, cmd: "printf 'd/a d/b' | xargs cat", stdout: "1\n2\n"},
		{name: "nested", cmd: "echo a | xargs xargs echo", stdout: "a\n"},
		{name: "bad option", cmd: "xargs -Z", code: 1, stderr: "xargs: invalid option -- 'Z'\nTry 'xargs --help' for more information.\n"},
		{name: "bad delimiter", cmd: "xargs -d ab", code: 1, anyErr: true},
		{name: "options end", cmd: "echo x | xargs echo -n", stdout: "x"},
	})
}

func xargsItems(input string, delim int, lineItems bool) (items []string, eols int, err error) {
	x := &xargsReader{r: bufio.NewReader(strings.NewReader(input)), delim: delim, lineItems: lineItems, max: 1 << 20}
	for i := 0; i < len(input)+2; i++ {
		item, eol, _, err := x.next()
		if errors.Is(err, io.EOF) {
			return items, eols, nil
		}
		if err != nil {
			return items, eols, err
		}
		items = append(items, item)
		if eol {
			eols++
		}
	}
	panic("xargsReader does not end")
}

func TestXargsReader(t *testing.T) {
	items, _, err := xargsItems(`a "b c" 'd  e' f\ g ''`+"\n", -1, false)
	want := []string{"a", "b c", "d  e", "f g", ""}
	if err != nil || strings.Join(items, "|") != strings.Join(want, "|") {
		t.Errorf("items %q err %v, want %q", items, err, want)
	}
	items, _, _ = xargsItems("a\x00\x00b", 0, false)
	if strings.Join(items, "|") != "a||b" {
		t.Errorf("null items %q", items)
	}
}

func FuzzXargsParse(f *testing.F) {
	f.Add("a b\nc", uint8(0))
	f.Add(`"x y" 'z' \q`, uint8(1))
	f.Add("a,b,,c,", uint8(2))
	f.Add("a\x00b", uint8(3))
	f.Add("\"unterminated\n", uint8(0))
	f.Fuzz(func(t *testing.T, input string, mode uint8) {
		switch mode % 4 {
		case 0: // blanks: without quotes or backslashes, the fields
			items, _, err := xargsItems(input, -1, false)
			if !strings.ContainsAny(input, `"'\`) {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if got, want := strings.Join(items, "\x00"), strings.Join(strings.FieldsFunc(input, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }), "\x00"); got != want {
					t.Fatalf("items %q, want %q", got, want)
				}
			}
		case 1: // lines
			items, _, err := xargsItems(input, -1, true)
			if err == nil && len(items) > strings.Count(input, "\n")+1 {
				t.Fatalf("%d items from %d lines", len(items), strings.Count(input, "\n")+1)
			}
		case 2, 3: // a delimiter: the items are the input split
			d := byte(',')
			if mode%4 == 3 {
				d = 0
			}
			items, _, err := xargsItems(input, int(d), false)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSuffix(input, string(d))
			if got := strings.Join(items, string(d)); got != want && !(input == "" && len(items) == 0) {
				t.Fatalf("joined items %q, want %q", got, want)
			}
		}
		// The option parser, on the same text as words.
		c := &call{ctx: context.Background(), name: "xargs", stderr: io.Discard}
		if o, cmd, ok := parseXargsOpts(c, strings.Fields(input)); ok {
			if o.maxArgs < 0 || o.maxLines < 0 || o.maxChars < 1 || len(cmd) > len(input) {
				t.Fatalf("options %+v, command %q", o, cmd)
			}
		}
	})
}
