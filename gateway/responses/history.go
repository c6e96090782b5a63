package responses

import "encoding/json"

// FilterHistory prepares a continued conversation's input items for the
// model. It returns a new slice in which:
//   - every item of type code_interpreter_call is kept as it is (byte for
//     byte); it is never turned into a function_call input, so a past
//     execution is never replayed or re-run;
//   - every function_call item named code_interpreter is dropped, and so is
//     every function_call_output whose call_id is one of theirs: these are
//     the gateway's internal pairs, which a client may have echoed back;
//   - everything else (messages, other function calls and their outputs,
//     items that are not JSON objects) is kept unchanged, in order.
//
// A function_call_output is matched by call_id against the function_call
// items anywhere in input, before or after it.
func FilterHistory(input []json.RawMessage) []json.RawMessage {
	type head struct {
		Type   string `json:"type"`
		Name   string `json:"name"`
		CallID string `json:"call_id"`
	}
	heads := make([]head, len(input))
	internal := map[string]bool{}
	for i, raw := range input {
		if json.Unmarshal(raw, &heads[i]) != nil {
			heads[i] = head{}
			continue
		}
		if heads[i].Type == "function_call" && heads[i].Name == ToolName {
			internal[heads[i].CallID] = true
		}
	}
	out := make([]json.RawMessage, 0, len(input))
	for i, raw := range input {
		h := heads[i]
		switch {
		case h.Type == "function_call" && h.Name == ToolName:
			continue
		case h.Type == "function_call_output" && internal[h.CallID]:
			continue
		}
		out = append(out, raw)
	}
	return out
}
