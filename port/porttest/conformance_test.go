package porttest_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/codeport/codeport/conformance"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
)

// TestConformance runs the suite every adapter passes against the fake,
// without an executor: the Python checks are skipped (code_execution is
// not offered), and the checks of sessions, files, errors and the editor
// must run and pass through the editor and the file operations.
func TestConformance(t *testing.T) {
	d := porttest.NewDriver(porttest.WithMaxSessions(4))
	p := port.New(d)
	t.Cleanup(func() { _ = p.Close() })

	var mu sync.Mutex
	ran := map[string]bool{} // check name -> passed (not skipped, not failed)
	conformance.Run(t, func(st *testing.T) conformance.Target {
		name := strings.TrimPrefix(st.Name(), t.Name()+"/")
		st.Cleanup(func() {
			mu.Lock()
			defer mu.Unlock()
			ran[name] = !st.Skipped() && !st.Failed()
		})
		return conformance.Target{Port: p, Stall: d.Stall}
	})

	mustRun := []string{"session/", "files/", "errors/", "editor/", "results/output-files"}
	for _, c := range conformance.Checks() {
		for _, group := range mustRun {
			if strings.HasPrefix(c.Name, group) && !ran[c.Name] {
				t.Errorf("%s did not run and pass on the fake", c.Name)
			}
		}
	}
	if live := d.Sessions(); len(live) != 0 {
		t.Errorf("the suite left sessions behind: %q", live)
	}
}
