package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/codeport/codeport/contract"
)

// maxDepth is the deepest nesting of objects and arrays a message may
// have: the SDK's own bound, so that a message that passes CheckMessage is
// one the SDK decodes.
const maxDepth = 1000

// Refusal is why a message is not one the server takes, and the JSON-RPC
// error response that answers it (Response).
type Refusal struct {
	// ID is the message's id as it was sent, when it is a valid one
	// (a string or an integer); nil when it cannot be known, and then the
	// response's id is null, as JSON-RPC 2.0 asks.
	ID json.RawMessage
	// Code is jsonrpc.CodeParseError for what is not JSON,
	// jsonrpc.CodeInvalidRequest for JSON that is not a request the server
	// takes.
	Code    int64
	Message string
}

func (r *Refusal) Error() string { return r.Message }

// Response is the JSON-RPC error response, on one line without its
// newline.
func (r *Refusal) Response() []byte {
	id := r.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: r.Code, Message: r.Message}})
	if err != nil {
		// Only a bug gets here: the id was checked, the rest is ours.
		return []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	return b
}

// bom is UTF-8's byte order mark.
var bom = []byte{0xef, 0xbb, 0xbf}

// CheckMessage reports whether b is one JSON-RPC 2.0 message that the
// server takes, nil if it is. It is what stands between a client's bytes
// and the SDK on every transport `codeport mcp` serves, so that a
// malformed message is answered (the SDK's stdio transport ends the
// connection on one) and refused alike everywhere:
//
//   - not JSON, or starting with a byte order mark: parse error;
//   - nested deeper than the SDK decodes, a batch (an array: MCP has had
//     none since 2025-06-18), anything but an object, an object that
//     repeats a key (refused as contract v1's server refuses one, see
//     contract.CheckDuplicateKeys), a "jsonrpc" other than "2.0", an id
//     other than a string, an integer or null, or a message the SDK does
//     not decode: invalid request.
func CheckMessage(b []byte) *Refusal {
	if bytes.HasPrefix(b, bom) {
		return &Refusal{Code: jsonrpc.CodeParseError, Message: "parse error: a message must not begin with a byte order mark"}
	}
	if !json.Valid(b) {
		return &Refusal{Code: jsonrpc.CodeParseError, Message: "parse error: the message is not valid JSON"}
	}
	invalid := func(id json.RawMessage, format string, args ...any) *Refusal {
		return &Refusal{ID: id, Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: " + fmt.Sprintf(format, args...)}
	}
	if tooDeep(b) {
		return invalid(nil, "nested deeper than %d levels", maxDepth)
	}
	switch b = bytes.TrimLeft(b, " \t\r\n"); b[0] {
	case '[':
		return invalid(nil, "batches are not supported; send each message on its own")
	case '{':
	default:
		return invalid(nil, "a message must be a JSON object")
	}
	var head struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return invalid(nil, "the message is not a JSON-RPC object")
	}
	id, ok := validID(head.ID)
	if err := contract.CheckDuplicateKeys(b); err != nil {
		if !ok || idKeys(b) > 1 {
			id = nil // which of them?
		}
		_, detail, _ := strings.Cut(err.Error(), ": ")
		return invalid(id, "%s", detail)
	}
	if !ok {
		return invalid(nil, "id must be a string, an integer or null")
	}
	if string(head.JSONRPC) != `"2.0"` {
		return invalid(id, `"jsonrpc" must be "2.0"`)
	}
	if _, err := jsonrpc.DecodeMessage(b); err != nil {
		return invalid(id, "not a JSON-RPC request, notification or response")
	}
	return nil
}

// validID is the id as a refusal may repeat it: nil when there is none or
// it is null; ok is false when it is not an id JSON-RPC allows (the SDK
// would take 1.5 for 1, and answer another request).
func validID(raw json.RawMessage) (json.RawMessage, bool) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return nil, true
	case raw[0] == '"':
		return raw, true
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		if _, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return raw, true
		}
	}
	return nil, false
}

// idKeys counts the keys of a valid JSON object that encoding/json would
// take for its "id" (as head's field is matched: without regard to case).
func idKeys(b []byte) int {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // '{'
		return 0
	}
	n := 0
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return n
		}
		if k, _ := key.(string); strings.EqualFold(k, "id") {
			n++
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return n
		}
	}
	return n
}

// tooDeep reports whether valid JSON nests deeper than maxDepth.
func tooDeep(b []byte) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}
