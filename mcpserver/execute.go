package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/gateway/responses"
	"github.com/codeport/codeport/internal/bytesize"
	"github.com/codeport/codeport/port"
)

// destroyTimeout bounds destroying the session of a call that brought
// none, which is done even when the call's context has ended.
const destroyTimeout = 10 * time.Second

// execute runs one tool call: in the session named, or in a session made
// for the call and destroyed after it, whose files are then embedded (as
// far as they fit) before it goes. Output is streamed to the client while
// the call runs.
func (h *handler) execute(ctx context.Context, req *mcp.CallToolRequest, sessionID string, ereq port.ExecuteRequest) (*mcp.CallToolResult, execOutput, error) {
	if err := checkSessionID(sessionID); err != nil {
		return nil, execOutput{}, err
	}
	ephemeral := sessionID == ""
	if ephemeral {
		s, err := h.p.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			return nil, execOutput{}, portError(err, "")
		}
		sessionID = s.ID
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), destroyTimeout)
			defer cancel()
			if err := h.p.DestroySession(dctx, sessionID); err != nil {
				h.log.Warn("mcp: destroying a call's session failed", "session", sessionID, "error", err)
			}
		}()
	}

	st := newStreamer(ctx, req, h.log)
	ereq.OnOutput = st.push
	res, err := h.p.Execute(ctx, sessionID, ereq)
	st.finish() // OnOutput is never called after Execute returns
	if err != nil {
		return nil, execOutput{}, portError(err, sessionID)
	}

	o := responses.OutcomeOf(res, nil)
	out := execOutput{
		Stdout:          res.Stdout,
		Stderr:          res.Stderr,
		ReturnCode:      res.ReturnCode,
		Outcome:         res.Outcome,
		StateLost:       res.StateLost,
		OutputTruncated: res.OutputTruncated,
		Files:           []fileOutput{},
	}
	if out.Outcome == "" {
		out.Outcome = port.OutcomeCompleted
		if res.ReturnCode != 0 {
			out.Outcome = port.OutcomeProgramError
		}
	}
	text := o.FunctionOutput()
	var content []mcp.Content
	if len(res.Files) > 0 {
		var files []mcp.Content
		var notes []string
		out.Files, files, notes = h.collectFiles(ctx, sessionID, ephemeral, res.Files)
		content = append(content, files...)
		if len(notes) > 0 {
			text += "\n" + strings.Join(notes, "\n")
		}
	}
	if !ephemeral && res.Outcome == port.OutcomeSessionLost {
		text += "\nsession: " + sessionID + " is gone; call create_session for a new one."
	}
	content = append([]mcp.Content{&mcp.TextContent{Text: text}}, content...)
	return &mcp.CallToolResult{Content: content}, out, nil
}

// collectFiles describes the files a call produced, embeds those that fit
// and links the others (when their session outlives the call). notes are
// lines for the text a model reads, about the files it was not given.
func (h *handler) collectFiles(ctx context.Context, sessionID string, ephemeral bool, files []port.OutputFile) ([]fileOutput, []mcp.Content, []string) {
	outs := make([]fileOutput, 0, len(files))
	var content []mcp.Content
	var tooLarge, linked, gone []string
	budget := int64(maxEmbedCallBytes)
	for _, f := range files {
		fo := fileOutput{FileID: f.FileID, Filename: f.Filename}
		uri := outputURI(sessionID, f.FileID)
		if !ephemeral {
			fo.URI = uri
		}
		data, info, err := h.producedBytes(ctx, sessionID, f, min(budget, maxEmbedFileBytes))
		switch {
		case info == nil:
			// Its copy was dropped to make room, or the backend failed.
			h.log.Debug("mcp: a produced file cannot be read", "session", sessionID, "error", err)
			fo.URI = ""
			gone = append(gone, f.Filename)
		case err != nil:
			// Readable, but over what may still be embedded.
			fo.MimeType, fo.Size = info.MimeType, info.Size
			if ephemeral {
				tooLarge = append(tooLarge, fmt.Sprintf("%s (%s)", f.Filename, bytesize.Format(info.Size)))
				break
			}
			size := info.Size
			content = append(content, &mcp.ResourceLink{URI: uri, Name: f.Filename, MIMEType: info.MimeType, Size: &size})
			linked = append(linked, f.Filename+" "+uri)
		default:
			budget -= int64(len(data))
			fo.MimeType, fo.Size, fo.Embedded = info.MimeType, int64(len(data)), true
			if typ := port.InlineImageType(data); typ != "" {
				// An image (a chart) as MCP clients show images.
				fo.MimeType = typ
				content = append(content, &mcp.ImageContent{Data: data, MIMEType: typ})
				break
			}
			// For a call without a session the URI names a session that is
			// gone with the call; it still says where the bytes came from.
			content = append(content, &mcp.EmbeddedResource{Resource: contents(uri, info.MimeType, data)})
		}
		outs = append(outs, fo)
	}
	embed := fmt.Sprintf("%s a file, %s a call", bytesize.Format(maxEmbedFileBytes), bytesize.Format(maxEmbedCallBytes))
	var notes []string
	if len(linked) > 0 {
		notes = append(notes, "too large to embed ("+embed+"), read as resources: "+strings.Join(linked, ", "))
	}
	if len(tooLarge) > 0 {
		notes = append(notes, "not returned, too large to embed ("+embed+"; run with a session_id to keep them readable): "+strings.Join(tooLarge, ", "))
	}
	if len(gone) > 0 {
		notes = append(notes, "not returned, no longer available: "+strings.Join(gone, ", "))
	}
	return outs, content, notes
}
