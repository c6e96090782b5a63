package messages

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// ToolName is the name of the tool, of its server_tool_use blocks and the
// tool kind contract v1 runs.
const ToolName = string(port.ToolCodeExecution)

// ToolUseIDPrefix is the prefix of Anthropic's server tool use ids.
const ToolUseIDPrefix = "srvtoolu_"

type inputSchema struct {
	Type       string                       `json:"type"`
	Properties map[string]map[string]string `json:"properties"`
	Required   []string                     `json:"required"`
}

type toolDefinition struct {
	Name        string      `json:"name"`
	Description string      `json:"description"`
	InputSchema inputSchema `json:"input_schema"`
}

// ToolDefinition is the code_execution tool a model is offered:
//
//	{"name":"code_execution","description":...,
//	 "input_schema":{"type":"object","properties":{"code":{"type":"string"}},"required":["code"]}}
//
// description is usually the bound adapter's purpose hint
// (port.Capabilities.PurposeHint as binding.Bound.Describe fills it in).
func ToolDefinition(description string) json.RawMessage {
	return mustMarshal(toolDefinition{
		Name:        ToolName,
		Description: description,
		InputSchema: inputSchema{
			Type:       "object",
			Properties: map[string]map[string]string{"code": {"type": "string"}},
			Required:   []string{"code"},
		},
	})
}

// NewToolUseID returns a fresh "srvtoolu_" + 24 hex digit id for a
// server_tool_use block.
func NewToolUseID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return ToolUseIDPrefix + hex.EncodeToString(b)
}

type serverToolUse struct {
	Type  string         `json:"type"`
	ID    string         `json:"id"`
	Name  string         `json:"name"`
	Input map[string]any `json:"input"`
}

// Blocks converts one executed code_execution call into Anthropic's two
// content blocks:
//
//	{"type":"server_tool_use","id":toolUseID,"name":"code_execution","input":{"code":code}}
//	{"type":"code_execution_tool_result","tool_use_id":toolUseID,
//	 "content":{"type":"code_execution_result","stdout":...,"stderr":...,"return_code":...,"content":[...]}}
//
// The result block is contract.ResultFromPort(res).ResultBlock, with the
// result's tool use id set to toolUseID and its tool to code_execution, so
// it is byte for byte the result_block contract v1 returns.
func Blocks(toolUseID, code string, res port.Result) (serverToolUse, result json.RawMessage) {
	res.ToolUseID = toolUseID
	res.Tool = port.ToolCodeExecution
	serverToolUse = mustMarshal(serverToolUseBlock(toolUseID, code))
	result = mustMarshal(contract.ResultFromPort(res).ResultBlock)
	return serverToolUse, result
}

func serverToolUseBlock(id, code string) serverToolUse {
	return serverToolUse{Type: "server_tool_use", ID: id, Name: ToolName, Input: map[string]any{"code": code}}
}

func mustMarshal(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // cannot happen: plain strings, ints and lists
	}
	return b
}
