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
//	Create, Destroy, List, Describe  unary:  JSON request → reply
//	Execute                          bidi:   request, then an optional
//	                                         cancel → one reply
//	GetFile                          server: request → reply, chunks...
//	PutFile                          client: header, chunks... → reply
const (
	serviceName  = "codeport.worker.v1.Port"
	methodCreate = "Create"
	methodDest   = "Destroy"
	methodList   = "List"
	methodDesc   = "Describe"
	streamExec   = "Execute"
	streamGet    = "GetFile"
	streamPut    = "PutFile"
	// chunkSize is the size of a file chunk on the wire.
	chunkSize = 256 << 10
)

func fullMethod(name string) string { return "/" + serviceName + "/" + name }

// reply is the envelope of every answer: exactly one of Error and Value.
type reply struct {
	Error *wireError      `json:"error,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
}

// wireError carries a port error across the process boundary: Kind names
// its sentinel, so that errors.Is holds on the parent's side.
type wireError struct {
	Kind       string `json:"kind"`
	Message    string `json:"message"`
	Resource   string `json:"resource,omitempty"`
	Limit      int    `json:"limit,omitempty"`
	RetryAfter int64  `json:"retry_after_ns,omitempty"`
}

// sentinels are the port errors that keep their identity across the
// worker protocol, by name.
func sentinels() map[string]error {
	return map[string]error{
		"session_not_found": port.ErrSessionNotFound,
		"session_busy":      port.ErrSessionBusy,
		"at_capacity":       port.ErrAtCapacity,
		"invalid_request":   port.ErrInvalidRequest,
		"unsupported_tool":  port.ErrUnsupportedTool,
		"path_escapes":      port.ErrPathEscapesWorkspace,
		"file_too_large":    port.ErrFileTooLarge,
		"file_not_found":    port.ErrFileNotFound,
		"is_directory":      port.ErrIsDirectory,
		"runtime_failure":   port.ErrRuntimeFailure,
	}
}

func encodeError(err error) *wireError {
	if err == nil {
		return nil
	}
	we := &wireError{Kind: "runtime_failure", Message: err.Error()}
	var ce *port.CapacityError
	if errors.As(err, &ce) {
		we.Kind, we.Resource, we.Limit, we.RetryAfter = "at_capacity", ce.Resource, ce.Limit, int64(ce.RetryAfter)
		return we
	}
	for kind, s := range sentinels() {
		if errors.Is(err, s) {
			we.Kind = kind
			break
		}
	}
	return we
}

// remoteError is a port error raised in a worker: its text is the
// worker's, and it matches the sentinel its kind names.
type remoteError struct {
	msg      string
	sentinel error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.sentinel }

func (we *wireError) err() error {
	if we.Kind == "at_capacity" {
		return &port.CapacityError{Resource: we.Resource, Limit: we.Limit, RetryAfter: time.Duration(we.RetryAfter)}
	}
	s, ok := sentinels()[we.Kind]
	if !ok {
		s = port.ErrRuntimeFailure
	}
	return &remoteError{msg: we.Message, sentinel: s}
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
	}
	fileRequest struct {
		Session string `json:"session"`
		Path    string `json:"path"`
	}
)

// serviceDesc describes the worker service for grpc.Server.RegisterService.
// It is built per call so that no package state is shared.
func serviceDesc() *grpc.ServiceDesc {
	unary := func(name string, call func(s *workerServer, ctx context.Context, in *wrapperspb.BytesValue) (*wrapperspb.BytesValue, error)) grpc.MethodDesc {
		return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.BytesValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			return call(srv.(*workerServer), ctx, in)
		}}
	}
	return &grpc.ServiceDesc{
		ServiceName: serviceName,
		HandlerType: (*workerService)(nil),
		Methods: []grpc.MethodDesc{
			unary(methodCreate, (*workerServer).create),
			unary(methodDest, (*workerServer).destroy),
			unary(methodList, (*workerServer).list),
			unary(methodDesc, (*workerServer).describe),
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
