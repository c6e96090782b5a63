// Package responses wires codeport into a gateway that speaks OpenAI's
// Responses API: a client declares
//
//	{"type":"code_interpreter","execution":"gateway"}
//
// and the gateway runs the code on its bound adapter instead of OpenAI's
// hosted containers. The package gives the gateway every shape it needs,
// all derived from one typed Outcome:
//
//   - ValidateTools refuses bad declarations before inference and replaces
//     the declaration with the function "code_interpreter" the model sees;
//   - NewPlan turns the model's function call into a Plan with a "ci_" item
//     id and a unique, single-use "cntr_gw_" container id;
//   - RunCall runs the plan in a session of its own (every execution starts
//     with fresh Python state) and returns its Outcome (OutcomeOf maps any
//     port result or error);
//   - Outcome.FunctionOutput is the function_call_output text the model
//     sees; Plan.Item is the public code_interpreter_call output item;
//     Plan.Events are the streaming events, in OpenAI's order;
//   - FilterHistory drops the internal function_call pairs from a continued
//     conversation and keeps the public items as they are.
//
// Usage:
//
//	tools, err := responses.ValidateTools(req.Tools, responses.Options{Enabled: cfg.CodeExecution, Capabilities: caps})
//	if err != nil { /* 400, err names the field */ }
//	input := responses.FilterHistory(req.Input)
//	// ... the model calls code_interpreter with call_id and arguments:
//	plan, err := responses.NewPlan(call.CallID, call.Arguments)
//	if err != nil { /* give the model err.Error() as its function output */ }
//	seq := 0
//	send(plan.StartEvents(outputIndex, &seq))
//	o := responses.RunCall(ctx, p, plan, 30*time.Second)
//	send(plan.FinishEvents(o, outputIndex, &seq))
//	output = append(output, plan.Item(o))                         // public
//	modelInput = append(modelInput, fnCall, fnOutput(call.CallID, o.FunctionOutput())) // internal
package responses
