package wasm

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheShellRunsOnlyInTheGuest: the gateway's binary links none of the
// shell's code (its interpreter, its commands, their parsers): the shell
// exists in the process only as the bytes of shell.wasm, run by wazero over
// the session's mounts. Whatever a script sends is parsed there.
func TestTheShellRunsOnlyInTheGuest(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the binary's packages")
	}
	out, err := exec.Command(goBin, "list", "-deps", "github.com/codeport/codeport/cmd/codeport").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 {
		t.Fatalf("go list found too few packages:\n%s", out)
	}
	for _, d := range deps {
		for _, banned := range []string{
			"github.com/codeport/codeport/adapters/wasm/internal/shell",
			"mvdan.cc/sh/v3/interp",
			"github.com/benhoyt/goawk",
			"github.com/dlclark/regexp2",
		} {
			if d == banned || strings.HasPrefix(d, banned+"/") && !strings.HasPrefix(d, banned+"/wasmshell") {
				t.Errorf("the gateway links %s", d)
			}
		}
	}
}
