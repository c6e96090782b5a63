// Command gateway is a runnable example of a gateway loop that serves an
// OpenAI Responses-style code_interpreter tool with codeport:
//
//	binding.Open → responses.ValidateTools → model → for each
//	code_interpreter call: NewPlan → RunCall → FunctionOutput to the model,
//	Item to the client → … → the model's final text.
//
// The "model" is a scripted HTTP endpoint on 127.0.0.1 that the example
// starts itself: it is not under test. Its first call has a NameError, it
// reads the traceback from the function output and corrects the code in a
// second call, and then answers from what the corrected program printed.
//
//	go run ./examples/gateway
//
// The sandbox comes from the usual configuration (the CODEPORT_* variables);
// by default it is the in-process runtime embedded in the binary.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/examples/internal/scripted"
	"github.com/codeport/codeport/gateway/responses"
	"github.com/codeport/codeport/port"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

// clientTools is what a client sends: the code interpreter declaration
// with our execution selector, next to a function of its own.
var clientTools = []json.RawMessage{
	json.RawMessage(`{"type":"code_interpreter","execution":"gateway"}`),
	json.RawMessage(`{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`),
}

const question = "What is the sum of the squares of 1 to 10? Use Python."

func run(ctx context.Context, out io.Writer) error {
	// This gateway offers the in-process runtime and a remote sandbox
	// (CODEPORT_SANDBOX_URL): only those two adapters are linked.
	b, err := binding.New(wasm.Opener(nil), httpadapter.Opener())
	if err != nil {
		return err
	}
	cfg, err := b.Load(nil, os.Getenv)
	if err != nil {
		return err
	}
	p, err := b.Open(cfg, binding.Options{})
	if err != nil {
		return err
	}
	defer p.Close()

	model := httptest.NewServer(ScriptedModel())
	defer model.Close()

	g := &Gateway{Port: p, ModelURL: model.URL, Timeout: 30 * time.Second}
	turn, err := g.Turn(ctx, question, clientTools)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "user: %s\n\n", question)
	for i, item := range turn.Items {
		b, err := json.MarshalIndent(item, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "public item %d:\n%s\n\n", i+1, b)
	}
	fmt.Fprintf(out, "assistant: %s\n", turn.Text)
	return nil
}

// Gateway is the loop between a client, a model and codeport.
type Gateway struct {
	// Port runs the code (binding.Open's result).
	Port port.CodeExecutionPort
	// ModelURL is the Responses-style endpoint: POST a request, get a
	// response whose output lists function calls or a message.
	ModelURL string
	// Timeout is each execution's timeout.
	Timeout time.Duration
	// HTTP is the client for the model; nil means http.DefaultClient.
	HTTP *http.Client
}

// Turn is what one user turn produced.
type Turn struct {
	// Items are the public code_interpreter_call items, in order: what
	// the client sees of each execution.
	Items []responses.Item
	// Text is the model's final answer.
	Text string
}

// maxSteps bounds the model round trips of one turn.
const maxSteps = 8

// Turn runs one user turn to the model's final text.
func (g *Gateway) Turn(ctx context.Context, userText string, tools []json.RawMessage) (Turn, error) {
	caps, err := g.Port.Describe(ctx)
	if err != nil {
		return Turn{}, err
	}
	// Before inference: refuse a bad declaration, and replace it with the
	// function the model sees.
	modelTools, err := responses.ValidateTools(tools, responses.Options{Enabled: true, Capabilities: caps})
	if err != nil {
		return Turn{}, fmt.Errorf("bad request: %w", err) // a 400 to the client
	}
	input := []any{map[string]any{"role": "user", "content": userText}}
	var turn Turn
	for range maxSteps {
		resp, err := g.callModel(ctx, modelRequest{Model: "scripted", Input: input, Tools: modelTools})
		if err != nil {
			return Turn{}, err
		}
		calls := 0
		for _, o := range resp.Output {
			switch {
			case o.Type == "function_call" && o.Name == responses.ToolName:
				calls++
				input = append(input, o) // the model's own call goes back as input
				plan, err := responses.NewPlan(o.CallID, o.Arguments)
				if err != nil {
					// Not executed: tell the model what was wrong.
					input = append(input, functionCallOutput(o.CallID, err.Error()))
					continue
				}
				outcome := responses.RunCall(ctx, g.Port, plan, g.Timeout)
				input = append(input, functionCallOutput(plan.CallID, outcome.FunctionOutput()))
				turn.Items = append(turn.Items, plan.Item(outcome))
			case o.Type == "function_call":
				// A client function: a real gateway hands it back to the client.
				return Turn{}, fmt.Errorf("the example does not serve client function %q", o.Name)
			case o.Type == "message":
				for _, c := range o.Content {
					if c.Type == "output_text" {
						turn.Text += c.Text
					}
				}
			}
		}
		if calls == 0 {
			return turn, nil
		}
	}
	return Turn{}, fmt.Errorf("no final answer after %d model calls", maxSteps)
}

