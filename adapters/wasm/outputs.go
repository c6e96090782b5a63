package wasm

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/codeport/codeport/internal/bytesize"
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
	var notKept, notCopied, notInline []string
	more := 0
	images, imageBytes := a.cfg.settings.InlineImages, a.cfg.settings.InlineImageBytes
	for _, rel := range paths {
		if len(res.Files) == maxOutputsPerCall {
			more++ // it may be gone; not worth a look to say "at most"
			continue
		}
		info, id, err := s.outputs.Keep(s.ws, rel)
		switch {
		case err == nil:
			f := port.OutputFile{FileID: id, Filename: info.Path, MediaType: info.MimeType, Size: info.Size}
			if strings.HasPrefix(f.MediaType, "image/") {
				budget := imageBytes
				if images == 0 {
					budget = 0
				}
				switch typ, data := inlineImage(s, id, info.Size, budget); {
				case typ == "":
					// Not an image a result carries inline, whatever its name.
				case data == nil:
					notInline = append(notInline, rel)
				default:
					f.MediaType, f.Data = typ, data
					images--
					imageBytes -= int64(len(data))
				}
			}
			res.Files = append(res.Files, f)
		case errors.Is(err, port.ErrFileNotFound), errors.Is(err, port.ErrPathEscapesWorkspace):
			// Removed or renamed away again before the call ended, or a
			// directory now: not a produced file.
		case errors.Is(err, port.ErrFileTooLarge):
			notKept = append(notKept, rel)
		default:
			a.cfg.logger.Warn("keeping an output file failed", "session", s.id, "error", errors.Unwrap(err))
			notCopied = append(notCopied, rel)
		}
	}
	if more > 0 || overflow {
		res.Stderr = appendNote(res.Stderr, fmt.Sprintf("[codeport: this call wrote more files than the %d a result lists (%s not listed); list the workspace to find them]", maxOutputsPerCall, notListed(more, overflow)))
	}
	if len(notInline) > 0 && a.cfg.settings.InlineImages > 0 {
		res.Stderr = appendNote(res.Stderr, fmt.Sprintf("[codeport: %s not in this result (it carries at most %d images, %s in all): %s; fetch by file id]",
			plural(len(notInline), "image is", "images are"), a.cfg.settings.InlineImages, bytesize.Format(a.cfg.settings.InlineImageBytes), someNames(notInline)))
	}
	// A host error is not the quota: saying the limit left no room would
	// send the program looking for room it has.
	for _, n := range []struct {
		names []string
		why   string
	}{{notKept, "the workspace limit leaves no room for a copy"}, {notCopied, "the host could not copy it"}} {
		if len(n.names) > 0 {
			res.Stderr = appendNote(res.Stderr, fmt.Sprintf("[codeport: %s not kept for retrieval by file id: %s; fetch by path instead: %s]",
				plural(len(n.names), "produced file was", "produced files were"), n.why, someNames(n.names)))
		}
	}
}

// someNames quotes the first five names, and counts the rest.
func someNames(names []string) string {
	s := fmt.Sprintf("%q", names[:min(len(names), 5)])
	if len(names) > 5 {
		s += fmt.Sprintf(" and %d more", len(names)-5)
	}
	return s
}

// inlineImage looks at the kept copy id, of size bytes: when its content
// is an image a result carries inline (port.InlineImageType), it returns
// the content's media type, and the bytes if size is within budget. The
// type is the content's, never the name's: a file named .png that holds
// something else is an ordinary file.
func inlineImage(s *session, id string, size, budget int64) (string, []byte) {
	if size <= 0 {
		return "", nil
	}
	rc, _, err := s.outputs.Open(id)
	if err != nil {
		return "", nil
	}
	defer rc.Close()
	head := make([]byte, min(size, 14)) // what InlineImageType reads
	if _, err := io.ReadFull(rc, head); err != nil {
		return "", nil
	}
	typ := port.InlineImageType(head)
	if typ == "" {
		return "", nil
	}
	if size > budget {
		return typ, nil
	}
	data := make([]byte, size)
	copy(data, head)
	if _, err := io.ReadFull(rc, data[len(head):]); err != nil {
		return "", nil
	}
	return typ, data
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
