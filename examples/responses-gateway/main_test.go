package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/gateway/responses"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
)

// recorder keeps the bodies of the requests that reach the model.
type recorder struct {
	mu     sync.Mutex
	bodies [][]byte
	next   http.Handler
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.bodies = append(rec.bodies, body)
	rec.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec.next.ServeHTTP(w, r)
}

func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.bodies)
}

func (rec *recorder) last() []byte {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.bodies[len(rec.bodies)-1]
}

// TestTwoTurnsShareAContainer runs the example's loop against the real
// embedded runtime: a first turn whose container is made with the
// uploaded file and whose call produces a file, and a second turn that
// names the container and uses what the first left, variables and file.
func TestTwoTurnsShareAContainer(t *testing.T) {
	p := wasmtest.New(t, nil)
	store := containers.New(p, containers.WithFileSource(uploads))
	defer store.Close()
	rec := &recorder{next: ScriptedModel()}
	model := httptest.NewServer(rec)
	defer model.Close()
	// The first execution waits for the runtime, for minutes on a loaded
	// machine: no deadline but the test binary's.
	ctx, cancel := testwait.Context(t)
	defer cancel()
	g := &Gateway{Port: p, Store: store, ModelURL: model.URL}

	input := []json.RawMessage{userMessage(firstQuestion)}
	first, err := g.Turn(ctx, Request{Input: input, Tools: firstTools})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) != 1 {
		t.Fatalf("first turn: %d items, want 1: %+v", len(first.Items), first.Items)
	}
	it := first.Items[0]
	id := it.ContainerID
	if it.Type != "code_interpreter_call" || it.Status != responses.StatusCompleted || it.Code != firstCode ||
		len(it.Outputs) != 1 || it.Outputs[0].Logs != "242\n" {
		t.Errorf("first item: %+v", it)
	}
	if _, err := store.Get(ctx, id); err != nil || strings.HasPrefix(id, responses.ContainerIDPrefix) {
		t.Fatalf("the item's container %q is not one of the store's: %v", id, err)
	}

	// What the model was offered: the function, described as running in
	// a container, and the container's files.
	var sent struct {
		Instructions string `json:"instructions"`
		Tools        []struct {
			Type, Name, Description string
		} `json:"tools"`
	}
	if err := json.Unmarshal(rec.last(), &sent); err != nil {
		t.Fatal(err)
	}
	caps, err := p.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(sent.Tools) != 1 || sent.Tools[0].Name != responses.ToolName || sent.Tools[0].Description != responses.ContainerDescription(caps) {
		t.Errorf("the model was offered %+v, want the code_interpreter function with the container description", sent.Tools)
	}
	if !strings.Contains(sent.Instructions, "/sales.csv") {
		t.Errorf("instructions %q do not name the uploaded file's path", sent.Instructions)
	}

	// The produced file, cited where the answer names it.
	if len(first.Files) != 1 || first.Files[0].Name != "summary.csv" || first.Files[0].Source != "assistant" {
		t.Fatalf("produced files %+v, want summary.csv", first.Files)
	}
	f := first.Files[0]
	part := first.Message.Content[0]
	if want := "The total is 242. Each region's total and share are in summary.csv."; part.Text != want {
		t.Errorf("first answer %q, want %q", part.Text, want)
	}
	if len(part.Annotations) != 1 {
		t.Fatalf("annotations %+v, want summary.csv's", part.Annotations)
	}
	a := part.Annotations[0]
	if a.Type != "container_file_citation" || a.ContainerID != id || a.FileID != f.ID || a.Filename != "summary.csv" {
		t.Errorf("annotation %+v, want summary.csv (%s) of %s", a, f.ID, id)
	}
	if text := []rune(part.Text); a.StartIndex < 0 || a.EndIndex > len(text) || a.StartIndex > a.EndIndex || string(text[a.StartIndex:a.EndIndex]) != "summary.csv" {
		t.Errorf("annotation indexes %d:%d do not point at summary.csv in %q", a.StartIndex, a.EndIndex, part.Text)
	}
	rc, info, err := store.Content(ctx, id, f.ID)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if want := "region,amount,share\nnorth,120,49.6%\nsouth,80,33.1%\neast,42,17.4%\n"; info.Name != "summary.csv" || string(data) != want {
		t.Errorf("produced file %s: %q, want %q", info.Name, data, want)
	}

	// The second turn names the container: the code uses csv, totals and
	// total, which only the first turn's code defined.
	input = append(append(input, first.Output()...), userMessage(secondQuestion))
	second, err := g.Turn(ctx, Request{Input: input, Tools: continuingTools(id)})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Items) != 1 {
		t.Fatalf("second turn: %d items, want 1: %+v", len(second.Items), second.Items)
	}
	if it := second.Items[0]; it.ContainerID != id || it.Status != responses.StatusCompleted || len(it.Outputs) != 1 || it.Outputs[0].Logs != "north 49.6% 80.7\n" {
		t.Errorf("second item (want container %s, the first turn's variables and file): %+v", id, it)
	}
	if want := "The north region has the largest share, 49.6% (the first row of summary.csv); the average per region is 80.7."; second.Message.Content[0].Text != want {
		t.Errorf("second answer %q, want %q", second.Message.Content[0].Text, want)
	}
	if ann := second.Message.Content[0].Annotations; ann == nil || len(ann) != 0 || len(second.Files) != 0 {
		t.Errorf("second turn produced nothing, but has annotations %v and files %+v", ann, second.Files)
	}

	// A container id the store does not hold is refused before inference.
	before := rec.count()
	_, err = g.Turn(ctx, Request{Input: input, Tools: continuingTools("cntr_00000000000000000000000000000000")})
	var ve *responses.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, containers.ErrContainerNotFound) || ve.Field != "tools[0].container" {
		t.Errorf("an unknown container: %v, want a *responses.ValidationError for tools[0].container wrapping ErrContainerNotFound", err)
	}
	if n := rec.count(); n != before {
		t.Errorf("the model was called %d times for a refused request", n-before)
	}
}

// TestRun runs main's path: binding.Open from the environment, the model
// on loopback, the printed items, annotations and produced file.
func TestRun(t *testing.T) {
	t.Setenv("CODEPORT_SESSIONS_DIR", t.TempDir())
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"type": "code_interpreter_call"`, `"container_id": "cntr_`, `"logs": "242\n"`,
		`"type": "container_file_citation"`, `cites "summary.csv"`,
		`"logs": "north 49.6% 80.7\n"`, "The north region has the largest share",
		"produced file cfile_", "north,120,49.6%",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
