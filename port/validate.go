package port

import (
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/codeport/codeport/internal/textclip"
)

// NewToolUseID mints a tool use id for a call that brought none, in the
// contract's "srvtoolu_" form.
func NewToolUseID() string { return "srvtoolu_" + rand.Text() }

// shortID keeps an error message bounded whatever a caller sends.
func shortID(s string) string {
	return textclip.Clip(s, 64)
}

// usableID reports whether id can name a session at all.
func usableID(id string) bool {
	return id != "" && id != "." && id != ".." && len(id) <= MaxIDBytes
}

func unknownSession(id string) error {
	return fmt.Errorf("%w: %q", ErrSessionNotFound, shortID(id))
}

// checkPath refuses a path no workspace can hold; required says whether
// it must name something (a file), rather than default to the root.
func checkPath(path string, required bool) error {
	switch {
	case required && path == "":
		return fmt.Errorf("%w: a path is required", ErrInvalidRequest)
	case len(path) > MaxPathBytes:
		return fmt.Errorf("%w: path is %d bytes; the limit is %d", ErrInvalidRequest, len(path), MaxPathBytes)
	case strings.IndexByte(path, 0) >= 0:
		return fmt.Errorf("%w: path contains a NUL byte", ErrInvalidRequest)
	}
	return nil
}

func checkCreate(req CreateSessionRequest) error {
	if req.IdleTimeout < 0 || req.MaxLifetime < 0 {
		return fmt.Errorf("%w: lifetime hints must not be negative", ErrInvalidRequest)
	}
	return nil
}

// prepareExecute checks req against the driver's info and resolves its
// timeout.
func prepareExecute(info *DriverInfo, req *ExecuteRequest) error {
	if err := checkTool(info, req.Tool); err != nil {
		return err
	}
	if req.Timeout < 0 {
		return fmt.Errorf("%w: timeout must not be negative", ErrInvalidRequest)
	}
	src := info.Limits.SourceBytes
	switch req.Tool {
	case ToolCodeExecution:
		if req.Code == "" {
			return fmt.Errorf("%w: code_execution needs input.code", ErrInvalidRequest)
		}
		if src > 0 && int64(len(req.Code)) > src {
			return fmt.Errorf("%w: code is %d bytes; the limit is %d", ErrInvalidRequest, len(req.Code), src)
		}
		if !utf8.ValidString(req.Code) {
			return fmt.Errorf("%w: code is not valid UTF-8", ErrInvalidRequest)
		}
	case ToolBashCodeExecution:
		if req.Command == "" {
			return fmt.Errorf("%w: bash_code_execution needs input.command", ErrInvalidRequest)
		}
		if src > 0 && int64(len(req.Command)) > src {
			return fmt.Errorf("%w: command is %d bytes; the limit is %d", ErrInvalidRequest, len(req.Command), src)
		}
	case ToolTextEditorExecution:
		if req.Editor == nil {
			return fmt.Errorf("%w: text_editor_code_execution needs input", ErrInvalidRequest)
		}
		if fb := info.Limits.FileBytes; fb > 0 && req.Editor.FileText != nil && int64(len(*req.Editor.FileText)) > fb {
			return fmt.Errorf("%w: file_text is %d bytes; the limit is %d", ErrFileTooLarge, len(*req.Editor.FileText), fb)
		}
		if err := checkPath(req.Editor.Path, false); err != nil {
			return err
		}
	}
	req.Timeout = info.Limits.Timeout(req.Timeout)
	return nil
}

func checkTool(info *DriverInfo, tool ToolKind) error {
	switch {
	case tool == "":
		return fmt.Errorf("%w: no tool kind", ErrUnsupportedTool)
	case !tool.Known() && info.ForwardsUnknownTools:
		return nil
	case !tool.Known(), info.Tools != nil && !slices.Contains(info.Tools, tool):
		offered := make([]string, 0, 3)
		for _, t := range info.tools() {
			offered = append(offered, string(t))
		}
		return fmt.Errorf("%w: %q (this backend runs %s)", ErrUnsupportedTool, shortID(string(tool)), strings.Join(offered, ", "))
	}
	return nil
}

// tools are the kinds the driver runs.
func (i *DriverInfo) tools() []ToolKind {
	if i.Tools != nil {
		return i.Tools
	}
	return []ToolKind{ToolCodeExecution, ToolBashCodeExecution, ToolTextEditorExecution}
}
