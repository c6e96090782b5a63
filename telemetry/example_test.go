package telemetry_test

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
	"github.com/codeport/codeport/telemetry"
)

// The observer counts what any port serves; here the in-memory fake's.
func Example() {
	reg := prometheus.NewRegistry()
	obs, err := telemetry.NewObserver(reg)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := port.New(porttest.NewDriver(), port.WithObserver(obs))
	defer p.Close()
	ctx := context.Background()
	sess, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		fmt.Println(err)
		return
	}
	view := port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorView, Path: "."}}
	if _, err := p.Execute(ctx, sess.ID, view); err != nil {
		fmt.Println(err)
		return
	}
	_, err = p.Execute(ctx, "gone", view)
	fmt.Println(port.ErrorCode(err))
	n, err := testutil.GatherAndCount(reg, "codeport_executions_total", "codeport_call_errors_total")
	fmt.Println(n, err)
	// Output:
	// session_not_found
	// 2 <nil>
}
