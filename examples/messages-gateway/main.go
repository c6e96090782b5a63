// Command messages-gateway is a runnable example of a gateway that serves
// Anthropic's code execution tool (the 2025-08-25 version) with codeport,
// over two turns of one conversation that share a container:
//
//	turn 1: the client uploads a CSV (a container_upload block); the model
//	        writes a script with the text editor, runs it with bash, and
//	        answers; the script's output file comes back by its id.
//	turn 2: the client sends the response's container id back; the model
//	        reads the file the first turn left and answers from it.
//
// The gateway offers the model the two tools of the 2025-08-25 tool
// (bash_code_execution and text_editor_code_execution, described by the
// bound adapter's purpose hint), runs each tool use in the conversation's
// container, gives the model each result block as its tool_result, and
// gives the client Anthropic's server_tool_use and result blocks and the
// container field.
//
// The "model" is a scripted HTTP endpoint on 127.0.0.1 that the example
// starts itself: it is not under test.
//
//	go run ./examples/messages-gateway
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

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/adapters/wasm"
	"github.com/codeport/codeport/binding"
	"github.com/codeport/codeport/examples/internal/scripted"
	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/gateway/messages"
	"github.com/codeport/codeport/port"
)

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "messages-gateway:", err)
		os.Exit(1)
	}
}

// uploads is the gateway's own file store (the Files API a client
// uploaded to), here one file.
var uploads = scripted.Files{"file_011CNha8iCJcU1wXNR6q4V8w": {Name: "sales.csv", Data: "region,amount\nnorth,120\nsouth,80\neast,42\n"}}

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

	first, err := g.Turn(ctx, Request{Messages: []Message{{Role: "user", Content: []json.RawMessage{
		messages.ContainerUpload("file_011CNha8iCJcU1wXNR6q4V8w"),
		textBlock(firstQuestion),
	}}}})
	if err != nil {
		return err
	}
	show(out, firstQuestion, first)
	// The client continues the conversation in the same container: it
	// sends the response's container id back.
	var c struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(first.Container, &c); err != nil {
		return err
	}
	second, err := g.Turn(ctx, Request{Container: json.RawMessage(`"` + c.ID + `"`), Messages: []Message{{Role: "user", Content: []json.RawMessage{textBlock(secondQuestion)}}}})
	if err != nil {
		return err
	}
	show(out, secondQuestion, second)

	// A produced file, by the id its result block gave it.
	for _, f := range first.Files {
		rc, info, err := store.Content(ctx, c.ID, f)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "produced file %s (%s): %q\n", f, info.Name, data)
	}
	return nil
}

func show(out io.Writer, question string, r Response) {
	fmt.Fprintf(out, "user: %s\n", question)
	for _, b := range r.Content {
		fmt.Fprintf(out, "  %s\n", b)
	}
	fmt.Fprintf(out, "container: %s\n\n", r.Container)
}

// Request is the part of a Messages request the example reads.
type Request struct {
	// Container names the container to reuse (a string id, or an object
	// with an id); absent for a new one.
	Container json.RawMessage `json:"container,omitempty"`
	Messages  []Message       `json:"messages"`
}

// Message is one message of a conversation.
type Message struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

// Response is what the client gets: the assistant's content (text,
// server_tool_use and result blocks) and the container field.
type Response struct {
	Content   []json.RawMessage `json:"content"`
	Container json.RawMessage   `json:"container"`
	// Files are the ids of the files the turn's calls produced (the
	// file_id of each bash result's content), for the example's output.
	Files []string `json:"-"`
}

// Gateway is the loop between a client, a model and codeport.
type Gateway struct {
	Port     port.CodeExecutionPort
	Store    *containers.Store
	ModelURL string
	HTTP     *http.Client
}

// maxSteps bounds the model round trips of one turn.
const maxSteps = 8

