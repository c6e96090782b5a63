package shell

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The expected outputs below were produced by GNU diffutils 3.8 on the
// same inputs.

const (
	diffD1 = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n"
	diffD2 = "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n12\n13\n"
)

func TestDiff(t *testing.T) {
	files := map[string]string{"d1": diffD1, "d2": diffD2, "n1": "a", "n2": "b", "empty": "", "a": "abc\n", "b": "abd\n", "c": "ab"}
	runTable(t, []tc{
		{name: "normal", files: files, cmd: "diff d1 d2", code: 1,
			stdout: "3c3\n< 3\n---\n> three\n11d10\n< 11\n12a12\n> 13\n"},
		{name: "same", files: files, cmd: "diff d1 d1", code: 0},
		{name: "labels", files: files, cmd: "diff -u --label A --label B d1 d2 | head -2", code: 0,
			match: `^--- A\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} \+0000\n\+\+\+ B\t`},
		{name: "U0", files: files, cmd: "diff -U0 d1 d2 | tail -n +3", code: 0,
			stdout: "@@ -3 +3 @@\n-3\n+three\n@@ -11 +10,0 @@\n-11\n@@ -12,0 +12 @@\n+13\n"},
		{name: "unified body", files: files, cmd: "diff -u d1 d2 | tail -n +3", code: 0,
			stdout: "@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n 12\n+13\n"},
		{name: "unified headers", files: files, cmd: "diff -u d1 d2 | head -2", code: 0,
			match: `^--- d1\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} \+0000\n\+\+\+ d2\t\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{9} \+0000\n$`},
		{name: "context body", files: files, cmd: "diff -c d1 d2 | tail -n +3", code: 0,
			stdout: "***************\n*** 1,6 ****\n  1\n  2\n! 3\n  4\n  5\n  6\n--- 1,6 ----\n  1\n  2\n! three\n  4\n  5\n  6\n***************\n*** 8,12 ****\n  8\n  9\n  10\n- 11\n  12\n--- 8,12 ----\n  8\n  9\n  10\n  12\n+ 13\n"},
		{name: "context empty", files: files, cmd: "diff -c empty d1 | head -5 | tail -n 3", code: 0,
			stdout: "***************\n*** 0 ****\n--- 1,12 ----\n"},
		{name: "no newline", files: files, cmd: "diff n1 n2", code: 1,
			stdout: "1c1\n< a\n\\ No newline at end of file\n---\n> b\n\\ No newline at end of file\n"},
		{name: "unified no newline", files: files, cmd: "diff -u n1 n2 | tail -n +3", code: 0,
			stdout: "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
		{name: "from empty", files: files, cmd: "diff -u empty n1 | tail -n +3", code: 0,
			stdout: "@@ -0,0 +1 @@\n+a\n\\ No newline at end of file\n"},
		{name: "brief", files: files, cmd: "diff -q a b", code: 1, stdout: "Files a and b differ\n"},
		{name: "brief long", files: files, cmd: "diff --brief a b", code: 1, stdout: "Files a and b differ\n"},
		{name: "identical", files: files, cmd: "diff -s a a", code: 0, stdout: "Files a and a are identical\n"},
		{name: "ignore case", files: map[string]string{"x": "Hello\n", "y": "hELLO\n"}, cmd: "diff -i x y", code: 0},
		{name: "ignore all space", files: map[string]string{"x": "a b  c\n", "y": "ab c \n"}, cmd: "diff -w x y", code: 0},
		{name: "ignore space change", files: map[string]string{"x": "a b  c\n", "y": "a  b c \n"}, cmd: "diff -b x y", code: 0},
		{name: "space change differs", files: map[string]string{"x": "a b\n", "y": "ab\n"}, cmd: "diff -b x y", code: 1,
			stdout: "1c1\n< a b\n---\n> ab\n"},
		{name: "blank lines", files: map[string]string{"x": "a\nb\n", "y": "a\n\nb\n"}, cmd: "diff -B x y", code: 0},
		{name: "missing", files: files, cmd: "diff a nope", code: 2, stderr: "diff: nope: No such file or directory\n"},
		{name: "new file", files: files, cmd: "diff -N a nope", code: 1, stdout: "1d0\n< abc\n"},
		{name: "missing operand", cmd: "diff x", code: 2, stderr: "diff: missing operand after 'x'\n"},
		{name: "bad option", cmd: "diff -j a b", code: 2, stderr: "diff: invalid option -- 'j'\n"},
		{name: "binary", files: map[string]string{"x": "a\x00b\n", "y": "abc\n"}, cmd: "diff x y", code: 1,
			stdout: "Binary files x and y differ\n"},
		{name: "stdin", files: files, cmd: "printf 'abd\\n' | diff a -", code: 1, stdout: "1c1\n< abc\n---\n> abd\n"},
		{name: "file against dir", files: map[string]string{"a": "x\n", "D/a": "y\n"}, cmd: "diff a D", code: 1,
			stdout: "1c1\n< x\n---\n> y\n"},
	})
}

func TestDiffDirs(t *testing.T) {
	files := map[string]string{
		"A/f": "x\n", "B/f": "y\n", "A/sub/s": "s\n", "B/sub/s": "t\n", "A/o": "o\n", "B/p": "p\n",
		"A/same": "same\n", "B/same": "same\n", "A/only/": "", "B/fileb/": "", "A/fileb2/": "", "B/fileb2": "q\n",
	}
	runTable(t, []tc{
		{name: "plain", files: files, cmd: "diff A B", code: 1,
			stdout: "diff A/f B/f\n1c1\n< x\n---\n> y\nOnly in B: fileb\nFile A/fileb2 is a directory while file B/fileb2 is a regular file\nOnly in A: o\nOnly in A: only\nOnly in B: p\nCommon subdirectories: A/sub and B/sub\n"},
		{name: "recursive brief", files: files, cmd: "diff -r -q A B", code: 1,
			stdout: "Files A/f and B/f differ\nOnly in B: fileb\nFile A/fileb2 is a directory while file B/fileb2 is a regular file\nOnly in A: o\nOnly in A: only\nOnly in B: p\nFiles A/sub/s and B/sub/s differ\n"},
		{name: "recursive unified headers", files: files, cmd: "diff -ru A B | grep -v '^[-+][-+][-+] '", code: 0,
			stdout: "diff -ru A/f B/f\n@@ -1 +1 @@\n-x\n+y\nOnly in B: fileb\nFile A/fileb2 is a directory while file B/fileb2 is a regular file\nOnly in A: o\nOnly in A: only\nOnly in B: p\ndiff -ru A/sub/s B/sub/s\n@@ -1 +1 @@\n-s\n+t\n"},
		{name: "recursive new file", files: files, cmd: "diff -rN A B", code: 1,
			stdout: "diff -rN A/f B/f\n1c1\n< x\n---\n> y\nFile A/fileb2 is a directory while file B/fileb2 is a regular file\ndiff -rN A/o B/o\n1d0\n< o\ndiff -rN A/p B/p\n0a1\n> p\ndiff -rN A/sub/s B/sub/s\n1c1\n< s\n---\n> t\n"},
		{name: "report identical", files: files, cmd: "diff -rs A B | grep identical", code: 0,
			stdout: "Files A/same and B/same are identical\n"},
	})
}

// TestDiffTooLarge checks that inputs over MaxFileBytes are refused.
func TestDiffTooLarge(t *testing.T) {
	e := newEnv(t, 0, 100, nil)
	e.put(map[string]string{"big": strings.Repeat("x\n", 100), "small": "x\n"})
	_, stderr, code := e.run("diff big small")
	if code != 2 || !strings.Contains(stderr, "diff: big: ") {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
}

// diffOf returns the changes and the unified diff of a and b.
func diffOf(a, b string, o diffOpts) ([]diffChange, string) {
	ta, tb := textOf("a", a), textOf("b", b)
	changes := diffLines(ta, tb, o, func() bool { return false })
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	if len(changes) > 0 {
		diffUnified(w, ta, tb, changes, o.context)
	}
	w.Flush()
	return changes, buf.String()
}

func textOf(name, s string) *diffText {
	t := &diffText{name: name, label: name}
	if s != "" {
		if !strings.HasSuffix(s, "\n") {
			t.noEOL = true
		} else {
			s = s[:len(s)-1]
		}
		t.lines = strings.Split(s, "\n")
	}
	return t
}

// applyUnified applies a unified diff to a, checking every context and
// removed line, and returns the result.
func applyUnified(t testing.TB, a, patch string) string {
	t.Helper()
	if patch == "" {
		return a
	}
	src := textOf("a", a)
	lines := strings.Split(strings.TrimSuffix(patch, "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		t.Fatalf("bad headers in %q", patch)
	}
	var out []string
	outNoEOL := false
	pos := 0 // next line of src to copy
	lastAdded := false
	for i := 2; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "@@ -"):
			var rng string
			rng, _, _ = strings.Cut(l[4:], " ")
			s, n, ok := strings.Cut(rng, ",")
			start, _ := strconv.Atoi(s)
			count := 1
			if ok {
				count, _ = strconv.Atoi(n)
			}
			if count > 0 {
				start--
			}
			if start < pos {
				t.Fatalf("hunk %q goes back (at %d)", l, pos)
			}
			out = append(out, src.lines[pos:start]...)
			pos = start
		case l == `\ No newline at end of file`:
			if lastAdded {
				outNoEOL = true
			}
		case strings.HasPrefix(l, " "), strings.HasPrefix(l, "-"):
			if pos >= len(src.lines) || src.lines[pos] != l[1:] {
				t.Fatalf("line %d of a is not %q in patch\n%s", pos, l, patch)
			}
			if l[0] == ' ' {
				out = append(out, l[1:])
				lastAdded = true
			} else {
				lastAdded = false
			}
			pos++
			outNoEOL = false
		case strings.HasPrefix(l, "+"):
			out = append(out, l[1:])
			lastAdded = true
			outNoEOL = false
		default:
			t.Fatalf("bad patch line %q", l)
		}
	}
	out = append(out, src.lines[pos:]...)
	if pos < len(src.lines) {
		// The last line comes from a after the last hunk; otherwise the
		// patch's marker said whether it ends with a newline.
		outNoEOL = src.noEOL
	}
	if len(out) == 0 {
		return ""
	}
	s := strings.Join(out, "\n")
	if !outNoEOL {
		s += "\n"
	}
	return s
}

