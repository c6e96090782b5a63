package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/codeport/codeport/internal/purpose"
	"github.com/codeport/codeport/port"
)

// ToolName is the name of the function the model sees in place of the
// client's code_interpreter declaration.
const ToolName = "code_interpreter"

// DeclarationType is the type of a client's code interpreter declaration.
const DeclarationType = "code_interpreter"

// ExecutionGateway is the only accepted value of a declaration's execution
// selector: the gateway runs the code on its bound codeport adapter.
const ExecutionGateway = "gateway"

// Options configure ValidateTools.
type Options struct {
	// Enabled reports whether code execution is enabled by configuration.
	// When false, any code_interpreter declaration is refused.
	Enabled bool
	// Capabilities is the bound adapter's capability description; the
	// function description is built from it when Description is empty.
	Capabilities port.Capabilities
	// Description, when not empty, is used verbatim as the function's
	// description (for example a gateway's own text). Note that
	// binding.PurposeHint says state persists between calls, which is not
	// true of Responses-style calls (see RunCall).
	Description string
}

// ValidationError is a refused tools array. Field names the offending
// field as a JSON path into the request ("tools[1].container").
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// functionTool is the model-visible function tool ValidateTools emits.
type functionTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// parametersSchema is the JSON Schema of the function's arguments.
const parametersSchema = `{"type":"object","properties":{"code":{"type":"string","description":"The Python program to run. It starts with fresh state; print every result you need."}},"required":["code"],"additionalProperties":false}`

// FunctionTool returns the model-visible function tool that replaces a
// code_interpreter declaration, with the description opts selects.
func FunctionTool(opts Options) json.RawMessage {
	desc := opts.Description
	if desc == "" {
		desc = Description(opts.Capabilities)
	}
	b, err := json.Marshal(functionTool{
		Type:        "function",
		Name:        ToolName,
		Description: desc,
		Parameters:  json.RawMessage(parametersSchema),
		Strict:      true,
	})
	if err != nil {
		panic(err) // cannot happen: only strings and a constant schema
	}
	return b
}

// ValidateTools checks a client's tools array before inference and returns
// it with the code_interpreter declaration (if any) replaced, at the same
// position, by the model-visible function tool (FunctionTool). Every other
// tool passes through byte for byte.
//
// A declaration is an object whose type is "code_interpreter". It is
// refused with a *ValidationError when:
//   - opts.Enabled is false (field tools[i]);
//   - execution is absent or not "gateway" (tools[i].execution);
//   - it carries a container, as an id or a configuration (tools[i].container):
//     the gateway creates one execution context per call itself;
//   - it has any field other than type and execution (tools[i].<field>);
//   - it is not the first declaration (tools[i]);
//   - a client function tool is also named code_interpreter (tools[j].name).
//
// A tools array without a declaration is returned unchanged.
func ValidateTools(tools []json.RawMessage, opts Options) ([]json.RawMessage, error) {
	decl := -1
	for i, raw := range tools {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &head) != nil || head.Type != DeclarationType {
			continue
		}
		field := fmt.Sprintf("tools[%d]", i)
		if !opts.Enabled {
			return nil, &ValidationError{Field: field, Message: "code execution is disabled by configuration; remove the code_interpreter tool"}
		}
		if decl >= 0 {
			return nil, &ValidationError{Field: field, Message: fmt.Sprintf("only one code_interpreter tool may be declared (tools[%d] is the first)", decl)}
		}
		if err := checkDeclaration(field, raw); err != nil {
			return nil, err
		}
		decl = i
	}
	if decl < 0 {
		return tools, nil
	}
	for i, raw := range tools {
		if i == decl {
			continue
		}
		if field, ok := collides(raw); ok {
			return nil, &ValidationError{
				Field:   fmt.Sprintf("tools[%d].%s", i, field),
				Message: "a client function may not be named code_interpreter while a code_interpreter tool is declared",
			}
		}
	}
	out := make([]json.RawMessage, len(tools))
	copy(out, tools)
	out[decl] = FunctionTool(opts)
	return out, nil
}

// checkDeclaration validates one declaration's fields.
func checkDeclaration(field string, raw json.RawMessage) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return &ValidationError{Field: field, Message: "must be a JSON object"}
	}
	if _, ok := m["container"]; ok {
		return &ValidationError{
			Field:   field + ".container",
			Message: "a container id or configuration cannot be supplied: the gateway creates a fresh execution context for every call; remove the field",
		}
	}
	exec, ok := m["execution"]
	if !ok {
		return &ValidationError{Field: field + ".execution", Message: `is required: only "gateway" is accepted`}
	}
	var s string
	if json.Unmarshal(exec, &s) != nil || s != ExecutionGateway {
		return &ValidationError{Field: field + ".execution", Message: fmt.Sprintf(`%s is not accepted: only "gateway" is accepted`, compact(exec))}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != "type" && k != "execution" {
			return &ValidationError{Field: field + "." + k, Message: "unknown field of a code_interpreter declaration (only type and execution are accepted)"}
		}
	}
	return nil
}

// collides reports whether a tool is a function named code_interpreter, in
// the Responses shape ({"type":"function","name":...}) or the Chat
// Completions shape ({"type":"function","function":{"name":...}}), and the
// field that names it.
func collides(raw json.RawMessage) (string, bool) {
	var t struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &t) != nil || t.Type != "function" {
		return "", false
	}
	if t.Name == ToolName {
		return "name", true
	}
	if t.Function != nil && t.Function.Name == ToolName {
		return "function.name", true
	}
	return "", false
}

func compact(b []byte) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	s := buf.String()
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// Description is the function description built from a capability
// description: what runs the code, that the model must print its answer,
// that every call starts with fresh state, what can and cannot be imported,
// and the limits. It never promises what the capabilities do not say.
func Description(c port.Capabilities) string {
	return purpose.Hint(c, purpose.Options{FreshState: true})
}
