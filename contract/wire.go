package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The wire types below are contract v1's JSON bodies. Field names are the
// contract's; Go names follow Go conventions. Responses may carry fields a
// type does not know: decoding ignores them, because the contract grows by
// adding fields and a consumer must not reject what it does not recognise.

// CreateSessionRequest is the optional body of POST /sessions.
//
// Both hints are pointers so that "absent" and "null" (no hint) stay
// distinguishable from a present but invalid 0, which is refused rather than
// read as "no hint".
type CreateSessionRequest struct {
	IdleTimeoutSeconds *int `json:"idle_timeout_seconds,omitempty"`
	MaxLifetimeSeconds *int `json:"max_lifetime_seconds,omitempty"`
}

// UnmarshalJSON accepts an integer written as a whole float (60.0), which
// JSON Schema counts as an integer and some clients produce, and refuses
// fractions and non-numbers. A body with a duplicate key is refused (see
// ExecRequest.UnmarshalJSON).
func (r *CreateSessionRequest) UnmarshalJSON(b []byte) error {
	var raw struct {
		IdleTimeoutSeconds optInt `json:"idle_timeout_seconds"`
		MaxLifetimeSeconds optInt `json:"max_lifetime_seconds"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if err := checkDuplicateKeys("", b); err != nil {
		return err
	}
	*r = CreateSessionRequest{
		IdleTimeoutSeconds: raw.IdleTimeoutSeconds.ptr(),
		MaxLifetimeSeconds: raw.MaxLifetimeSeconds.ptr(),
	}
	return nil
}

// SessionHandle is the body of a 201 from POST /sessions. Optional fields
// are omitted when unknown, never sent as null, as the contract requires.
type SessionHandle struct {
	SessionID string `json:"session_id"`
	// IdleTimeoutSeconds and MaxLifetimeSeconds are the bounds in force.
	IdleTimeoutSeconds int `json:"idle_timeout_seconds,omitempty"`
	MaxLifetimeSeconds int `json:"max_lifetime_seconds,omitempty"`
	// CreatedAt and LastActivityAt are POSIX seconds with a fraction.
	CreatedAt      float64 `json:"created_at,omitempty"`
	LastActivityAt float64 `json:"last_activity_at,omitempty"`
}

// ExecRequest is the body of POST /sessions/{id}/exec.
//
// Input stays raw JSON here because its shape depends on Tool; ExecRequestToPort
// decodes and validates it for the tool kind.
type ExecRequest struct {
	Tool  string          `json:"tool"`
	Input json.RawMessage `json:"input"`
	// TimeoutSeconds is nil when absent (the backend's default applies).
	TimeoutSeconds *int `json:"timeout_seconds,omitempty"`
	// ToolUseID is empty when absent or null.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// DisplayValues is codeport's extension: whether a code_execution
	// cell's last expression is displayed (port.ExecuteRequest's field of
	// the same name); nil when absent or null.
	DisplayValues *bool `json:"display_values,omitempty"`

	// keysChecked records that UnmarshalJSON has refused duplicate keys
	// in the whole body, Input included, so that ExecRequestToPort does
	// not walk the program's text a second time.
	keysChecked bool
}

// UnmarshalJSON reads tool_use_id null as absent and accepts a whole-valued
// float for timeout_seconds (see CreateSessionRequest.UnmarshalJSON). Wrong
// JSON types are errors.
//
// An object with a duplicate key, at any depth, is refused with an error
// wrapping port.ErrInvalidRequest that names the key's path. JSON leaves
// duplicates' meaning open and parsers differ (encoding/json keeps the
// last, others the first), so a gateway that checked
// {"tool":"code_execution","tool":"bash_code_execution"} would have
// approved one tool and codeport run another. Keys that differ only in
// case count as duplicates too, because encoding/json matches fields
// without regard to case and would read "Tool" as tool.
func (r *ExecRequest) UnmarshalJSON(b []byte) error {
	var raw struct {
		Tool           *string         `json:"tool"`
		Input          json.RawMessage `json:"input"`
		TimeoutSeconds optInt          `json:"timeout_seconds"`
		ToolUseID      *string         `json:"tool_use_id"`
		DisplayValues  *bool           `json:"display_values"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if err := checkDuplicateKeys("", b); err != nil {
		return err
	}
	*r = ExecRequest{Input: raw.Input, TimeoutSeconds: raw.TimeoutSeconds.ptr(), DisplayValues: raw.DisplayValues, keysChecked: true}
	if raw.Tool != nil {
		r.Tool = *raw.Tool
	}
	if raw.ToolUseID != nil {
		r.ToolUseID = *raw.ToolUseID
	}
	return nil
}

// ExecResponse is the body of a 200 from POST /sessions/{id}/exec.
//
// Decoding is lenient the way the contract asks of consumers: a null stdout
// or stderr reads as "", a null return_code or execution_time_ms as 0, a
// null content list as empty.
type ExecResponse struct {
	ToolUseID       string      `json:"tool_use_id"`
	ExecutionTimeMS int64       `json:"execution_time_ms"`
	ResultBlock     ResultBlock `json:"result_block"`

	// The fields below are codeport's additions to contract v1. Consumers
	// that do not know them ignore them; codeport's own client uses them to
	// recover the port's Result exactly.

	// Outcome is the port.Outcome string ("completed", "timed_out", ...).
	Outcome string `json:"outcome,omitempty"`
	// OutputTruncated reports that stdout or stderr went over the output
	// limit.
	OutputTruncated bool `json:"output_truncated"`
	// StateLost reports that the interpreter was replaced and the session's
	// globals and imports are gone (the workspace survives).
	StateLost bool `json:"state_lost"`
	// Files describes the result block's produced files, in its order,
	// when the backend knows their types and sizes.
	Files []ProducedFile `json:"files,omitempty"`
}

// ResultBlock is the Anthropic-shaped result block nested in ExecResponse.
type ResultBlock struct {
	// Type is "<tool kind>_tool_result".
	Type      string              `json:"type"`
	ToolUseID string              `json:"tool_use_id"`
	Content   CodeExecutionResult `json:"content"`
}

// ResultTypeCodeExecution is the only result payload type contract v1 allows;
// the error variant of Anthropic's union is ruled out.
const ResultTypeCodeExecution = "code_execution_result"

// PathHeader is the response header of GET /sessions/{id}/files?file_id=
// that names the output file's workspace path, percent-encoded as a URL
// path segment (url.PathEscape), since a path may hold bytes a header
// value cannot.
const PathHeader = "X-Codeport-Path"

// EventStreamType is the media type of a streamed exec response (a client
// asks for it with Accept); its events are named by the Event constants.
const EventStreamType = "text/event-stream"

// The events of a streamed exec response. EventStdout and EventStderr carry
// an OutputEvent each, EventResult the ExecResponse of the call (exactly
// the body the call would have had without streaming), EventError an Error
// when the call failed after its events began.
const (
	EventStdout = "stdout"
	EventStderr = "stderr"
	EventResult = "result"
	EventError  = "error"
)

// OutputEvent is the data of a stdout or stderr event: a piece of the
// stream, as the program wrote it.
type OutputEvent struct {
	Text string `json:"text"`
}

// OutputTypeCodeExecution is the type of a produced-file entry.
const OutputTypeCodeExecution = "code_execution_output"

// CodeExecutionResult is the result block's payload: one object, whose own
// Content lists the files the call produced.
type CodeExecutionResult struct {
	Type       string       `json:"type"`
	Stdout     string       `json:"stdout"`
	Stderr     string       `json:"stderr"`
	ReturnCode int          `json:"return_code"`
	Content    []OutputFile `json:"content"`
}

// MarshalJSON fills in the payload type and writes an empty Content as [],
// since the contract requires the list to be present even when empty and a
// consumer may not treat null as a list.
func (c CodeExecutionResult) MarshalJSON() ([]byte, error) {
	type plain CodeExecutionResult
	p := plain(c)
	if p.Type == "" {
		p.Type = ResultTypeCodeExecution
	}
	if p.Content == nil {
		p.Content = []OutputFile{}
	}
	return json.Marshal(p)
}

// OutputFile is a file a call produced, as the result block lists it.
type OutputFile struct {
	Type     string `json:"type"`
	FileID   string `json:"file_id"`
	Filename string `json:"filename"`
}

// ProducedFile is codeport's description of a produced file, beside the
// result block (whose entries stay exactly contract v1's, since gateways
// hand the block to model APIs that refuse fields they do not know): its
// type and size, and for an image a notebook would show
// (port.InlineImageType), the image itself, so that a chart comes back
// with the result that drew it.
type ProducedFile struct {
	FileID    string `json:"file_id"`
	Filename  string `json:"filename"`
	MimeType  string `json:"mime_type"`
	SizeBytes int64  `json:"size_bytes"`
	// Data is the whole file, base64 in JSON; omitted for other files and
	// for images over the backend's inline bound.
	Data []byte `json:"data,omitempty"`
}

// MarshalJSON fills in the entry type when it is empty.
func (f OutputFile) MarshalJSON() ([]byte, error) {
	type plain OutputFile
	if f.Type == "" {
		f.Type = OutputTypeCodeExecution
	}
	return json.Marshal(plain(f))
}

// FileList is the body of a 200 from GET /sessions/{id}/files/list.
type FileList struct {
	Files []FileInfo `json:"files"`
}

// MarshalJSON writes an empty list as [] rather than null.
func (l FileList) MarshalJSON() ([]byte, error) {
	type plain FileList
	p := plain(l)
	if p.Files == nil {
		p.Files = []FileInfo{}
	}
	return json.Marshal(p)
}

// FileInfo describes one workspace entry.
type FileInfo struct {
	// Path is relative to the workspace root, with forward slashes.
	Path      string `json:"path"`
	SizeBytes int64  `json:"size_bytes"`
	// MimeType is omitted when unknown.
	MimeType string `json:"mime_type,omitempty"`
	// ModifiedAt is POSIX seconds; omitted when unknown.
	ModifiedAt float64 `json:"modified_at,omitempty"`
	// IsDir is a codeport addition: contract v1 has no way to tell a
	// directory from a file in a listing, and the port needs it.
	IsDir bool `json:"is_dir"`
}

// FileUploadResult is the body of a 201 from POST /sessions/{id}/files.
type FileUploadResult struct {
	Path      string `json:"path"`
	SizeBytes int64  `json:"size_bytes"`
}

// Error is the body of every error response.
type Error struct {
	// Detail says what went wrong, for people; contract v1 clients (Otari's)
	// read only this.
	Detail string `json:"detail"`
	// Code, when present, names the kind of error for programs: one of
	// ErrorCodes, stable across versions, so that a client need not read
	// the detail to tell a missing session from a missing file. It is
	// codeport's addition; other backends send none.
	Code string `json:"code,omitempty"`
}

// UnmarshalJSON accepts any shape of detail, since the contract leaves it to
// the backend (FastAPI backends send a list of objects for validation
// errors): a string is taken as is, anything else as its compact JSON text.
// A code that is not a string is left out rather than refused: it is not
// one of ours.
func (e *Error) UnmarshalJSON(b []byte) error {
	var raw struct {
		Detail json.RawMessage `json:"detail"`
		Code   json.RawMessage `json:"code"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*e = Error{}
	if c := bytes.TrimSpace(raw.Code); len(c) > 0 && c[0] == '"' {
		if err := json.Unmarshal(c, &e.Code); err != nil {
			return err
		}
	}
	d := bytes.TrimSpace(raw.Detail)
	switch {
	case len(d) == 0 || string(d) == "null":
	case d[0] == '"':
		return json.Unmarshal(d, &e.Detail)
	default:
		var buf bytes.Buffer
		if err := json.Compact(&buf, d); err != nil {
			return err
		}
		e.Detail = buf.String()
	}
	return nil
}

// Capabilities is the body of GET /capabilities: the backend's description
// of itself, from which a gateway builds the tool description a model sees.
type Capabilities struct {
	Backend            string    `json:"backend"`
	Runtime            string    `json:"runtime"`
	RuntimeVersion     string    `json:"runtime_version"`
	Tools              []string  `json:"tools"`
	Packages           []Package `json:"packages"`
	UnavailableModules []string  `json:"unavailable_modules"`
	Limitations        []string  `json:"limitations,omitempty"`
	ShellCommands      []string  `json:"shell_commands,omitempty"`
	Partial            bool      `json:"partial,omitempty"`
	OutputFiles        bool      `json:"output_files,omitempty"`
	InlineImages       int       `json:"inline_images,omitempty"`
	DisplaysValues     bool      `json:"displays_values,omitempty"`
	StreamsOutput      bool      `json:"streams_output,omitempty"`
	Snapshots          bool      `json:"snapshots,omitempty"`
	Network            bool      `json:"network"`
	WorkingDirectory   string    `json:"working_directory"`
	Limits             Limits    `json:"limits"`
	PurposeHint        string    `json:"purpose_hint"`
}

// MarshalJSON writes empty lists as [] rather than null.
func (c Capabilities) MarshalJSON() ([]byte, error) {
	type plain Capabilities
	p := plain(c)
	if p.Tools == nil {
		p.Tools = []string{}
	}
	if p.Packages == nil {
		p.Packages = []Package{}
	}
	if p.UnavailableModules == nil {
		p.UnavailableModules = []string{}
	}
	return json.Marshal(p)
}

// Package is an importable third-party package.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Limits are the limits in force. A zero limit is unknown or unlimited and is
// omitted. Durations are seconds, possibly fractional.
type Limits struct {
	DefaultTimeoutSeconds     float64 `json:"default_timeout_seconds,omitempty"`
	MaxTimeoutSeconds         float64 `json:"max_timeout_seconds,omitempty"`
	MemoryBytes               int64   `json:"memory_bytes,omitempty"`
	OutputBytesPerStream      int64   `json:"output_bytes_per_stream,omitempty"`
	SourceBytes               int64   `json:"source_bytes,omitempty"`
	WorkspaceBytes            int64   `json:"workspace_bytes,omitempty"`
	WorkspaceEntries          int     `json:"workspace_entries,omitempty"`
	FileBytes                 int64   `json:"file_bytes,omitempty"`
	MaxSessions               int     `json:"max_sessions,omitempty"`
	DefaultIdleTimeoutSeconds float64 `json:"default_idle_timeout_seconds,omitempty"`
	MaxIdleTimeoutSeconds     float64 `json:"max_idle_timeout_seconds,omitempty"`
	MaxLifetimeSeconds        float64 `json:"max_lifetime_seconds,omitempty"`
}

// optInt decodes an optional JSON integer: absent or null leaves it unset; a
// whole number, written as an integer or as a float (60, 60.0, 6e1), sets it.
// Anything else is an error. Values beyond int's range saturate, so a huge
// timeout is clamped by the backend like any other too-large one instead of
// failing to parse.
type optInt struct {
	v   int
	set bool
}

func (o *optInt) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = optInt{}
		return nil
	}
	v, err := parseWholeNumber(b)
	if err != nil {
		// A type error, so that encoding/json adds the field's name.
		return &json.UnmarshalTypeError{
			Value: jsonKind(b) + " " + truncateToken(string(b)),
			Type:  reflect.TypeFor[int](),
		}
	}
	*o = optInt{v: v, set: true}
	return nil
}

func (o optInt) ptr() *int {
	if !o.set {
		return nil
	}
	v := o.v
	return &v
}

var errNotInteger = errors.New("not an integer")

// parseWholeNumber parses a JSON token as a whole number.
func parseWholeNumber(b []byte) (int, error) {
	s := string(b)
	if len(s) == 0 || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return 0, fmt.Errorf("%s: %w", truncateToken(s), errNotInteger)
	}
	if n, err := strconv.ParseInt(s, 10, 0); err == nil {
		return int(n), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%s: %w", truncateToken(s), errNotInteger)
	}
	switch {
	case math.IsInf(f, 1) || f >= math.MaxInt:
		return math.MaxInt, nil
	case math.IsInf(f, -1) || f <= math.MinInt:
		return math.MinInt, nil
	case f != math.Trunc(f):
		return 0, fmt.Errorf("%s: %w", truncateToken(s), errNotInteger)
	}
	return int(f), nil
}

// truncateToken keeps error messages short when a client sends a huge token.
func truncateToken(s string) string {
	const limit = 32
	if len(s) > limit {
		return s[:limit] + "..."
	}
	return s
}

// CheckDuplicateKeys refuses a valid JSON value in which an object repeats
// a key, as contract v1's server refuses such a request body (see
// checkDuplicateKeys): with an error wrapping port.ErrInvalidRequest that
// names the key. Another protocol served beside the contract (MCP) uses it
// to hold its messages to the same rule.
func CheckDuplicateKeys(b []byte) error { return checkDuplicateKeys("", b) }

// checkDuplicateKeys refuses a JSON value in which an object repeats a key,
// compared as encoding/json compares a key with a field name: after
// unescaping, and without regard to case. The error wraps
// port.ErrInvalidRequest and names the repeated key by its path from the
// value's root (prefix, when not empty, is the root's own name).
//
// b must be valid JSON, as it is once json.Unmarshal has accepted it: the
// scan relies on that to stay a single pass that allocates nothing for the
// common key (ASCII, no escapes) in the common object (a handful of keys),
// since it runs on every request.
func checkDuplicateKeys(prefix string, b []byte) error {
	s := keyScanner{b: b, path: make([]pathElem, 0, 8)}
	if prefix != "" {
		s.path = append(s.path, pathElem{key: []byte(prefix)})
	}
	s.value()
	if s.dup == nil {
		return nil
	}
	if s.dup.exact {
		return invalidf("duplicate key %q", s.dup.path)
	}
	return invalidf("duplicate key %q: the same key as %q, since keys are matched without regard to case", s.dup.path, s.dup.first)
}

// keyScanner walks a valid JSON value and stops at the first duplicate key.
type keyScanner struct {
	b    []byte
	i    int
	path []pathElem
	dup  *duplicate
}

type duplicate struct {
	path, first string
	exact       bool
}

// pathElem is one step of a key path: an object key, or an array index.
type pathElem struct {
	key     []byte
	index   int
	isIndex bool
}

// manyKeys is the number of keys beyond which an object's keys are looked
// up in a map rather than compared one by one.
const manyKeys = 16

func (s *keyScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value; it returns early, leaving dup set, on a duplicate.
func (s *keyScanner) value() {
	s.space()
	if s.i >= len(s.b) {
		return
	}
	switch s.b[s.i] {
	case '{':
		s.object()
	case '[':
		s.i++
		for n := 0; ; n++ {
			s.space()
			if s.i >= len(s.b) || s.b[s.i] == ']' {
				s.i++
				return
			}
			s.path = append(s.path, pathElem{index: n, isIndex: true})
			s.value()
			s.path = s.path[:len(s.path)-1]
			if s.dup != nil {
				return
			}
			s.space()
			if s.i < len(s.b) && s.b[s.i] == ',' {
				s.i++
			}
		}
	case '"':
		s.str()
	default:
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return
			}
			s.i++
		}
	}
}

func (s *keyScanner) object() {
	s.i++ // '{'
	// The keys so far, decoded; compared one by one with bytes.EqualFold
	// (which is how encoding/json matches a key with a field name) while
	// there are few, then looked up by their folded form.
	var few [manyKeys][]byte
	n := 0
	var many map[string][]byte
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] == '}' {
			s.i++
			return
		}
		key := s.key(s.str())
		var first []byte
		found := false
		if many != nil {
			first, found = many[foldKey(string(key))]
		} else {
			for _, k := range few[:n] {
				if bytes.EqualFold(k, key) {
					first, found = k, true
					break
				}
			}
		}
		s.path = append(s.path, pathElem{key: key})
		if found {
			s.dup = &duplicate{path: s.pathString(), exact: bytes.Equal(first, key)}
			s.path[len(s.path)-1].key = first
			s.dup.first = s.pathString()
			return
		}
		switch {
		case many != nil:
			many[foldKey(string(key))] = key
		case n < manyKeys:
			few[n] = key
			n++
		default:
			many = make(map[string][]byte, 2*manyKeys)
			for _, k := range few {
				many[foldKey(string(k))] = k
			}
			many[foldKey(string(key))] = key
		}
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ':' {
			s.i++
		}
		s.value()
		s.path = s.path[:len(s.path)-1]
		if s.dup != nil {
			return
		}
		s.space()
		if s.i < len(s.b) && s.b[s.i] == ',' {
			s.i++
		}
	}
}

// str scans a string and returns it as written, quotes included.
func (s *keyScanner) str() []byte {
	start := s.i
	s.i++ // opening quote
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return s.b[start:min(s.i, len(s.b))]
		}
		s.i++
	}
	return s.b[start:]
}

// key is what a quoted key decodes to, as encoding/json decodes it
// (escapes resolved, invalid UTF-8 replaced): for a plain key, the bytes
// between its quotes.
func (s *keyScanner) key(quoted []byte) []byte {
	if len(quoted) >= 2 {
		inner := quoted[1 : len(quoted)-1]
		plain := true
		for _, c := range inner {
			if c == '\\' || c >= utf8.RuneSelf {
				plain = false
				break
			}
		}
		if plain {
			return inner
		}
	}
	var k string
	if err := json.Unmarshal(quoted, &k); err != nil {
		return quoted // not valid JSON: compared as written
	}
	return []byte(k)
}

// pathString renders the path, e.g. input.view_range[0]; each key is
// shortened, as the path goes into an error's detail.
func (s *keyScanner) pathString() string {
	var sb strings.Builder
	for i, e := range s.path {
		if e.isIndex {
			sb.WriteString("[" + strconv.Itoa(e.index) + "]")
			continue
		}
		if i > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(truncateToken(string(e.key)))
	}
	return sb.String()
}

// foldKey folds a key as encoding/json folds a key and a field name before
// comparing them (its foldName): ASCII letters to upper case, other runes
// to the upper case of their lower case.
func foldKey(k string) string {
	ascii := true
	for i := 0; i < len(k); i++ {
		if c := k[i]; c >= utf8.RuneSelf || ('a' <= c && c <= 'z') {
			ascii = false
			break
		}
	}
	if ascii {
		return k
	}
	out := make([]byte, 0, len(k))
	for i := 0; i < len(k); {
		if c := k[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(k[i:])
		out = utf8.AppendRune(out, unicode.ToUpper(unicode.ToLower(r)))
		i += n
	}
	return string(out)
}

// SnapshotMediaType is the media type of a sealed session snapshot, the
// body of POST /sessions/{id}/snapshot's answer and of POST
// /snapshots/restore.
const SnapshotMediaType = "application/octet-stream"

// SnapshotTenantHeader is the request header of the snapshot routes that
// names, percent-encoded as a URL path segment (a value that is not is
// taken as it is), whom within the caller's
// credential the snapshot belongs to (a gateway's user, say). The server
// binds a snapshot to its credential and this name; a restore must give
// the same name. Absent is the empty name.
const SnapshotTenantHeader = "X-Codeport-Snapshot-Tenant"

// MaxSnapshotTenantBytes bounds SnapshotTenantHeader's value, as sent.
const MaxSnapshotTenantBytes = 768

// KeepSessionIDHeader is the request header of POST /snapshots/restore
// that asks for the restored session to keep the id it had where it was
// snapshotted (port.SnapshotOptions.SessionID): what moving a session to
// another node needs, so that its clients' ids go on working there.
const KeepSessionIDHeader = "X-Codeport-Session-Id"

// SessionList is the body of GET /sessions: the ids of the sessions the
// node holds, live or hibernated, in no order.
type SessionList struct {
	SessionIDs []string `json:"session_ids"`
}
