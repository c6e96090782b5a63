package port

import "time"

// Capabilities is a backend's honest description of itself: what runs the
// code, what the code can use, and the limits in force. Gateways build the
// tool description a model sees from it (PurposeHint), so it must never
// promise what the backend cannot do.
type Capabilities struct {
	// Backend names the adapter: "wasm", "http", "subprocess".
	Backend string
	// Runtime and RuntimeVersion name the interpreter ("CPython", "3.13.5").
	Runtime        string
	RuntimeVersion string
	// Tools lists the tool kinds that run for real on this backend.
	Tools []ToolKind
	// Packages lists third-party packages importable beyond the standard
	// library; empty means standard library only.
	Packages []Package
	// UnavailableModules lists standard-library modules this build lacks,
	// so a model is told rather than left to discover it.
	UnavailableModules []string
	// Limitations are other things a program cannot do here, in a
	// sentence each ("threads cannot be started").
	Limitations []string
	// ShellCommands lists the commands the bash tool provides besides the
	// shell's builtins, sorted; empty when the backend does not say (or
	// offers no bash tool).
	ShellCommands []string
	// DisplaysValues reports whether a code_execution cell's last
	// expression is displayed by default, as in Jupyter: its repr (unless
	// it is None) on stdout, and an image, SVG or HTML representation, as
	// display() calls are, as a produced file. A call can ask otherwise
	// (ExecuteRequest.DisplayValues).
	DisplaysValues bool
	// StreamsOutput reports whether a code_execution call's output (and
	// a bash call's stdout) reaches ExecuteRequest.OnOutput while the call
	// runs, rather than in one chunk per stream when it ends.
	StreamsOutput bool
	// OutputFiles reports whether results list the files each call
	// produced (Result.Files), each retrievable by GetOutputFile.
	OutputFiles bool
	// InlineImages is the number of images (InlineImageType) a result
	// carries inline at most (OutputFile.Data); 0 when results carry none.
	InlineImages int
	// Snapshots reports whether sessions can be saved and restored
	// (SessionSnapshots). The Port fills it in: it depends on the
	// driver and on the Port's configuration (a snapshot key).
	Snapshots bool
	// Network reports whether programs can open network connections.
	Network bool
	// WorkingDirectory is where files live, as the program sees it.
	WorkingDirectory string
	// Limits are the limits in force.
	Limits Limits
	// Partial is set when the description was not reported by the backend
	// but made up from what the client knows: then Packages and Network
	// say nothing, and a hint must not promise or deny them.
	Partial bool
	// PurposeHint is the text a gateway shows a model about this tool.
	PurposeHint string
}

// Package is an importable third-party package.
type Package struct {
	Name    string
	Version string
}

// Limits are a backend's limits. A zero value means unknown or unlimited.
type Limits struct {
	DefaultTimeout     time.Duration
	MaxTimeout         time.Duration
	MemoryBytes        int64
	OutputBytes        int64
	SourceBytes        int64
	WorkspaceBytes     int64
	WorkspaceEntries   int // files and directories per session, temporary ones included
	FileBytes          int64
	MaxSessions        int
	DefaultIdleTimeout time.Duration
	MaxIdleTimeout     time.Duration
	MaxLifetime        time.Duration
}

// Timeout is the timeout a call asking for requested runs under: the
// default when it asks for none, and never more than the maximum (a
// larger request is clamped, not refused). A zero MaxTimeout means no
// ceiling.
func (l Limits) Timeout(requested time.Duration) time.Duration {
	return bound(requested, l.DefaultTimeout, l.MaxTimeout)
}

// IdleTimeout is the idle timeout of a session whose request hints hint:
// the default without a hint, and a hint clamped down to the maximum,
// never up.
func (l Limits) IdleTimeout(hint time.Duration) time.Duration {
	return bound(hint, l.DefaultIdleTimeout, l.MaxIdleTimeout)
}

// Lifetime is the maximum lifetime of a session whose request hints hint:
// the maximum without a hint, and a hint clamped down to it, never up.
func (l Limits) Lifetime(hint time.Duration) time.Duration {
	return bound(hint, l.MaxLifetime, l.MaxLifetime)
}

// bound applies a requested duration: def when none is asked for, never
// more than ceiling (0: no ceiling).
func bound(asked, def, ceiling time.Duration) time.Duration {
	if asked <= 0 {
		asked = def
	}
	if ceiling > 0 && (asked <= 0 || asked > ceiling) {
		return ceiling
	}
	return asked
}
