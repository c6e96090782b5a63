package editor

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

func str(s string) *string { return &s }
func num(i int) *int       { return &i }

// env is an editor over a fresh workspace.
type env struct {
	t  *testing.T
	ws *workspace.Workspace
	ed *Editor
}

func newEnv(t *testing.T, opts Options, quota int64) *env {
	t.Helper()
	ws, err := workspace.New(filepath.Join(t.TempDir(), "ws"), workspace.NewQuota(quota))
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ws: ws, ed: New(ws, opts)}
}

// put writes a file through the workspace (so it is charged to the quota).
func (e *env) put(rel, content string) {
	e.t.Helper()
	if err := e.ws.WriteFile(rel, []byte(content), 0); err != nil {
		e.t.Fatal(err)
	}
}

// file returns the content of rel and whether it exists.
func (e *env) file(rel string) (string, bool) {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.ws.Root(), filepath.FromSlash(rel)))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data), true
}

func (e *env) wantFile(rel, want string) {
	e.t.Helper()
	got, ok := e.file(rel)
	if !ok {
		e.t.Fatalf("%s does not exist, want %q", rel, want)
	}
	if got != want {
		e.t.Fatalf("%s = %q, want %q", rel, got, want)
	}
}

func (e *env) wantGone(rel string) {
	e.t.Helper()
	if _, ok := e.file(rel); ok {
		e.t.Fatalf("%s exists", rel)
	}
}

// run runs in and fails the test on a Go error.
func (e *env) run(in port.EditorInput) Output {
	e.t.Helper()
	out, err := e.ed.Run(in)
	if err != nil {
		e.t.Fatalf("Run(%+v): %v", in, err)
	}
	checkShape(e.t, out)
	return out
}

// ok runs in and requires success.
func (e *env) ok(in port.EditorInput) string {
	e.t.Helper()
	out := e.run(in)
	if out.ReturnCode != 0 || out.Stderr != "" {
		e.t.Fatalf("Run(%s %s) = %+v, want success", in.Command, in.Path, out)
	}
	return out.Stdout
}

// fail runs in and requires a failure whose message contains every sub.
func (e *env) fail(in port.EditorInput, subs ...string) string {
	e.t.Helper()
	out := e.run(in)
	if out.ReturnCode != 1 || out.Stdout != "" {
		e.t.Fatalf("Run(%s %q) = %+v, want failure", in.Command, in.Path, out)
	}
	for _, s := range subs {
		if !strings.Contains(out.Stderr, s) {
			e.t.Errorf("Run(%s %q) stderr %q does not contain %q", in.Command, in.Path, out.Stderr, s)
		}
	}
	return out.Stderr
}

// checkShape asserts the invariants of every Output.
func checkShape(t *testing.T, out Output) {
	t.Helper()
	switch out.ReturnCode {
	case 0:
		if out.Stderr != "" {
			t.Errorf("success with stderr %q", out.Stderr)
		}
	case 1:
		if !strings.HasPrefix(out.Stderr, "Error: ") || !strings.HasSuffix(out.Stderr, "\n") || strings.Count(out.Stderr, "\n") != 1 {
			t.Errorf("stderr %q is not one line starting with \"Error: \"", out.Stderr)
		}
	default:
		t.Errorf("ReturnCode = %d", out.ReturnCode)
	}
}

func view(p string, r ...int) port.EditorInput {
	return port.EditorInput{Command: port.EditorView, Path: p, ViewRange: r}
}
func create(p, text string) port.EditorInput {
	return port.EditorInput{Command: port.EditorCreate, Path: p, FileText: &text}
}
func replace(p, old, new string) port.EditorInput {
	return port.EditorInput{Command: port.EditorStrReplace, Path: p, OldStr: &old, NewStr: &new}
}
func insert(p string, line int, text string) port.EditorInput {
	return port.EditorInput{Command: port.EditorInsert, Path: p, InsertLine: &line, NewStr: &text}
}
func undo(p string) port.EditorInput {
	return port.EditorInput{Command: port.EditorUndoEdit, Path: p}
}

