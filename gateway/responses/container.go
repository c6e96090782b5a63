package responses

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"path"
	"sync"
	"time"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/port"
)

// ContainerMode says where a declaration's calls run.
type ContainerMode string

// The container modes.
const (
	// ContainerFresh: every call runs in a session of its own, with fresh
	// state (RunCall): phase one, or a declaration with execution
	// "gateway" and no container. It is also the choice of a tools array
	// without a declaration.
	ContainerFresh ContainerMode = ""
	// ContainerAuto: {"type":"auto","file_ids":[...]}: the response's
	// calls run in a new container, made for it with the files listed
	// (OpenContainer).
	ContainerAuto ContainerMode = "auto"
	// ContainerExisting: "cntr_...": the response's calls run in that
	// container of the caller's, continuing its state.
	ContainerExisting ContainerMode = "existing"
)

// ContainerChoice is where a validated declaration's calls run
// (ContainerOf).
type ContainerChoice struct {
	Mode ContainerMode
	// ID is the container's id (ContainerExisting).
	ID string
	// FileIDs are the gateway's file ids to copy into a new container
	// (ContainerAuto), in the client's order.
	FileIDs []string
	// Field is the JSON path of the declaration's container field
	// ("tools[1].container"), which OpenContainer's refusals name.
	Field string
}

// Container is the container that one response's calls run in: made by
// OpenContainer before inference, then used for every call of the
// response. Its methods are safe for concurrent use; Run runs the
// response's calls one at a time, in the order they reach it.
type Container struct {
	// ID is the container's id ("cntr_..."): every call's item carries it,
	// and a later request may name it to continue its state.
	ID string
	// Created reports that OpenContainer made the container for this
	// response (ContainerAuto).
	Created bool

	store *containers.Store
	// run holds a token while a call runs: a channel, not a mutex, so
	// that a call waiting for its turn gives up when its context ends.
	run  chan struct{}
	mu   sync.Mutex
	used bool
}

// OpenContainer resolves a declaration's container choice once per
// response, before inference, for the caller of ctx (the store's tenant):
//
//   - ContainerAuto: a new container is made with choice.FileIDs copied in
//     from the store's file source (containers.Store.Create); all the
//     response's calls use it. It lives on after the response, expiring
//     after its idle time, so that a later request may name it.
//   - ContainerExisting: the caller's container choice.ID
//     (containers.Store.Get).
//
// Refusals of the client's input are a *ValidationError whose Field is
// choice.Field (or its file_ids) and whose Err is the store's error:
//
//   - a container that does not exist for this caller (never made,
//     deleted, expired, or another tenant's: they are not told apart)
//     wraps containers.ErrContainerNotFound; the gateway answers 404, as
//     OpenAI answers an unknown container;
//   - a file id the file source does not know for this caller wraps
//     containers.ErrFileNotFound (404 too);
//   - any other refusal of the input wraps port.ErrInvalidRequest (400).
//
// Other errors are returned as the store gave them, for the gateway to
// map: *containers.LimitError (the tenant's containers are all in use:
// 429 or 400), port.ErrAtCapacity (503), containers.ErrClosed, a
// backend's failure. A ContainerFresh choice is an error: such calls go
// to RunCall.
func OpenContainer(ctx context.Context, store *containers.Store, choice ContainerChoice) (*Container, error) {
	if store == nil {
		return nil, errors.New("responses: OpenContainer needs a container store (Options.Containers)")
	}
	var (
		c   containers.Container
		err error
	)
	switch choice.Mode {
	case ContainerExisting:
		c, err = store.Get(ctx, choice.ID)
		if errors.Is(err, containers.ErrContainerNotFound) {
			return nil, &ValidationError{Field: choice.Field, Message: fmt.Sprintf("no container %s is open to this caller (it may have expired after its idle time, or been deleted)", choice.ID), Err: err}
		}
	case ContainerAuto:
		c, err = store.Create(ctx, containers.CreateParams{FileIDs: choice.FileIDs})
		if errors.Is(err, containers.ErrFileNotFound) || errors.Is(err, port.ErrInvalidRequest) {
			return nil, &ValidationError{Field: choice.Field + ".file_ids", Message: err.Error(), Err: err}
		}
	default:
		return nil, fmt.Errorf("responses: OpenContainer of a %q container choice: its calls each run in a fresh session (RunCall)", choice.Mode)
	}
	if err != nil {
		return nil, err
	}
	return &Container{ID: c.ID, Created: choice.Mode == ContainerAuto, store: store, run: make(chan struct{}, 1)}, nil
}

