package purpose

import (
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
)

// The hint names the shell's commands only when the bash tool is offered
// and the backend listed them.
func TestHintDescribesTheShell(t *testing.T) {
	c := port.Capabilities{
		Tools:         []port.ToolKind{port.ToolCodeExecution, port.ToolBashCodeExecution},
		ShellCommands: []string{"awk", "grep", "sed"},
	}
	h := Hint(c, Options{})
	for _, want := range []string{"POSIX shell", "awk, grep, sed", "no host processes and has no network", "separate program"} {
		if !strings.Contains(h, want) {
			t.Errorf("hint lacks %q:\n%s", want, h)
		}
	}
	c.Tools = c.Tools[:1]
	if h := Hint(c, Options{}); strings.Contains(h, "shell") {
		t.Errorf("a hint without the bash tool mentions a shell:\n%s", h)
	}
	c.Tools, c.ShellCommands = []port.ToolKind{port.ToolBashCodeExecution}, nil
	if h := Hint(c, Options{}); strings.Contains(h, "commands are") {
		t.Errorf("a hint without a command list lists commands:\n%s", h)
	}
	// A tool that runs Python only (the Responses function) is not told
	// of a shell the backend offers beside it.
	c.Tools, c.ShellCommands = []port.ToolKind{port.ToolCodeExecution, port.ToolBashCodeExecution}, []string{"awk"}
	for _, o := range []Options{{PythonOnly: true}, {PythonOnly: true, FreshState: true}, {PythonOnly: true, Container: true}} {
		if h := Hint(c, o); strings.Contains(h, "shell") {
			t.Errorf("a Python-only hint (%+v) mentions a shell:\n%s", o, h)
		}
	}
}

// State persists within a session, a container, or not at all.
func TestHintSaysWhereStatePersists(t *testing.T) {
	c := port.Capabilities{WorkingDirectory: "/workspace"}
	for o, want := range map[Options]string{
		{}:                 "persist between calls in the same session.",
		{Container: true}:  "persist between calls in the same container.",
		{FreshState: true}: "Every call starts with fresh Python state",
	} {
		if h := Hint(c, o); !strings.Contains(h, want) {
			t.Errorf("Hint(%+v) lacks %q:\n%s", o, want, h)
		}
	}
}

// The hint says one thing about a cell's last expression: shown where the
// backend displays values, not returned where it does not.
func TestHintOnLastExpressionAgreesWithDisplay(t *testing.T) {
	for _, displays := range []bool{true, false} {
		h := Hint(port.Capabilities{Runtime: "CPython", DisplaysValues: displays}, Options{})
		notReturned := strings.Contains(h, "not the value of the last expression")
		shown := strings.Contains(h, "last expression is shown")
		if notReturned == displays || shown != displays {
			t.Errorf("DisplaysValues %v: the hint says the last expression is not returned: %v, is shown: %v\n%s", displays, notReturned, shown, h)
		}
	}
}
