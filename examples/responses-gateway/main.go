// Command responses-gateway is a runnable example of a gateway that serves
// OpenAI's code_interpreter tool, in its containers form, with codeport,
// over two turns of one conversation that share a container:
//
//	turn 1: the client declares {"type":"code_interpreter","container":
//	        {"type":"auto","file_ids":[...]}}: the gateway makes a container
//	        with the uploaded CSV in it; the model runs Python that reads
//	        it, keeps a total in a variable, writes summary.csv and answers;
//	        the client gets code_interpreter_call items that name the
//	        container, and the answer's container_file_citation annotations
//	        for summary.csv.
//	turn 2: the client sends the container id back in the declaration
//	        ({"type":"code_interpreter","container":"cntr_..."}) and the
//	        first turn's items in its input; the model's code uses the
//	        variables the first turn left and reads summary.csv.
//
// The gateway's side (responses.Options.Containers set to a
// containers.Store):
//
//	ValidateTools → ContainerOf → OpenContainer (before inference) → model
//	→ for each code_interpreter call: Container.NewPlan → Container.Run →
//	FunctionOutput to the model, Item to the client → … → the model's text
//	with ContainerFileCitations.
//
// The model is offered one function, code_interpreter({code}), whose
// description (ContainerDescription) says that state persists in the
// container; the gateway also tells it, in the request's instructions,
// which files the container holds. A continued conversation's input goes
// through FilterHistory. The Responses tool runs Python only: it has no
// bash or text editor calls, which are the Messages tool's (see
// examples/messages-gateway).
//
// The "model" is a scripted HTTP endpoint on 127.0.0.1 that the example
// starts itself: it is not under test.
//
//	go run ./examples/responses-gateway
//
// The sandbox comes from the usual configuration (the CODEPORT_* variables);
// by default it is the in-process runtime embedded in the binary.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/gateway/responses"
	"github.com/codeport/codeport/port"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "responses-gateway:", err)
		os.Exit(1)
	}
}

// salesFileID is the id the gateway's file store gave the client's upload.
const salesFileID = "file-6F2ksmvXxt4VdaqaFwwh3N"

// uploads is the gateway's own file store (the Files API a client
// uploaded to), here one file.
var uploads = scripted.Files{salesFileID: {Name: "sales.csv", Data: "region,amount\nnorth,120\nsouth,80\neast,42\n"}}

// firstTools is what the client declares in the first turn: OpenAI's
// standard form, a new container with the uploaded file in it.
var firstTools = []json.RawMessage{json.RawMessage(`{"type":"code_interpreter","container":{"type":"auto","file_ids":["` + salesFileID + `"]}}`)}

// continuingTools is what the client declares to continue in the
// container id: the id its code_interpreter_call items carried.
func continuingTools(id string) []json.RawMessage {
	return []json.RawMessage{json.RawMessage(`{"type":"code_interpreter","container":"` + id + `"}`)}
}

func run(ctx context.Context, out io.Writer) error {
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
	store := containers.New(p, containers.WithFileSource(uploads))
	defer store.Close()

	model := httptest.NewServer(ScriptedModel())
	defer model.Close()
	g := &Gateway{Port: p, Store: store, ModelURL: model.URL}

	input := []json.RawMessage{userMessage(firstQuestion)}
	first, err := g.Turn(ctx, Request{Input: input, Tools: firstTools})
	if err != nil {
		return err
	}
	if err := show(out, firstQuestion, first); err != nil {
		return err
	}
	if len(first.Items) == 0 {
		return errors.New("the first turn ran no code")
	}
	// The client continues the conversation: the container its items
	// named, and its input so far with the response's output items.
	id := first.Items[0].ContainerID
	input = append(append(input, first.Output()...), userMessage(secondQuestion))
	second, err := g.Turn(ctx, Request{Input: input, Tools: continuingTools(id)})
	if err != nil {
		return err
	}
	if err := show(out, secondQuestion, second); err != nil {
		return err
	}

	// The files the first turn produced, by the ids its citations gave
	// (what GET /v1/containers/{id}/files/{file_id}/content serves).
	for _, f := range first.Files {
		rc, info, err := store.Content(ctx, id, f.ID)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "produced file %s (%s, %s):\n%s", f.ID, info.Name, info.Path, data)
	}
	return nil
}