// NewPlan plans a call in the container: as the package's NewPlan, with
// the container's id as the plan's ContainerID.
func (c *Container) NewPlan(callID, argumentsJSON string) (Plan, error) {
	return NewContainerPlan(c.ID, callID, argumentsJSON)
}

// Run runs a call in the container (RunInContainer), after any call of
// the response that is running in it has ended. plan.ContainerID must be
// the container's id. A call whose ctx ends while it waits does not run:
// its outcome is Cancelled or OuterTimeout, as ctx ended, without
// StateLost.
func (c *Container) Run(ctx context.Context, plan Plan, timeout time.Duration) Outcome {
	if plan.ContainerID != c.ID {
		return Outcome{Kind: RuntimeFailure, Err: fmt.Errorf("%w: the plan is for container %q, not %q", port.ErrInvalidRequest, plan.ContainerID, c.ID)}
	}
	if c.run == nil {
		// Not made by OpenContainer, so without a store either:
		// RunInContainer says so.
		return RunInContainer(ctx, c.store, plan, timeout)
	}
	select {
	case c.run <- struct{}{}:
	case <-ctx.Done():
		// It never reached the container, whose state is as the running
		// call leaves it.
		o := OutcomeOf(port.Result{}, ctx.Err())
		o.StateLost = false
		return o
	}
	defer func() { <-c.run }()
	c.mu.Lock()
	c.used = true
	c.mu.Unlock()
	return RunInContainer(ctx, c.store, plan, timeout)
}

// Release ends a container that OpenContainer made for this response
// (Created) when no call ran in it: the client never saw its id, so it
// could never be named again. Otherwise it does nothing: a container a
// call ran in lives on until it expires. The gateway calls it once the
// response is over. An already ended container is not an error.
func (c *Container) Release(ctx context.Context) error {
	c.mu.Lock()
	used := c.used
	c.used = true // a second Release does nothing
	c.mu.Unlock()
	if !c.Created || used {
		return nil
	}
	if err := c.store.Delete(ctx, c.ID); err != nil && !errors.Is(err, containers.ErrContainerNotFound) {
		return err
	}
	return nil
}

// NewContainerPlan is NewPlan for a call that runs in the container
// containerID (RunInContainer): the plan's ContainerID is containerID, so
// that the public item names the container a client may name again. It
// fails on arguments as NewPlan does (wrapping ErrBadArguments: give the
// model the error), and on a containerID that is not a container id
// (containers.NodeOf), which is the gateway's error.
func NewContainerPlan(containerID, callID, argumentsJSON string) (Plan, error) {
	if _, ok := containers.NodeOf(containerID); !ok {
		return Plan{}, fmt.Errorf("responses: %q is not a container id", containerID)
	}
	p, err := NewPlan(callID, argumentsJSON)
	if err != nil {
		return Plan{}, err
	}
	p.ContainerID = containerID
	return p, nil
}

