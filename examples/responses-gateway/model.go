package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/codeport/codeport/gateway/responses"
)

// The two questions, and the programs the model writes for them. The
// second uses csv, totals and total, which only the first defines: it
// works because the container keeps the interpreter's state.
const (
	firstQuestion  = "What is the total of the amount column of sales.csv? Give me a file with each region's total and share."
	secondQuestion = "Which region has the largest share, and what is the average per region?"
	firstCode      = `import csv

totals = {}
for row in csv.DictReader(open("sales.csv")):
    totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
total = sum(totals.values())
with open("summary.csv", "w", newline="") as f:
    out = csv.writer(f, lineterminator="\n")
    out.writerow(["region", "amount", "share"])
    for region, amount in sorted(totals.items(), key=lambda kv: -kv[1]):
        out.writerow([region, amount, f"{amount / total:.1%}"])
print(total)
`
	secondCode = `rows = list(csv.DictReader(open("summary.csv")))
print(rows[0]["region"], rows[0]["share"], f"{total / len(totals):.1f}")
`
)

// ScriptedModel is a stand-in for a Responses endpoint: it answers from a
// script keyed on the turn's question and the function outputs the
// gateway has sent back since it. It checks that it was given the
// code_interpreter function (not the client's declaration), that the
// instructions name the uploaded file, and, in the second turn, that the
// first turn's code_interpreter_call items came back as history while
// none of the gateway's internal function calls did.
func ScriptedModel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Instructions string           `json:"instructions"`
			Input        []map[string]any `json:"input"`
			Tools        []map[string]any `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		hasFunction := false
		for _, t := range req.Tools {
			if t["type"] == responses.DeclarationType {
				http.Error(w, "tools: code_interpreter declaration reached the model", http.StatusBadRequest)
				return
			}
			hasFunction = hasFunction || t["type"] == "function" && t["name"] == responses.ToolName
		}
		if !hasFunction {
			http.Error(w, "tools: no code_interpreter function", http.StatusBadRequest)
			return
		}
		if !strings.Contains(req.Instructions, "sales.csv") {
			http.Error(w, "instructions: the container's files were not named", http.StatusBadRequest)
			return
		}
		// The turn's question is the last user message; the outputs are
		// those of the calls made since.
		question, last := "", -1
		for i, it := range req.Input {
			if it["role"] == "user" {
				question, _ = it["content"].(string)
				last = i
			}
		}
		var outputs []string
		pastItems, replayed := 0, 0
		for i, it := range req.Input {
			switch {
			case i > last && it["type"] == "function_call_output":
				s, _ := it["output"].(string)
				outputs = append(outputs, s)
			case i < last && it["type"] == "code_interpreter_call":
				pastItems++
			case i < last && it["type"] == "function_call":
				replayed++
			}
		}
		var out any
		switch question {
		case firstQuestion:
			if len(outputs) == 0 {
				out = call("call_1", firstCode)
				break
			}
			out = message(fmt.Sprintf("The total is %s. Each region's total and share are in summary.csv.", stdoutOf(outputs[0])))
		case secondQuestion:
			if pastItems == 0 || replayed > 0 {
				http.Error(w, fmt.Sprintf("history: %d past code_interpreter_call items, %d replayed function calls", pastItems, replayed), http.StatusBadRequest)
				return
			}
			if len(outputs) == 0 {
				out = call("call_2", secondCode)
				break
			}
			var region, share, average string
			if n, _ := fmt.Sscan(stdoutOf(outputs[0]), &region, &share, &average); n != 3 {
				out = message("The program did not print what I expected:\n" + outputs[0])
				break
			}
			out = message(fmt.Sprintf("The %s region has the largest share, %s (the first row of summary.csv); the average per region is %s.", region, share, average))
		default:
			http.Error(w, fmt.Sprintf("no script for %q", question), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "response", "output": []any{out}})
	})
}

func call(callID, code string) map[string]any {
	args, _ := json.Marshal(map[string]string{"code": code})
	return map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID, "name": responses.ToolName, "arguments": string(args)}
}

func message(text string) map[string]any {
	return map[string]any{"type": "message", "id": "msg_model", "role": "assistant", "content": []map[string]any{{"type": "output_text", "text": text}}}
}

// stdoutOf is the stdout section of a function output, trimmed, or the
// whole output when it has none.
func stdoutOf(functionOutput string) string {
	rest, ok := strings.CutPrefix(functionOutput, "stdout:\n")
	if !ok {
		return functionOutput
	}
	line, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(line)
}
