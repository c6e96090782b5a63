package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/codeport/codeport/gateway/messages"
)

// The two questions, and the script the model writes in the first turn.
const (
	firstQuestion  = "What is the total of the amount column of sales.csv? Keep the total in a file."
	secondQuestion = "What would the total be if it doubled?"
	script         = "import csv, sys\n\nrows = list(csv.DictReader(open(sys.argv[1])))\nprint(sum(int(r['amount']) for r in rows))\n"
)

// ScriptedModel is a stand-in for a Messages endpoint: it answers from a
// script keyed on the conversation so far. In the first turn it creates
// total.py with the editor, runs it with bash, and answers from the
// result; in the second it reads the file the first turn left, through
// bash, and answers. It checks that it was offered the two tools.
func ScriptedModel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []Message `json:"messages"`
			Tools    []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		offered := map[string]bool{}
		for _, t := range req.Tools {
			offered[t.Name] = true
		}
		if !offered[messages.BashToolName] || !offered[messages.TextEditorToolName] {
			http.Error(w, "tools: the bash and text editor tools were not offered", http.StatusBadRequest)
			return
		}
		// The results of this turn's tool uses, oldest first.
		var results []string
		for _, m := range req.Messages {
			for _, b := range m.Content {
				var tr struct {
					Type    string `json:"type"`
					Content string `json:"content"`
				}
				if json.Unmarshal(b, &tr) == nil && tr.Type == "tool_result" {
					results = append(results, tr.Content)
				}
			}
		}
		second := firstUserText(req.Messages) == secondQuestion
		var content []any
		switch {
		case !second && len(results) == 0:
			content = []any{text("I'll write a script for it."), use("toolu_1", messages.TextEditorToolName, map[string]any{"command": "create", "path": "total.py", "file_text": script})}
		case !second && len(results) == 1:
			content = []any{use("toolu_2", messages.BashToolName, map[string]any{"command": "python3 total.py sales.csv > total.txt && cat total.txt"})}
		case !second:
			content = []any{text("The total is " + stdoutOf(results[len(results)-1]) + "; it is in total.txt.")}
		case len(results) == 0:
			content = []any{use("toolu_3", messages.BashToolName, map[string]any{"command": "echo $(( $(cat total.txt) * 2 ))"})}
		default:
			content = []any{text("Doubled, it would be " + stdoutOf(results[len(results)-1]) + ".")}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "message", "role": "assistant", "content": content})
	})
}

// firstUserText is the last text block of the conversation's first user
// message: the question of the turn (each turn sends its own messages).
func firstUserText(ms []Message) string {
	if len(ms) == 0 {
		return ""
	}
	var last string
	for _, b := range ms[0].Content {
		var t struct {
			Type, Text string
		}
		if json.Unmarshal(b, &t) == nil && t.Type == "text" {
			last = t.Text
		}
	}
	return last
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

func use(id, name string, input map[string]any) map[string]any {
	return map[string]any{"type": "tool_use", "id": id, "name": name, "input": input}
}

// stdoutOf is the stdout of a bash result block, trimmed.
func stdoutOf(result string) string {
	var r struct {
		Content struct {
			Stdout string `json:"stdout"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(result), &r); err != nil {
		return fmt.Sprintf("unknown (%v)", err)
	}
	return strings.TrimSpace(r.Content.Stdout)
}
