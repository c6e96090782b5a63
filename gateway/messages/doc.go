// Package messages gives gateways that speak Anthropic's Messages API (and
// contract v1) the code_execution tool definition and the content blocks of
// one executed call, so no gateway hand-writes these shapes.
//
// The result block is the one contract v1 returns (contract.ResultFromPort),
// so the two cannot drift apart.
//
// Usage:
//
//	caps, _ := bound.Describe(ctx)              // binding.Bound fills PurposeHint
//	tools = append(tools, messages.ToolDefinition(caps.PurposeHint))
//	// ... the model asks for code_execution with input {"code": code}:
//	id := messages.NewToolUseID()
//	res, err := p.Execute(ctx, sessionID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, ToolUseID: id})
//	if err != nil { /* the call did not run: report it */ }
//	use, result := messages.Blocks(id, code, res)
//	content = append(content, use, result)
package messages
