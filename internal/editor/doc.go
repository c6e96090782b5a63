// Package editor implements the contract's text_editor_code_execution tool
// over a session workspace: the commands view, create, str_replace, insert
// and undo_edit.
//
// All file access goes through a *workspace.Workspace (or another Files with
// its rules, such as port/porttest's in-memory one), so paths are confined
// to the workspace (relative to its root, or absolute under /workspace,
// with no symbolic link followed; one starting with ~, which the sandbox
// reads as the home directory, is refused) and every write is charged to
// the session's quota. Files are handled as UTF-8 text with "\n" or "\r\n"
// line endings; a file's line endings, its byte order mark and whether it
// ends with a newline are kept by edits.
//
// Run returns an error only for a malformed request (unknown command, a
// required field missing), which a gateway reports as HTTP 422. Everything
// else, including a refused edit, is an Output: ReturnCode 0 and a short
// confirmation or the view on Stdout, or ReturnCode 1 and a one-line
// "Error: ..." on Stderr, for the model to read.
//
// Usage:
//
//	ed := editor.New(ws, editor.Options{MaxFileBytes: 10 << 20})
//	text := "print('hi')\n"
//	out, err := ed.Run(port.EditorInput{
//		Command:  port.EditorCreate,
//		Path:     "hello.py",
//		FileText: &text,
//	})
//	if err != nil {
//		return err // errors.Is(err, port.ErrInvalidRequest)
//	}
//	fmt.Print(out.Stdout, out.Stderr) // "File created successfully at: hello.py"
//
// A view's output is bounded by Options.MaxViewBytes, which is not the
// file's size: a larger view is refused with a range of lines that fits.
//
// An Editor keeps the undo history of the files it edits, within
// Options.MaxHistoryBytes and Options.MaxHistoryPerFile, and is not safe for
// concurrent use.
package editor
