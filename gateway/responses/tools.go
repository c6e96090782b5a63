package responses

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/codeport/codeport/gateway/containers"
	"github.com/codeport/codeport/internal/purpose"
	"github.com/codeport/codeport/internal/textclip"
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
	// true of Responses-style calls (see RunCall) but is of calls in a
	// container.
	Description string
	// Containers, when not nil, enables containers (phase two): a
	// declaration may then carry OpenAI's container field, as an id
	// ("cntr_...") or {"type":"auto","file_ids":[...]}, and may leave out
	// execution, so that a client written against OpenAI's SDK works
	// unchanged; its calls run in a container of this store, whose state
	// persists between calls (OpenContainer, RunInContainer). nil keeps
	// phase one: a fresh session per call and every container field
	// refused.
	Containers *containers.Store
}

// ValidationError is a refused tools array. Field names the offending
// field as a JSON path into the request ("tools[1].container").
type ValidationError struct {
	Field   string
	Message string
	// Err, when not nil, is the error behind the refusal (for example
	// containers.ErrContainerNotFound from OpenContainer); errors.Is and
	// errors.As see it.
	Err error
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

// Unwrap returns Err.
func (e *ValidationError) Unwrap() error { return e.Err }

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

// containerParametersSchema is the schema of the arguments of calls that
// run in a container, whose state persists.
const containerParametersSchema = `{"type":"object","properties":{"code":{"type":"string","description":"The Python program to run. Variables, imports and files of earlier calls in the container are still there; print every result you need."}},"required":["code"],"additionalProperties":false}`

// FunctionTool returns the model-visible function tool that replaces a
// code_interpreter declaration, with the description opts selects, for
// calls that each start with fresh state (phase one). ValidateTools
// gives the function of a declaration whose calls run in a container a
// description that says state persists (ContainerDescription).
func FunctionTool(opts Options) json.RawMessage {
	return functionToolFor(opts, false)
}

func functionToolFor(opts Options, persistent bool) json.RawMessage {
	desc, params := opts.Description, parametersSchema
	if desc == "" {
		desc = Description(opts.Capabilities)
		if persistent {
			desc = ContainerDescription(opts.Capabilities)
		}
	}
	if persistent {
		params = containerParametersSchema
	}
	b, err := json.Marshal(functionTool{
		Type:        "function",
		Name:        ToolName,
		Description: desc,
		Parameters:  json.RawMessage(params),
		Strict:      true,
	})
	if err != nil {
		panic(err) // cannot happen: only strings and a constant schema
	}
	return b
}

// ValidateTools checks a client's tools array before inference and returns
// it with the code_interpreter declaration (if any) replaced, at the same
// position, by the model-visible function tool (FunctionTool; when the
// calls run in a container, with a description saying that state
// persists). Every other tool passes through byte for byte.
//
// A declaration is an object whose type is "code_interpreter". It is
// refused with a *ValidationError when:
//   - opts.Enabled is false (field tools[i]);
//   - it is not the first declaration (tools[i]);
//   - a client function or custom tool is also named code_interpreter
//     (tools[j].name).
//
// In phase one (opts.Containers nil), it is also refused when:
//   - execution is absent or not "gateway" (tools[i].execution);
//   - it carries a container, as an id or a configuration (tools[i].container):
//     the gateway creates one execution context per call itself;
//   - it has any field other than type and execution (tools[i].<field>).
//
// With containers (opts.Containers set) it takes these fields:
//   - execution: absent, or "gateway" (tools[i].execution);
//   - container: required when execution is absent, as OpenAI's SDK
//     requires it; either a container id, a string that
//     containers.NodeOf accepts (tools[i].container), or an object
//     (ContainerChoice documents each case):
//     {"type":"auto"} with optionally "file_ids", an array of at most
//     MaxFileIDs distinct, non-empty, printable strings of at most
//     MaxFileIDBytes bytes (tools[i].container.file_ids[k]), and
//     "network_policy" {"type":"disabled"} when the sandbox has no
//     network anyway; "memory_limit" is refused, since the sandbox's
//     memory limit is the operator's, and so is any other field
//     (tools[i].container.<field>);
//   - allowed_callers: an array holding only "direct" (the model calls
//     the tool itself; tools[i].allowed_callers[k]);
//   - no other field (tools[i].<field>).
//
// A declaration with execution "gateway" and no container runs each call
// with fresh state, as in phase one.
//
// A tools array without a declaration is returned unchanged.
func ValidateTools(tools []json.RawMessage, opts Options) ([]json.RawMessage, error) {
	out, _, err := validate(tools, opts)
	return out, err
}

// ContainerOf validates tools as ValidateTools does (pass the client's
// array, not the one ValidateTools returned) and returns where the
// declaration's calls run. Without a declaration, or in phase one, the
// choice is ContainerFresh.
func ContainerOf(tools []json.RawMessage, opts Options) (ContainerChoice, error) {
	_, choice, err := validate(tools, opts)
	return choice, err
}

func validate(tools []json.RawMessage, opts Options) ([]json.RawMessage, ContainerChoice, error) {
	decl := -1
	var choice ContainerChoice
	for i, raw := range tools {
		var head struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &head) != nil || head.Type != DeclarationType {
			continue
		}
		field := fmt.Sprintf("tools[%d]", i)
		if !opts.Enabled {
			return nil, ContainerChoice{}, &ValidationError{Field: field, Message: "code execution is disabled by configuration; remove the code_interpreter tool"}
		}
		if decl >= 0 {
			return nil, ContainerChoice{}, &ValidationError{Field: field, Message: fmt.Sprintf("only one code_interpreter tool may be declared (tools[%d] is the first)", decl)}
		}
		if opts.Containers == nil {
			if err := checkDeclaration(field, raw); err != nil {
				return nil, ContainerChoice{}, err
			}
		} else {
			c, err := checkContainerDeclaration(field, raw, opts.Capabilities)
			if err != nil {
				return nil, ContainerChoice{}, err
			}
			choice = c
		}
		decl = i
	}
	if decl < 0 {
		return tools, ContainerChoice{}, nil
	}
	for i, raw := range tools {
		if i == decl {
			continue
		}
		if field, ok := collides(raw); ok {
			return nil, ContainerChoice{}, &ValidationError{
				Field:   fmt.Sprintf("tools[%d].%s", i, field),
				Message: "a client function may not be named code_interpreter while a code_interpreter tool is declared",
			}
		}
	}
	out := make([]json.RawMessage, len(tools))
	copy(out, tools)
	out[decl] = functionToolFor(opts, choice.Mode != ContainerFresh)
	return out, choice, nil
}

