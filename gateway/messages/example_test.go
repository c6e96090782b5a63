package messages_test

import (
	"encoding/json"
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

// One bash_code_execution call of the 2025-08-25 tool, which wrote a file:
// the gateway stored the file and reports it by its store's id.
func ExampleCall() {
	call := messages.Call{ID: "srvtoolu_02", Name: messages.BashToolName, Input: json.RawMessage(`{"command":"seq 3 | tee n.txt"}`)}
	req, err := call.Request() // port.ExecuteRequest{Tool: bash_code_execution, Command: ..., ToolUseID: "srvtoolu_02"}
	fmt.Println(req.Command, err)
	res := port.Result{Stdout: "1\n2\n3\n", Outcome: port.OutcomeCompleted, Files: []port.OutputFile{{FileID: "out_1", Filename: "n.txt"}}}
	store := func(f port.OutputFile) (string, error) { return "file_011CNha8", nil } // the gateway's file store
	fmt.Println(string(call.ServerToolUse()))
	fmt.Println(string(call.Result(res, nil, store)))
	// Output:
	// seq 3 | tee n.txt <nil>
	// {"type":"server_tool_use","id":"srvtoolu_02","name":"bash_code_execution","input":{"command":"seq 3 | tee n.txt"}}
	// {"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_02","content":{"type":"bash_code_execution_result","stdout":"1\n2\n3\n","stderr":"","return_code":0,"content":[{"type":"bash_code_execution_output","file_id":"file_011CNha8"}]}}
}

// A text_editor_code_execution call whose file does not exist.
func ExampleCall_Result_error() {
	call := messages.Call{ID: "srvtoolu_03", Name: messages.TextEditorToolName, Input: json.RawMessage(`{"command":"view","path":"data.csv"}`)}
	res := port.Result{Stderr: "Error: data.csv does not exist\n", ReturnCode: 1, Outcome: port.OutcomeProgramError}
	fmt.Println(string(call.Result(res, nil, nil)))
	// Output:
	// {"type":"text_editor_code_execution_tool_result","tool_use_id":"srvtoolu_03","content":{"type":"text_editor_code_execution_tool_result_error","error_code":"file_not_found","error_message":"data.csv does not exist"}}
}

// A client's container_upload block, read back for the file to put into
// the session.
func ExampleContainerUploadFileID() {
	block := messages.ContainerUpload("file_011CNha8")
	id, err := messages.ContainerUploadFileID(block)
	fmt.Println(string(block), id, err)
	// Output:
	// {"type":"container_upload","file_id":"file_011CNha8"} file_011CNha8 <nil>
}
