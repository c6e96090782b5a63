package messages

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

func TestToolDefinition(t *testing.T) {
	got := string(ToolDefinition(`Runs "Python".`))
	want := `{"name":"code_execution","description":"Runs \"Python\".","input_schema":{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestNewToolUseID(t *testing.T) {
	re := regexp.MustCompile(`^srvtoolu_[0-9a-f]{24}$`)
	a, b := NewToolUseID(), NewToolUseID()
	if !re.MatchString(a) || a == b {
		t.Errorf("%q %q", a, b)
	}
}

func TestBlocks(t *testing.T) {
	cases := []struct {
		name   string
		res    port.Result
		result string
	}{
		{"success", port.Result{Stdout: "4\n", Outcome: port.OutcomeCompleted, Duration: time.Second},
			`{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"code_execution_result","stdout":"4\n","stderr":"","return_code":0,"content":[]}}`},
		{"program error", port.Result{Stderr: "ZeroDivisionError\n", ReturnCode: 1, Outcome: port.OutcomeProgramError},
			`{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"code_execution_result","stdout":"","stderr":"ZeroDivisionError\n","return_code":1,"content":[]}}`},
		{"timeout partial", port.Result{Stdout: "tick\n", Stderr: "timed out\n", ReturnCode: 124, Outcome: port.OutcomeTimedOut, StateLost: true},
			`{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"code_execution_result","stdout":"tick\n","stderr":"timed out\n","return_code":124,"content":[]}}`},
		{"files, other ids overridden", port.Result{ToolUseID: "other", Tool: port.ToolBashCodeExecution, Files: []port.OutputFile{{FileID: "f1", Filename: "a.png"}}},
			`{"type":"code_execution_tool_result","tool_use_id":"srvtoolu_1","content":{"type":"code_execution_result","stdout":"","stderr":"","return_code":0,"content":[{"type":"code_execution_output","file_id":"f1","filename":"a.png"}]}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			use, result := Blocks("srvtoolu_1", "print(2+2)", c.res)
			if want := `{"type":"server_tool_use","id":"srvtoolu_1","name":"code_execution","input":{"code":"print(2+2)"}}`; string(use) != want {
				t.Errorf("server_tool_use\n got %s\nwant %s", use, want)
			}
			if string(result) != c.result {
				t.Errorf("result\n got %s\nwant %s", result, c.result)
			}
			// Byte for byte what contract v1 returns as result_block.
			r := c.res
			r.ToolUseID, r.Tool = "srvtoolu_1", port.ToolCodeExecution
			wire, err := json.Marshal(contract.ResultFromPort(r))
			if err != nil {
				t.Fatal(err)
			}
			var resp struct {
				ResultBlock json.RawMessage `json:"result_block"`
			}
			if err := json.Unmarshal(wire, &resp); err != nil {
				t.Fatal(err)
			}
			if string(resp.ResultBlock) != string(result) {
				t.Errorf("differs from contract v1\n got %s\nwant %s", result, resp.ResultBlock)
			}
		})
	}
}
