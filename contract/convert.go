package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"strings"
	"time"

	"github.com/codeport/codeport/port"
)

// Conversions between the wire types and the port's types. The server uses
// the ...ToPort direction for requests and the ...FromPort direction for
// responses; a contract v1 client uses them the other way round.
//
// Requests are validated on their way to the port, since that is where a
// malformed request must be refused. Responses are converted leniently on
// their way back, since the contract asks consumers to tolerate nulls and
// unknown fields.

// CreateSessionRequestToPort validates the lifetime hints (each absent, or an
// integer >= 1) and converts them. An invalid hint is an error wrapping
// port.ErrInvalidRequest.
func CreateSessionRequestToPort(r CreateSessionRequest) (port.CreateSessionRequest, error) {
	var out port.CreateSessionRequest
	var err error
	if out.IdleTimeout, err = hintToDuration("idle_timeout_seconds", r.IdleTimeoutSeconds); err != nil {
		return port.CreateSessionRequest{}, err
	}
	if out.MaxLifetime, err = hintToDuration("max_lifetime_seconds", r.MaxLifetimeSeconds); err != nil {
		return port.CreateSessionRequest{}, err
	}
	return out, nil
}

// CreateSessionRequestFromPort converts lifetime hints for the wire. A zero
// duration is no hint; a fraction of a second rounds up, because the wire
// carries whole seconds and a hint of 0 would be refused.
func CreateSessionRequestFromPort(r port.CreateSessionRequest) CreateSessionRequest {
	return CreateSessionRequest{
		IdleTimeoutSeconds: ceilSeconds(r.IdleTimeout),
		MaxLifetimeSeconds: ceilSeconds(r.MaxLifetime),
	}
}

// SessionFromPort converts a session for the wire. Bounds are reported in
// whole seconds, rounded down so a client never assumes a session outlives
// its real bound (but at least 1 for a positive bound, which would otherwise
// vanish); unknown bounds and times are omitted.
func SessionFromPort(s port.Session) SessionHandle {
	return SessionHandle{
		SessionID:          s.ID,
		IdleTimeoutSeconds: floorSeconds(s.IdleTimeout),
		MaxLifetimeSeconds: floorSeconds(s.MaxLifetime),
		CreatedAt:          unixSeconds(s.CreatedAt),
		LastActivityAt:     unixSeconds(s.LastActivityAt),
	}
}

// SessionToPort converts a session handle read from the wire. It does not
// check the handle: a client decides what an empty SessionID means.
func SessionToPort(h SessionHandle) port.Session {
	return port.Session{
		ID:             h.SessionID,
		IdleTimeout:    secondsToDuration(float64(h.IdleTimeoutSeconds)),
		MaxLifetime:    secondsToDuration(float64(h.MaxLifetimeSeconds)),
		CreatedAt:      fromUnixSeconds(h.CreatedAt),
		LastActivityAt: fromUnixSeconds(h.LastActivityAt),
	}
}

