// Command quickstart runs Python in a sandbox inside this process. The README
// shows this file; a test in cmd/codeport checks the two match and runs it.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/port"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	p, err := wasm.New(wasm.NewConfig()) // CPython in this process, compiled once into ~/.cache/codeport
	if err != nil {
		return err
	}
	defer p.Close()
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		return err
	}
	defer p.DestroySession(ctx, s.ID)
	res, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1+1)"})
	fmt.Print(res.Stdout) // 2
	return err
}