// checkDeclaration validates one declaration's fields (phase one).
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
	for _, k := range sortedKeys(m) {
		if k != "type" && k != "execution" {
			return &ValidationError{Field: field + "." + k, Message: "unknown field of a code_interpreter declaration (only type and execution are accepted)"}
		}
	}
	return nil
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Limits of a declaration's container configuration.
const (
	// MaxFileIDs is how many file ids a container configuration may
	// list: the store's bound. The store may allow fewer
	// (containers.WithMaxFiles).
	MaxFileIDs = containers.MaxFileIDs
	// MaxFileIDBytes is the length limit of one file id: the store's.
	MaxFileIDBytes = containers.MaxNameBytes
)

// checkContainerDeclaration validates one declaration's fields when
// containers are enabled, and returns its container choice.
func checkContainerDeclaration(field string, raw json.RawMessage, caps port.Capabilities) (ContainerChoice, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return ContainerChoice{}, &ValidationError{Field: field, Message: "must be a JSON object"}
	}
	exec, hasExec := m["execution"]
	if hasExec {
		var s string
		if json.Unmarshal(exec, &s) != nil || s != ExecutionGateway {
			return ContainerChoice{}, &ValidationError{Field: field + ".execution", Message: fmt.Sprintf(`%s is not accepted: only "gateway" is accepted, or no execution field`, compact(exec))}
		}
	}
	if callers, ok := m["allowed_callers"]; ok {
		if err := checkAllowedCallers(field+".allowed_callers", callers); err != nil {
			return ContainerChoice{}, err
		}
	}
	for _, k := range sortedKeys(m) {
		switch k {
		case "type", "execution", "container", "allowed_callers":
		default:
			return ContainerChoice{}, &ValidationError{Field: field + "." + k, Message: "unknown field of a code_interpreter declaration (only type, container, execution and allowed_callers are accepted)"}
		}
	}
	cfield := field + ".container"
	c, ok := m["container"]
	if !ok {
		if !hasExec {
			return ContainerChoice{}, &ValidationError{Field: cfield, Message: `is required: a container id, or {"type":"auto"} for a new container (or execution "gateway" without a container for fresh state in every call)`}
		}
		return ContainerChoice{}, nil
	}
	var id string
	if json.Unmarshal(c, &id) == nil {
		if _, ok := containers.NodeOf(id); !ok {
			return ContainerChoice{}, &ValidationError{Field: cfield, Message: fmt.Sprintf(`%s is not a container id (cntr_ and 32 hex digits, with a node id between them on a gateway of several nodes)`, compact(c))}
		}
		return ContainerChoice{Mode: ContainerExisting, ID: id, Field: cfield}, nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(c, &obj) != nil || obj == nil {
		return ContainerChoice{}, &ValidationError{Field: cfield, Message: fmt.Sprintf(`%s is neither a container id nor a container configuration ({"type":"auto"})`, compact(c))}
	}
	var typ string
	if t, ok := obj["type"]; !ok {
		return ContainerChoice{}, &ValidationError{Field: cfield + ".type", Message: `is required: only "auto" is accepted`}
	} else if json.Unmarshal(t, &typ) != nil || typ != "auto" {
		return ContainerChoice{}, &ValidationError{Field: cfield + ".type", Message: fmt.Sprintf(`%s is not accepted: only "auto" is accepted`, compact(t))}
	}
	choice := ContainerChoice{Mode: ContainerAuto, Field: cfield}
	for _, k := range sortedKeys(obj) {
		v := obj[k]
		switch k {
		case "type":
		case "file_ids":
			ids, err := checkFileIDs(cfield+".file_ids", v)
			if err != nil {
				return ContainerChoice{}, err
			}
			choice.FileIDs = ids
		case "memory_limit":
			limit := "the operator's"
			if caps.Limits.MemoryBytes > 0 {
				limit = fmt.Sprintf("%d MiB, set by the operator", caps.Limits.MemoryBytes>>20)
			}
			return ContainerChoice{}, &ValidationError{Field: cfield + ".memory_limit", Message: "cannot be chosen: the sandbox's memory limit is " + limit + "; remove the field"}
		case "network_policy":
			var np map[string]json.RawMessage
			var npType string
			if json.Unmarshal(v, &np) != nil || len(np) != 1 || json.Unmarshal(np["type"], &npType) != nil || npType != "disabled" {
				return ContainerChoice{}, &ValidationError{Field: cfield + ".network_policy", Message: fmt.Sprintf(`%s is not accepted: only {"type":"disabled"} is`, compact(v))}
			}
			if caps.Network {
				return ContainerChoice{}, &ValidationError{Field: cfield + ".network_policy", Message: "cannot be honoured: this sandbox's network access is the operator's choice; remove the field"}
			}
		default:
			return ContainerChoice{}, &ValidationError{Field: cfield + "." + k, Message: "unknown field of a container configuration (only type, file_ids and network_policy are accepted)"}
		}
	}
	return choice, nil
}

