package porttest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
)

// A gateway's test of the code that runs a model's Python: the executor
// plays the interpreter, and the fake does the rest as a backend would.
func Example() {
	p := porttest.New(porttest.WithExecutor(func(ctx context.Context, s porttest.Session, req port.ExecuteRequest) (port.Result, error) {
		if req.Code == "print(6 * 7)" {
			return port.Result{Stdout: "42\n"}, nil
		}
		return port.Result{Stderr: "SyntaxError: invalid syntax\n", ReturnCode: 1}, nil
	}))
	defer p.Close()
	ctx := context.Background()

	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.DestroySession(ctx, sess.ID)
	for _, code := range []string{"print(6 * 7)", "print(6 *"} {
		res, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %q %q %d\n", res.Outcome, res.Stdout, res.Stderr, res.ReturnCode)
	}
	// Output:
	// completed "42\n" "" 0
	// program_error "" "SyntaxError: invalid syntax\n" 1
}

// Without an executor the fake offers the text editor and the files, and
// refuses code_execution as a backend without it does.
func ExampleNew() {
	p := porttest.New()
	defer p.Close()
	ctx := context.Background()
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}

	if _, err := p.PutFile(ctx, sess.ID, "notes/todo.txt", strings.NewReader("write tests\nship\n")); err != nil {
		fmt.Println(err)
		return
	}
	view := &port.EditorInput{Command: port.EditorView, Path: "notes/todo.txt", ViewRange: []int{2, -1}}
	res, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: view})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q\n", res.Stdout)

	_, err = p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(1)"})
	fmt.Println(errors.Is(err, port.ErrUnsupportedTool))
	_, err = p.PutFile(ctx, sess.ID, "../outside.txt", strings.NewReader("x"))
	fmt.Println(errors.Is(err, port.ErrPathEscapesWorkspace))
	// Output:
	// "     2\tship\n"
	// true
	// true
}

// An executor sees the session's files: here it plays a program that
// counts the rows of an uploaded CSV file and writes a report.
func ExampleWithExecutor() {
	count := func(ctx context.Context, s porttest.Session, req port.ExecuteRequest) (port.Result, error) {
		data, err := s.ReadFile("data.csv")
		if errors.Is(err, port.ErrFileNotFound) {
			return port.Result{Stderr: "FileNotFoundError: data.csv\n", ReturnCode: 1}, nil
		}
		if err != nil {
			return port.Result{}, err
		}
		rows := bytes.Count(data, []byte("\n")) - 1
		if err := s.WriteFile("out/report.txt", fmt.Appendf(nil, "%d rows\n", rows)); err != nil {
			return port.Result{}, err
		}
		return port.Result{Stdout: fmt.Sprintf("%d\n", rows)}, nil
	}
	p := porttest.New(porttest.WithExecutor(count))
	defer p.Close()
	ctx := context.Background()
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}

	run := func() {
		res, err := p.Execute(ctx, sess.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "count rows"})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: %q %q\n", res.Outcome, res.Stdout, res.Stderr)
	}
	run()
	if _, err := p.PutFile(ctx, sess.ID, "data.csv", strings.NewReader("a,b\n1,2\n3,4\n")); err != nil {
		fmt.Println(err)
		return
	}
	run()
	files, err := p.ListFiles(ctx, sess.ID, "out")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range files {
		fmt.Println(f.Path, f.Size)
	}
	// Output:
	// program_error: "" "FileNotFoundError: data.csv\n"
	// completed: "2\n" ""
	// out/report.txt 7
}

// Stall makes a call last without an interpreter, to see what a gateway
// does with a busy session.
func ExampleDriver_Stall() {
	d := porttest.NewDriver()
	p := port.New(d)
	defer p.Close()
	ctx := context.Background()
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}

	view := port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorView, Path: "."}}
	started, release := d.Stall(sess.ID)
	first := make(chan error)
	go func() {
		_, err := p.Execute(ctx, sess.ID, view)
		first <- err
	}()
	<-started
	_, err = p.Execute(ctx, sess.ID, view)
	fmt.Println("second call busy:", errors.Is(err, port.ErrSessionBusy))
	release()
	fmt.Println("first call:", <-first)
	// Output:
	// second call busy: true
	// first call: <nil>
}

// Sessions shows whether the code under test destroyed the sessions it
// made.
func ExampleDriver_Sessions() {
	d := porttest.NewDriver()
	p := port.New(d)
	defer p.Close()
	ctx := context.Background()

	leaky := func() {
		_, _ = p.CreateSession(ctx, port.CreateSessionRequest{})
	}
	tidy := func() {
		s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
		if err == nil {
			defer p.DestroySession(ctx, s.ID)
		}
	}
	tidy()
	fmt.Println(d.Sessions())
	leaky()
	fmt.Println(d.Sessions())
	// Output:
	// []
	// [porttest-2]
}

// With a clock the test moves, a session's reclamation is tested without
// waiting for it.
func ExampleWithClock() {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	p := porttest.New(porttest.WithClock(func() time.Time { return now }))
	defer p.Close()
	ctx := context.Background()
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{IdleTimeout: 5 * time.Minute})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("idle timeout:", sess.IdleTimeout)

	now = now.Add(5 * time.Minute)
	_, err = p.ListFiles(ctx, sess.ID, ".")
	fmt.Println("after 5 minutes idle:", errors.Is(err, port.ErrSessionNotFound))
	// Output:
	// idle timeout: 5m0s
	// after 5 minutes idle: true
}
