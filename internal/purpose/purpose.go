// Package purpose writes the text a model is shown about a code execution
// tool, from the bound backend's capability description only, so that it
// never promises a package, a network or a limit the backend does not
// have. binding (stateful sessions) and gateway/responses (a fresh session
// per call) both use it.
package purpose

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/codeport/codeport/internal/bytesize"
	"github.com/codeport/codeport/port"
)

// Options say how the tool is wired, which the capabilities cannot know.
type Options struct {
	// FreshState: every call runs in a new session, so nothing carries
	// over between calls. Otherwise state persists within a session.
	FreshState bool
	// Container: state persists between calls in the same container (an
	// OpenAI-style container), which the text names instead of a session.
	Container bool
	// PythonOnly: the tool the model is shown runs Python code only (the
	// Responses code_interpreter function), so the bash tool, which the
	// backend may offer beside it, is not described.
	PythonOnly bool
}

// Hint is the tool description for c.
func Hint(c port.Capabilities, opts Options) string {
	var b strings.Builder
	runtime := strings.TrimSpace(c.Runtime + " " + c.RuntimeVersion)
	if runtime == "" {
		runtime = "Python"
	}
	fmt.Fprintf(&b, "Runs Python code in a sandboxed %s interpreter and returns what it prints. ", runtime)
	if !c.DisplaysValues {
		// Where values are displayed, the notebook sentence below says so;
		// saying both would contradict it.
		b.WriteString("Print the results you need: only stdout and stderr come back, not the value of the last expression. ")
	}
	if opts.FreshState {
		b.WriteString("Every call starts with fresh Python state: variables, imports and files from earlier calls are gone, so each program must be complete. ")
	} else {
		scope := "session"
		if opts.Container {
			scope = "container"
		}
		fmt.Fprintf(&b, "Variables, imports and files persist between calls in the same %s. ", scope)
	}
	switch {
	case c.Partial && len(c.Packages) == 0:
		b.WriteString("Whether third-party packages can be imported is unknown: import them inside try/except and say what is missing. ")
	case len(c.Packages) == 0:
		b.WriteString("Only the Python standard library is available: no third-party packages (no numpy, pandas, scipy, sympy or matplotlib) and nothing can be installed. ")
	default:
		names := make([]string, 0, len(c.Packages))
		for _, p := range c.Packages {
			if p.Version != "" {
				names = append(names, p.Name+" "+p.Version)
			} else {
				names = append(names, p.Name)
			}
		}
		sort.Strings(names)
		fmt.Fprintf(&b, "Besides the standard library, these packages can be imported: %s; nothing else can be installed. ", strings.Join(names, ", "))
	}
	if len(c.UnavailableModules) > 0 {
		fmt.Fprintf(&b, "These standard modules are not available: %s. ", strings.Join(c.UnavailableModules, ", "))
	}
	for _, l := range c.Limitations {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		b.WriteString(l)
		if !strings.HasSuffix(l, ".") {
			b.WriteString(".")
		}
		b.WriteString(" ")
	}
	if !opts.PythonOnly && slices.Contains(c.Tools, port.ToolBashCodeExecution) && len(c.ShellCommands) > 0 {
		fmt.Fprintf(&b, "The bash tool is a POSIX shell (bash syntax) in the same sandbox, over the same files: it starts no host processes and has no network, and its commands are its builtins and %s. Its python3 runs each command line as a separate program, not in the session's interpreter. ", strings.Join(c.ShellCommands, ", "))
	}
	switch {
	case c.Partial && !c.Network:
		b.WriteString("Do not rely on network access. ")
	case !c.Network:
		b.WriteString("There is no network access. ")
	}
	if c.WorkingDirectory != "" && !opts.FreshState {
		fmt.Fprintf(&b, "Files live in the working directory %s; use relative paths. ", c.WorkingDirectory)
	}
	if c.DisplaysValues {
		b.WriteString("As in a notebook, the value of a cell's last expression is shown (its repr), unless the cell ends with a semicolon; display(obj) shows any object, and images, SVG and HTML that objects render are returned as files. ")
	}
	if c.OutputFiles {
		b.WriteString("Files a call creates or changes in the working directory are returned with its result, so save charts, tables and reports there to hand them over. ")
	}
	if c.OutputFiles && c.InlineImages > 0 {
		b.WriteString("PNG, JPEG, GIF and WebP images among them are shown with the result, as charts are in a notebook. ")
	}
	if c.Limits.DefaultTimeout > 0 {
		fmt.Fprintf(&b, "Each call may run for %s", Duration(c.Limits.DefaultTimeout))
		if c.Limits.MemoryBytes > 0 {
			fmt.Fprintf(&b, " and use %s of memory", bytesize.Format(c.Limits.MemoryBytes))
		}
		b.WriteString(". ")
	}
	return strings.TrimSpace(b.String())
}

// Duration writes d for a person: whole seconds from a second up.
func Duration(d time.Duration) string {
	if d >= time.Second {
		d = d.Round(time.Second)
	}
	return d.String()
}
