package wasm

import (
	"errors"
	"fmt"

	"github.com/codeport/codeport/port"
)

// Bounds of the files a result lists. A call that writes more files than
// a result lists (unpacking an archive) says so in its stderr; the files
// are in the workspace either way.
const (
	// maxOutputsPerCall bounds the files one result lists, and copies.
	maxOutputsPerCall = 100
	// maxKeptOutputs bounds the copies a session keeps for GetOutputFile;
	// beyond it the oldest are dropped (as they are when the quota needs
	// their room).
	maxKeptOutputs = 1000
)

// collectOutputs lists in res the files of the workspace that the call
// created or changed (recorded by the workspace as they were written, so
// no walk of the tree), keeping a copy of each for GetOutputFile. What it
// cannot list it says in res.Stderr.
func (a *adapter) collectOutputs(s *session, res *port.Result) {
	paths, overflow := s.ws.Changes().Take()
	var notKept []string
	more := 0
	for _, rel := range paths {
		if len(res.Files) == maxOutputsPerCall {
			more++ // it may be gone; not worth a look to say "at most"
			continue
		}
		info, id, err := s.outputs.Keep(s.ws, rel)
		switch {
		case err == nil:
			res.Files = append(res.Files, port.OutputFile{FileID: id, Filename: info.Path})
		case errors.Is(err, port.ErrFileNotFound), errors.Is(err, port.ErrPathEscapesWorkspace):
			// Removed or renamed away again before the call ended, or a
			// directory now: not a produced file.
		case errors.Is(err, port.ErrFileTooLarge):
			notKept = append(notKept, rel)
		default:
			a.cfg.logger.Warn("keeping an output file failed", "session", s.id, "error", errors.Unwrap(err))
			notKept = append(notKept, rel)
		}
	}
	if more > 0 || overflow {
		res.Stderr = appendNote(res.Stderr, fmt.Sprintf("[codeport: this call wrote more files than the %d a result lists (%s not listed); list the workspace to find them]", maxOutputsPerCall, notListed(more, overflow)))
	}
	if len(notKept) > 0 {
		names := fmt.Sprintf("%q", notKept[:min(len(notKept), 5)])
		if len(notKept) > 5 {
			names += fmt.Sprintf(" and %d more", len(notKept)-5)
		}
		res.Stderr = appendNote(res.Stderr, fmt.Sprintf("[codeport: %s not kept for retrieval by file id: the workspace limit leaves no room for a copy; fetch by path instead: %s]", plural(len(notKept), "produced file was", "produced files were"), names))
	}
}

func notListed(more int, overflow bool) string {
	if overflow {
		return fmt.Sprintf("more than %d", more)
	}
	return fmt.Sprint(more)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
