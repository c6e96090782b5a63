package responses_test

import (
	"context"
	"fmt"
	"time"

	"github.com/codeport/codeport/gateway/responses"
	"github.com/codeport/codeport/port"
	"github.com/codeport/codeport/port/porttest"
)

// One model function call run as a code_interpreter call: planned, run in a
// fresh session, and turned into what the model and the client get.
func ExampleRunCall() {
	p := porttest.New(porttest.WithExecutor(func(_ context.Context, _ porttest.Session, req port.ExecuteRequest) (port.Result, error) {
		return port.Result{Stdout: "55\n"}, nil
	}))
	defer p.Close()
	plan, err := responses.NewPlan("call_1", `{"code":"print(sum(range(11)))"}`)
	if err != nil {
		fmt.Println(err)
		return
	}
	outcome := responses.RunCall(context.Background(), p, plan, 30*time.Second)
	fmt.Println(outcome.Ran())
	fmt.Println(outcome.FunctionOutput())
	fmt.Println(plan.Item(outcome).Status)
	// Output:
	// true
	// stdout:
	// 55
	// return_code: 0
	// completed
}
