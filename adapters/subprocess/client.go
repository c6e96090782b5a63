package subprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/codeport/codeport/port"
)

// rpcClient speaks the worker protocol to one worker. Its errors are
// either port errors the worker raised (matching their sentinels) or
// transport errors, which the adapter turns into a lost worker.
type rpcClient struct {
	conn *grpc.ClientConn
}

// transportError marks a failure of the connection to the worker, as
// opposed to an error the worker reported.
type transportError struct{ err error }

func (e *transportError) Error() string { return "worker connection: " + e.err.Error() }
func (e *transportError) Unwrap() error { return e.err }

func (c *rpcClient) unary(ctx context.Context, method string, req, out any) error {
	in, err := encodeJSON(req)
	if err != nil {
		return fmt.Errorf("%w: encode request: %v", port.ErrInvalidRequest, err)
	}
	rep := new(wrapperspb.BytesValue)
	if err := c.conn.Invoke(ctx, fullMethod(method), in, rep); err != nil {
		return &transportError{err}
	}
	return decodeReply(rep, out)
}

func (c *rpcClient) create(ctx context.Context, req port.CreateSessionRequest) (port.Session, error) {
	var s port.Session
	err := c.unary(ctx, methodCreate, createRequest{IdleTimeout: req.IdleTimeout, MaxLifetime: req.MaxLifetime}, &s)
	return s, err
}

func (c *rpcClient) destroy(ctx context.Context, id string) error {
	return c.unary(ctx, methodDest, sessionRequest{Session: id}, nil)
}

func (c *rpcClient) list(ctx context.Context, id, dir string) ([]port.FileInfo, error) {
	var files []port.FileInfo
	err := c.unary(ctx, methodList, fileRequest{Session: id, Path: dir}, &files)
	return files, err
}

// execute runs a call. streamCtx bounds the stream itself (the hard
// deadline); when cancel is closed first, the worker is told to cancel the
// call and its result is still awaited.
//
// With req.OnOutput set, the worker streams the output first; at most
// outputLimit bytes per stream (and room for notes) are handed on.
func (c *rpcClient) execute(streamCtx context.Context, cancel <-chan struct{}, id string, req port.ExecuteRequest, outputLimit int64) (port.Result, error) {
	st, err := c.conn.NewStream(streamCtx, &grpc.StreamDesc{StreamName: streamExec, ServerStreams: true, ClientStreams: true}, fullMethod(streamExec))
	if err != nil {
		return port.Result{}, &transportError{err}
	}
	in, err := encodeJSON(executeRequest{Session: id, Request: req, Stream: req.OnOutput != nil})
	if err != nil {
		return port.Result{}, fmt.Errorf("%w: encode request: %v", port.ErrInvalidRequest, err)
	}
	if err := st.SendMsg(in); err != nil {
		return port.Result{}, c.streamError(st, err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-cancel:
			if m, err := encodeJSON(executeRequest{Cancel: true}); err == nil {
				_ = st.SendMsg(m)
			}
		case <-done:
		}
	}()
	// Output messages come first, when asked for; a worker that sends more
	// output than its limits allow (it cannot, unless broken) is not
	// listened to beyond them.
	rep := new(wrapperspb.BytesValue)
	var rerr error
	budget := 2*outputLimit + 64<<10
	for {
		if rerr = st.RecvMsg(rep); rerr != nil {
			break
		}
		var m reply
		if json.Unmarshal(rep.GetValue(), &m) != nil || m.Output == nil {
			break // the reply, decoded below
		}
		if budget -= int64(len(m.Output.Data)); req.OnOutput != nil && budget >= 0 {
			req.OnOutput(m.Output.Stream, m.Output.Data)
		}
	}
	close(done)
	wg.Wait()
	_ = st.CloseSend()
	if rerr != nil {
		return port.Result{}, &transportError{rerr}
	}
	var res port.Result
	return res, decodeReply(rep, &res)
}

func (c *rpcClient) streamError(st grpc.ClientStream, err error) error {
	if errors.Is(err, io.EOF) {
		// The real status comes with the receive.
		if rerr := st.RecvMsg(new(wrapperspb.BytesValue)); rerr != nil {
			err = rerr
		}
	}
	return &transportError{err}
}