// ExecRequestToPort validates an exec request and converts it.
//
// It checks what a request must carry whatever the command: a known tool
// kind, timeout_seconds >= 1 when present, and an input object with the
// fields of its tool kind, each of the right JSON type, and no key twice
// (see ExecRequest.UnmarshalJSON). The editor's
// per-command requirements (create needs file_text, ...) are left to the
// editor, which reports them as a failed call the model can read.
//
// An unknown tool kind is an error wrapping port.ErrUnsupportedTool; anything
// else wrong wraps port.ErrInvalidRequest.
func ExecRequestToPort(r ExecRequest) (port.ExecuteRequest, error) {
	if r.Tool == "" {
		return port.ExecuteRequest{}, invalidf("tool is required")
	}
	kind := port.ToolKind(r.Tool)
	if !kind.Known() {
		return port.ExecuteRequest{}, fmt.Errorf("%w: %q", port.ErrUnsupportedTool, truncateToken(r.Tool))
	}
	out := port.ExecuteRequest{Tool: kind, ToolUseID: r.ToolUseID, DisplayValues: r.DisplayValues}
	if r.TimeoutSeconds != nil {
		if *r.TimeoutSeconds < 1 {
			return port.ExecuteRequest{}, invalidf("timeout_seconds must be an integer >= 1")
		}
		out.Timeout = secondsToDuration(float64(*r.TimeoutSeconds))
	}
	input := bytes.TrimSpace(r.Input)
	switch {
	case len(input) == 0 || string(input) == "null":
		return port.ExecuteRequest{}, invalidf("input is required")
	case input[0] != '{':
		return port.ExecuteRequest{}, invalidf("input must be an object, got %s", jsonKind(input))
	}
	// ExecRequest.UnmarshalJSON has checked a decoded request already; a
	// request built in Go has not been, and the input's fields are decoded
	// below, where a duplicate would be resolved silently. (Input that is
	// not JSON is refused below, with the position of the error.)
	if !r.keysChecked && json.Valid(input) {
		if err := checkDuplicateKeys("input", input); err != nil {
			return port.ExecuteRequest{}, err
		}
	}
	switch kind {
	case port.ToolCodeExecution:
		var in struct {
			Code *string `json:"code"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return port.ExecuteRequest{}, jsonError("input", err)
		}
		if in.Code == nil || *in.Code == "" {
			return port.ExecuteRequest{}, invalidf("input.code must be a non-empty string")
		}
		out.Code = *in.Code
	case port.ToolBashCodeExecution:
		var in struct {
			Command *string `json:"command"`
		}
		if err := json.Unmarshal(input, &in); err != nil {
			return port.ExecuteRequest{}, jsonError("input", err)
		}
		if in.Command == nil || *in.Command == "" {
			return port.ExecuteRequest{}, invalidf("input.command must be a non-empty string")
		}
		out.Command = *in.Command
	case port.ToolTextEditorExecution:
		ed, err := editorInputToPort(input)
		if err != nil {
			return port.ExecuteRequest{}, err
		}
		out.Editor = ed
	}
	return out, nil
}

func editorInputToPort(input []byte) (*port.EditorInput, error) {
	var in struct {
		Command    *string         `json:"command"`
		Path       *string         `json:"path"`
		FileText   *string         `json:"file_text"`
		OldStr     *string         `json:"old_str"`
		NewStr     *string         `json:"new_str"`
		InsertLine optInt          `json:"insert_line"`
		ViewRange  json.RawMessage `json:"view_range"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, jsonError("input", err)
	}
	if in.Command == nil {
		return nil, invalidf("input.command is required")
	}
	cmd := port.EditorCommand(*in.Command)
	switch cmd {
	case port.EditorView, port.EditorCreate, port.EditorStrReplace, port.EditorInsert, port.EditorUndoEdit:
	default:
		return nil, invalidf("input.command %q is not one of view, create, str_replace, insert, undo_edit", truncateToken(*in.Command))
	}
	if in.Path == nil || *in.Path == "" {
		return nil, invalidf("input.path must be a non-empty string")
	}
	ed := &port.EditorInput{
		Command:    cmd,
		Path:       *in.Path,
		FileText:   in.FileText,
		OldStr:     in.OldStr,
		NewStr:     in.NewStr,
		InsertLine: in.InsertLine.ptr(),
	}
	if vr := bytes.TrimSpace(in.ViewRange); len(vr) > 0 && string(vr) != "null" {
		var items []json.RawMessage
		if err := json.Unmarshal(vr, &items); err != nil || len(items) != 2 {
			return nil, invalidf("input.view_range must be an array of two integers")
		}
		ed.ViewRange = make([]int, 2)
		for i, item := range items {
			n, err := parseWholeNumber(item)
			if err != nil {
				return nil, invalidf("input.view_range must be an array of two integers")
			}
			ed.ViewRange[i] = n
		}
	}
	return ed, nil
}

// ExecRequestFromPort converts a port request for the wire. It refuses only
// what it cannot express (an unknown tool kind, a missing editor input, a
// negative timeout) and leaves the rest of the validation to the server. A
// timeout with a fraction of a second rounds up to whole seconds.
func ExecRequestFromPort(r port.ExecuteRequest) (ExecRequest, error) {
	var input any
	switch r.Tool {
	case port.ToolCodeExecution:
		input = struct {
			Code string `json:"code"`
		}{r.Code}
	case port.ToolBashCodeExecution:
		input = struct {
			Command string `json:"command"`
		}{r.Command}
	case port.ToolTextEditorExecution:
		if r.Editor == nil {
			return ExecRequest{}, invalidf("text_editor_code_execution needs an editor input")
		}
		input = struct {
			Command    string  `json:"command"`
			Path       string  `json:"path"`
			FileText   *string `json:"file_text,omitempty"`
			OldStr     *string `json:"old_str,omitempty"`
			NewStr     *string `json:"new_str,omitempty"`
			InsertLine *int    `json:"insert_line,omitempty"`
			ViewRange  []int   `json:"view_range,omitempty"`
		}{
			string(r.Editor.Command), r.Editor.Path, r.Editor.FileText,
			r.Editor.OldStr, r.Editor.NewStr, r.Editor.InsertLine, r.Editor.ViewRange,
		}
	default:
		return ExecRequest{}, fmt.Errorf("%w: %q", port.ErrUnsupportedTool, truncateToken(string(r.Tool)))
	}
	if r.Timeout < 0 {
		return ExecRequest{}, invalidf("negative timeout")
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return ExecRequest{}, fmt.Errorf("encoding input: %w", err)
	}
	return ExecRequest{
		Tool:           string(r.Tool),
		Input:          raw,
		TimeoutSeconds: ceilSeconds(r.Timeout),
		ToolUseID:      r.ToolUseID,
		DisplayValues:  r.DisplayValues,
	}, nil
}

// ResultFromPort converts a Result for the wire: the contract's envelope,
// result block and payload, plus codeport's outcome, output_truncated and
// state_lost. A Result without a Tool is reported as code_execution, the
// contract's default tool kind, and one without an Outcome gets the one its
// return code implies (as in ResultToPort), so outcome is always present.
func ResultFromPort(r port.Result) ExecResponse {
	tool := r.Tool
	if tool == "" {
		tool = port.ToolCodeExecution
	}
	outcome := r.Outcome
	if outcome == "" {
		outcome = outcomeOf(r.ReturnCode)
	}
	files := make([]OutputFile, 0, len(r.Files))
	var produced []ProducedFile
	for _, f := range r.Files {
		files = append(files, OutputFile{Type: OutputTypeCodeExecution, FileID: f.FileID, Filename: f.Filename})
		if f.MediaType != "" {
			produced = append(produced, ProducedFile{FileID: f.FileID, Filename: f.Filename, MimeType: f.MediaType, SizeBytes: max(f.Size, 0), Data: f.Data})
		}
	}
	return ExecResponse{
		ToolUseID:       r.ToolUseID,
		ExecutionTimeMS: max(r.Duration.Milliseconds(), 0),
		ResultBlock: ResultBlock{
			Type:      tool.ResultType(),
			ToolUseID: r.ToolUseID,
			Content: CodeExecutionResult{
				Type:       ResultTypeCodeExecution,
				Stdout:     r.Stdout,
				Stderr:     r.Stderr,
				ReturnCode: r.ReturnCode,
				Content:    files,
			},
		},
		Outcome:         string(outcome),
		OutputTruncated: r.OutputTruncated,
		StateLost:       r.StateLost,
		Files:           produced,
	}
}

// ResultToPort converts an exec response read from the wire. It is lenient,
// as the contract asks: nulls have already decoded as zero values, the
// tool_use_id falls back to the block's, and a response without codeport's
// outcome field (another contract v1 backend) gets one derived from its
// return code: completed for 0, program_error otherwise.
func ResultToPort(r ExecResponse) port.Result {
	id := r.ToolUseID
	if id == "" {
		id = r.ResultBlock.ToolUseID
	}
	tool, _ := strings.CutSuffix(r.ResultBlock.Type, "_tool_result")
	if tool == r.ResultBlock.Type {
		tool = ""
	}
	c := r.ResultBlock.Content
	outcome := port.Outcome(r.Outcome)
	if outcome == "" {
		outcome = outcomeOf(c.ReturnCode)
	}
	var files []port.OutputFile
	details := map[string]ProducedFile{}
	for _, d := range r.Files {
		details[d.FileID] = d
	}
	for _, f := range c.Content {
		files = append(files, outputFileToPort(f, details[f.FileID]))
	}
	var d time.Duration
	if r.ExecutionTimeMS > 0 {
		d = secondsToDuration(float64(r.ExecutionTimeMS) / 1000)
	}
	return port.Result{
		ToolUseID:       id,
		Tool:            port.ToolKind(tool),
		Stdout:          c.Stdout,
		Stderr:          c.Stderr,
		ReturnCode:      c.ReturnCode,
		Outcome:         outcome,
		Duration:        d,
		OutputTruncated: r.OutputTruncated,
		StateLost:       r.StateLost,
		Files:           files,
	}
}

// outcomeOf is the outcome a bare return code implies. Timeouts and the like
// cannot be told from a program that exits with the same code, so only the
// two plain outcomes are derived.
func outcomeOf(returnCode int) port.Outcome {
	if returnCode == 0 {
		return port.OutcomeCompleted
	}
	return port.OutcomeProgramError
}

// FileInfoFromPort converts a file description for the wire.
func FileInfoFromPort(f port.FileInfo) FileInfo {
	return FileInfo{
		Path:       f.Path,
		SizeBytes:  max(f.Size, 0),
		MimeType:   f.MimeType,
		ModifiedAt: unixSeconds(f.ModTime),
		IsDir:      f.IsDir,
	}
}

// FileInfoToPort converts a file description read from the wire.
func FileInfoToPort(f FileInfo) port.FileInfo {
	return port.FileInfo{
		Path:     f.Path,
		Size:     f.SizeBytes,
		IsDir:    f.IsDir,
		ModTime:  fromUnixSeconds(f.ModifiedAt),
		MimeType: f.MimeType,
	}
}

// FileListFromPort converts a directory listing for the wire.
func FileListFromPort(files []port.FileInfo) FileList {
	out := FileList{Files: make([]FileInfo, 0, len(files))}
	for _, f := range files {
		out.Files = append(out.Files, FileInfoFromPort(f))
	}
	return out
}

// FileListToPort converts a directory listing read from the wire.
func FileListToPort(l FileList) []port.FileInfo {
	out := make([]port.FileInfo, 0, len(l.Files))
	for _, f := range l.Files {
		out = append(out, FileInfoToPort(f))
	}
	return out
}

// FileUploadResultFromPort converts PutFile's result for the wire.
func FileUploadResultFromPort(f port.FileInfo) FileUploadResult {
	return FileUploadResult{Path: f.Path, SizeBytes: max(f.Size, 0)}
}

// FileUploadResultToPort converts an upload result read from the wire; the
// contract reports only the path and size.
func FileUploadResultToPort(r FileUploadResult) port.FileInfo {
	return port.FileInfo{Path: r.Path, Size: r.SizeBytes}
}

// CapabilitiesFromPort converts a capability description for the wire. A
// negative limit is reported like a zero one: unknown, hence omitted.
func CapabilitiesFromPort(c port.Capabilities) Capabilities {
	out := Capabilities{
		Backend:            c.Backend,
		Runtime:            c.Runtime,
		RuntimeVersion:     c.RuntimeVersion,
		Tools:              make([]string, 0, len(c.Tools)),
		Packages:           make([]Package, 0, len(c.Packages)),
		UnavailableModules: append([]string{}, c.UnavailableModules...),
		Limitations:        append([]string(nil), c.Limitations...),
		ShellCommands:      append([]string(nil), c.ShellCommands...),
		Partial:            c.Partial,
		OutputFiles:        c.OutputFiles,
		InlineImages:       max(c.InlineImages, 0),
		DisplaysValues:     c.DisplaysValues,
		StreamsOutput:      c.StreamsOutput,
		Snapshots:          c.Snapshots,
		Network:            c.Network,
		WorkingDirectory:   c.WorkingDirectory,
		PurposeHint:        c.PurposeHint,
		Limits: Limits{
			DefaultTimeoutSeconds:     positiveSeconds(c.Limits.DefaultTimeout),
			MaxTimeoutSeconds:         positiveSeconds(c.Limits.MaxTimeout),
			MemoryBytes:               max(c.Limits.MemoryBytes, 0),
			OutputBytesPerStream:      max(c.Limits.OutputBytes, 0),
			SourceBytes:               max(c.Limits.SourceBytes, 0),
			WorkspaceBytes:            max(c.Limits.WorkspaceBytes, 0),
			WorkspaceEntries:          max(c.Limits.WorkspaceEntries, 0),
			FileBytes:                 max(c.Limits.FileBytes, 0),
			MaxSessions:               max(c.Limits.MaxSessions, 0),
			DefaultIdleTimeoutSeconds: positiveSeconds(c.Limits.DefaultIdleTimeout),
			MaxIdleTimeoutSeconds:     positiveSeconds(c.Limits.MaxIdleTimeout),
			MaxLifetimeSeconds:        positiveSeconds(c.Limits.MaxLifetime),
		},
	}
	for _, t := range c.Tools {
		out.Tools = append(out.Tools, string(t))
	}
	for _, p := range c.Packages {
		out.Packages = append(out.Packages, Package(p))
	}
	return out
}

// CapabilitiesToPort converts a capability description read from the wire.
func CapabilitiesToPort(c Capabilities) port.Capabilities {
	out := port.Capabilities{
		Backend:            c.Backend,
		Runtime:            c.Runtime,
		RuntimeVersion:     c.RuntimeVersion,
		UnavailableModules: append([]string(nil), c.UnavailableModules...),
		Limitations:        append([]string(nil), c.Limitations...),
		ShellCommands:      append([]string(nil), c.ShellCommands...),
		Partial:            c.Partial,
		OutputFiles:        c.OutputFiles,
		InlineImages:       max(c.InlineImages, 0),
		DisplaysValues:     c.DisplaysValues,
		StreamsOutput:      c.StreamsOutput,
		Snapshots:          c.Snapshots,
		Network:            c.Network,
		WorkingDirectory:   c.WorkingDirectory,
		PurposeHint:        c.PurposeHint,
		Limits: port.Limits{
			DefaultTimeout:     secondsToDuration(c.Limits.DefaultTimeoutSeconds),
			MaxTimeout:         secondsToDuration(c.Limits.MaxTimeoutSeconds),
			MemoryBytes:        c.Limits.MemoryBytes,
			OutputBytes:        c.Limits.OutputBytesPerStream,
			SourceBytes:        c.Limits.SourceBytes,
			WorkspaceBytes:     c.Limits.WorkspaceBytes,
			WorkspaceEntries:   c.Limits.WorkspaceEntries,
			FileBytes:          c.Limits.FileBytes,
			MaxSessions:        c.Limits.MaxSessions,
			DefaultIdleTimeout: secondsToDuration(c.Limits.DefaultIdleTimeoutSeconds),
			MaxIdleTimeout:     secondsToDuration(c.Limits.MaxIdleTimeoutSeconds),
			MaxLifetime:        secondsToDuration(c.Limits.MaxLifetimeSeconds),
		},
	}
	for _, t := range c.Tools {
		out.Tools = append(out.Tools, port.ToolKind(t))
	}
	for _, p := range c.Packages {
		out.Packages = append(out.Packages, port.Package(p))
	}
	return out
}

// invalidf returns an error wrapping port.ErrInvalidRequest.
func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", port.ErrInvalidRequest, fmt.Sprintf(format, args...))
}

