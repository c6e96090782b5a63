package binding_test

import (
	"os/exec"
	"slices"
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

// TestPackagesKeepToTheirRooms holds the layout of docs/architecture.md:
// the codeport binary links nothing of internal/testkit (what only tests
// and benchmarks use); contract, the wire shapes a client links, links no
// server, gateway glue or adapter; the gateway packages link no server
// and no adapter, so a gateway takes them without a runtime; the server
// links no adapter and no gateway glue.
func TestPackagesKeepToTheirRooms(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to list the packages' dependencies")
	}
	const mod = "github.com/codeport/codeport/"
	for _, rule := range []struct {
		pkg    string
		banned []string
	}{
		{"../cmd/codeport", []string{mod + "internal/testkit/"}},
		{"../contract", []string{mod + "server", mod + "gateway/", mod + "adapters/", mod + "internal/testkit/"}},
		{"../gateway/...", []string{mod + "server", mod + "adapters/", mod + "binding", mod + "internal/testkit/"}},
		{"../server", []string{mod + "adapters/", mod + "gateway/", mod + "binding", mod + "internal/testkit/"}},
	} {
		out, err := exec.Command(goBin, "list", "-deps", rule.pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", rule.pkg, err, out)
		}
		deps := strings.Fields(string(out))
		if !slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, mod) }) {
			t.Fatalf("go list -deps %s found none of the module's packages:\n%s", rule.pkg, out)
		}
		for _, d := range deps {
			for _, b := range rule.banned {
				// A rule ending in "/" bans the packages under it.
				if d == b || strings.HasSuffix(b, "/") && strings.HasPrefix(d, b) {
					t.Errorf("%s links %s", rule.pkg, d)
				}
			}
		}
	}
}
