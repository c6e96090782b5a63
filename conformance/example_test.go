package conformance_test

import (
	"context"
	"fmt"

	"github.com/codeport/codeport/conformance"
	"github.com/codeport/codeport/port/porttest"
)

// RunChecks runs the suite outside of go test, as `codeport conformance`
// does; a check that needs a tool the backend does not offer is skipped
// with the reason.
func ExampleRunChecks() {
	p := porttest.New(porttest.WithMaxSessions(4))
	defer p.Close()
	only := func(name string) bool { return name == "files/round-trip" || name == "tool/code_execution" }
	for _, r := range conformance.RunChecks(context.Background(), conformance.Target{Port: p}, only) {
		fmt.Println(r.Name, r.Status)
	}
	// Output:
	// tool/code_execution SKIP
	// files/round-trip PASS
}