// DecodeError turns the error of decoding a request body into one wrapping
// port.ErrInvalidRequest whose message names the offending field in the
// contract's terms rather than Go's. An error already in those terms (a
// duplicate key) is returned as it is.
func DecodeError(err error) error { return jsonError("", err) }

// jsonError is DecodeError for a value at prefix ("input").
func jsonError(prefix string, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.Is(err, port.ErrInvalidRequest):
		return err
	case errors.As(err, &typeErr):
		field := prefix
		if typeErr.Field != "" {
			field = strings.TrimPrefix(prefix+"."+typeErr.Field, ".")
		}
		if field == "" {
			field = "body"
		}
		return fmt.Errorf("%w: %s: invalid value (got %s)", port.ErrInvalidRequest, field, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Errorf("%w: malformed JSON at byte %d", port.ErrInvalidRequest, syntaxErr.Offset)
	}
	return fmt.Errorf("%w: malformed JSON: %w", port.ErrInvalidRequest, err)
}

// jsonKind names the JSON type of a value by its first byte.
func jsonKind(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// hintToDuration validates an optional whole-seconds hint.
func hintToDuration(name string, v *int) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 1 {
		return 0, invalidf("%s must be an integer >= 1", name)
	}
	return secondsToDuration(float64(*v)), nil
}