func TestRunMalformed(t *testing.T) {
	e := newEnv(t, Options{}, 0)
	e.put("a.txt", "x\n")
	tests := []struct {
		name  string
		in    port.EditorInput
		field string
	}{
		{"no command", port.EditorInput{Path: "a.txt"}, "command"},
		{"unknown command", port.EditorInput{Command: "delete", Path: "a.txt"}, "delete"},
		{"view without path", port.EditorInput{Command: port.EditorView}, "path"},
		{"create without path", port.EditorInput{Command: port.EditorCreate, FileText: str("x")}, "path"},
		{"undo without path", port.EditorInput{Command: port.EditorUndoEdit}, "path"},
		{"create without file_text", port.EditorInput{Command: port.EditorCreate, Path: "n.txt"}, "file_text"},
		{"str_replace without old_str", port.EditorInput{Command: port.EditorStrReplace, Path: "a.txt", NewStr: str("y")}, "old_str"},
		{"str_replace without new_str", port.EditorInput{Command: port.EditorStrReplace, Path: "a.txt", OldStr: str("x")}, "new_str"},
		{"str_replace without either", port.EditorInput{Command: port.EditorStrReplace, Path: "a.txt"}, "old_str"},
		{"insert without insert_line", port.EditorInput{Command: port.EditorInsert, Path: "a.txt", NewStr: str("y")}, "insert_line"},
		{"insert without new_str", port.EditorInput{Command: port.EditorInsert, Path: "a.txt", InsertLine: num(0)}, "new_str"},
		{"view_range of one", view("a.txt", 1), "view_range"},
		{"view_range of three", view("a.txt", 1, 2, 3), "view_range"},
		{"view_range empty", port.EditorInput{Command: port.EditorView, Path: "a.txt", ViewRange: []int{}}, "view_range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := e.ed.Run(tt.in)
			if !errors.Is(err, port.ErrInvalidRequest) {
				t.Fatalf("Run = %+v, %v; want ErrInvalidRequest", out, err)
			}
			if !strings.Contains(err.Error(), tt.field) {
				t.Errorf("error %q does not name %q", err, tt.field)
			}
			if out != (Output{}) {
				t.Errorf("Output = %+v with an error", out)
			}
		})
	}
	// Nothing was touched.
	e.wantFile("a.txt", "x\n")
	e.wantGone("n.txt")
}