// Turn runs one client request to the model's final text.
func (g *Gateway) Turn(ctx context.Context, req Request) (Response, error) {
	// Before inference: the container, and the client's uploads into it.
	id, err := messages.ContainerParam(req.Container)
	if err != nil {
		return Response{}, fmt.Errorf("bad request: %w", err) // a 400
	}
	c, err := messages.OpenContainer(ctx, g.Store, id)
	if err != nil {
		return Response{}, fmt.Errorf("container: %w", err) // 404 for an unknown one
	}
	var convo []Message
	for _, m := range req.Messages {
		m2 := Message{Role: m.Role}
		for _, b := range m.Content {
			if blockType(b) != messages.ContainerUploadType {
				m2.Content = append(m2.Content, b)
				continue
			}
			f, err := messages.Upload(ctx, g.Store, c.ID, b)
			if err != nil {
				return Response{}, fmt.Errorf("bad request: %w", err)
			}
			// The model is told where the file is.
			m2.Content = append(m2.Content, textBlock(fmt.Sprintf("The file %s has been uploaded to the container at %s.", f.Name, f.Path)))
		}
		convo = append(convo, m2)
	}

	// What the model is offered: the two tools, described by the bound
	// adapter's purpose hint.
	caps, err := g.Port.Describe(ctx)
	if err != nil {
		return Response{}, err
	}
	hint := binding.PurposeHint(caps)
	tools := []json.RawMessage{messages.BashToolDefinition(hint), messages.TextEditorToolDefinition(hint)}

	var resp Response
	for range maxSteps {
		content, err := g.callModel(ctx, convo, tools)
		if err != nil {
			return Response{}, err
		}
		convo = append(convo, Message{Role: "assistant", Content: content})
		var results []json.RawMessage
		for _, b := range content {
			var use struct {
				Type  string          `json:"type"`
				ID    string          `json:"id"`
				Name  string          `json:"name"`
				Input json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(b, &use); err != nil {
				return Response{}, fmt.Errorf("model: %w", err)
			}
			if use.Type != "tool_use" {
				resp.Content = append(resp.Content, b)
				continue
			}
			call := messages.Call{ID: messages.NewToolUseID(), Name: use.Name, Input: use.Input}
			result := call.Run(ctx, g.Store, c.ID, nil)
			resp.Content = append(resp.Content, call.ServerToolUse(), result)
			resp.Files = append(resp.Files, producedFiles(result)...)
			// The model reads the result block as its tool result.
			results = append(results, toolResult(use.ID, result))
		}
		if len(results) == 0 {
			// The turn moved the container's expiry: report it as it is now.
			if c, err = g.Store.Get(ctx, c.ID); err != nil {
				return Response{}, err
			}
			resp.Container = messages.ContainerField(c)
			return resp, nil
		}
		convo = append(convo, Message{Role: "user", Content: results})
	}
	return Response{}, fmt.Errorf("no final answer after %d model calls", maxSteps)
}

func blockType(b json.RawMessage) string {
	var t struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(b, &t)
	return t.Type
}

func textBlock(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	return b
}

func toolResult(useID string, result json.RawMessage) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "tool_result", "tool_use_id": useID, "content": string(result)})
	return b
}

// producedFiles are the file ids a bash result block lists.
func producedFiles(result json.RawMessage) []string {
	var r struct {
		Content struct {
			Content []struct {
				FileID string `json:"file_id"`
			} `json:"content"`
		} `json:"content"`
	}
	_ = json.Unmarshal(result, &r)
	var ids []string
	for _, f := range r.Content.Content {
		ids = append(ids, f.FileID)
	}
	return ids
}

func (g *Gateway) callModel(ctx context.Context, convo []Message, tools []json.RawMessage) ([]json.RawMessage, error) {
	var resp struct {
		Content []json.RawMessage `json:"content"`
	}
	err := scripted.PostJSON(ctx, g.HTTP, g.ModelURL+"/v1/messages", map[string]any{"model": "scripted", "max_tokens": 1024, "messages": convo, "tools": tools}, &resp)
	return resp.Content, err
}
