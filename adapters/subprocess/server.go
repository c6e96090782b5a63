package subprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/codeport/codeport/port"
)

// workerServer serves a port (the worker's wasm adapter) over the worker
// protocol.
type workerServer struct {
	port port.CodeExecutionPort
	// bg holds the goroutines that read a stream after its handler has
	// replied; each ends when its stream does, which returning from the
	// handler brings about. Serve waits for them at shutdown.
	bg sync.WaitGroup
}

func (*workerServer) worker() {}

func (s *workerServer) create(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	var req createRequest
	if err := decodeJSON(in, &req); err != nil {
		return encodeReply(nil, err)
	}
	sess, err := s.port.CreateSession(ctx, port.CreateSessionRequest{IdleTimeout: req.IdleTimeout, MaxLifetime: req.MaxLifetime})
	return encodeReply(sess, err)
}

func (s *workerServer) destroy(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	var req sessionRequest
	if err := decodeJSON(in, &req); err != nil {
		return encodeReply(nil, err)
	}
	return encodeReply(nil, s.port.DestroySession(ctx, req.Session))
}

func (s *workerServer) list(ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error) {
	var req fileRequest
	if err := decodeJSON(in, &req); err != nil {
		return encodeReply(nil, err)
	}
	files, err := s.port.ListFiles(ctx, req.Session, req.Path)
	return encodeReply(files, err)
}

// execute runs one call. A second message from the parent (or the parent
// half-closing, or going away) cancels it; either way the reply is the
// call's own result, sent after the call has stopped.
func (s *workerServer) execute(st grpc.ServerStream) error {
	var req executeRequest
	if ok, err := recvRequest(st, &req); !ok {
		return err
	}
	ctx, cancel := context.WithCancel(st.Context())
	defer cancel()
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		// Any message, a half-close or the stream's end cancels the call.
		_ = st.RecvMsg(new(wrapperspb.BytesValue))
		cancel()
	}()
	if req.Stream {
		// The port calls this from one goroutine at a time and never after
		// Execute returns, so these sends never overlap the reply's. A
		// parent that stops reading stalls the program, which its deadline
		// (and the parent's kill of an overrunning worker) still ends.
		req.Request.OnOutput = func(stream port.Stream, b []byte) {
			if m, err := json.Marshal(reply{Output: &outputMessage{Stream: stream, Data: b}}); err == nil {
				_ = st.SendMsg(wrapperspb.Bytes(m))
			}
		}
	}
	res, err := s.port.Execute(ctx, req.Session, req.Request)
	out, merr := encodeReply(res, err)
	if merr != nil {
		return merr
	}
	return st.SendMsg(out)
}

func (s *workerServer) getFile(st grpc.ServerStream) error {
	var req fileRequest
	if ok, err := recvRequest(st, &req); !ok {
		return err
	}
	var rc io.ReadCloser
	var info port.FileInfo
	var err error
	switch {
	case req.Snapshot:
		rc, info, err = s.snapshot(st.Context(), req.Session)
	case req.FileID != "":
		rc, info, err = s.port.GetOutputFile(st.Context(), req.Session, req.FileID)
	default:
		rc, info, err = s.port.GetFile(st.Context(), req.Session, req.Path)
	}
	out, merr := encodeReply(info, err)
	if merr != nil {
		if rc != nil {
			_ = rc.Close()
		}
		return merr
	}
	if err := st.SendMsg(out); err != nil || rc == nil {
		if rc != nil {
			_ = rc.Close()
		}
		return err
	}
	defer rc.Close()
	buf := make([]byte, chunkSize)
	for {
		n, rerr := io.ReadFull(rc, buf)
		if n > 0 {
			if err := st.SendMsg(wrapperspb.Bytes(buf[:n])); err != nil {
				return err
			}
		}
		if rerr == io.EOF || errors.Is(rerr, io.ErrUnexpectedEOF) {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// putFile reads a header, then streams the chunks into the port's PutFile
// through a pipe: the port enforces the size cap while the bytes arrive.
func (s *workerServer) putFile(st grpc.ServerStream) error {
	var req fileRequest
	if ok, err := recvRequest(st, &req); !ok {
		return err
	}
	pr, pw := io.Pipe()
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		for {
			chunk := new(wrapperspb.BytesValue)
			err := st.RecvMsg(chunk)
			if err == io.EOF {
				_ = pw.Close()
				return
			}
			if err != nil {
				_ = pw.CloseWithError(err)
				return
			}
			if _, err := pw.Write(chunk.GetValue()); err != nil {
				return // the port stopped reading: its error is the reply
			}
		}
	}()
	var v any
	var err error
	if req.Restore {
		v, err = s.restore(st.Context(), pr)
	} else {
		v, err = s.port.PutFile(st.Context(), req.Session, req.Path, pr)
	}
	// Unblock the reader if the port returned before the end of the data.
	_ = pr.CloseWithError(errors.New("upload refused"))
	out, merr := encodeReply(v, err)
	if merr != nil {
		return merr
	}
	return st.SendMsg(out)
}

// recvRequest reads a stream's first message into req. When it cannot
// (ok false), the stream is over: err is the transport's error, or nil
// once a malformed request has been answered with its refusal.
func recvRequest(st grpc.ServerStream, req any) (ok bool, err error) {
	in := new(wrapperspb.BytesValue)
	if err := st.RecvMsg(in); err != nil {
		return false, err
	}
	if err := decodeJSON(in, req); err != nil {
		out, merr := encodeReply(nil, err)
		if merr != nil {
			return false, merr
		}
		return false, st.SendMsg(out)
	}
	return true, nil
}

// snapshotter is the worker's runtime's own snapshot operations: unsealed,
// since the parent's Port seals what it passes on.
func (s *workerServer) snapshotter() (port.Snapshotter, error) {
	if d, ok := s.port.(interface{ Driver() port.Driver }); ok {
		if sn, ok := d.Driver().(port.Snapshotter); ok {
			return sn, nil
		}
	}
	return nil, fmt.Errorf("%w: the worker's runtime cannot snapshot sessions", port.ErrUnsupported)
}

// snapshot writes the session's snapshot to a temporary file, so that
// its size is known before the first chunk and a failure is a reply,
// never a stream cut short; the file is gone once the reader is closed.
func (s *workerServer) snapshot(ctx context.Context, id string) (io.ReadCloser, port.FileInfo, error) {
	sn, err := s.snapshotter()
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	f, err := os.CreateTemp("", "codeport-worker-snapshot-")
	if err != nil {
		return nil, port.FileInfo{}, fmt.Errorf("%w: snapshot: temporary file: %v", port.ErrRuntimeFailure, err)
	}
	// Unlinked at once: the open file is all that is left of it.
	_ = os.Remove(f.Name())
	if err := sn.SnapshotSession(ctx, id, f); err != nil {
		f.Close()
		return nil, port.FileInfo{}, err
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, port.FileInfo{}, fmt.Errorf("%w: snapshot: %v", port.ErrRuntimeFailure, err)
	}
	return f, port.FileInfo{Size: size}, nil
}

// restore makes a session from the snapshot r streams.
func (s *workerServer) restore(ctx context.Context, r io.Reader) (port.Session, error) {
	sn, err := s.snapshotter()
	if err != nil {
		return port.Session{}, err
	}
	return sn.RestoreSession(ctx, r, -1)
}
