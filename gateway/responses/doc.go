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
//
// # Containers (phase two)
//
// Phase one above is the default. An operator who enables containers
// gives Options a store (Options.Containers, package gateway/containers);
// a declaration may then be OpenAI's own,
//
//	{"type":"code_interpreter","container":{"type":"auto","file_ids":["file-abc"]}}
//	{"type":"code_interpreter","container":"cntr_0123456789abcdef0123456789abcdef"}
//
// with or without execution "gateway", and its calls run in a container:
// a session of the bound port, owned by the caller's tenant, expiring after
// its idle time, whose Python state and files persist between calls, and
// between responses that name it. The model's function description says
// so. A declaration with execution "gateway" and no container still runs
// each call with fresh state.
//
//	opts := responses.Options{Enabled: true, Capabilities: caps, Containers: store}
//	tools, err := responses.ValidateTools(req.Tools, opts)
//	if err != nil { /* 400, err names the field */ }
//	choice, _ := responses.ContainerOf(req.Tools, opts) // validated above
//	var cntr *responses.Container
//	if choice.Mode != responses.ContainerFresh {
//		cntr, err = responses.OpenContainer(ctx, store, choice) // before inference
//		if err != nil { /* 404 when errors.Is(err, containers.ErrContainerNotFound) or containers.ErrFileNotFound; 400 for another *ValidationError */ }
//		defer cntr.Release(ctx) // ends an auto container no call used
//	}
//	// ... for each code_interpreter call of the model:
//	plan, err := cntr.NewPlan(call.CallID, call.Arguments) // item.container_id is cntr.ID
//	o := cntr.Run(ctx, plan, 30*time.Second)               // continues the container's state
//	output = append(output, plan.Item(o))
//	produced = append(produced, o.ContainerFiles...)
//	// ... the model's final text:
//	annotations := responses.ContainerFileCitations(cntr.ID, produced, text)
//
// A later request naming cntr.ID as its container continues the same
// state; one of another tenant, or one that has expired, is refused as
// unknown.
package responses
