package wasm

import (
	"context"
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
)

func runDisplay(t *testing.T, a *testAdapter, id, code string, display *bool) port.Result {
	t.Helper()
	res, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, DisplayValues: display})
	if err != nil {
		t.Fatalf("Execute(%q): %v", firstLineOf(code), err)
	}
	return res
}

func boolPtr(b bool) *bool { return &b }

// A cell's last expression is shown as Jupyter shows it.
func TestLastExpressionIsDisplayed(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	for _, c := range []struct{ code, want string }{
		{"x = 41\nx + 1", "42\n"},
		{"open('out.csv','w').write('a\\n1\\n'); 6*7", "42\n"},
		{"_ * 2", "84\n"}, // builtins._ is the last value shown
		{"'text'", "'text'\n"},
		{"None", ""},
		{"print('p')", "p\n"},
		{"6*7;", ""},
		{"6*7 ;  # quiet", ""},
		{"x = 1", ""},
		{"if True:\n    5", ""}, // not a top-level expression
		{"import sys\nsys.displayhook = lambda v: print('hook', v)\n3", "hook 3\n"},
		{"del sys.displayhook\nsys.displayhook = sys.__displayhook__\n'é' * 2", "'éé'\n"},
		// The last statement is told apart from the lines around it.
		{"y = 2\nf = lambda v: v\nf(\n    y\n)", "2\n"},
		{"y = [\n1,\n2]", ""},
		{"s = '''\n3\n'''\nlen(s)", "3\n"},
		{"t = '''\nlen(s)\n'''", ""},
		{"for i in range(2):\n    i\n# done", ""},
		{"if y:\n    pass\nelse:\n    y", ""},
		{"y = 1; y", "1\n"},
		{"y; ", ""},
		{"match = 5\nmatch", "5\n"},
		{"type(3).__name__", "'int'\n"},
		{"@staticmethod\ndef g(): pass", ""},
		{"from math import pi\npi > 3", "True\n"},
		{"  # a comment\n\n", ""},
	} {
		res := run(t, a, id, c.code)
		if res.Stdout != c.want || res.ReturnCode != 0 {
			t.Errorf("%q: stdout %q rc %d stderr %q, want %q", c.code, res.Stdout, res.ReturnCode, res.Stderr, c.want)
		}
	}
	// An error in the last expression is the cell's error, on its line.
	res := run(t, a, id, "a = 1\n\n1/0")
	if res.ReturnCode != 1 || !strings.Contains(res.Stderr, `line 3`) || !strings.Contains(res.Stderr, "ZeroDivisionError") {
		t.Fatalf("error in the last expression: rc %d stderr %q", res.ReturnCode, res.Stderr)
	}
	// A syntax error is reported as without display.
	res = run(t, a, id, "1 +")
	if res.ReturnCode != 1 || !strings.Contains(res.Stderr, "SyntaxError") {
		t.Fatalf("syntax error: rc %d stderr %q", res.ReturnCode, res.Stderr)
	}
	// A displayed value is bounded like any output.
	res = run(t, a, id, "'x' * 3_000_000")
	if !res.OutputTruncated || len(res.Stdout) > 1<<20+200 {
		t.Fatalf("a huge value: truncated %v, %d bytes", res.OutputTruncated, len(res.Stdout))
	}
}

const richCell = `class Png:
    def _repr_png_(self): return b'\x89PNG fake'
    def __repr__(self): return 'Png()'
class Svg:
    def _repr_svg_(self): return '<svg/>'
class Html:
    def _repr_html_(self): return '<b>é</b>'
    def __repr__(self): return 'Html()'
class Broken:
    def _repr_png_(self): raise ValueError('no image')
    def __repr__(self): return 'Broken()'
class Lying:
    def __getattr__(self, name): return 'not callable'
    def __repr__(self): return 'Lying()'
display(Svg, Html(), Broken(), Lying())
Png()`

// Rich representations of the displayed value, and of display() calls,
// are produced files under .display; the text repr is on stdout.
func TestRichDisplaysAreProducedFiles(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	res := run(t, a, id, richCell)
	if res.ReturnCode != 0 {
		t.Fatalf("rc %d stderr %q", res.ReturnCode, res.Stderr)
	}
	if want := "<class '__main__.Svg'>\nHtml()\nBroken()\nLying()\nPng()\n"; res.Stdout != want {
		t.Fatalf("stdout %q, want %q", res.Stdout, want)
	}
	if !strings.Contains(res.Stderr, "[codeport: _repr_png_ of Broken raised ValueError: no image]") {
		t.Fatalf("stderr %q", res.Stderr)
	}
	got := map[string]string{}
	for _, f := range res.Files {
		got[f.Filename] = readOutput(t, a, id, f.FileID)
	}
	// Svg is a class, whose _repr_svg_ is its instances': text only.
	if strings.Contains(res.Stderr, "of type") {
		t.Fatalf("a class's repr method was called: %q", res.Stderr)
	}
	want := map[string]string{".display/cell1-1.html": "<b>é</b>", ".display/cell1-2.png": "\x89PNG fake"}
	if len(got) != len(want) {
		t.Fatalf("produced %q, want %q", got, want)
	}
	for name, data := range want {
		if got[name] != data {
			t.Fatalf("%s holds %q, want %q (all: %q)", name, got[name], data, got)
		}
	}
	// The next cell numbers its own files.
	res = run(t, a, id, "display(Html())")
	if len(res.Files) != 1 || res.Files[0].Filename != ".display/cell2-1.html" {
		t.Fatalf("second cell's files %+v", res.Files)
	}
}

// Display is off for a call that says so, and for every call under a
// setting that says so unless the call asks for it; the bash tool's
// python never displays.
func TestDisplayCanBeTurnedOff(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	res := runDisplay(t, a, id, richCell, boolPtr(false))
	if !strings.HasSuffix(res.Stdout, "Lying()\n") || strings.Contains(res.Stdout, "Png()") || len(res.Files) != 0 || strings.Contains(res.Stderr, "codeport") {
		t.Fatalf("display off: stdout %q, files %+v, stderr %q", res.Stdout, res.Files, res.Stderr)
	}
	bash, err := a.Execute(context.Background(), id, port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "python3 -c '6*7'; echo '6*7' | python3"})
	if err != nil || bash.Stdout != "" {
		t.Fatalf("bash python displayed %q (%v)", bash.Stdout, err)
	}

	off := newTestAdapter(t, func(c Config) Config { return c.WithDisplayValues(false) })
	if caps, _ := off.Describe(context.Background()); caps.DisplaysValues {
		t.Fatal("Describe says values are displayed with the setting off")
	}
	oid := newSession(t, off)
	if res := runDisplay(t, off, oid, "6*7", nil); res.Stdout != "" {
		t.Fatalf("setting off: %q", res.Stdout)
	}
	if res := runDisplay(t, off, oid, "6*7", boolPtr(true)); res.Stdout != "42\n" {
		t.Fatalf("setting off, call on: %q", res.Stdout)
	}
}
