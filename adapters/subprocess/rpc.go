package subprocess

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/codeport/codeport/port"
)

// The worker protocol: one gRPC service carried by go-plugin's connection.
// Every message is a wrapperspb.BytesValue holding JSON (or, for file
// chunks, raw bytes), so the protocol needs no generated code; its version
// is the plugin handshake's ProtocolVersion, bumped on any change.
//
//	Create, Destroy, List            unary:  JSON request → reply
//	Execute                          bidi:   request, then an optional
//	                                         cancel → output messages
//	                                         (when asked), one reply
//	GetFile                          server: request → reply, chunks...
//	                                         (a workspace path, an output
//	                                         file's id, or a session's
//	                                         snapshot)
//	PutFile                          client: header, chunks... → reply
//	                                         (a workspace file, or a
//	                                         snapshot to restore: the
//	                                         reply is then the session)
const (
	serviceName  = "codeport.worker.v1.Port"
	methodCreate = "Create"
	methodDest   = "Destroy"
	methodList   = "List"
	streamExec   = "Execute"
	streamGet    = "GetFile"
	streamPut    = "PutFile"
	// chunkSize is the size of a file chunk on the wire.
	chunkSize = 256 << 10
)

func fullMethod(name string) string { return "/" + serviceName + "/" + name }

// reply is the envelope of every answer: exactly one of Error and Value;
// or, before an Execute stream's answer, Output.
type reply struct {
	Error  *wireError      `json:"error,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"`
	Output *outputMessage  `json:"output,omitempty"`
}

// wireError carries a port error across the process boundary. Code is
// the port's stable code of its sentinel (port.ErrorCode), so that
// errors.Is holds on the parent's side; a *port.CapacityError also keeps
// what it refused, its limit and its retry hint.
type wireError struct {
	Code       string `json:"code"`
	Message    string `json:"message"`
	Resource   string `json:"resource,omitempty"`
	Limit      int    `json:"limit,omitempty"`
	RetryAfter int64  `json:"retry_after_ns,omitempty"`
}

// codeRuntimeFailure is the code of an error that names no sentinel of the
// port's: to the parent, the worker failed.
const codeRuntimeFailure = "runtime_failure"

func encodeError(err error) *wireError {
	if err == nil {
		return nil
	}
	we := &wireError{Code: port.ErrorCode(err), Message: err.Error()}
	if we.Code == "" {
		we.Code = codeRuntimeFailure
	}
	var ce *port.CapacityError
	if errors.As(err, &ce) {
		we.Resource, we.Limit, we.RetryAfter = ce.Resource, ce.Limit, int64(ce.RetryAfter)
	}
	return we
}

// err rebuilds the worker's error: its text, the sentinel its code names,
// and for a capacity refusal a *port.CapacityError with the worker's
// fields. A code the parent does not know (a newer worker's) is a runtime
// failure, which is all the parent can tell of it.
func (we *wireError) err() error {
	err, ok := port.ErrorFromCode(we.Code, we.Message, time.Duration(we.RetryAfter))
	if !ok {
		err, _ = port.ErrorFromCode(codeRuntimeFailure, we.Message, 0)
	}
	if ce, isCap := err.(*port.CapacityError); isCap {
		ce.Resource, ce.Limit = we.Resource, we.Limit
	}
	return err
}

func encodeReply(v any, err error) (*wrapperspb.BytesValue, error) {
	r := reply{Error: encodeError(err)}
	if err == nil && v != nil {
		b, merr := json.Marshal(v)
		if merr != nil {
			return nil, merr
		}
		r.Value = b
	}
	b, merr := json.Marshal(r)
	if merr != nil {
		return nil, merr
	}
	return wrapperspb.Bytes(b), nil
}

