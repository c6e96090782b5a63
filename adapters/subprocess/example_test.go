package subprocess_test

import (
	"context"
	"fmt"

	"github.com/codeport/codeport/adapters/subprocess"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/port"
)

// Sessions in worker processes: a crash or an out-of-memory kill takes one
// session with it, never the gateway. The workers are a codeport binary's
// hidden worker command (not run here: it needs the binary).
func Example() {
	cfg := subprocess.NewConfig().WithWorkerCommand("/usr/local/bin/codeport", "worker").
		WithWorkers(1, 0).                                    // one kept started; at most as many as max-sessions allows
		WithWasm(wasm.NewConfig().WithMemoryLimit(512 << 20)) // each session's interpreter
	p, err := subprocess.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	ctx := context.Background()
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(6 * 7)"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A worker that died during the call gives the session_lost outcome.
	fmt.Println(res.Outcome, res.Stdout)
}
