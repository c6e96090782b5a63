package subprocess

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/codeport/codeport/port"
)

// acrossRPC sends err through the worker protocol's reply envelope, as a
// worker answers and the parent reads, and returns what the parent gets.
func acrossRPC(t *testing.T, err error) error {
	t.Helper()
	m, merr := encodeReply(nil, err)
	if merr != nil {
		t.Fatal(merr)
	}
	// The bytes as they travel.
	return decodeReply(wrapperspb.Bytes(m.GetValue()), nil)
}

func TestRPCErrorsKeepTheirCode(t *testing.T) {
	for _, code := range port.ErrorCodes() {
		t.Run(code, func(t *testing.T) {
			orig, ok := port.ErrorFromCode(code, "worker: "+code, 0)
			if !ok {
				t.Fatalf("port does not know its own code %q", code)
			}
			sent := fmt.Errorf("session s1: %w", orig)
			got := acrossRPC(t, sent)
			if c := port.ErrorCode(got); c != code {
				t.Errorf("code %q, want %q", c, code)
			}
			if got.Error() != sent.Error() {
				t.Errorf("text %q, want %q", got.Error(), sent.Error())
			}
		})
	}
	// The sentinels themselves, as the worker's adapters wrap them.
	for _, sentinel := range []error{port.ErrSessionNotFound, port.ErrPathEscapesWorkspace, port.ErrClosed, port.ErrFileNotFound, port.ErrUnauthorized} {
		got := acrossRPC(t, fmt.Errorf("workspace: %w", sentinel))
		if !errors.Is(got, sentinel) {
			t.Errorf("%v: got %v, which does not match", sentinel, got)
		}
		if sentinel != port.ErrRuntimeFailure && errors.Is(got, port.ErrRuntimeFailure) {
			t.Errorf("%v: also a runtime failure", sentinel)
		}
	}
}

func TestRPCErrorPrecedenceIsDeterministic(t *testing.T) {
	// An error that wraps several sentinels crosses with the first code in
	// the port's order, every time (no map iteration decides).
	both := fmt.Errorf("%w: %w", port.ErrRuntimeFailure, port.ErrClosed)
	for range 50 {
		got := acrossRPC(t, both)
		if !errors.Is(got, port.ErrClosed) || port.ErrorCode(got) != "closed" {
			t.Fatalf("got %v (code %q)", got, port.ErrorCode(got))
		}
	}
}

func TestRPCCapacityErrorKeepsItsFields(t *testing.T) {
	sent := fmt.Errorf("pool: %w", &port.CapacityError{Resource: "workers", Limit: 3, RetryAfter: 2500 * time.Millisecond})
	got := acrossRPC(t, sent)
	var ce *port.CapacityError
	if !errors.As(got, &ce) || !errors.Is(got, port.ErrAtCapacity) {
		t.Fatalf("got %T %v", got, got)
	}
	if ce.Resource != "workers" || ce.Limit != 3 || ce.RetryAfter != 2500*time.Millisecond {
		t.Errorf("fields %+v", ce)
	}
	if got.Error() != sent.Error() {
		t.Errorf("text %q, want %q", got.Error(), sent.Error())
	}
}

func TestRPCErrorWithoutSentinel(t *testing.T) {
	// An error of no sentinel is the worker failing.
	got := acrossRPC(t, errors.New("instance crashed"))
	if !errors.Is(got, port.ErrRuntimeFailure) || got.Error() != "instance crashed" {
		t.Errorf("got %v", got)
	}
	// A code this parent does not know (a newer worker's) too.
	m := wrapperspb.Bytes([]byte(`{"error":{"code":"brand_new_code","message":"something new"}}`))
	got = decodeReply(m, nil)
	if !errors.Is(got, port.ErrRuntimeFailure) || got.Error() != "something new" {
		t.Errorf("unknown code: %v", got)
	}
	// No error: the value arrives.
	m, err := encodeReply(map[string]int{"n": 7}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]int
	if err := decodeReply(m, &v); err != nil || v["n"] != 7 {
		t.Errorf("value %v, err %v", v, err)
	}
}