// checkFileIDs validates a container configuration's file_ids: null, or
// an array of distinct file ids.
func checkFileIDs(field string, raw json.RawMessage) ([]string, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, &ValidationError{Field: field, Message: fmt.Sprintf("must be an array of file ids, got %s", compact(raw))}
	}
	if len(items) > MaxFileIDs {
		return nil, &ValidationError{Field: field, Message: fmt.Sprintf("lists %d file ids: at most %d are accepted", len(items), MaxFileIDs)}
	}
	ids := make([]string, 0, len(items))
	seen := map[string]int{}
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		var id string
		if json.Unmarshal(it, &id) != nil {
			return nil, &ValidationError{Field: f, Message: fmt.Sprintf("must be a string, got %s", compact(it))}
		}
		if err := containers.CheckFileID(id); err != nil {
			return nil, &ValidationError{Field: f, Message: strings.TrimPrefix(err.Error(), port.ErrInvalidRequest.Error()+": "), Err: err}
		}
		if j, ok := seen[id]; ok {
			return nil, &ValidationError{Field: f, Message: fmt.Sprintf("repeats %s[%d]", field, j)}
		}
		seen[id] = i
		ids = append(ids, id)
	}
	return ids, nil
}

// checkAllowedCallers accepts OpenAI's allowed_callers when it holds only
// "direct": the model calls the tool itself, which is all the gateway does.
func checkAllowedCallers(field string, raw json.RawMessage) error {
	var callers []json.RawMessage
	if json.Unmarshal(raw, &callers) != nil {
		return &ValidationError{Field: field, Message: fmt.Sprintf(`must be an array, got %s`, compact(raw))}
	}
	for i, c := range callers {
		var s string
		if json.Unmarshal(c, &s) != nil || s != "direct" {
			return &ValidationError{Field: fmt.Sprintf("%s[%d]", field, i), Message: fmt.Sprintf(`%s is not accepted: only "direct" is (the model calls the tool itself)`, compact(c))}
		}
	}
	return nil
}

