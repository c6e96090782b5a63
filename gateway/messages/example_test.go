package messages_test

import (
	"fmt"

	"github.com/codeport/codeport/gateway/messages"
	"github.com/codeport/codeport/port"
)

// One executed call as the two content blocks of Anthropic's Messages API.
func ExampleBlocks() {
	use, result := messages.Blocks("srvtoolu_01", "print(6 * 7)", port.Result{Stdout: "42\n", Outcome: port.OutcomeCompleted})
	fmt.Println(string(use))
	fmt.Println(string(result))
	// Output:
	// {"type":"server_tool_use","id":"srvtoolu_01","name":"code_execution","input":{"code":"print(6 * 7)"}}
	// {"type":"code_execution_tool_result","tool_use_id":"srvtoolu_01","content":{"type":"code_execution_result","stdout":"42\n","stderr":"","return_code":0,"content":[]}}
}