// decodeReply reads an envelope into v, or returns the port error it holds.
func decodeReply(m *wrapperspb.BytesValue, v any) error {
	var r reply
	if err := json.Unmarshal(m.GetValue(), &r); err != nil {
		return fmt.Errorf("%w: worker sent a malformed reply: %v", port.ErrRuntimeFailure, err)
	}
	if r.Error != nil {
		return r.Error.err()
	}
	if v == nil || len(r.Value) == 0 {
		return nil
	}
	if err := json.Unmarshal(r.Value, v); err != nil {
		return fmt.Errorf("%w: worker sent a malformed reply: %v", port.ErrRuntimeFailure, err)
	}
	return nil
}

func encodeJSON(v any) (*wrapperspb.BytesValue, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return wrapperspb.Bytes(b), nil
}

func decodeJSON(m *wrapperspb.BytesValue, v any) error {
	if err := json.Unmarshal(m.GetValue(), v); err != nil {
		return fmt.Errorf("%w: malformed worker message: %v", port.ErrInvalidRequest, err)
	}
	return nil
}

// Requests of the worker protocol.
type (
	createRequest struct {
		IdleTimeout time.Duration `json:"idle_timeout"`
		MaxLifetime time.Duration `json:"max_lifetime"`
	}
	sessionRequest struct {
		Session string `json:"session"`
	}
	executeRequest struct {
		Session string              `json:"session"`
		Request port.ExecuteRequest `json:"request"`
		// Cancel, in the second message of an Execute stream, cancels the
		// call; the worker still answers with the call's result.
		Cancel bool `json:"cancel,omitempty"`
		// Stream asks for the call's output as it is written: output
		// messages before the reply.
		Stream bool `json:"stream,omitempty"`
	}
	// outputMessage is a piece of a call's output, sent by the worker
	// before the reply when the parent asked for Stream.
	outputMessage struct {
		Stream port.Stream `json:"stream"`
		Data   []byte      `json:"data"`
	}
	fileRequest struct {
		Session string `json:"session"`
		Path    string `json:"path"`
		// FileID, on a GetFile stream, asks for that output file
		// (GetOutputFile) instead of Path.
		FileID string `json:"file_id,omitempty"`
		// Snapshot, on a GetFile stream, asks for the session's snapshot
		// (port.Snapshotter, unsealed: the parent's Port seals it).
		Snapshot bool `json:"snapshot,omitempty"`
		// Restore, on a PutFile stream, makes a new session from the
		// snapshot the chunks hold; the reply is the session.
		Restore bool `json:"restore,omitempty"`
	}
)

// serviceDesc describes the worker service for grpc.Server.RegisterService.
// It is built per call so that no package state is shared.
func serviceDesc() *grpc.ServiceDesc {
	unary := func(name string, call func(s *workerServer, ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error)) grpc.MethodDesc {
		return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.BytesValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			if interceptor == nil {
				return call(srv.(*workerServer), ctx, in)
			}
			// As generated code does: the server's interceptors (the
			// trace context's) run around the call.
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: fullMethod(name)}
			return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
				return call(srv.(*workerServer), ctx, req.(*wrapperspb.BytesValue))
			})
		}}
	}
	return &grpc.ServiceDesc{
		ServiceName: serviceName,
		HandlerType: (*workerService)(nil),
		Methods: []grpc.MethodDesc{
			unary(methodCreate, (*workerServer).create),
			unary(methodDest, (*workerServer).destroy),
			unary(methodList, (*workerServer).list),
		},
		Streams: []grpc.StreamDesc{
			{StreamName: streamExec, ServerStreams: true, ClientStreams: true,
				Handler: func(srv any, st grpc.ServerStream) error { return srv.(*workerServer).execute(st) }},
			{StreamName: streamGet, ServerStreams: true,
				Handler: func(srv any, st grpc.ServerStream) error { return srv.(*workerServer).getFile(st) }},
			{StreamName: streamPut, ClientStreams: true,
				Handler: func(srv any, st grpc.ServerStream) error { return srv.(*workerServer).putFile(st) }},
		},
		Metadata: "codeport worker protocol v1",
	}
}

// workerService is the handler type grpc checks the server against.
type workerService interface{ worker() }