func functionCallOutput(callID, output string) map[string]any {
	return map[string]any{"type": "function_call_output", "call_id": callID, "output": output}
}

// modelRequest and modelResponse are the parts of the Responses API the
// example uses.
type modelRequest struct {
	Model string            `json:"model"`
	Input []any             `json:"input"`
	Tools []json.RawMessage `json:"tools"`
}

type modelResponse struct {
	ID     string       `json:"id"`
	Output []outputItem `json:"output"`
}

type outputItem struct {
	Type      string        `json:"type"`
	ID        string        `json:"id,omitempty"`
	CallID    string        `json:"call_id,omitempty"`
	Name      string        `json:"name,omitempty"`
	Arguments string        `json:"arguments,omitempty"`
	Role      string        `json:"role,omitempty"`
	Content   []contentPart `json:"content,omitempty"`
}

type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func (g *Gateway) callModel(ctx context.Context, req modelRequest) (modelResponse, error) {
	var resp modelResponse
	err := scripted.PostJSON(ctx, g.HTTP, g.ModelURL+"/v1/responses", req, &resp)
	return resp, err
}

// The scripted model's two programs: the first misspells a name.
const (
	firstCode  = "squares = [n * n for n in range(1, 11)]\nprint(sum(sqares))\n"
	secondCode = "squares = [n * n for n in range(1, 11)]\nprint(sum(squares))\n"
)

// ScriptedModel is a stand-in for a model endpoint: a handler that answers
// Responses-style requests from a script, keyed on the function outputs the
// gateway has sent back so far. It checks that it was given the
// code_interpreter function (not the client's declaration).
func ScriptedModel() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []map[string]any `json:"input"`
			Tools []map[string]any `json:"tools"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		hasFunction := false
		for _, t := range req.Tools {
			if t["type"] == "code_interpreter" {
				http.Error(w, "tools: code_interpreter declaration reached the model", http.StatusBadRequest)
				return
			}
			hasFunction = hasFunction || t["type"] == "function" && t["name"] == responses.ToolName
		}
		if !hasFunction {
			http.Error(w, "tools: no code_interpreter function", http.StatusBadRequest)
			return
		}
		var outputs []string
		for _, it := range req.Input {
			if it["type"] == "function_call_output" {
				s, _ := it["output"].(string)
				outputs = append(outputs, s)
			}
		}
		var out outputItem
		switch len(outputs) {
		case 0:
			out = call("call_1", firstCode)
		case 1:
			if !strings.Contains(outputs[0], "NameError") {
				out = message("The first program did not fail as scripted:\n" + outputs[0])
				break
			}
			out = call("call_2", secondCode)
		default:
			out = message("The sum of the squares of 1 to 10 is " + stdoutOf(outputs[len(outputs)-1]) + ".")
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(modelResponse{ID: fmt.Sprintf("resp_%d", len(outputs)+1), Output: []outputItem{out}})
	})
}

func call(callID, code string) outputItem {
	args, _ := json.Marshal(map[string]string{"code": code})
	return outputItem{Type: "function_call", ID: "fc_" + callID, CallID: callID, Name: responses.ToolName, Arguments: string(args)}
}

func message(text string) outputItem {
	return outputItem{Type: "message", ID: "msg_1", Role: "assistant", Content: []contentPart{{Type: "output_text", Text: text}}}
}

// stdoutOf reads the stdout section of a function output.
func stdoutOf(functionOutput string) string {
	rest, ok := strings.CutPrefix(functionOutput, "stdout:\n")
	if !ok {
		return "unknown"
	}
	line, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSpace(line)
}
