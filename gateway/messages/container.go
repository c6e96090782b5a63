package messages

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/gateway/containers"
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
// file_id, or whose file_id no file store's id can be (over
// containers.MaxNameBytes, or not printable: containers.CheckFileID), is
// an error wrapping port.ErrInvalidRequest.
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
	// As a Responses declaration's file_ids are checked: the gateway's
	// file store is not asked for what no store's id can be.
	if err := containers.CheckFileID(*b.FileID); err != nil {
		return "", fmt.Errorf("file_id: %w", err)
	}
	return *b.FileID, nil
}

// ContainerParam reads the container field of a client's Messages
// request, which names the container to reuse: a string id, or an object
// {"id": ..., "skills": [...]}. It returns the id, "" when the field is
// absent, null, or names none (a new container is wanted). Skills are
// refused: codeport loads none. Any other field, or a value of another
// type, is an error wrapping port.ErrInvalidRequest.
func ContainerParam(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var id string
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &id); err != nil {
			return "", contract.DecodeError(err)
		}
		return checkContainerID(id)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return "", fmt.Errorf("%w: container must be a container id or an object", port.ErrInvalidRequest)
	}
	// In name order, so that an object with several faults is refused
	// for the same one every time.
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		v := obj[k]
		switch k {
		case "id":
			if string(v) == "null" {
				continue
			}
			if err := json.Unmarshal(v, &id); err != nil {
				return "", fmt.Errorf("%w: container.id must be a string", port.ErrInvalidRequest)
			}
		case "skills":
			var skills []json.RawMessage
			if err := json.Unmarshal(v, &skills); err != nil {
				return "", fmt.Errorf("%w: container.skills must be an array", port.ErrInvalidRequest)
			}
			if len(skills) > 0 {
				return "", fmt.Errorf("%w: container.skills: this code execution tool loads no skills", port.ErrInvalidRequest)
			}
		default:
			return "", fmt.Errorf("%w: container.%s is not a field of a container", port.ErrInvalidRequest, short(k))
		}
	}
	return checkContainerID(id)
}

func checkContainerID(id string) (string, error) {
	if id == "" {
		return "", nil
	}
	if _, ok := containers.NodeOf(id); !ok {
		return "", fmt.Errorf("%w: container %s is not a container id", port.ErrInvalidRequest, strconv.Quote(short(id)))
	}
	return id, nil
}

// OpenContainer returns the container a request's turn runs in: the one
// ContainerParam named, which must be the caller's and live
// (containers.ErrContainerNotFound otherwise), or a new one when id is
// "". Every call of the turn then runs in it (Call.Run), and the response
// names it (ContainerField) so that the client can send it back.
func OpenContainer(ctx context.Context, store *containers.Store, id string) (containers.Container, error) {
	if id == "" {
		return store.Create(ctx, containers.CreateParams{})
	}
	return store.Get(ctx, id)
}

// ContainerField is the container field of a response that used a
// container: {"id": ..., "expires_at": RFC 3339 time}, the time the
// container ends if it stays idle.
func ContainerField(c containers.Container) json.RawMessage {
	return mustMarshal(struct {
		ID        string `json:"id"`
		ExpiresAt string `json:"expires_at"`
	}{c.ID, c.ExpiresAt().UTC().Format(time.RFC3339)})
}

// Upload puts the file of a client's container_upload block into the
// container, from the store's file source (containers.WithFileSource),
// under the name the file store gives it.
func Upload(ctx context.Context, store *containers.Store, containerID string, block json.RawMessage) (containers.File, error) {
	fileID, err := ContainerUploadFileID(block)
	if err != nil {
		return containers.File{}, err
	}
	return store.AddFile(ctx, containerID, fileID)
}

// A ContainerFileIDFunc gives the id a client knows a file produced in a
// container by: the gateway reads its bytes with containers.Store.Content
// by f.ID, stores them in its own file store and returns that store's id.
// Its errors mean what FileIDFunc's do.
type ContainerFileIDFunc func(f containers.File) (string, error)

// Run runs the call in the container and returns its result block
// (Result): the call continues the container's state and files. Each
// produced file is reported by the id fileIDs gives it; with fileIDs nil,
// by its container file id (cfile_…), whose bytes the Containers API
// serves (containers.NewHandler).
func (c Call) Run(ctx context.Context, store *containers.Store, containerID string, fileIDs ContainerFileIDFunc) json.RawMessage {
	req, err := c.Request()
	var res port.Result
	var produced []containers.File
	if err == nil {
		res, produced, err = store.Execute(ctx, containerID, req)
	}
	byName := make(map[string]containers.File, len(produced))
	for _, f := range produced {
		byName[f.Name] = f
	}
	return c.Result(res, err, func(of port.OutputFile) (string, error) {
		f, ok := byName[of.Filename]
		switch {
		case !ok:
			return "", nil // past the container's file count: not listed
		case fileIDs == nil:
			return f.ID, nil
		}
		return fileIDs(f)
	})
}