// collides reports whether a tool the model sees by name is named
// code_interpreter, the name of the function ValidateTools gives it, and
// the field that names it: a function or a custom tool, in the Responses
// shape ({"type":"function","name":...}) or the Chat Completions shape
// ({"type":"function","function":{"name":...}}, {"type":"custom",
// "custom":{"name":...}}). Two tools of one name would leave it to
// upstream to refuse, or the model to call the wrong one.
func collides(raw json.RawMessage) (string, bool) {
	type named struct {
		Name string `json:"name"`
	}
	var t struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *named `json:"function"`
		Custom   *named `json:"custom"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return "", false
	}
	inner := t.Function
	if t.Type == "custom" {
		inner = t.Custom
	} else if t.Type != "function" {
		return "", false
	}
	if t.Name == ToolName {
		return "name", true
	}
	if inner != nil && inner.Name == ToolName {
		return t.Type + ".name", true
	}
	return "", false
}

// compactLimit is how many bytes of a client's or model's JSON value a
// message quotes.
const compactLimit = 40

// compact renders a JSON value for a message: compacted, and cut to
// compactLimit bytes on a UTF-8 boundary. Text that is not JSON (a
// model's arguments cut short by its token limit) is cut the same way:
// a message must not echo megabytes of code back to the model.
func compact(b []byte) string {
	var buf bytes.Buffer
	s := string(b)
	if json.Compact(&buf, b) == nil {
		s = buf.String()
	}
	return textclip.Clip(s, compactLimit)
}

// Description is the function description built from a capability
// description: what runs the code, that the model must print its answer,
// that every call starts with fresh state, what can and cannot be imported,
// and the limits. It never promises what the capabilities do not say.
func Description(c port.Capabilities) string {
	return purpose.Hint(c, purpose.Options{FreshState: true, PythonOnly: true})
}

// ContainerDescription is the function description for calls that run in
// a container: as Description, but saying that variables, imports and
// files persist between calls in the container.
func ContainerDescription(c port.Capabilities) string {
	return purpose.Hint(c, purpose.Options{Container: true, PythonOnly: true})
}
