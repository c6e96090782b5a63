package editor

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// Defaults for the zero values of Options.
const (
	DefaultMaxHistoryPerFile = 10
	DefaultMaxHistoryBytes   = 16 << 20
	// DefaultMaxViewBytes is the adapters' default output limit of a
	// stream: a view is output for the model to read.
	DefaultMaxViewBytes = 1 << 20
)

// maxReportedLines caps the line numbers listed for an ambiguous old_str.
const maxReportedLines = 20

// Options configures an Editor.
type Options struct {
	// MaxFileBytes caps the size of any file the editor reads or writes;
	// <= 0 means no cap beyond the workspace quota.
	MaxFileBytes int64
	// MaxHistoryBytes caps the total size of the undo snapshots kept, across
	// all files; the oldest are dropped first. 0 means
	// DefaultMaxHistoryBytes, < 0 keeps no history (undo_edit then always
	// reports nothing to undo).
	MaxHistoryBytes int64
	// MaxHistoryPerFile caps the undo snapshots kept per file; <= 0 means
	// DefaultMaxHistoryPerFile.
	MaxHistoryPerFile int
	// MaxViewBytes caps the output of a file's view: a view that would be
	// larger is refused, with the lines that would fit, so that the
	// model asks for them with view_range. Line numbers make a view up to
	// nine times the size of its file (a file of newlines), and a file's
	// size is the program's to choose: it must not decide the host's
	// memory. 0 means DefaultMaxViewBytes, < 0 no cap.
	MaxViewBytes int64
}

// Output is the result of an editor command: ReturnCode 0 with a short
// confirmation (or the view) on Stdout, or ReturnCode 1 with a one-line
// message starting "Error: " on Stderr.
type Output struct {
	Stdout     string
	Stderr     string
	ReturnCode int
}

// Files is the file access an Editor works through, as
// *workspace.Workspace provides it over a host directory. It is an
// interface so that the same editor, with the same outputs, also runs over
// other workspaces (port/porttest keeps one in memory). An implementation
// follows workspace.Workspace's rules: paths are relative to the root or
// absolute under workspace.GuestRoot and are cleaned as workspace.CleanPath
// does, rel is "." for the root, errors wrap the sentinels of package port
// and a quota refusal is a *workspace.QuotaError. hostPath may be empty.
type Files interface {
	Resolve(p string) (hostPath, rel string, err error)
	Stat(p string) (port.FileInfo, error)
	List(dir string) ([]port.FileInfo, error)
	ReadFile(p string, maxBytes int64) ([]byte, error)
	WriteFile(p string, data []byte, maxBytes int64) error
	Remove(p string) error
}

var _ Files = (*workspace.Workspace)(nil)

// Editor runs text_editor_code_execution commands over a workspace. It keeps
// the undo history of the files it edits. An Editor is not safe for
// concurrent use: the caller serialises the calls of a session.
type Editor struct {
	ws      Files
	opts    Options
	history map[string][]snapshot // by workspace-relative path, oldest first
	bytes   int64                 // total len(data) of the snapshots kept
	seq     uint64                // orders snapshots across files
}

// snapshot is the state of a file before an edit.
type snapshot struct {
	seq     uint64
	existed bool // false for a create: undoing it removes the file
	data    []byte
}

// New returns an editor over ws.
func New(ws Files, opts Options) *Editor {
	if opts.MaxHistoryPerFile <= 0 {
		opts.MaxHistoryPerFile = DefaultMaxHistoryPerFile
	}
	if opts.MaxHistoryBytes == 0 {
		opts.MaxHistoryBytes = DefaultMaxHistoryBytes
	}
	if opts.MaxViewBytes == 0 {
		opts.MaxViewBytes = DefaultMaxViewBytes
	}
	return &Editor{ws: ws, opts: opts, history: make(map[string][]snapshot)}
}

// Run runs one command. The error is non-nil only for a malformed request
// (it wraps port.ErrInvalidRequest and names the field at fault); every
// other outcome, failures included, is an Output.
func (e *Editor) Run(in port.EditorInput) (Output, error) {
	if err := validate(in); err != nil {
		return Output{}, err
	}
	rel, fail := e.resolve(in.Path)
	if fail != nil {
		return *fail, nil
	}
	if in.Command != port.EditorView && spelledAsDir(in.Path) {
		// Resolving drops the spelling ("notes/" is "notes"): a file made
		// or changed there would not be where the model meant.
		return failf("the path %s names a directory (it ends in /, /. or /..); %s works on a file: give the file's name", show(in.Path), in.Command), nil
	}
	switch in.Command {
	case port.EditorView:
		return e.view(rel, in.ViewRange), nil
	case port.EditorCreate:
		return e.create(rel, *in.FileText), nil
	case port.EditorStrReplace:
		return e.strReplace(rel, *in.OldStr, *in.NewStr), nil
	case port.EditorInsert:
		return e.insert(rel, *in.InsertLine, *in.NewStr), nil
	default: // port.EditorUndoEdit; validate allows nothing else
		return e.undo(rel), nil
	}
}

