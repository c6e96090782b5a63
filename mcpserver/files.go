package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/codeport/codeport/internal/bytesize"
	"github.com/codeport/codeport/port"
)

// Bounds of the files embedded in a tool result: a result is one JSON-RPC
// message, which a client holds whole, and a model's context is no place
// for large files; larger ones are read as resources.
const (
	maxEmbedFileBytes = 1 << 20
	maxEmbedCallBytes = 4 << 20
)

// defaultResourceBytes bounds a resource read when the port states no
// file limit.
const defaultResourceBytes = 64 << 20

// outputURITemplate is the URI template of produced files; outputURI
// fills it in.
const (
	outputURIPrefix   = "codeport://sessions/"
	outputURITemplate = outputURIPrefix + "{session_id}/outputs/{file_id}"
)

// outputURI names a produced file's version. The ids are escaped down to
// unreserved characters, which is what a URI template's simple variable
// matches.
func outputURI(sessionID, fileID string) string {
	return outputURIPrefix + escape(sessionID) + "/outputs/" + escape(fileID)
}

// parseOutputURI is the inverse of outputURI.
func parseOutputURI(uri string) (sessionID, fileID string, ok bool) {
	rest, ok := strings.CutPrefix(uri, outputURIPrefix)
	if !ok {
		return "", "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 || parts[1] != "outputs" {
		return "", "", false
	}
	s, err1 := url.PathUnescape(parts[0])
	f, err2 := url.PathUnescape(parts[2])
	if err1 != nil || err2 != nil || s == "" || f == "" {
		return "", "", false
	}
	return s, f, true
}

func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// errTooLarge: a file is over what may be read of it here.
var errTooLarge = errors.New("too large")

// readOutputFile reads a produced file of at most limit bytes. info is
// nil when the file cannot be opened (err says why); with info set, err
// is errTooLarge when the file is over limit, or the read's failure.
func (h *handler) readOutputFile(ctx context.Context, sessionID, fileID string, limit int64) ([]byte, *port.FileInfo, error) {
	rc, info, err := h.p.GetOutputFile(ctx, sessionID, fileID)
	if err != nil {
		return nil, nil, err
	}
	defer rc.Close()
	if info.Size > limit {
		return nil, &info, errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	switch {
	case err != nil:
		return nil, &info, err
	case int64(len(data)) > limit:
		return nil, &info, errTooLarge
	}
	return data, &info, nil
}

// producedBytes is readOutputFile for a produced file, whose bytes, when
// the result carried them inline (an image), are not read again.
func (h *handler) producedBytes(ctx context.Context, sessionID string, f port.OutputFile, limit int64) ([]byte, *port.FileInfo, error) {
	if f.Data == nil {
		return h.readOutputFile(ctx, sessionID, f.FileID, limit)
	}
	info := &port.FileInfo{Path: f.Filename, Size: int64(len(f.Data)), MimeType: f.MediaType}
	if info.Size > limit {
		return nil, info, errTooLarge
	}
	return f.Data, info, nil
}

// contents is a resource's contents: text for text/* and JSON media types
// when it is UTF-8, base64 otherwise (the SDK encodes Blob).
func contents(uri, mimeType string, data []byte) *mcp.ResourceContents {
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeType}
	if textual(mimeType) && utf8.Valid(data) {
		c.Text = string(data)
	} else {
		c.Blob = data
		if c.Blob == nil {
			c.Blob = []byte{}
		}
	}
	return c
}

// textual reports whether a media type is text.
func textual(mimeType string) bool {
	mt, _, err := mime.ParseMediaType(mimeType)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// readOutput reads a produced file: resources/read of its URI.
func (h *handler) readOutput(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	sessionID, fileID, ok := parseOutputURI(uri)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	limit := h.caps.Limits.FileBytes
	if limit <= 0 {
		limit = defaultResourceBytes
	}
	data, info, err := h.readOutputFile(ctx, sessionID, fileID, limit)
	switch {
	case info == nil && (errors.Is(err, port.ErrSessionNotFound) || errors.Is(err, port.ErrFileNotFound) || errors.Is(err, port.ErrInvalidRequest)):
		return nil, mcp.ResourceNotFoundError(uri)
	case errors.Is(err, errTooLarge):
		return nil, fmt.Errorf("the file is %s, over the %s a read may return", bytesize.Format(info.Size), bytesize.Format(limit))
	case err != nil:
		return nil, portError(err, sessionID)
	}
	return &mcp.ReadResourceResult{
		// Session files are one client's: no shared cache may keep them.
		Cacheable: mcp.Cacheable{CacheScope: "private"},
		Contents:  []*mcp.ResourceContents{contents(uri, info.MimeType, data)},
	}, nil
}
