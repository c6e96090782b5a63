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
}
