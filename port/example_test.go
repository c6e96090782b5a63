package port_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
)

// runPython is what a gateway does with a port for one tool call of a
// model, as Otari's gateway does with a contract v1 backend: a session for
// the call, destroyed after it; a failed program is a result for the
// model, not an error; a full backend is "retry later".
func runPython(ctx context.Context, p port.CodeExecutionPort, code string) (string, error) {
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	var full *port.CapacityError
	if errors.As(err, &full) {
		return "", fmt.Errorf("code execution is busy; retry after %s", full.RetryAfter)
	}
	if err != nil {
		return "", err
	}
	defer p.DestroySession(context.WithoutCancel(ctx), sess.ID)

	res, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, Timeout: 10 * time.Second})
	if err != nil {
		return "", err // the call could not run at all
	}
	if res.Stdout == "" && res.Stderr == "" && res.ReturnCode == 0 {
		return "(no output)", nil
	}
	var b strings.Builder
	if res.Stdout != "" {
		fmt.Fprintf(&b, "stdout:\n%s\n", strings.TrimRight(res.Stdout, "\n"))
	}
	if res.Stderr != "" {
		fmt.Fprintf(&b, "stderr:\n%s\n", strings.TrimRight(res.Stderr, "\n"))
	}
	fmt.Fprintf(&b, "return_code: %d", res.ReturnCode)
	return b.String(), nil
}

// A gateway's use of a port. In production p comes from an adapter
// (adapters/wasm runs CPython in process); here it is porttest's fake,
// whose executor plays the interpreter, as in a gateway's unit tests.
func Example() {
	p := porttest.New(
		porttest.WithMaxSessions(1),
		porttest.WithExecutor(func(ctx context.Context, s porttest.Session, req port.ExecuteRequest) (port.Result, error) {
			switch req.Code {
			case "print(6 * 7)":
				return port.Result{Stdout: "42\n"}, nil
			case "x = 1":
				return port.Result{}, nil
			}
			return port.Result{Stderr: "ZeroDivisionError: division by zero\n", ReturnCode: 1}, nil
		}),
	)
	defer p.Close()
	ctx := context.Background()

	for _, code := range []string{"print(6 * 7)", "x = 1", "1 / 0"} {
		out, err := runPython(ctx, p, code)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(out)
	}

	// Another caller holds the only session.
	held, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = runPython(ctx, p, "print(6 * 7)")
	fmt.Println("error:", err)
	p.DestroySession(ctx, held.ID)
	// Output:
	// stdout:
	// 42
	// return_code: 0
	// (no output)
	// stderr:
	// ZeroDivisionError: division by zero
	// return_code: 1
	// error: code execution is busy; retry after 1s
}
