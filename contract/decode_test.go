package contract_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// TestDuplicateKeysRefused: a request body that repeats a key, at any
// depth, is refused with the key's path, so that codeport never runs a
// different tool, code or file than the one a gateway read from the same
// bytes (parsers differ on which duplicate wins; encoding/json keeps the
// last).
func TestDuplicateKeysRefused(t *testing.T) {
	for _, tc := range []struct {
		body, path string
	}{
		{`{"tool":"code_execution","tool":"bash_code_execution","input":{"command":"id"}}`, `"tool"`},
		{`{"tool":"code_execution","input":{"code":"print(1)","code":"import os"}}`, `"input.code"`},
		{`{"tool":"code_execution","input":{"code":"x"},"input":{"code":"y"}}`, `"input"`},
		{`{"tool":"code_execution","input":{"code":"x"},"timeout_seconds":1,"timeout_seconds":300}`, `"timeout_seconds"`},
		// encoding/json reads "TOOL" as tool: a duplicate to it.
		{`{"tool":"code_execution","TOOL":"bash_code_execution","input":{"command":"id"}}`, `"TOOL": the same key as "tool"`},
		{`{"tool":"code_execution","input":{"code":"x","Code":"y"}}`, `"input.Code"`},
		// An escape is the same key once decoded.
		{`{"tool":"code_execution","\u0074ool":"bash_code_execution","input":{"command":"id"}}`, `"tool"`},
		// Any depth, arrays included, in fields the server ignores too.
		{`{"tool":"text_editor_code_execution","input":{"command":"view","path":"a","view_range":[1,2]},"x":[{},{"a":1,"a":2}]}`, `"x[1].a"`},
		{`{"tool":"code_execution","input":{"code":"x","extra":{"k":{"z":1,"z":2}}}}`, `"input.extra.k.z"`},
	} {
		var req contract.ExecRequest
		err := json.Unmarshal([]byte(tc.body), &req)
		if !errors.Is(err, port.ErrInvalidRequest) || !strings.Contains(err.Error(), "duplicate key "+tc.path) {
			t.Errorf("%s: %v, want a duplicate key %s", tc.body, err, tc.path)
		}
	}
	var cs contract.CreateSessionRequest
	err := json.Unmarshal([]byte(`{"idle_timeout_seconds":60,"idle_timeout_seconds":3600}`), &cs)
	if !errors.Is(err, port.ErrInvalidRequest) || !strings.Contains(err.Error(), `duplicate key "idle_timeout_seconds"`) {
		t.Errorf("create session: %v", err)
	}

	// A request built in Go rather than decoded is checked on conversion.
	_, err = contract.ExecRequestToPort(contract.ExecRequest{Tool: "code_execution", Input: json.RawMessage(`{"code":"a","code":"b"}`)})
	if !errors.Is(err, port.ErrInvalidRequest) || !strings.Contains(err.Error(), `duplicate key "input.code"`) {
		t.Errorf("ExecRequestToPort: %v", err)
	}

	// Not duplicates: the same key in different objects, keys that
	// differ by more than case.
	for _, body := range []string{
		`{"tool":"code_execution","input":{"code":"x","tool":"y","input":{"tool":1}}}`,
		`{"tool":"text_editor_code_execution","input":{"command":"view","path":"a","view_range":[1,-1]},"a":[{"k":1},{"k":2}]}`,
		`{"tool":"code_execution","input":{"code":"x"},"tool_use_id":"t","tools":1,"":1,"\u0000":2}`,
		`{"tool":"code_execution","input":{"code":"x","k":1,"K\u0301":2}}`,
	} {
		var req contract.ExecRequest
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if _, err := contract.ExecRequestToPort(req); err != nil {
			t.Errorf("%s: converting: %v", body, err)
		}
	}
}

// TestDuplicateKeysLargeObject covers an object with more keys than the
// scanner compares by hand before it switches to a map.
func TestDuplicateKeysLargeObject(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"tool":"code_execution","input":{"code":"x"}`)
	for i := range 40 {
		b.WriteString(`,"k` + strings.Repeat("x", i) + `":1`)
	}
	ok := b.String() + "}"
	var req contract.ExecRequest
	if err := json.Unmarshal([]byte(ok), &req); err != nil {
		t.Fatalf("40 distinct keys: %v", err)
	}
	dup := b.String() + `,"KXX":2}`
	if err := json.Unmarshal([]byte(dup), &req); err == nil || !strings.Contains(err.Error(), `"KXX": the same key as "kxx"`) {
		t.Fatalf("late duplicate: %v", err)
	}
	// Folding beyond ASCII, as encoding/json folds: the Kelvin sign is k,
	// the long s is s.
	dup = b.String() + `,"\u212a":2}`
	if err := json.Unmarshal([]byte(dup), &req); err == nil || !strings.Contains(err.Error(), `the same key as "k"`) {
		t.Fatalf("Kelvin sign: %v", err)
	}
	dup = b.String() + `,"s":1,"\u017f":3}`
	if err := json.Unmarshal([]byte(dup), &req); err == nil || !strings.Contains(err.Error(), `the same key as "s"`) {
		t.Fatalf("long s: %v", err)
	}
}