// lcsLen is the length of a longest common subsequence of two line lists.
func lcsLen(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] > cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func TestDiffApplyAndMinimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 2000; iter++ {
		gen := func() string {
			n := rng.IntN(30)
			var b strings.Builder
			for i := 0; i < n; i++ {
				b.WriteString(string(rune('a' + rng.IntN(4))))
				b.WriteByte('\n')
			}
			s := b.String()
			if rng.IntN(4) == 0 && s != "" {
				s = s[:len(s)-1]
			}
			return s
		}
		a, b := gen(), gen()
		for _, ctx := range []int{0, 1, 3} {
			changes, patch := diffOf(a, b, diffOpts{context: ctx})
			if got := applyUnified(t, a, patch); got != b {
				t.Fatalf("a=%q b=%q ctx %d: patch gives %q\n%s", a, b, ctx, got, patch)
			}
			ta, tb := textOf("a", a), textOf("b", b)
			edits := 0
			for _, ch := range changes {
				edits += ch.a1 - ch.a0 + ch.b1 - ch.b0
			}
			keyed := func(t *diffText) []string {
				out := append([]string(nil), t.lines...)
				for i := range out {
					out[i] = "\n" + out[i]
				}
				if t.noEOL {
					out[len(out)-1] = "." + out[len(out)-1][1:]
				}
				return out
			}
			lcs := lcsLen(keyed(ta), keyed(tb))
			if want := len(ta.lines) + len(tb.lines) - 2*lcs; edits != want {
				t.Fatalf("a=%q b=%q: %d edits, minimal is %d", a, b, edits, want)
			}
		}
	}
}

