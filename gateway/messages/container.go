package messages

import (
	"encoding/json"
	"fmt"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// ContainerUploadType is the type of the content block that puts a file
// into the code execution tool's container, by the id the client's file
// store has for it.
const ContainerUploadType = "container_upload"

// ContainerUpload is the container_upload block for a file:
//
//	{"type":"container_upload","file_id":fileID}
//
// A client sends it in a user message to have the file in the container
// (ContainerUploadFileID reads it back); a gateway may echo it.
func ContainerUpload(fileID string) json.RawMessage {
	return mustMarshal(struct {
		Type   string `json:"type"`
		FileID string `json:"file_id"`
	}{ContainerUploadType, fileID})
}

// ContainerUploadFileID reads a container_upload block of a client's
// message and returns its file id. Fields it does not need (cache_control)
// are ignored. A block of another type, or without a non-empty string
// file_id, is an error wrapping port.ErrInvalidRequest.
//
// codeport has no file store: the gateway reads the file's bytes from its
// own by this id and writes them into the conversation's session with
// port.CodeExecutionPort.PutFile, where the calls' commands see them.
func ContainerUploadFileID(block json.RawMessage) (string, error) {
	var b struct {
		Type   *string `json:"type"`
		FileID *string `json:"file_id"`
	}
	if err := json.Unmarshal(block, &b); err != nil {
		return "", contract.DecodeError(err)
	}
	switch {
	case b.Type == nil || *b.Type != ContainerUploadType:
		return "", fmt.Errorf("%w: not a %s block", port.ErrInvalidRequest, ContainerUploadType)
	case b.FileID == nil || *b.FileID == "":
		return "", fmt.Errorf("%w: file_id must be a non-empty string", port.ErrInvalidRequest)
	}
	return *b.FileID, nil
}