// getFile opens a file stream; the returned reader yields the chunks and
// Close ends the stream.
func (c *rpcClient) getFile(ctx context.Context, req fileRequest) (io.ReadCloser, port.FileInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := c.conn.NewStream(ctx, &grpc.StreamDesc{StreamName: streamGet, ServerStreams: true}, fullMethod(streamGet))
	if err != nil {
		cancel()
		return nil, port.FileInfo{}, &transportError{err}
	}
	in, err := encodeJSON(req)
	if err != nil {
		cancel()
		return nil, port.FileInfo{}, fmt.Errorf("%w: encode request: %v", port.ErrInvalidRequest, err)
	}
	if err := st.SendMsg(in); err != nil {
		cancel()
		return nil, port.FileInfo{}, c.streamError(st, err)
	}
	if err := st.CloseSend(); err != nil {
		cancel()
		return nil, port.FileInfo{}, &transportError{err}
	}
	rep := new(wrapperspb.BytesValue)
	if err := st.RecvMsg(rep); err != nil {
		cancel()
		return nil, port.FileInfo{}, &transportError{err}
	}
	var info port.FileInfo
	if err := decodeReply(rep, &info); err != nil {
		cancel()
		return nil, port.FileInfo{}, err
	}
	return &fileReader{st: st, cancel: cancel, left: info.Size}, info, nil
}

// fileReader reads a GetFile stream. It checks the byte count against the
// size the worker announced, so a stream cut short is an error, not a
// silently shorter file.
type fileReader struct {
	st     grpc.ClientStream
	cancel context.CancelFunc
	buf    []byte
	left   int64
	err    error
}

func (r *fileReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		m := new(wrapperspb.BytesValue)
		err := r.st.RecvMsg(m)
		switch {
		case err == io.EOF && r.left == 0:
			r.err = io.EOF
		case err == io.EOF:
			r.err = fmt.Errorf("%w: file stream ended %d bytes short", port.ErrRuntimeFailure, r.left)
		case err != nil:
			r.err = &transportError{err}
		default:
			r.buf = m.GetValue()
			r.left -= int64(len(r.buf))
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *fileReader) Close() error {
	r.cancel()
	return nil
}

// putFile streams r to the worker in chunks. If the worker refuses early
// (too large, bad path), the refusal is its reply.
func (c *rpcClient) putFile(ctx context.Context, id, path string, r io.Reader) (port.FileInfo, error) {
	var info port.FileInfo
	return info, c.upload(ctx, fileRequest{Session: id, Path: path}, r, &info)
}

// restore streams a snapshot to the worker, which makes a session of it.
func (c *rpcClient) restore(ctx context.Context, r io.Reader) (port.Session, error) {
	var sess port.Session
	return sess, c.upload(ctx, fileRequest{Restore: true}, r, &sess)
}

// upload streams r to the worker after the header req, and decodes the
// reply into out.
func (c *rpcClient) upload(ctx context.Context, req fileRequest, r io.Reader, out any) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.conn.NewStream(ctx, &grpc.StreamDesc{StreamName: streamPut, ClientStreams: true}, fullMethod(streamPut))
	if err != nil {
		return &transportError{err}
	}
	in, err := encodeJSON(req)
	if err != nil {
		return fmt.Errorf("%w: encode request: %v", port.ErrInvalidRequest, err)
	}
	if err := st.SendMsg(in); err != nil {
		return c.putReply(st)
	}
	buf := make([]byte, chunkSize)
	for {
		n, rerr := r.Read(buf)
		if n > 0 {
			if err := st.SendMsg(wrapperspb.Bytes(buf[:n])); err != nil {
				// The worker answered early (a refusal): read it.
				return c.putReply(st)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("%w: read upload: %v", port.ErrInvalidRequest, rerr)
		}
	}
	if err := st.CloseSend(); err != nil {
		return &transportError{err}
	}
	rep := new(wrapperspb.BytesValue)
	if err := st.RecvMsg(rep); err != nil {
		return &transportError{err}
	}
	return decodeReply(rep, out)
}

// putReply reads the worker's reply after a failed send.
func (c *rpcClient) putReply(st grpc.ClientStream) error {
	rep := new(wrapperspb.BytesValue)
	if err := st.RecvMsg(rep); err != nil {
		return &transportError{err}
	}
	if err := decodeReply(rep, nil); err != nil {
		return err
	}
	return fmt.Errorf("%w: worker ended the upload early", port.ErrRuntimeFailure)
}
