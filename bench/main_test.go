package bench

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/codeport/codeport/internal/wasmtest"
)

// workerBin is the codeport binary the subprocess peer's workers run. It
// is built only when benchmarks run, so that `go test ./...` stays fast.
var workerBin string

func TestMain(m *testing.M) {
	flag.Parse()
	var dir string
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		var err error
		if dir, err = os.MkdirTemp("", "codeport-bench-worker-"); err == nil {
			workerBin, err = wasmtest.BuildWorker(dir)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "subprocess peer absent:", err)
		}
	}
	code := m.Run()
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}