// secondsToDuration converts seconds, saturating instead of overflowing so a
// huge hint is clamped by the backend like any other too-large one.
func secondsToDuration(s float64) time.Duration {
	switch {
	case s <= 0 || math.IsNaN(s):
		return 0
	case s >= float64(math.MaxInt64)/float64(time.Second):
		return math.MaxInt64
	}
	return time.Duration(math.Round(s * float64(time.Second)))
}

// ceilSeconds is d in whole seconds rounded up, or nil for d <= 0.
func ceilSeconds(d time.Duration) *int {
	if d <= 0 {
		return nil
	}
	s := int(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return &s
}

// positiveSeconds is d in seconds, 0 for d <= 0.
func positiveSeconds(d time.Duration) float64 {
	return max(d.Seconds(), 0)
}

// floorSeconds is d in whole seconds rounded down, at least 1 for d > 0.
func floorSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return max(int(d/time.Second), 1)
}

// unixSeconds is t as POSIX seconds, 0 for the zero time.
func unixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// fromUnixSeconds is the inverse of unixSeconds, to the microsecond or so
// that a float64 carries for present-day times.
func fromUnixSeconds(s float64) time.Time {
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		return time.Time{}
	}
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC()
}

// outputFileToPort reads a produced-file entry and codeport's description
// of it (d, zero when there is none or it names another file). Inline
// bytes are kept only when their content is an image a result may carry
// inline (port.InlineImageType), and then describe the entry: a backend
// cannot pass anything else off as an image, nor give an image a size or
// type its bytes deny.
func outputFileToPort(f OutputFile, d ProducedFile) port.OutputFile {
	o := port.OutputFile{FileID: f.FileID, Filename: f.Filename}
	if d.Filename != f.Filename {
		return o
	}
	if t, _, err := mime.ParseMediaType(d.MimeType); err == nil && d.SizeBytes >= 0 {
		o.MediaType, o.Size = t, d.SizeBytes
	}
	if t := port.InlineImageType(d.Data); t != "" {
		o.MediaType, o.Size, o.Data = t, int64(len(d.Data)), d.Data
	}
	return o
}
