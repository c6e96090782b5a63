package responses

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/codeport/codeport/port"
)

// Prefixes of the ids a Plan carries.
const (
	ItemIDPrefix      = "ci_"
	ContainerIDPrefix = "cntr_gw_"
)

// ErrBadArguments is wrapped by NewPlan's errors about the model's
// function arguments.
var ErrBadArguments = errors.New("bad code_interpreter arguments")

// Plan is one code_interpreter call, made before admission. Its ids stay
// the same through every lifecycle event, failure and retrieval.
type Plan struct {
	// ItemID is the public output item's id: "ci_" + 48 hex digits.
	ItemID string
	// ContainerID is, for NewPlan, "cntr_gw_" + 32 hex digits, unique per
	// call: it names the one execution context of this call, never a
	// reusable container (in phase one, ValidateTools refuses a
	// container). For NewContainerPlan it is the id of the container the
	// call runs in (RunInContainer), which a client may name again.
	ContainerID string
	// CallID is the model's function call_id; it stays internal.
	CallID string
	// Code is the Python program.
	Code string
}

// NewPlan parses the model's function call arguments ({"code": "..."}) and
// gives the call fresh ids. It fails, wrapping ErrBadArguments, on an empty
// call id, arguments that are not a JSON object, and a code that is
// missing, not a string or blank. Other argument fields are ignored.
func NewPlan(callID, argumentsJSON string) (Plan, error) {
	if callID == "" {
		return Plan{}, fmt.Errorf("%w: call_id is empty", ErrBadArguments)
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal([]byte(argumentsJSON), &args); err != nil || args == nil {
		return Plan{}, fmt.Errorf("%w: arguments are not a JSON object: %s", ErrBadArguments, compact([]byte(argumentsJSON)))
	}
	raw, ok := args["code"]
	if !ok {
		return Plan{}, fmt.Errorf("%w: missing required field code", ErrBadArguments)
	}
	var code string
	if err := json.Unmarshal(raw, &code); err != nil {
		return Plan{}, fmt.Errorf("%w: code must be a string, got %s", ErrBadArguments, compact(raw))
	}
	if strings.TrimSpace(code) == "" {
		return Plan{}, fmt.Errorf("%w: code is empty", ErrBadArguments)
	}
	return Plan{
		ItemID:      ItemIDPrefix + randomHex(24),
		ContainerID: ContainerIDPrefix + randomHex(16),
		CallID:      callID,
		Code:        code,
	}, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// Item statuses.
const (
	StatusInProgress   = "in_progress"
	StatusInterpreting = "interpreting"
	StatusCompleted    = "completed"
	StatusFailed       = "failed"
)

// Item is the public output item, exactly OpenAI's code_interpreter_call:
//
//	{"type":"code_interpreter_call","id":"ci_...","container_id":"cntr_gw_...",
//	 "code":"...","status":"completed","outputs":[{"type":"logs","logs":"..."}]}
//
// Outputs nil marshals as null (in progress); an empty, non-nil Outputs
// as [].
type Item struct {
	Type        string       `json:"type"`
	ID          string       `json:"id"`
	ContainerID string       `json:"container_id"`
	Code        string       `json:"code"`
	Status      string       `json:"status"`
	Outputs     []ItemOutput `json:"outputs"`
}

// ItemOutput is one entry of Item.Outputs: {"type":"logs","logs":...} or
// {"type":"image","url":...}. Item produces logs, and an image entry (a
// data: URL) for every produced image whose bytes RunCall fetched.
type ItemOutput struct {
	Type string
	Logs string
	URL  string
}

// MarshalJSON writes the entry's two fields for its type.
func (o ItemOutput) MarshalJSON() ([]byte, error) {
	if o.Type == "image" {
		return json.Marshal(struct {
			Type string `json:"type"`
			URL  string `json:"url"`
		}{o.Type, o.URL})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Logs string `json:"logs"`
	}{"logs", o.Logs})
}

// UnmarshalJSON reads either entry type.
func (o *ItemOutput) UnmarshalJSON(b []byte) error {
	var raw struct {
		Type string `json:"type"`
		Logs string `json:"logs"`
		URL  string `json:"url"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*o = ItemOutput(raw)
	return nil
}

func (p Plan) item(status string, outputs []ItemOutput) Item {
	return Item{Type: "code_interpreter_call", ID: p.ItemID, ContainerID: p.ContainerID, Code: p.Code, Status: status, Outputs: outputs}
}

// InProgressItem is the item before the code runs: status in_progress,
// outputs null.
func (p Plan) InProgressItem() Item { return p.item(StatusInProgress, nil) }

// InterpretingItem is the item while the code runs: status interpreting,
// outputs null.
func (p Plan) InterpretingItem() Item { return p.item(StatusInterpreting, nil) }

// Item is the final public item for an outcome.
//
// Status is "completed" when the code ran to an end of its own (Success,
// ProgramError, SyntaxError, OutputLimit: the interpreter did its job, as
// OpenAI reports a call whose program raised), "failed" otherwise
// (Timeout, OuterTimeout, Cancelled, MemoryLimit, SessionLost,
// CapacityUnavailable, RuntimeFailure, ContainerNotFound, ContainerBusy,
// InvalidInput).
//
// Outputs is one logs entry holding stdout then stderr (partial output
// included), followed for a failed call by the one-line explanation, so a
// client can tell why it failed without any custom field. When there is
// nothing to log, Outputs is [].
func (p Plan) Item(o Outcome) Item {
	status := StatusFailed
	if o.Ran() {
		status = StatusCompleted
	}
	logs := o.Stdout
	if o.Stderr != "" {
		if logs != "" && !strings.HasSuffix(logs, "\n") {
			logs += "\n"
		}
		logs += o.Stderr
	}
	if status == StatusFailed {
		if logs != "" && !strings.HasSuffix(logs, "\n") {
			logs += "\n"
		}
		logs += o.Explanation()
	}
	outputs := []ItemOutput{}
	if logs != "" {
		outputs = append(outputs, ItemOutput{Type: "logs", Logs: logs})
	}
	for _, f := range o.Files {
		// An image by its bytes, not its name: a file named .png that is
		// not one is no image output. SVG is text and has no signature.
		typ := port.InlineImageType(f.Data)
		if typ == "" && f.Data != nil && f.MimeType == "image/svg+xml" {
			typ = f.MimeType
		}
		if typ != "" {
			outputs = append(outputs, ItemOutput{Type: "image", URL: "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(f.Data)})
		}
	}
	return p.item(status, outputs)
}

// Annotation is OpenAI's container_file_citation, an annotation of an
// output_text part of the assistant's message:
//
//	{"type":"container_file_citation","container_id":"cntr_...",
//	 "file_id":"cfile_...","filename":"out.csv","start_index":9,"end_index":16}
//
// StartIndex and EndIndex count characters (Unicode code points, as a
// Python str indexes the text) from the start of the part's text; the
// cited span is text[StartIndex:EndIndex] in those units, EndIndex
// exclusive.
type Annotation struct {
	Type        string `json:"type"`
	ContainerID string `json:"container_id"`
	FileID      string `json:"file_id"`
	Filename    string `json:"filename"`
	StartIndex  int    `json:"start_index"`
	EndIndex    int    `json:"end_index"`
}

// FileCitations are the container_file_citation annotations of the files
// the call produced, in order, for the gateway to attach to the message
// that answers with them: each cites the first mention of the file's name
// in text (its workspace path, or its base name), or the end of text when
// text does not mention it. Indexes count characters (Unicode code
// points), as OpenAI's do. A file without a FileID (one a container could
// not list) is not cited. For a call run in a container, the citations
// name the container and its file ids; ContainerFileCitations does the
// same for files of several calls. The slice is never nil: it marshals
// as [], as an output_text part's annotations must be.
func (p Plan) FileCitations(o Outcome, text string) []Annotation {
	out := []Annotation{}
	for _, f := range o.Files {
		if f.FileID == "" {
			continue
		}
		out = append(out, cite(p.ContainerID, f.FileID, f.Filename, text, f.Filename, path.Base(f.Filename)))
	}
	return out
}

// cite makes the citation of one file: at the first mention of the first
// of names that text mentions, else at its end.
func cite(containerID, fileID, filename, text string, names ...string) Annotation {
	start, end := len(text), len(text)
	for _, name := range names {
		if i := mention(text, name); i >= 0 {
			start, end = i, i+len(name)
			break
		}
	}
	return Annotation{
		Type: "container_file_citation", ContainerID: containerID,
		FileID: fileID, Filename: filename,
		StartIndex: utf8.RuneCountInString(text[:start]), EndIndex: utf8.RuneCountInString(text[:end]),
	}
}

// mention is the byte offset in text of the first mention of name, or -1:
// an occurrence that is not part of a longer name or word, so that
// "out.csv" is not cited inside "layout.csv" or "out.csv.bak", nor "data"
// inside "metadata". A full stop after the name ends a sentence, not the
// name.
func mention(text, name string) int {
	if name == "" {
		return -1
	}
	for off := 0; off < len(text); {
		i := strings.Index(text[off:], name)
		if i < 0 {
			return -1
		}
		i += off
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after := text[i+len(name):]
		next, size := utf8.DecodeRuneInString(after)
		following, _ := utf8.DecodeRuneInString(after[size:])
		switch {
		case i > 0 && (nameRune(before) || before == '.'):
		case after != "" && nameRune(next):
		case next == '.' && nameRune(following):
		default:
			return i
		}
		off = i + 1
	}
	return -1
}

// nameRune reports whether r continues a file name or a word.
func nameRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

// Event types, as OpenAI names them.
const (
	EventOutputItemAdded  = "response.output_item.added"
	EventOutputItemDone   = "response.output_item.done"
	EventCallInProgress   = "response.code_interpreter_call.in_progress"
	EventCallInterpreting = "response.code_interpreter_call.interpreting"
	EventCallCompleted    = "response.code_interpreter_call.completed"
	EventCodeDelta        = "response.code_interpreter_call_code.delta"
	EventCodeDone         = "response.code_interpreter_call_code.done"
)

// Event is one streaming event. It marshals to OpenAI's event JSON: type,
// sequence_number, output_index, and item_id for the code_interpreter_call
// events, item for the output_item events, delta or code for the code
// events. Fields an event type does not have are left out.
type Event struct {
	Type           string  `json:"type"`
	SequenceNumber int     `json:"sequence_number"`
	OutputIndex    int     `json:"output_index"`
	ItemID         string  `json:"item_id,omitempty"`
	Item           *Item   `json:"item,omitempty"`
	Delta          *string `json:"delta,omitempty"`
	Code           *string `json:"code,omitempty"`
}

func next(seq *int) int {
	n := *seq
	*seq++
	return n
}

// StartEvents are the events sent before the code runs: output_item.added
// (item in_progress), code_interpreter_call.in_progress,
// code_interpreter_call_code.delta (the whole code),
// code_interpreter_call_code.done, code_interpreter_call.interpreting.
// Each takes the sequence number *seq and increments it.
func (p Plan) StartEvents(outputIndex int, seq *int) []Event {
	item := p.InProgressItem()
	code := p.Code
	return []Event{
		{Type: EventOutputItemAdded, SequenceNumber: next(seq), OutputIndex: outputIndex, Item: &item},
		{Type: EventCallInProgress, SequenceNumber: next(seq), OutputIndex: outputIndex, ItemID: p.ItemID},
		{Type: EventCodeDelta, SequenceNumber: next(seq), OutputIndex: outputIndex, ItemID: p.ItemID, Delta: &code},
		{Type: EventCodeDone, SequenceNumber: next(seq), OutputIndex: outputIndex, ItemID: p.ItemID, Code: &code},
		{Type: EventCallInterpreting, SequenceNumber: next(seq), OutputIndex: outputIndex, ItemID: p.ItemID},
	}
}

// FinishEvents are the events sent once the outcome is known:
// code_interpreter_call.completed, then output_item.done with the final
// item. OpenAI defines no failed event for code_interpreter_call, so a
// failed call also gets the completed event (the interpreter phase is
// over); its status is the final item's "failed".
func (p Plan) FinishEvents(o Outcome, outputIndex int, seq *int) []Event {
	item := p.Item(o)
	return []Event{
		{Type: EventCallCompleted, SequenceNumber: next(seq), OutputIndex: outputIndex, ItemID: p.ItemID},
		{Type: EventOutputItemDone, SequenceNumber: next(seq), OutputIndex: outputIndex, Item: &item},
	}
}

// Events is StartEvents followed by FinishEvents: the seven events of a
// call, in order, numbered from *seq.
func (p Plan) Events(o Outcome, outputIndex int, seq *int) []Event {
	return append(p.StartEvents(outputIndex, seq), p.FinishEvents(o, outputIndex, seq)...)
}