// RunInContainer runs one planned call in the caller's container
// plan.ContainerID (containers.Store.Execute), continuing its state: the
// variables, imports and files of earlier calls are there, and what this
// call leaves is there for the next. timeout is the execution timeout
// (zero means the backend's default); ctx is the gateway's deadline and
// carries the caller (the store's tenant), as in RunCall.
//
// The outcome maps what happened with OutcomeOf: a container that is gone
// (expired, deleted, another tenant's) is ContainerNotFound, and a
// container running another call is ContainerBusy. Its Files carry the
// container's file ids ("cfile_...") and, up to MaxFetchedBytes a call,
// their bytes, read from the container; ContainerFiles are the
// container's records of them.
//
// Calls in one container must not overlap: run a response's calls one
// after another (Container.Run does).
func RunInContainer(ctx context.Context, store *containers.Store, plan Plan, timeout time.Duration) Outcome {
	if store == nil {
		return Outcome{Kind: RuntimeFailure, Err: fmt.Errorf("%w: RunInContainer needs a container store", port.ErrInvalidRequest)}
	}
	res, files, err := store.Execute(ctx, plan.ContainerID, plan.request(timeout))
	o := outcomeIn(ctx, res, err)
	if len(o.Files) == 0 {
		return o
	}
	o.ContainerFiles = files
	byName := make(map[string]containers.File, len(files))
	for _, f := range files {
		byName[f.Name] = f
	}
	types := make(map[string]string, len(res.Files))
	for _, f := range res.Files {
		types[f.Filename] = f.MediaType
	}
	budget := int64(MaxFetchedBytes)
	for i := range o.Files {
		f := &o.Files[i]
		cf, listed := byName[f.Filename]
		f.FileID = ""
		if listed {
			f.FileID = cf.ID
		}
		if f.Data != nil {
			budget -= int64(len(f.Data)) // came inline: held already
			continue
		}
		if !listed || cf.Bytes > budget {
			continue
		}
		data, ok := readContainerFile(ctx, store, plan.ContainerID, cf.ID, budget)
		if !ok {
			continue
		}
		budget -= int64(len(data))
		f.Data = data
		f.MimeType = types[f.Filename]
		if f.MimeType == "" {
			f.MimeType = mime.TypeByExtension(path.Ext(f.Filename))
		}
	}
	return o
}

// readContainerFile reads a container file whole when it fits in budget.
func readContainerFile(ctx context.Context, store *containers.Store, containerID, fileID string, budget int64) ([]byte, bool) {
	rc, info, err := store.Content(ctx, containerID, fileID)
	if err != nil {
		return nil, false
	}
	defer rc.Close()
	if info.Bytes > budget {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(rc, budget+1))
	if err != nil || int64(len(data)) > budget {
		return nil, false
	}
	if data == nil {
		data = []byte{} // non-nil even when empty
	}
	return data, true
}

// ContainerFileCitations are the container_file_citation annotations of
// files of the container containerID (the ContainerFiles of one or more
// of its calls, or files a client put in it), in order, for the gateway
// to attach to the output_text part text of the assistant's message:
//
//   - each cites the first mention in text of the file's path in the
//     sandbox ("/workspace/out.csv"), else of its name relative to the
//     workspace ("data/out.csv"), else of its base name ("out.csv"); a
//     mention is not part of a longer name or word ("layout.csv" does
//     not mention out.csv);
//   - a file that text does not mention is cited at the end of text
//     (start_index = end_index = the text's length), so that the client
//     still learns of it, as a citation with nothing to underline;
//   - indexes count characters (Unicode code points, as a Python str
//     indexes the text: "é" is one), not bytes; end_index is exclusive;
//   - filename is the file's base name; a file listed twice (by id) is
//     cited once.
//
// The slice is never nil: it marshals as [], as an output_text part's
// annotations must be (the SDK refuses null).
func ContainerFileCitations(containerID string, files []containers.File, text string) []Annotation {
	out := []Annotation{}
	seen := map[string]bool{}
	for _, f := range files {
		if f.ID == "" || seen[f.ID] {
			continue
		}
		seen[f.ID] = true
		out = append(out, cite(containerID, f.ID, path.Base(f.Name), text, f.Path, f.Name, path.Base(f.Name)))
	}
	return out
}