// TestDiffHeuristic forces the cost cap: the diff stays correct.
func TestDiffHeuristic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var a, b strings.Builder
	for i := 0; i < 3*diffMaxCost; i++ {
		a.WriteString(strconv.Itoa(rng.IntN(1000)) + "\n")
		b.WriteString(strconv.Itoa(rng.IntN(1000)) + "\n")
	}
	_, patch := diffOf(a.String(), b.String(), diffOpts{context: 2})
	if got := applyUnified(t, a.String(), patch); got != b.String() {
		t.Fatal("patch does not reproduce b")
	}
}

func FuzzDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nc\nd\n", uint8(3))
	f.Add("x", "x\n", uint8(0))
	f.Add("", "a\n", uint8(1))
	f.Add("a\n\nb\n", "b\n\na", uint8(2))
	f.Add("0\x00\n", "0", uint8(37))
	f.Fuzz(func(t *testing.T, a, b string, ctx uint8) {
		if len(a) > 4096 || len(b) > 4096 {
			return
		}
		_, patch := diffOf(a, b, diffOpts{context: int(ctx % 5)})
		if got := applyUnified(t, a, patch); got != b {
			t.Fatalf("patch gives %q, want %q\n%s", got, b, patch)
		}
		if (patch == "") != (a == b) {
			t.Fatalf("empty patch %v for a==b %v", patch == "", a == b)
		}
	})
}

func TestDiffTimeFormat(t *testing.T) {
	got := diffTime(time.Date(2026, 12, 1, 10, 0, 0, 5, time.UTC))
	if want := "2026-12-01 10:00:00.000000005 +0000"; got != want {
		t.Errorf("diffTime = %q, want %q", got, want)
	}
}