func TestView(t *testing.T) {
	e := newEnv(t, Options{}, 0)
	e.put("a.txt", "one\ntwo\nthree\n")
	e.put("nonl.txt", "one\ntwo")
	e.put("crlf.txt", "one\r\ntwo\r\n\r\nfour")
	e.put("empty.txt", "")
	e.put("blank.txt", "\n")
	e.put("tabs.py", "def f():\n\treturn 1\n")
	e.put("uni.txt", "héllo wörld ☃\n")

	tests := []struct {
		in   port.EditorInput
		want string
	}{
		{view("a.txt"), "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{view("/workspace/a.txt"), "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{view("./a.txt"), "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{view("a.txt", 2, 3), "     2\ttwo\n     3\tthree\n"},
		{view("a.txt", 2, 2), "     2\ttwo\n"},
		{view("a.txt", 2, -1), "     2\ttwo\n     3\tthree\n"},
		{view("a.txt", 1, -1), "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{view("a.txt", 3, -1), "     3\tthree\n"},
		{view("nonl.txt"), "     1\tone\n     2\ttwo\n"},
		{view("nonl.txt", 2, 2), "     2\ttwo\n"},
		{view("crlf.txt"), "     1\tone\n     2\ttwo\n     3\t\n     4\tfour\n"},
		{view("crlf.txt", 3, 4), "     3\t\n     4\tfour\n"},
		{view("empty.txt"), ""},
		{view("blank.txt"), "     1\t\n"},
		{view("tabs.py"), "     1\tdef f():\n     2\t\treturn 1\n"},
		{view("uni.txt"), "     1\théllo wörld ☃\n"},
	}
	for _, tt := range tests {
		if got := e.ok(tt.in); got != tt.want {
			t.Errorf("view %s %v = %q, want %q", tt.in.Path, tt.in.ViewRange, got, tt.want)
		}
	}

	// Line numbers right-aligned in six columns, also past 9.
	var b strings.Builder
	for range 12 {
		b.WriteString("x\n")
	}
	e.put("long.txt", b.String())
	if got := e.ok(view("long.txt", 10, 11)); got != "    10\tx\n    11\tx\n" {
		t.Errorf("view long.txt = %q", got)
	}

	fails := []struct {
		in  port.EditorInput
		sub string
	}{
		{view("a.txt", 0, 2), "[0, 2]"},
		{view("a.txt", -1, 2), "[-1, 2]"},
		{view("a.txt", 4, 4), "3 lines"},
		{view("a.txt", 4, -1), "3 lines"},
		{view("a.txt", 3, 2), "end"},
		{view("a.txt", 2, 4), "3 lines"},
		{view("a.txt", 1, -2), "end"},
		{view("empty.txt", 1, 1), "0 lines"},
		{view("empty.txt", 1, -1), "0 lines"},
		{view("nonl.txt", 1, 3), "2 lines"},
		{view("missing.txt"), "does not exist"},
		{view("a.txt/x"), "does not exist"},
		{view(".", 1, 2), "directory"},
	}
	for _, tt := range fails {
		e.fail(tt.in, tt.sub)
	}
}

func TestViewRefusals(t *testing.T) {
	e := newEnv(t, Options{MaxFileBytes: 8}, 0)
	e.put("big.txt", "123456789")
	e.put("ok.txt", "12345678")
	e.put("bin.dat", "\x00\x01")
	e.put("bad.txt", "ok\xc3\x28\n")
	e.fail(view("big.txt"), "9 bytes", "limit of 8 bytes")
	e.fail(view("big.txt", 1, 1), "limit of 8 bytes")
	e.ok(view("ok.txt"))
	e.fail(view("bin.dat"), "not a UTF-8 text file")
	e.fail(view("bad.txt"), "not a UTF-8 text file")
}

func TestViewDirectory(t *testing.T) {
	e := newEnv(t, Options{}, 0)
	for _, p := range []string{
		"b.txt", "a.py", ".hidden", ".git/config",
		"src/main.py", "src/.env", "src/pkg/mod.py", "src/pkg/deep/x.py",
		"docs/readme.md",
	} {
		e.put(p, "x")
	}
	if err := os.Mkdir(filepath.Join(e.ws.Root(), "emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(e.ws.Root(), "etclink")); err != nil {
		t.Fatal(err)
	}

	want := "Files and directories up to 2 levels deep in /workspace, excluding hidden items:\n" +
		"a.py\nb.txt\ndocs/\ndocs/readme.md\nemptydir/\nsrc/\nsrc/main.py\nsrc/pkg/\n"
	for _, p := range []string{".", "/workspace", "/workspace/", "./"} {
		if got := e.ok(view(p)); got != want {
			t.Errorf("view %q =\n%s\nwant\n%s", p, got, want)
		}
	}
	wantSrc := "Files and directories up to 2 levels deep in /workspace/src, excluding hidden items:\n" +
		"src/main.py\nsrc/pkg/\nsrc/pkg/deep/\nsrc/pkg/mod.py\n"
	if got := e.ok(view("src")); got != wantSrc {
		t.Errorf("view src =\n%s\nwant\n%s", got, wantSrc)
	}
	if got := e.ok(view("emptydir")); !strings.Contains(got, "(empty directory)") {
		t.Errorf("view emptydir = %q", got)
	}
	e.fail(view("etclink"), "outside the workspace", "/workspace")
}

// A listing is one entry a line: a name holding a newline (or another
// unprintable character) is quoted, so that it cannot list an entry that
// does not exist.
func TestViewDirectoryQuotesOddNames(t *testing.T) {
	e := newEnv(t, Options{}, 0)
	e.put("ok.txt", "x")
	e.put("d\nfake/x\ngone.txt", "x")
	want := "Files and directories up to 2 levels deep in /workspace, excluding hidden items:\n" +
		"\"d\\nfake/\"\n\"d\\nfake/x\\ngone.txt\"\nok.txt\n"
	if got := e.ok(view(".")); got != want {
		t.Errorf("view . =\n%s\nwant\n%s", got, want)
	}
	want = "Files and directories up to 2 levels deep in \"/workspace/d\\nfake\", excluding hidden items:\n" +
		"\"d\\nfake/x\\ngone.txt\"\n"
	if got := e.ok(view("d\nfake")); got != want {
		t.Errorf("view d\\nfake =\n%s\nwant\n%s", got, want)
	}
}

func TestCreate(t *testing.T) {
	e := newEnv(t, Options{MaxFileBytes: 20}, 50)
	if got := e.ok(create("a.txt", "hello\n")); !strings.Contains(got, "a.txt") {
		t.Errorf("create output %q does not name the file", got)
	}
	e.wantFile("a.txt", "hello\n")
	e.ok(create("/workspace/deep/er/b.py", "print(1)"))
	e.wantFile("deep/er/b.py", "print(1)")
	e.ok(create("empty.txt", ""))
	e.wantFile("empty.txt", "")

	e.fail(create("a.txt", "other"), "already exists")
	e.wantFile("a.txt", "hello\n")
	e.fail(create("/workspace/a.txt", "other"), "already exists")
	e.fail(create("deep", "x"), "directory")
	e.fail(create("/workspace", "x"), "directory")
	// Spelt as a directory, the name is not taken for a file's.
	for _, p := range []string{"notes/", "notes/.", "deep/..", "/workspace/"} {
		e.fail(create(p, "x"), "names a directory")
	}
	e.wantGone("notes")
	stderr := e.fail(create("a.txt/child", "x"), "a parent is not a directory")
	if strings.Contains(stderr, "invalid request") {
		t.Errorf("stderr %q carries the sentinel text", stderr)
	}
	e.fail(create("big.txt", strings.Repeat("x", 21)), "limit of 20 bytes")
	e.wantGone("big.txt")
	e.ok(create("max.txt", strings.Repeat("x", 20)))

	// Quota: 6 + 8 + 0 + 20 = 34 of 50 in use.
	if used := e.ws.Quota().Used(); used != 34 {
		t.Fatalf("quota Used = %d, want 34", used)
	}
	e.fail(create("q.txt", strings.Repeat("q", 17)), "quota of 50 bytes")
	e.wantGone("q.txt")
	e.ok(create("q.txt", strings.Repeat("q", 16)))
	if used := e.ws.Quota().Used(); used != 50 {
		t.Fatalf("quota Used = %d, want 50", used)
	}
}

func TestStrReplace(t *testing.T) {
	tests := []struct {
		name    string
		content string
		old     string
		new     string
		want    string
		out     string
	}{
		{"single line", "a\nb\nc\n", "b", "B", "a\nB\nc\n", "line 2"},
		{"delete", "a\nb\nc\n", "b\n", "", "a\nc\n", "deleted at line 2"},
		{"multi-line new", "a\nb\nc\n", "b", "x\ny\nz", "a\nx\ny\nz\nc\n", "lines 2-4"},
		{"multi-line old", "a\nb\nc\n", "a\nb\n", "ab\n", "ab\nc\n", "line 1"},
		{"no trailing newline kept", "a\nb", "b", "c", "a\nc", "line 2"},
		{"crlf literal", "a\r\nb\r\n", "b", "c", "a\r\nc\r\n", "line 2"},
		{"crlf with lf old_str", "a\r\nb\r\nc\r\n", "a\nb", "x\ny\nz", "x\r\ny\r\nz\r\nc\r\n", "lines 1-3"},
		{"crlf with crlf old_str", "a\r\nb\r\n", "a\r\nb", "q", "q\r\n", "line 1"},
		{"crlf one-line old_str, lf new_str", "a\r\nb\r\n", "a", "x\ny", "x\r\ny\r\nb\r\n", "lines 1-2"},
		{"lf file, crlf new_str", "a\nb\n", "a", "x\r\ny", "x\ny\nb\n", "lines 1-2"},
		{"same text", "a\nb\n", "a", "a", "a\nb\n", "line 1"},
		{"whitespace matters", "if x:\n    y()\n", "    y()", "    z()", "if x:\n    z()\n", "line 2"},
		{"unicode", "héllo ☃\n", "☃", "❄", "héllo ❄\n", "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{}, 0)
			e.put("f.txt", tt.content)
			got := e.ok(replace("f.txt", tt.old, tt.new))
			if !strings.Contains(got, tt.out) {
				t.Errorf("output %q does not contain %q", got, tt.out)
			}
			e.wantFile("f.txt", tt.want)
			e.ok(undo("f.txt"))
			e.wantFile("f.txt", tt.content)
		})
	}

	e := newEnv(t, Options{MaxFileBytes: 30}, 0)
	e.put("f.txt", "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n")
	e.fail(replace("f.txt", "w = 0", "w"), "not found", "f.txt")
	e.fail(replace("f.txt", "x = 1", "x = 2"), "3 times", "lines 1, 3, 5")
	e.fail(replace("f.txt", "", "new"), "empty")
	e.fail(replace("f.txt", "z = 3\n", strings.Repeat("long", 10)), "limit of 30 bytes")
	e.wantFile("f.txt", "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n")

	e.put("same.txt", "ab ab\n")
	e.fail(replace("same.txt", "ab", "c"), "2 times", "lines 1)")
	e.put("overlap.txt", "aaa\n")
	e.fail(replace("overlap.txt", "aa", "b"), "2 times")

	e.fail(replace("missing.txt", "a", "b"), "does not exist")
	e.put("dir/x", "x")
	e.fail(replace("dir", "a", "b"), "directory")
	e.put("big.txt", strings.Repeat("b", 31))
	e.fail(replace("big.txt", "b", "c"), "31 bytes", "limit of 30 bytes")
	e.put("bin.dat", "ab\x00cd")
	e.fail(replace("bin.dat", "ab", "x"), "not a UTF-8 text file")
	e.put("latin1.txt", "caf\xe9\n")
	e.fail(replace("latin1.txt", "caf", "x"), "not a UTF-8 text file")
	e.wantFile("latin1.txt", "caf\xe9\n")
}

func TestStrReplaceManyOccurrences(t *testing.T) {
	e := newEnv(t, Options{}, 0)
	e.put("many.txt", strings.Repeat("k\n", 30))
	e.fail(replace("many.txt", "k", "j"), "more than 20 times", "lines 1, 2, 3,", " 20, ...)")
	e.wantFile("many.txt", strings.Repeat("k\n", 30))
}

func TestStrReplaceQuota(t *testing.T) {
	e := newEnv(t, Options{}, 20)
	e.put("f.txt", "0123456789\n") // 11 bytes
	e.put("g.txt", "abcdef")       // 6 bytes: 17 of 20
	// Growing f by 3 fits, since the old bytes are freed by the rewrite.
	e.ok(replace("f.txt", "0", "0abc"))
	e.wantFile("f.txt", "0abc123456789\n")
	e.fail(replace("f.txt", "9", "9x"), "quota of 20 bytes")
	e.wantFile("f.txt", "0abc123456789\n")
	if used := e.ws.Quota().Used(); used != 20 {
		t.Fatalf("quota Used = %d, want 20", used)
	}
	// Shrinking always works.
	e.ok(replace("f.txt", "0abc", "0"))
	e.wantFile("f.txt", "0123456789\n")
	if used := e.ws.Quota().Used(); used != 17 {
		t.Fatalf("quota Used = %d, want 17", used)
	}
}

func TestInsert(t *testing.T) {
	tests := []struct {
		name    string
		content string
		line    int
		text    string
		want    string
		out     string
	}{
		{"top", "a\nb\n", 0, "x", "x\na\nb\n", "at the top"},
		{"middle", "a\nb\n", 1, "x", "a\nx\nb\n", "after line 1"},
		{"end with newline", "a\nb\n", 2, "x", "a\nb\nx\n", "after line 2"},
		{"end without newline", "a\nb", 2, "x", "a\nb\nx", "after line 2"},
		{"middle without trailing newline", "a\nb", 1, "x", "a\nx\nb", "after line 1"},
		{"top without trailing newline", "a", 0, "x", "x\na", "at the top"},
		{"new_str with newline", "a\nb\n", 1, "x\n", "a\nx\nb\n", "1 line"},
		{"multi-line", "a\nb\n", 1, "x\ny", "a\nx\ny\nb\n", "2 lines"},
		{"multi-line with newline", "a\nb\n", 2, "x\ny\n", "a\nb\nx\ny\n", "2 lines"},
		{"empty new_str is an empty line", "a\nb\n", 1, "", "a\n\nb\n", "1 line"},
		{"blank lines kept", "a\n", 1, "x\n\n", "a\nx\n\n", "2 lines"},
		{"empty file", "", 0, "x", "x\n", "at the top"},
		{"crlf middle", "a\r\nb\r\n", 1, "x\ny", "a\r\nx\r\ny\r\nb\r\n", "2 lines"},
		{"crlf end", "a\r\nb\r\n", 2, "x", "a\r\nb\r\nx\r\n", "after line 2"},
		{"crlf end without newline", "a\r\nb", 2, "x\n", "a\r\nb\r\nx", "after line 2"},
		{"crlf new_str into lf file", "a\nb\n", 1, "x\r\ny\r\n", "a\nx\ny\nb\n", "2 lines"},
		{"lone newline file", "\n", 1, "x", "\nx\n", "after line 1"},
		{"byte order mark stays first", "\ufeffa\nb\n", 0, "x", "\ufeffx\na\nb\n", "at the top"},
		{"byte order mark alone", "\ufeff", 0, "x", "\ufeffx\n", "at the top"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Options{}, 0)
			e.put("f.txt", tt.content)
			got := e.ok(insert("/workspace/f.txt", tt.line, tt.text))
			if !strings.Contains(got, tt.out) {
				t.Errorf("output %q does not contain %q", got, tt.out)
			}
			e.wantFile("f.txt", tt.want)
			e.ok(undo("f.txt"))
			e.wantFile("f.txt", tt.content)
		})
	}

	e := newEnv(t, Options{MaxFileBytes: 10}, 0)
	e.put("f.txt", "a\nb\nc\n")
	e.fail(insert("f.txt", 4, "x"), "insert_line 4", "3 lines", "between 0 and 3")
	e.fail(insert("f.txt", -1, "x"), "insert_line -1")
	e.fail(insert("f.txt", 1, "xxxxx"), "limit of 10 bytes")
	e.wantFile("f.txt", "a\nb\nc\n")
	e.put("empty.txt", "")
	e.fail(insert("empty.txt", 1, "x"), "0 lines")
	e.fail(insert("missing.txt", 0, "x"), "does not exist")
	e.wantGone("missing.txt")
	e.put("d/x", "x")
	e.fail(insert("d", 0, "x"), "directory")
	e.put("bin", "\xff\xfe")
	e.fail(insert("bin", 0, "x"), "not a UTF-8 text file")
	e.put("big.txt", strings.Repeat("z", 11))
	e.fail(insert("big.txt", 0, "x"), "limit of 10 bytes")

	q := newEnv(t, Options{}, 10)
	q.put("f.txt", "a\nb\n")
	q.ok(insert("f.txt", 2, "c\nd"))
	q.fail(insert("f.txt", 0, "xyz"), "quota of 10 bytes")
	q.wantFile("f.txt", "a\nb\nc\nd\n")
}

func TestUndo(t *testing.T) {
	e := newEnv(t, Options{}, 0)
	e.fail(undo("a.txt"), "nothing to undo")

	e.ok(create("a.txt", "one\ntwo\n"))
	e.ok(replace("a.txt", "two", "2"))
	e.ok(insert("/workspace/a.txt", 0, "zero"))
	e.ok(replace("./a.txt", "one", "1"))
	e.wantFile("a.txt", "zero\n1\n2\n")

	// Edits of another file do not interfere.
	e.ok(create("b.txt", "b\n"))
	e.ok(replace("b.txt", "b", "B"))

	e.ok(undo("a.txt"))
	e.wantFile("a.txt", "zero\none\n2\n")
	e.ok(undo("/workspace/a.txt"))
	e.wantFile("a.txt", "one\n2\n")
	e.ok(undo("a.txt"))
	e.wantFile("a.txt", "one\ntwo\n")
	if got := e.ok(undo("a.txt")); !strings.Contains(got, "removed") {
		t.Errorf("undo of create = %q", got)
	}
	e.wantGone("a.txt")
	e.fail(undo("a.txt"), "nothing to undo")

	e.wantFile("b.txt", "B\n")
	e.ok(undo("b.txt"))
	e.wantFile("b.txt", "b\n")

	// Undo after the file was changed or removed behind the editor's back
	// restores the state before the last edit.
	e.ok(replace("b.txt", "b", "c"))
	if err := os.WriteFile(filepath.Join(e.ws.Root(), "b.txt"), []byte("changed by a program\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.ok(undo("b.txt"))
	e.wantFile("b.txt", "b\n")
	e.ok(replace("b.txt", "b", "d"))
	if err := e.ws.Remove("b.txt"); err != nil {
		t.Fatal(err)
	}
	e.ok(undo("b.txt"))
	e.wantFile("b.txt", "b\n")
	e.ok(undo("b.txt")) // the create
	e.wantGone("b.txt")

	// Undo of a create whose file is already gone succeeds.
	e.ok(create("c.txt", "c"))
	if err := e.ws.Remove("c.txt"); err != nil {
		t.Fatal(err)
	}
	e.ok(undo("c.txt"))
	e.wantGone("c.txt")

	// A failed edit records nothing.
	e.ok(create("d.txt", "d\n"))
	e.fail(replace("d.txt", "nope", "x"), "not found")
	e.fail(insert("d.txt", 9, "x"), "out of range")
	e.ok(undo("d.txt"))
	e.wantGone("d.txt")
	e.fail(undo("d.txt"), "nothing to undo")

	// Undo when the path is now a directory fails and keeps the history.
	e.ok(create("e", "e\n"))
	e.ok(replace("e", "e", "f"))
	if err := e.ws.Remove("e"); err != nil {
		t.Fatal(err)
	}
	e.put("e/inner", "x")
	e.fail(undo("e"), "directory")
	if err := os.RemoveAll(filepath.Join(e.ws.Root(), "e")); err != nil {
		t.Fatal(err)
	}
	e.ok(undo("e"))
	e.wantFile("e", "e\n")
}

func TestUndoQuota(t *testing.T) {
	e := newEnv(t, Options{}, 12)
	e.ok(create("a.txt", "0123456789")) // 10
	e.ok(replace("a.txt", "0123456789", "0"))
	e.put("b.txt", "bbbbbbbbbb") // 11 of 12
	// Restoring the 10-byte version needs 9 more bytes.
	e.fail(undo("a.txt"), "quota of 12 bytes")
	e.wantFile("a.txt", "0")
	if err := e.ws.Remove("b.txt"); err != nil {
		t.Fatal(err)
	}
	e.ok(undo("a.txt")) // the history was kept
	e.wantFile("a.txt", "0123456789")
}

func TestHistoryLimits(t *testing.T) {
	t.Run("per file", func(t *testing.T) {
		e := newEnv(t, Options{MaxHistoryPerFile: 2}, 0)
		e.ok(create("a.txt", "0\n"))
		for _, s := range []string{"1", "2", "3"} {
			e.ok(replace("a.txt", string(rune(s[0]-1))+"\n", s+"\n"))
		}
		e.wantFile("a.txt", "3\n")
		e.ok(undo("a.txt"))
		e.ok(undo("a.txt"))
		e.wantFile("a.txt", "1\n")
		e.fail(undo("a.txt"), "nothing to undo")
		e.wantFile("a.txt", "1\n")
	})

	t.Run("default per file", func(t *testing.T) {
		e := newEnv(t, Options{}, 0)
		e.ok(create("a.txt", "x"))
		for range 12 {
			e.ok(insert("a.txt", 0, "y"))
		}
		undos := 0
		for e.run(undo("a.txt")).ReturnCode == 0 {
			undos++
		}
		if undos != DefaultMaxHistoryPerFile {
			t.Fatalf("%d undos, want %d", undos, DefaultMaxHistoryPerFile)
		}
	})

	t.Run("bytes, oldest first across files", func(t *testing.T) {
		e := newEnv(t, Options{MaxHistoryBytes: 10}, 0)
		e.put("a.txt", "aaaa\n")            // 5 bytes
		e.put("b.txt", "bbbb\n")            // 5 bytes
		e.ok(replace("a.txt", "aaaa", "A")) // keeps 5 (a)
		e.ok(replace("b.txt", "bbbb", "B")) // keeps 5 (b): 10
		e.ok(replace("a.txt", "A", "AA"))   // keeps 2 (a): 12, drops a's oldest
		e.ok(undo("b.txt"))                 // b still has its snapshot
		e.wantFile("b.txt", "bbbb\n")
		e.ok(undo("a.txt"))
		e.wantFile("a.txt", "A\n")
		e.fail(undo("a.txt"), "nothing to undo") // the oldest was dropped
		e.wantFile("a.txt", "A\n")
	})

	t.Run("a snapshot over the budget forgets the file's history", func(t *testing.T) {
		e := newEnv(t, Options{MaxHistoryBytes: 8}, 0)
		e.ok(create("a.txt", "ab\n"))
		e.ok(replace("a.txt", "ab", "abcdefghij")) // keeps 3
		e.ok(create("b.txt", "b\n"))
		e.ok(replace("a.txt", "j", "J")) // would keep 11: dropped, and a's older history too
		e.wantFile("a.txt", "abcdefghiJ\n")
		e.fail(undo("a.txt"), "nothing to undo")
		e.ok(undo("b.txt")) // other files keep theirs
		e.wantGone("b.txt")
	})

	t.Run("negative disables history", func(t *testing.T) {
		e := newEnv(t, Options{MaxHistoryBytes: -1}, 0)
		e.ok(create("a.txt", "a\n"))
		e.ok(replace("a.txt", "a", "b"))
		e.fail(undo("a.txt"), "nothing to undo")
		e.wantFile("a.txt", "b\n")
	})

	t.Run("bookkeeping", func(t *testing.T) {
		e := newEnv(t, Options{MaxHistoryBytes: 100, MaxHistoryPerFile: 3}, 0)
		e.ok(create("a.txt", "0123456789\n"))
		for range 5 {
			e.ok(insert("a.txt", 0, "x"))
		}
		e.ok(create("b.txt", "b\n"))
		e.ok(insert("b.txt", 0, "y"))
		var total int64
		for _, h := range e.ed.history {
			for _, s := range h {
				total += int64(len(s.data))
			}
		}
		if total != e.ed.bytes || total > 100 {
			t.Fatalf("history bytes %d, counted %d", total, e.ed.bytes)
		}
		if len(e.ed.history["a.txt"]) != 3 || len(e.ed.history["b.txt"]) != 2 {
			t.Fatalf("history lengths a=%d b=%d", len(e.ed.history["a.txt"]), len(e.ed.history["b.txt"]))
		}
		for e.run(undo("a.txt")).ReturnCode == 0 {
		}
		for e.run(undo("b.txt")).ReturnCode == 0 {
		}
		if e.ed.bytes != 0 || len(e.ed.history) != 0 {
			t.Fatalf("after undoing all: bytes %d, files %d", e.ed.bytes, len(e.ed.history))
		}
	})
}

func TestPathEscapes(t *testing.T) {
	e := newEnv(t, Options{}, 0)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("top secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.ws.Root(), "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(e.ws.Root(), "secret")); err != nil {
		t.Fatal(err)
	}
	e.put("real.txt", "real\n")
	if err := os.Symlink("real.txt", filepath.Join(e.ws.Root(), "alias")); err != nil {
		t.Fatal(err)
	}

	paths := []string{
		"../x",
		"../../etc/passwd",
		"a/../../x",
		"/etc/passwd",
		"/workspace/../x",
		"/workspace/../etc/passwd",
		"/tmp/x",
		"out",
		"out/secret.txt",
		"/workspace/out/secret.txt",
		"out/new.txt",
		"secret",
		"alias", // a link pointing inside is refused too
		"bad\x00path",
	}
	for _, p := range paths {
		for _, in := range []port.EditorInput{
			view(p),
			view(p, 1, 1),
			create(p, "pwned\n"),
			replace(p, "top", "pwned"),
			insert(p, 0, "pwned"),
			undo(p),
		} {
			stderr := e.fail(in, "outside the workspace", "/workspace")
			if strings.Contains(stderr, "top secret") || strings.Contains(stderr, e.ws.Root()) {
				t.Errorf("%s %q: stderr %q leaks", in.Command, p, stderr)
			}
		}
	}
	data, err := os.ReadFile(secret)
	if err != nil || string(data) != "top secret\n" {
		t.Fatalf("secret = %q, %v", data, err)
	}
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) != 1 {
		t.Fatalf("outside dir has %d entries, %v", len(entries), err)
	}
	e.wantFile("real.txt", "real\n")
}

func TestInvalidPaths(t *testing.T) {
	e := newEnv(t, Options{}, 0)
	e.fail(view("bad\xffname"), "not valid UTF-8")
	long := strings.Repeat("d/", workspace.MaxPathBytes/2) + "x"
	stderr := e.fail(create(long, "x"), "over the limit of 4096")
	if len(stderr) > 200 {
		t.Errorf("stderr repeats the long path: %d bytes", len(stderr))
	}
	// A path with a newline stays on one line in messages.
	e.fail(view("new\nline.txt"), `"new\nline.txt"`)
}

// In the sandbox ~ is the home directory (Python's expanduser, the
// shell): a path starting with ~ is refused, not taken as a directory of
// the workspace named "~", where the model's code would not find the
// file. "./~" still names such a directory.
func TestTildePathsAreRefused(t *testing.T) {
	e := newEnv(t, Options{}, 0)
	for _, p := range []string{"~", "~/notes.txt", "~/sub/notes.txt"} {
		for _, in := range []port.EditorInput{view(p), create(p, "x\n"), replace(p, "x", "y"), insert(p, 0, "x"), undo(p)} {
			e.fail(in, "~", "does not expand", "/workspace")
		}
	}
	e.wantGone("~")
	e.ok(create("./~/notes.txt", "x\n"))
	e.wantFile("~/notes.txt", "x\n")
}

func TestOutputShape(t *testing.T) {
	e := newEnv(t, Options{MaxFileBytes: 100}, 0)
	e.put("f.txt", "a\nb\n")
	ins := []port.EditorInput{
		view("f.txt"), view("f.txt", 1, 1), view("."), create("n.txt", "n"),
		replace("f.txt", "a", "A"), insert("f.txt", 1, "i"), undo("f.txt"),
		view("nope"), create("f.txt", "x"), replace("f.txt", "zzz", "y"),
		insert("f.txt", 99, "x"), undo("nothing.txt"), view("f.txt", 5, 6),
	}
	for _, in := range ins {
		out := e.run(in) // checkShape runs on each
		if out.ReturnCode == 0 && out.Stdout == "" {
			t.Errorf("%s %s: success with empty stdout", in.Command, in.Path)
		}
	}
}
