package messages

import (
	"encoding/json"
	"errors"
	"testing"

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
		`null`,
		`[]`,
		`{"type":`,
	} {
		if id, err := ContainerUploadFileID(json.RawMessage(b)); !errors.Is(err, port.ErrInvalidRequest) {
			t.Errorf("%s: %q %v, want an error wrapping port.ErrInvalidRequest", b, id, err)
		}
	}
}
