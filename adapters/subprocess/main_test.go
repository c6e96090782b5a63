package subprocess_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/codeport/codeport/internal/wasmtest"
)

// workerBin is the codeport binary the tests' workers run, built once by
// TestMain.
var workerBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "codeport-worker-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if workerBin, err = wasmtest.BuildWorker(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