func validate(in port.EditorInput) error {
	missing := func(field string) error {
		return fmt.Errorf("editor: %s requires %s: %w", in.Command, field, port.ErrInvalidRequest)
	}
	switch in.Command {
	case port.EditorView, port.EditorCreate, port.EditorStrReplace, port.EditorInsert, port.EditorUndoEdit:
	case "":
		return fmt.Errorf("editor: missing command: %w", port.ErrInvalidRequest)
	default:
		return fmt.Errorf("editor: unknown command %q: %w", in.Command, port.ErrInvalidRequest)
	}
	if in.Path == "" {
		return missing("path")
	}
	switch in.Command {
	case port.EditorView:
		if in.ViewRange != nil && len(in.ViewRange) != 2 {
			return fmt.Errorf("editor: view_range must be two integers [start, end], got %d: %w", len(in.ViewRange), port.ErrInvalidRequest)
		}
	case port.EditorCreate:
		if in.FileText == nil {
			return missing("file_text")
		}
	case port.EditorStrReplace:
		if in.OldStr == nil {
			return missing("old_str")
		}
		if in.NewStr == nil {
			return missing("new_str")
		}
	case port.EditorInsert:
		if in.InsertLine == nil {
			return missing("insert_line")
		}
		if in.NewStr == nil {
			return missing("new_str")
		}
	}
	return nil
}

// spelledAsDir reports whether p names a directory by its spelling: it
// ends in "/", "/." or "/..".
func spelledAsDir(p string) bool {
	switch p[strings.LastIndexByte(p, '/')+1:] {
	case "", ".", "..":
		return true
	}
	return false
}

// resolve maps the request path to a workspace-relative one. A path
// starting with ~ is refused: the model's code and shell read it as the
// home directory, and taken as a directory of the workspace named "~" it
// would put the file where they do not look for it.
func (e *Editor) resolve(p string) (string, *Output) {
	if (p == "~" || strings.HasPrefix(p, "~/")) && len(p) <= workspace.MaxPathBytes {
		out := failf("the path %s starts with ~, which the editor does not expand: give the path relative to the working directory %s, or absolute under it (./~ names a directory called ~)",
			show(p), workspace.GuestRoot)
		return "", &out
	}
	_, rel, err := e.ws.Resolve(p)
	if err == nil {
		return rel, nil
	}
	var out Output
	switch {
	case errors.Is(err, port.ErrPathEscapesWorkspace):
		out = failf("the path %s is outside the workspace: paths are relative to the working directory %s (absolute paths must be under it) and may not go through symbolic links",
			show(p), workspace.GuestRoot)
	case len(p) > workspace.MaxPathBytes:
		out = failf("the path is %d bytes long, over the limit of %d", len(p), workspace.MaxPathBytes)
	case errors.Is(err, workspace.ErrNotUTF8):
		out = failf("the path %s is not valid UTF-8", show(p))
	default:
		out = e.fsFail(".", err)
	}
	return "", &out
}

func (e *Editor) view(rel string, viewRange []int) Output {
	info, err := e.ws.Stat(rel)
	if err != nil {
		return e.fsFail(rel, err)
	}
	if info.IsDir {
		if viewRange != nil {
			return failf("view_range cannot be used with a directory: %s is one", show(rel))
		}
		return e.viewDir(rel)
	}
	text, fail := e.load(rel)
	if fail != nil {
		return *fail
	}
	n := lineCount(text)
	start, end := 1, n
	if viewRange != nil {
		s, t := viewRange[0], viewRange[1]
		switch {
		case s < 1:
			return failf("invalid view_range [%d, %d]: lines are numbered from 1", s, t)
		case s > n:
			return failf("invalid view_range [%d, %d]: %s has %d lines", s, t, show(rel), n)
		case t == -1:
			t = n
		case t < s:
			return failf("invalid view_range [%d, %d]: the end must not be before the start (use -1 for the end of the file)", s, t)
		case t > n:
			return failf("invalid view_range [%d, %d]: %s has %d lines (use -1 for the end of the file)", s, t, show(rel), n)
		}
		start, end = s, t
	}
	var b strings.Builder
	limit := e.opts.MaxViewBytes
	for i, off := start, lineOffset(text, start); i <= end; i++ {
		l := lineAtOffset(text, off)
		off = l.next
		// "%6d\t%s\n": the number takes at least six bytes.
		size := int64(max(len(strconv.Itoa(i)), 6) + 1 + l.end - l.start + 1)
		if limit > 0 && int64(b.Len())+size > limit {
			if i == start {
				return failf("line %d of %s is %d bytes long: its view is over the editor's output limit of %d bytes", i, show(rel), l.end-l.start, limit)
			}
			return failf("the view of lines %d-%d of %s is over the editor's output limit of %d bytes: view fewer lines at a time with view_range, such as [%d, %d]",
				start, end, show(rel), limit, start, i-1)
		}
		fmt.Fprintf(&b, "%6d\t%s\n", i, text[l.start:l.end])
	}
	return Output{Stdout: b.String()}
}

