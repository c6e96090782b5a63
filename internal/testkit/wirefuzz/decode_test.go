package wirefuzz_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// refDuplicate is an independent duplicate check for the fuzz target:
// encoding/json's tokenizer and strings.EqualFold, which is how
// encoding/json matches a key with a field name. b must be valid JSON.
func refDuplicate(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	var value func() bool
	value = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			var keys []string
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return false
				}
				k, _ := kt.(string)
				for _, prev := range keys {
					if strings.EqualFold(prev, k) {
						return true
					}
				}
				keys = append(keys, k)
				if value() {
					return true
				}
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if value() {
					return true
				}
			}
			_, _ = dec.Token()
		}
		return false
	}
	return value()
}

// decodeSeeds are request bodies as gateways send them (Otari's exec
// call, the editor's commands, lifetime hints), plus the duplicates this
// package refuses.
var decodeSeeds = []string{
	`{"tool":"code_execution","input":{"code":"import math\nprint(math.pi)"},"timeout_seconds":30}`,
	`{"tool":"bash_code_execution","input":{"command":"ls -la && cat data.csv"},"tool_use_id":"srvtoolu_01"}`,
	`{"tool":"text_editor_code_execution","input":{"command":"create","path":"a.py","file_text":"x = 1\n"}}`,
	`{"tool":"text_editor_code_execution","input":{"command":"str_replace","path":"a.py","old_str":"1","new_str":"2"}}`,
	`{"tool":"text_editor_code_execution","input":{"command":"insert","path":"a.py","insert_line":1,"new_str":"y = 2\n"}}`,
	`{"tool":"text_editor_code_execution","input":{"command":"view","path":"a.py","view_range":[1,-1]},"timeout_seconds":5.0}`,
	`{"tool":"text_editor_code_execution","input":{"command":"undo_edit","path":"a.py"},"tool_use_id":null}`,
	`{"idle_timeout_seconds":600,"max_lifetime_seconds":3600}`,
	`{"idle_timeout_seconds":null}`,
	`{}`,
	`{"tool":"code_execution","tool":"bash_code_execution","input":{"command":"id"}}`,
	`{"tool":"code_execution","input":{"code":"x","Code":"y"}}`,
	`{"tool":"code_execution","\u0074ool":"bash_code_execution","input":{"command":"id"}}`,
	`{"tool":"code_execution","input":{"code":"x"},"x":[{"a":1,"A":2}]}`,
	`{"tool":"code_execution","input":{"code":"\u00e9\ud83d\ude00"},"timeout_seconds":1e400}`,
	`[{"a":1,"a":2}]`,
	`{"tool":"code_execution","input":"print(1)"}`,
	`{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"\u212a":18}`,
}

// FuzzDecodeRequest decodes arbitrary bytes as both request bodies and
// converts what decodes: nothing panics, duplicates are refused exactly
// when an independent check finds one, every refusal is a typed error,
// and what converts goes back to the wire and converts to the same
// request.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := json.Valid(b)
		dup := valid && refDuplicate(b)
		isDupErr := func(err error) bool {
			return err != nil && strings.Contains(err.Error(), "duplicate key")
		}

		var er contract.ExecRequest
		err := json.Unmarshal(b, &er)
		switch {
		case dup && err == nil:
			t.Fatalf("exec request with a duplicate key accepted: %q", b)
		case isDupErr(err) && !dup:
			t.Fatalf("exec request refused for a duplicate it does not have: %v: %q", err, b)
		case isDupErr(err) && !errors.Is(err, port.ErrInvalidRequest):
			t.Fatalf("duplicate refused with an untyped error: %v", err)
		}
		if err == nil {
			req, err := contract.ExecRequestToPort(er)
			if err != nil && !errors.Is(err, port.ErrInvalidRequest) && !errors.Is(err, port.ErrUnsupportedTool) {
				t.Fatalf("untyped refusal %v of %q", err, b)
			}
			if err == nil {
				roundTrip(t, req)
			}
		}

		var cr contract.CreateSessionRequest
		err = json.Unmarshal(b, &cr)
		switch {
		case dup && err == nil:
			t.Fatalf("create request with a duplicate key accepted: %q", b)
		case isDupErr(err) && !dup:
			t.Fatalf("create request refused for a duplicate it does not have: %v: %q", err, b)
		}
		if err == nil {
			if _, err := contract.CreateSessionRequestToPort(cr); err != nil && !errors.Is(err, port.ErrInvalidRequest) {
				t.Fatalf("untyped refusal %v of %q", err, b)
			}
		}
	})
}

// roundTrip checks that an accepted request survives the client's
// direction (ExecRequestFromPort, the wire) and the server's again.
func roundTrip(t *testing.T, want port.ExecuteRequest) {
	t.Helper()
	wire, err := contract.ExecRequestFromPort(want)
	if err != nil {
		t.Fatalf("ExecRequestFromPort(%+v): %v", want, err)
	}
	b, err := json.Marshal(wire)
	if err != nil {
		t.Fatal(err)
	}
	var back contract.ExecRequest
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("re-decoding %s: %v", b, err)
	}
	got, err := contract.ExecRequestToPort(back)
	if err != nil {
		t.Fatalf("re-converting %s: %v", b, err)
	}
	// Timeouts go over the wire in whole seconds, and a huge one has
	// saturated on the way in: compare those that can come back exactly.
	if want.Timeout > 1<<30*1e9 {
		got.Timeout, want.Timeout = 0, 0
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip through %s:\n got %+v\nwant %+v", b, got, want)
	}
}
