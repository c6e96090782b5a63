package wasm_test

import (
	"os"
	"testing"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/conformance"
	"github.com/codeport/codeport/internal/testkit/measure"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

// testSnapshotKey seals the suite's session snapshots.
var testSnapshotKey = []byte("codeport conformance snapshot key, 32+ bytes")

// TestConformance runs the suite every adapter must pass, with room for
// four sessions so that the capacity check runs; the session limit comes
// from Describe.
func TestConformance(t *testing.T) {
	a := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(4) }, port.WithSnapshotKey(testSnapshotKey))
	cpu := func() time.Duration { return measure.CPU(os.Getpid()) }
	conformance.Run(t, func(*testing.T) conformance.Target { return conformance.Target{Port: a, CPUTime: cpu} })
}

// TestConformanceScientific runs the same suite on the scientific
// profile: another build of the interpreter, which must pass everything
// the default one does, and the checks of the packages it lists.
func TestConformanceScientific(t *testing.T) {
	a := wasmtest.New(t, func(c wasm.Config) wasm.Config { return c.WithMaxSessions(4).WithProfile("scientific") }, port.WithSnapshotKey(testSnapshotKey))
	cpu := func() time.Duration { return measure.CPU(os.Getpid()) }
	conformance.Run(t, func(*testing.T) conformance.Target { return conformance.Target{Port: a, CPUTime: cpu} })
}