// viewDir lists the files and directories under rel, two levels deep,
// without hidden entries, as paths relative to the workspace root, one a
// line: a path that is not printable (a name may hold a newline) is
// quoted, as show does, so that it cannot pass for entries of its own. A
// listing over Options.MaxViewBytes is refused: there may be as many
// paths as the workspace's entry limit, each up to 4 KiB long.
func (e *Editor) viewDir(rel string) Output {
	top, err := e.ws.List(rel)
	if err != nil {
		return e.fsFail(rel, err)
	}
	var paths []string
	for _, entry := range top {
		if hidden(entry.Path) {
			continue
		}
		if !entry.IsDir {
			paths = append(paths, entry.Path)
			continue
		}
		paths = append(paths, entry.Path+"/")
		sub, err := e.ws.List(entry.Path)
		if err != nil {
			continue // gone or changed since the first listing
		}
		for _, s := range sub {
			switch {
			case hidden(s.Path):
			case s.IsDir:
				paths = append(paths, s.Path+"/")
			default:
				paths = append(paths, s.Path)
			}
		}
	}
	slices.Sort(paths)
	var b strings.Builder
	fmt.Fprintf(&b, "Files and directories up to 2 levels deep in %s, excluding hidden items:\n", show(guestPath(rel)))
	if len(paths) == 0 {
		b.WriteString("(empty directory)\n")
	}
	limit := e.opts.MaxViewBytes
	for _, p := range paths {
		line := show(p)
		if limit > 0 && int64(b.Len()+len(line)+1) > limit {
			return failf("the listing of %s (%d entries) is over the editor's output limit of %d bytes: view its subdirectories one at a time",
				show(guestPath(rel)), len(paths), limit)
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return Output{Stdout: b.String()}
}

func (e *Editor) create(rel, text string) Output {
	info, err := e.ws.Stat(rel)
	switch {
	case err == nil && info.IsDir:
		return failf("%s is a directory", show(rel))
	case err == nil:
		return failf("%s already exists; create only makes new files (edit it with str_replace or insert)", show(rel))
	case !errors.Is(err, port.ErrFileNotFound):
		return e.fsFail(rel, err)
	}
	if limit := e.opts.MaxFileBytes; limit > 0 && int64(len(text)) > limit {
		return failf("file_text is %d bytes, over the editor's limit of %d bytes", len(text), limit)
	}
	if err := e.ws.WriteFile(rel, []byte(text), e.opts.MaxFileBytes); err != nil {
		return e.fsFail(rel, err)
	}
	e.record(rel, snapshot{existed: false})
	return okf("File created successfully at: %s\n", show(rel))
}

func (e *Editor) strReplace(rel, oldStr, newStr string) Output {
	if oldStr == "" {
		return failf("old_str is empty; it must be text that occurs exactly once in %s", show(rel))
	}
	text, fail := e.load(rel)
	if fail != nil {
		return *fail
	}
	count, offsets := occurrences(text, oldStr, maxReportedLines)
	if count == 0 && strings.Contains(oldStr, "\n") && strings.Contains(text, "\r\n") {
		// A CRLF file, and old_str written with plain newlines.
		crlfOld := toEOL(oldStr, "\r\n")
		if c, o := occurrences(text, crlfOld, maxReportedLines); c > 0 {
			count, offsets = c, o
			oldStr = crlfOld
		}
	}
	switch {
	case count == 0:
		return failf("old_str was not found in %s; it must match the file exactly, including whitespace and indentation", show(rel))
	case count > 1:
		var lines []string
		for _, off := range offsets {
			l := strconv.Itoa(lineAt(text, off))
			if len(lines) == 0 || lines[len(lines)-1] != l {
				lines = append(lines, l)
			}
		}
		times, more := strconv.Itoa(count)+" times", ""
		if count > len(offsets) { // occurrences stopped counting
			times, more = fmt.Sprintf("more than %d times", len(offsets)), ", ..."
		}
		return failf("old_str occurs %s in %s (at lines %s%s); it must occur exactly once, so include more surrounding text to make it unique",
			times, show(rel), strings.Join(lines, ", "), more)
	}
	// The new lines end as the file's do, whatever old_str matched.
	newStr = toEOL(newStr, eolOf(text))
	off := offsets[0]
	updated := text[:off] + newStr + text[off+len(oldStr):]
	if fail := e.save(rel, text, updated); fail != nil {
		return *fail
	}
	first := lineAt(updated, off)
	if newStr == "" {
		return okf("The file %s has been edited: old_str deleted at line %d.\n", show(rel), first)
	}
	if last := lineAt(updated, off+len(newStr)-1); last > first {
		return okf("The file %s has been edited: old_str replaced, now lines %d-%d.\n", show(rel), first, last)
	}
	return okf("The file %s has been edited: old_str replaced at line %d.\n", show(rel), first)
}

func (e *Editor) insert(rel string, after int, newStr string) Output {
	text, fail := e.load(rel)
	if fail != nil {
		return *fail
	}
	n := lineCount(text)
	if after < 0 || after > n {
		return failf("insert_line %d is out of range: %s has %d lines, so insert_line must be between 0 and %d", after, show(rel), n, n)
	}
	eol := eolOf(text)
	// The inserted lines, without a final terminator, in the file's style.
	ins := strings.TrimSuffix(strings.TrimSuffix(newStr, "\n"), "\r")
	ins = toEOL(ins, eol)
	var updated string
	switch {
	case after < n:
		off := lineOffset(text, after+1)
		if after == 0 && strings.HasPrefix(text, byteOrderMark) {
			// The mark belongs to the file, not its first line: a
			// mark in the middle of a file is a stray character to
			// Python, and csv reads it into the first field.
			off = len(byteOrderMark)
		}
		updated = text[:off] + ins + eol + text[off:]
	case n == 0 || strings.HasSuffix(text, "\n"):
		updated = text + ins + eol
	default: // after the last line, which has no terminator: keep it so
		updated = text + eol + ins
	}
	if fail := e.save(rel, text, updated); fail != nil {
		return *fail
	}
	count := strings.Count(ins, "\n") + 1
	noun := "lines"
	if count == 1 {
		noun = "line"
	}
	if after == 0 {
		return okf("Inserted %d %s at the top of %s.\n", count, noun, show(rel))
	}
	return okf("Inserted %d %s after line %d of %s.\n", count, noun, after, show(rel))
}

func (e *Editor) undo(rel string) Output {
	h := e.history[rel]
	if len(h) == 0 {
		return failf("no edit history for %s: nothing to undo", show(rel))
	}
	last := h[len(h)-1]
	var msg string
	if last.existed {
		if err := e.ws.WriteFile(rel, last.data, e.opts.MaxFileBytes); err != nil {
			return e.fsFail(rel, err)
		}
		msg = fmt.Sprintf("Last edit to %s undone.\n", show(rel))
	} else {
		err := e.ws.Remove(rel)
		if err != nil && !errors.Is(err, port.ErrFileNotFound) {
			return e.fsFail(rel, err)
		}
		msg = fmt.Sprintf("Undid the creation of %s: the file was removed.\n", show(rel))
	}
	h[len(h)-1] = snapshot{}
	if len(h) == 1 {
		delete(e.history, rel)
	} else {
		e.history[rel] = h[:len(h)-1]
	}
	e.bytes -= int64(len(last.data))
	return Output{Stdout: msg}
}

// load reads the text file rel for an edit or a view.
func (e *Editor) load(rel string) (string, *Output) {
	fail := func(o Output) (string, *Output) { return "", &o }
	info, err := e.ws.Stat(rel)
	if err != nil {
		return fail(e.fsFail(rel, err))
	}
	if info.IsDir {
		return fail(failf("%s is a directory, not a file", show(rel)))
	}
	if limit := e.opts.MaxFileBytes; limit > 0 && info.Size > limit {
		return fail(failf("%s is %d bytes, over the editor's limit of %d bytes", show(rel), info.Size, limit))
	}
	data, err := e.ws.ReadFile(rel, e.opts.MaxFileBytes)
	if err != nil {
		return fail(e.fsFail(rel, err))
	}
	if !isText(data) {
		return fail(failf("%s is not a UTF-8 text file; the editor only handles text", show(rel)))
	}
	return string(data), nil
}

// save writes the edited text of rel and records old for undo.
func (e *Editor) save(rel, old, updated string) *Output {
	if limit := e.opts.MaxFileBytes; limit > 0 && int64(len(updated)) > limit {
		out := failf("the edit would make %s %d bytes, over the editor's limit of %d bytes", show(rel), len(updated), limit)
		return &out
	}
	if err := e.ws.WriteFile(rel, []byte(updated), e.opts.MaxFileBytes); err != nil {
		out := e.fsFail(rel, err)
		return &out
	}
	e.record(rel, snapshot{existed: true, data: []byte(old)})
	return nil
}

// record keeps s as the newest undo snapshot of rel, then drops snapshots
// over the limits, oldest first.
func (e *Editor) record(rel string, s snapshot) {
	limit := e.opts.MaxHistoryBytes
	if limit < 0 {
		return
	}
	size := int64(len(s.data))
	if size > limit {
		// It cannot be kept, and undo must not skip an edit: forget the
		// file's older history too.
		e.forget(rel)
		return
	}
	e.seq++
	s.seq = e.seq
	e.history[rel] = append(e.history[rel], s)
	e.bytes += size
	for len(e.history[rel]) > e.opts.MaxHistoryPerFile {
		e.dropOldest(rel)
	}
	for e.bytes > limit {
		oldest := ""
		var seq uint64
		for p, h := range e.history {
			if oldest == "" || h[0].seq < seq {
				oldest, seq = p, h[0].seq
			}
		}
		e.dropOldest(oldest)
	}
}

// dropOldest drops the oldest snapshot of rel.
func (e *Editor) dropOldest(rel string) {
	h := e.history[rel]
	e.bytes -= int64(len(h[0].data))
	if len(h) == 1 {
		delete(e.history, rel)
		return
	}
	e.history[rel] = slices.Delete(h, 0, 1)
}

// forget drops the whole history of rel.
func (e *Editor) forget(rel string) {
	for _, s := range e.history[rel] {
		e.bytes -= int64(len(s.data))
	}
	delete(e.history, rel)
}

// fsFail turns a workspace error into a failed Output.
func (e *Editor) fsFail(rel string, err error) Output {
	var qe *workspace.QuotaError
	var le *workspace.EntryLimitError
	var ne *workspace.NameTooLongError
	switch {
	case errors.As(err, &qe):
		return failf("not enough room in the workspace quota of %d bytes (shared with /tmp; %d bytes in use): delete files to make room", qe.Limit, qe.Used)
	case errors.As(err, &le):
		return failf("the workspace holds its limit of %d files and directories (shared with /tmp): delete some to make room", le.Limit)
	case errors.As(err, &ne):
		return failf("a name in the path is %d bytes long, over the limit of %d", ne.Bytes, ne.Limit)
	case errors.Is(err, port.ErrFileTooLarge):
		return failf("%s would be over the editor's limit of %d bytes", show(rel), e.opts.MaxFileBytes)
	case errors.Is(err, port.ErrFileNotFound):
		return failf("%s does not exist", show(rel))
	case errors.Is(err, port.ErrIsDirectory):
		return failf("%s is a directory, not a file", show(rel))
	case errors.Is(err, port.ErrPathEscapesWorkspace):
		return failf("the path %s is outside the workspace: paths are relative to the working directory %s and may not go through symbolic links",
			show(rel), workspace.GuestRoot)
	}
	msg := strings.TrimPrefix(err.Error(), "workspace: ")
	msg = strings.TrimSuffix(msg, ": "+port.ErrInvalidRequest.Error())
	return failf("%s", strings.Join(strings.Fields(msg), " "))
}

func okf(format string, args ...any) Output {
	return Output{Stdout: fmt.Sprintf(format, args...)}
}

// failf returns a failed Output with a one-line message.
func failf(format string, args ...any) Output {
	msg := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
	return Output{Stderr: "Error: " + msg + "\n", ReturnCode: 1}
}

// show renders a path for a message: as is when printable, quoted
// otherwise, so that a message stays on one line.
func show(p string) string {
	if p == "" || strings.IndexFunc(p, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(p)
	}
	return p
}

func guestPath(rel string) string {
	if rel == "." {
		return workspace.GuestRoot
	}
	return workspace.GuestRoot + "/" + rel
}

func hidden(rel string) bool {
	return strings.HasPrefix(path.Base(rel), ".")
}
