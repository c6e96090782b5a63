package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/internal/testkit/testwait"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
)

// TestTwoTurnsShareAContainer runs the example's loop against the real
// embedded runtime: the first turn's upload, editor and bash calls, and a
// second turn that names the container and reads what the first left.
func TestTwoTurnsShareAContainer(t *testing.T) {
	p := wasmtest.New(t, nil)
	store := containers.New(p, containers.WithFileSource(uploads))
	defer store.Close()
	model := httptest.NewServer(ScriptedModel())
	defer model.Close()
	ctx, cancel := testwait.Context(t)
	defer cancel()
	g := &Gateway{Port: p, Store: store, ModelURL: model.URL}

	first, err := g.Turn(ctx, Request{Messages: []Message{{Role: "user", Content: []json.RawMessage{
		json.RawMessage(`{"type":"container_upload","file_id":"file_011CNha8iCJcU1wXNR6q4V8w"}`), textBlock(firstQuestion),
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	types := func(r Response) (out []string) {
		for _, b := range r.Content {
			out = append(out, blockType(b))
		}
		return out
	}
	want := "text server_tool_use text_editor_code_execution_tool_result server_tool_use bash_code_execution_tool_result text"
	if got := strings.Join(types(first), " "); got != want {
		t.Errorf("first turn's blocks %s, want %s", got, want)
	}
	if last := string(first.Content[len(first.Content)-1]); !strings.Contains(last, "The total is 242; it is in total.txt.") {
		t.Errorf("first answer %s", last)
	}
	var c struct {
		ID        string `json:"id"`
		ExpiresAt string `json:"expires_at"`
	}
	if err := json.Unmarshal(first.Container, &c); err != nil || c.ID == "" || c.ExpiresAt == "" {
		t.Fatalf("container field %s: %v", first.Container, err)
	}
	if len(first.Files) != 1 {
		t.Fatalf("produced files %v, want total.txt's", first.Files)
	}
	rc, info, err := store.Content(ctx, c.ID, first.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if info.Name != "total.txt" || string(data) != "242\n" {
		t.Errorf("produced file %s: %q", info.Name, data)
	}

	second, err := g.Turn(ctx, Request{Container: json.RawMessage(`{"id":"` + c.ID + `"}`), Messages: []Message{{Role: "user", Content: []json.RawMessage{textBlock(secondQuestion)}}}})
	if err != nil {
		t.Fatal(err)
	}
	if last := string(second.Content[len(second.Content)-1]); !strings.Contains(last, "Doubled, it would be 484.") {
		t.Errorf("second answer %s (the container's total.txt was not there?)", last)
	}
	if !bytes.Contains(second.Container, []byte(c.ID)) {
		t.Errorf("second turn's container %s, want %s", second.Container, c.ID)
	}

	// A container id the store does not hold is refused before inference.
	if _, err := g.Turn(ctx, Request{Container: json.RawMessage(`"cntr_00000000000000000000000000000000"`), Messages: []Message{{Role: "user", Content: []json.RawMessage{textBlock(secondQuestion)}}}}); !errors.Is(err, containers.ErrContainerNotFound) {
		t.Errorf("an unknown container: %v", err)
	}
}

// TestRun runs main's path: binding.Open from the environment, the model
// on loopback, the printed blocks and the produced file.
func TestRun(t *testing.T) {
	t.Setenv("CODEPORT_SESSIONS_DIR", t.TempDir())
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"The total is 242", "Doubled, it would be 484.", `container: {"id":"cntr_`, "produced file cfile_"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
