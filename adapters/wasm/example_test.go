package wasm_test

import (
	"context"
	"fmt"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/port"
)

// The in-process runtime: CPython in this process, a fresh interpreter per
// session, state kept between the calls of one session.
func Example() {
	p, err := wasm.New(wasm.NewConfig().WithSessionsDir(""))
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
	defer p.DestroySession(ctx, sess.ID)
	for _, code := range []string{"import math\nn = math.factorial(20)", "print(n)", "print(n / 0)"} {
		res, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %d %q\n", res.Outcome, res.ReturnCode, res.Stdout)
	}
	// Output:
	// completed 0 ""
	// completed 0 "2432902008176640000\n"
	// program_error 1 ""
}