func show(out io.Writer, question string, r Response) error {
	fmt.Fprintf(out, "user: %s\n\n", question)
	for i, item := range r.Output() {
		var buf bytes.Buffer
		if err := json.Indent(&buf, item, "", "  "); err != nil {
			return err
		}
		fmt.Fprintf(out, "output item %d:\n%s\n\n", i+1, buf.Bytes())
	}
	text := []rune(r.Message.Content[0].Text)
	for _, a := range r.Message.Content[0].Annotations {
		fmt.Fprintf(out, "annotation: %s cites %q (characters %d to %d)\n", a.FileID, string(text[a.StartIndex:a.EndIndex]), a.StartIndex, a.EndIndex)
	}
	fmt.Fprintln(out)
	return nil
}

func userMessage(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "message", "role": "user", "content": text})
	return b
}

// Request is the part of a Responses request the example reads.
type Request struct {
	// Input are the conversation's items: the client's messages and,
	// when it continues a conversation, the output items of earlier
	// responses.
	Input []json.RawMessage `json:"input"`
	// Tools hold the client's code_interpreter declaration.
	Tools []json.RawMessage `json:"tools"`
}

// Response is what the client gets.
type Response struct {
	// Items are the public code_interpreter_call items, in order; each
	// names the container (container_id).
	Items []responses.Item
	// Message is the model's answer, its output_text annotated with
	// container_file_citation annotations of the produced files.
	Message Message
	// Files are the container's records of the files the turn's calls
	// produced, for the example's output.
	Files []containers.File
}

// Output is the response's output array: the items, then the message.
func (r Response) Output() []json.RawMessage {
	var out []json.RawMessage
	for _, it := range r.Items {
		b, _ := json.Marshal(it)
		out = append(out, b)
	}
	b, _ := json.Marshal(r.Message)
	return append(out, b)
}

// Message is an assistant message output item.
type Message struct {
	Type    string       `json:"type"`
	ID      string       `json:"id"`
	Status  string       `json:"status"`
	Role    string       `json:"role"`
	Content []OutputText `json:"content"`
}

// OutputText is a message's output_text part.
type OutputText struct {
	Type        string                 `json:"type"`
	Text        string                 `json:"text"`
	Annotations []responses.Annotation `json:"annotations"`
}

// Gateway is the loop between a client, a model and codeport.
type Gateway struct {
	// Port is the bound port (binding.Open's result): its capabilities
	// describe the tool to the model.
	Port port.CodeExecutionPort
	// Store holds the containers, sessions of Port.
	Store *containers.Store
	// ModelURL is the Responses-style endpoint: POST a request, get a
	// response whose output lists function calls or a message.
	ModelURL string
	// Timeout is each execution's timeout; zero is the backend's default.
	Timeout time.Duration
	// HTTP is the client for the model; nil means http.DefaultClient.
	HTTP *http.Client
}

// maxSteps bounds the model round trips of one turn.
const maxSteps = 8

