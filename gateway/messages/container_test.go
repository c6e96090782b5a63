package messages

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/internal/testkit/wasmtest"
	"github.com/codeport/codeport/port"
)

func TestContainerUpload(t *testing.T) {
	block := ContainerUpload("file_011CNha8iCJcU1wXNR6q4V8w")
	if want := `{"type":"container_upload","file_id":"file_011CNha8iCJcU1wXNR6q4V8w"}`; string(block) != want {
		t.Errorf("got  %s\nwant %s", block, want)
	}
	// The round trip, and a client's block with the field a request may add.
	for _, b := range []string{string(block), `{"type":"container_upload","file_id":"file_011CNha8iCJcU1wXNR6q4V8w","cache_control":{"type":"ephemeral"}}`} {
		id, err := ContainerUploadFileID(json.RawMessage(b))
		if err != nil || id != "file_011CNha8iCJcU1wXNR6q4V8w" {
			t.Errorf("%s: %q %v", b, id, err)
		}
	}
}

func TestContainerUploadFileIDRefuses(t *testing.T) {
	for _, b := range []string{
		`{"type":"text","text":"hi"}`,
		`{"file_id":"file_1"}`,
		`{"type":"container_upload"}`,
		`{"type":"container_upload","file_id":""}`,
		`{"type":"container_upload","file_id":7}`,
		`{"type":"container_upload","file_id":null}`,
		// No file store's id: the gateway's store is not asked for it.
		`{"type":"container_upload","file_id":"` + strings.Repeat("f", 300) + `"}`,
		`{"type":"container_upload","file_id":"file_1\nfile_2"}`,
		`{"type":"container_upload","file_id":"file_1\u0000"}`,
		`null`,
		`[]`,
		`{"type":`,
	} {
		if id, err := ContainerUploadFileID(json.RawMessage(b)); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("%s: %q %v, want an error wrapping port.ErrInvalidRequest", b, id, err)
		}
	}
}

func TestContainerParam(t *testing.T) {
	id := "cntr_" + strings.Repeat("ab", 16)
	for raw, want := range map[string]string{
		``:                                "",
		`null`:                            "",
		`"` + id + `"`:                    id,
		`{"id":"` + id + `"}`:             id,
		`{"id":"` + id + `","skills":[]}`: id,
		`{"id":null}`:                     "",
		`{}`:                              "",
		`""`:                              "",
	} {
		got, err := ContainerParam(json.RawMessage(raw))
		if err != nil || got != want {
			t.Errorf("ContainerParam(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, raw := range []string{
		`7`, `[]`, `true`, `"container_011CN"`, `"cntr_../../x"`,
		`{"id":7}`, `{"id":"` + id + `","skills":[{"type":"anthropic","skill_id":"pptx"}]}`,
		`{"id":"` + id + `","memory":"1g"}`, `{"skills":{}}`, `"unterminated`,
	} {
		if got, err := ContainerParam(json.RawMessage(raw)); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("ContainerParam(%s) = %q, %v; want an error wrapping port.ErrInvalidRequest", raw, got, err)
		}
	}
}

// A container object with several faults is refused for the same one
// every time: the first of its fields in name order.
func TestContainerParamRefusesTheSameFieldEveryTime(t *testing.T) {
	raw := json.RawMessage(`{"skills":[{"type":"anthropic","skill_id":"pptx"}],"memory":"1g","id":7,"name":"x"}`)
	_, first := ContainerParam(raw)
	if !errors.Is(first, port.ErrInvalidRequest) || !strings.Contains(first.Error(), "container.id must be a string") {
		t.Fatalf("err = %v", first)
	}
	for range 50 {
		if _, err := ContainerParam(raw); err.Error() != first.Error() {
			t.Fatalf("refused as %q, then as %q", first, err)
		}
	}
}

// fileStore is the gateway's file store of a test.
type fileStore map[string]string

func (fs fileStore) OpenFile(_ context.Context, _, id string) (string, io.ReadCloser, error) {
	data, ok := fs[id]
	if !ok {
		return "", nil, fmt.Errorf("%w: %s", containers.ErrFileNotFound, id)
	}
	return "input.csv", io.NopCloser(strings.NewReader(data)), nil
}

// TestAConversationReusesItsContainer runs two turns of a conversation:
// the first opens a container, uploads a file and writes another with
// the editor; the second names the container (as the client sends back
// the response's container field) and sees both.
func TestAConversationReusesItsContainer(t *testing.T) {
	ctx := context.Background()
	p := wasmtest.New(t, nil) // bash, the editor and Python for real
	store := containers.New(p, containers.WithFileSource(fileStore{"file_011": "a,b\n1,2\n"}))
	defer store.Close()

	c, err := OpenContainer(ctx, store, "")
	if err != nil {
		t.Fatal(err)
	}
	var field struct {
		ID        string    `json:"id"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal(ContainerField(c), &field); err != nil || field.ID != c.ID || !field.ExpiresAt.Equal(c.ExpiresAt().Truncate(time.Second)) {
		t.Fatalf("container field %s: %+v %v", ContainerField(c), field, err)
	}
	if _, err := Upload(ctx, store, c.ID, ContainerUpload("file_011")); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	create := Call{ID: NewToolUseID(), Name: TextEditorToolName, Input: json.RawMessage(`{"command":"create","path":"sum.py","file_text":"import csv\nrows = list(csv.DictReader(open('input.csv')))\nprint(sum(int(r['a']) + int(r['b']) for r in rows))\n"}`)}
	if got := string(create.Run(ctx, store, c.ID, nil)); !strings.Contains(got, `"text_editor_code_execution_create_result"`) {
		t.Fatalf("create: %s", got)
	}

	// The next turn names the container.
	param, err := ContainerParam(json.RawMessage(`{"id":"` + c.ID + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	again, err := OpenContainer(ctx, store, param)
	if err != nil || again.ID != c.ID {
		t.Fatalf("OpenContainer(%s): %+v %v", param, again, err)
	}
	bash := Call{ID: NewToolUseID(), Name: BashToolName, Input: json.RawMessage(`{"command":"python3 sum.py > total.txt && cat total.txt"}`)}
	var block struct {
		Content struct {
			Type    string `json:"type"`
			Stdout  string `json:"stdout"`
			Content []struct {
				FileID string `json:"file_id"`
			} `json:"content"`
		} `json:"content"`
	}
	if err := json.Unmarshal(bash.Run(ctx, store, again.ID, nil), &block); err != nil {
		t.Fatal(err)
	}
	if block.Content.Type != "bash_code_execution_result" || block.Content.Stdout != "3\n" {
		t.Fatalf("bash result %+v", block.Content)
	}
	// Produced files are reported by their container file ids, which the
	// store reads back.
	var ids []string
	for _, f := range block.Content.Content {
		ids = append(ids, f.FileID)
	}
	page, err := store.Files(ctx, c.ID, containers.ListParams{Ascending: true})
	if err != nil {
		t.Fatal(err)
	}
	var total string
	for _, f := range page.Data {
		if f.Name == "total.txt" {
			total = f.ID
		}
	}
	if total == "" || !slices.Contains(ids, total) {
		t.Errorf("produced file ids %v, container lists %+v", ids, page.Data)
	}

	if err := store.Delete(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenContainer(ctx, store, c.ID); !errors.Is(err, containers.ErrContainerNotFound) {
		t.Errorf("a deleted container: %v", err)
	}
	if got := string(bash.Run(ctx, store, c.ID, nil)); !strings.Contains(got, `"bash_code_execution_tool_result_error"`) {
		t.Errorf("a call in a deleted container: %s", got)
	}
}
