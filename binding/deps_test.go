package binding_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestARemoteOnlyGatewayLinksNoRuntime lists the packages of a program
// that imports binding and adapters/http alone: registering adapters
// instead of importing them keeps the runtime, the worker protocol, the
// shell and the metrics library out of it.
func TestARemoteOnlyGatewayLinksNoRuntime(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the program's packages")
	}
	out, err := exec.Command(goBin, "list", "-deps", "./testdata/remoteonly").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	var nonStd int
	for _, d := range deps {
		first, _, _ := strings.Cut(d, "/")
		if strings.Contains(first, ".") {
			nonStd++
		}
		for _, banned := range []string{"github.com/tetratelabs/wazero", "github.com/hashicorp/go-plugin", "google.golang.org/grpc", "mvdan.cc/", "github.com/prometheus/"} {
			if strings.HasPrefix(d, banned) {
				t.Errorf("a remote-only gateway links %s", d)
			}
		}
	}
	if nonStd == 0 {
		t.Fatalf("go list found none of the program's own packages:\n%s", out)
	}
	t.Logf("%d packages, %d outside the standard library", len(deps), nonStd)
}
