// Package messages gives gateways that speak Anthropic's Messages API (and
// contract v1) the code execution tool definitions and the content blocks
// of one executed call, so no gateway hand-writes these shapes.
//
// Two versions of the tool are covered. The older one (code_execution
// calls with input {code}: ToolDefinition, Blocks) returns the result
// block contract v1 returns (contract.ResultFromPort), so the two cannot
// drift apart:
//
//	caps, _ := bound.Describe(ctx)              // binding.Bound fills PurposeHint
//	tools = append(tools, messages.ToolDefinition(caps.PurposeHint))
//	// ... the model asks for code_execution with input {"code": code}:
//	id := messages.NewToolUseID()
//	res, err := p.Execute(ctx, sessionID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, ToolUseID: id})
//	if err != nil { /* the call did not run: report it */ }
//	use, result := messages.Blocks(id, code, res)
//	content = append(content, use, result)
//
// The 2025-08-25 one, which a client declares as ToolDefinition20250825,
// has two calls, bash_code_execution {command} and
// text_editor_code_execution {command, path, ...}, over one container
// whose files last the conversation (one session). The gateway offers the
// model BashToolDefinition and TextEditorToolDefinition, makes a Call of
// each tool use, and returns its server_tool_use and result blocks, those
// of Anthropic's SDK, errors included; files come in through
// container_upload blocks (ContainerUploadFileID) and go out by the ids
// the gateway's file store gives them (FileIDFunc):
//
//	call := messages.Call{ID: messages.NewToolUseID(), Name: use.Name, Input: use.Input}
//	req, err := call.Request()
//	var res port.Result
//	if err == nil {
//		res, err = p.Execute(ctx, sessionID, req)
//	}
//	content = append(content, call.ServerToolUse(), call.Result(res, err, fileIDs))
//
// Containers that outlive a request: with a containers.Store, a turn runs
// in the container the client's request names in its container field
// (ContainerParam), or in a new one, and the response's container field
// (ContainerField) names it, so that the client's next request continues
// its state and files. container_upload blocks are copied in from the
// store's file source (Upload), and each call runs with Call.Run:
//
//	id, err := messages.ContainerParam(req.Container) // 400 on err
//	c, err := messages.OpenContainer(ctx, store, id)   // 404 on containers.ErrContainerNotFound
//	for _, b := range uploads {
//		if _, err := messages.Upload(ctx, store, c.ID, b); err != nil { /* 400 or 404 */ }
//	}
//	// ... for each tool use of the model's:
//	call := messages.Call{ID: messages.NewToolUseID(), Name: use.Name, Input: use.Input}
//	content = append(content, call.ServerToolUse(), call.Run(ctx, store, c.ID, nil))
//	// ... and in the response, as the turn left it (its expiry moved):
//	if c, err = store.Get(ctx, c.ID); err == nil {
//		resp.Container = messages.ContainerField(c)
//	}
package messages
