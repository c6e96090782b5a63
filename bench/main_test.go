package bench

import (
	"flag"
	"os"
	"testing"

	"github.com/codeport/codeport/internal/testkit/wasmtest"
)

// workerBin is the codeport binary the subprocess peer's workers run. It
// is built only when benchmarks run, so that `go test ./...` stays fast.
var workerBin string

func TestMain(m *testing.M) {
	flag.Parse()
	f := flag.Lookup("test.bench")
	os.Exit(wasmtest.MainWithWorker(m, f != nil && f.Value.String() != "", &workerBin))
}
