package subprocess_test

import (
	"os"
	"testing"

	"github.com/codeport/codeport/internal/testkit/wasmtest"
)

// workerBin is the codeport binary the tests' workers run, built once by
// TestMain.
var workerBin string

func TestMain(m *testing.M) {
	os.Exit(wasmtest.MainWithWorker(m, true, &workerBin))
}