// Turn runs one client request to the model's final text.
func (g *Gateway) Turn(ctx context.Context, req Request) (Response, error) {
	caps, err := g.Port.Describe(ctx)
	if err != nil {
		return Response{}, err
	}
	// Before inference: refuse a bad declaration, replace it with the
	// function the model sees, and open the container its calls run in.
	opts := responses.Options{Enabled: true, Capabilities: caps, Containers: g.Store}
	modelTools, err := responses.ValidateTools(req.Tools, opts)
	if err != nil {
		return Response{}, fmt.Errorf("bad request: %w", err) // a 400 to the client
	}
	choice, err := responses.ContainerOf(req.Tools, opts)
	if err != nil {
		return Response{}, fmt.Errorf("bad request: %w", err)
	}
	if choice.Mode == responses.ContainerFresh {
		// execution "gateway" without a container, or no declaration:
		// responses.NewPlan and RunCall, as examples/gateway does.
		return Response{}, errors.New("bad request: this example runs calls in containers only; declare a container")
	}
	cntr, err := responses.OpenContainer(ctx, g.Store, choice)
	if err != nil {
		// A *responses.ValidationError naming tools[i].container: a 404
		// for an unknown container or file, else a 400.
		return Response{}, fmt.Errorf("container: %w", err)
	}
	// A container made for this response but never used is ended.
	defer func() { _ = cntr.Release(ctx) }()
	instructions, err := g.filesNote(ctx, cntr.ID)
	if err != nil {
		return Response{}, err
	}

	// Past items are kept as they are, never replayed; the gateway's own
	// function_call pairs, if a client echoed them, are dropped.
	input := responses.FilterHistory(req.Input)
	var resp Response
	var text strings.Builder
	for range maxSteps {
		output, err := g.callModel(ctx, modelRequest{Model: "scripted", Instructions: instructions, Input: input, Tools: modelTools})
		if err != nil {
			return Response{}, err
		}
		calls := 0
		for _, raw := range output {
			var o outputItem
			if err := json.Unmarshal(raw, &o); err != nil {
				return Response{}, fmt.Errorf("model: %w", err)
			}
			switch {
			case o.Type == "function_call" && o.Name == responses.ToolName:
				calls++
				input = append(input, raw) // the model's own call goes back as input
				plan, err := cntr.NewPlan(o.CallID, o.Arguments)
				if err != nil {
					// Not executed: tell the model what was wrong.
					input = append(input, functionCallOutput(o.CallID, err.Error()))
					continue
				}
				outcome := cntr.Run(ctx, plan, g.Timeout)
				input = append(input, functionCallOutput(plan.CallID, outcome.FunctionOutput()))
				resp.Items = append(resp.Items, plan.Item(outcome))
				resp.Files = append(resp.Files, outcome.ContainerFiles...)
			case o.Type == "function_call":
				// A client function: a real gateway hands it back to the client.
				return Response{}, fmt.Errorf("the example does not serve client function %q", o.Name)
			case o.Type == "message":
				for _, c := range o.Content {
					if c.Type == "output_text" {
						text.WriteString(c.Text)
					}
				}
			}
		}
		if calls == 0 {
			resp.Message = Message{Type: "message", ID: "msg_" + randomHex(24), Status: "completed", Role: "assistant", Content: []OutputText{{
				Type: "output_text", Text: text.String(),
				Annotations: responses.ContainerFileCitations(cntr.ID, resp.Files, text.String()),
			}}}
			return resp, nil
		}
	}
	return Response{}, fmt.Errorf("no final answer after %d model calls", maxSteps)
}

// filesNote tells the model which files the container holds, where its
// code finds them.
func (g *Gateway) filesNote(ctx context.Context, id string) (string, error) {
	files, err := g.Store.Files(ctx, id, containers.ListParams{Limit: 100, Ascending: true})
	if err != nil {
		return "", err
	}
	if len(files.Data) == 0 {
		return "", nil
	}
	paths := make([]string, len(files.Data))
	for i, f := range files.Data {
		paths[i] = f.Path
	}
	more := ""
	if files.HasMore {
		more = ", and more"
	}
	return "The code_interpreter container holds these files: " + strings.Join(paths, ", ") + more + ".", nil
}

func functionCallOutput(callID, output string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "function_call_output", "call_id": callID, "output": output})
	return b
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// modelRequest and outputItem are the parts of the Responses API the
// example uses.
type modelRequest struct {
	Model        string            `json:"model"`
	Instructions string            `json:"instructions,omitempty"`
	Input        []json.RawMessage `json:"input"`
	Tools        []json.RawMessage `json:"tools"`
}

type outputItem struct {
	Type      string `json:"type"`
	ID        string `json:"id,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Role      string `json:"role,omitempty"`
	Content   []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content,omitempty"`
}

func (g *Gateway) callModel(ctx context.Context, req modelRequest) ([]json.RawMessage, error) {
	var resp struct {
		Output []json.RawMessage `json:"output"`
	}
	err := scripted.PostJSON(ctx, g.HTTP, g.ModelURL+"/v1/responses", req, &resp)
	return resp.Output, err
}
