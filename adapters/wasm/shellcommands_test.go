package wasm

import (
	"slices"
	"testing"

	"github.com/codeport/codeport/adapters/wasm/internal/shell"
)

func TestShellCommandsAreTheShells(t *testing.T) {
	got := shell.Commands()
	if !slices.Equal(shellCommands, got) {
		t.Fatalf("shellCommands = %q\nthe shell has %q", shellCommands, got)
	}
	if caps := Capabilities(DefaultSettings()); !slices.Equal(caps.ShellCommands, got) {
		t.Fatalf("Describe lists %q", caps.ShellCommands)
	}
}
