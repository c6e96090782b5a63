package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
)

const compileAbout = `Compiles every module a node runs (the Python runtime of the configured
profile, or of every profile with --all-profiles, and the bash tool's
shell) into the compilation cache (--compile-cache-dir), so that a later
serve, exec or worker loads them instead of compiling them: a container
image that runs it at build time starts compiled. Modules the cache holds
already are loaded and reported as such.

`

// compileCommand is `codeport compile`.
func compileCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var all bool
	b := newBinder(nil)
	cfg, rc := commandNoArgs(b, "compile", "compile [flags]", compileAbout, args, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&all, "all-profiles", false, "compile the runtime of every profile, not only the configured one")
	})
	if rc >= 0 {
		return rc
	}
	// The in-process settings: the worker processes of isolation
	// "process" run the same runtime with the same settings, and a
	// remote backend runs nothing here (its fallback would use them).
	ws := wasm.DefaultSettings()
	if s, ok := cfg.Settings("wasm").(*wasm.Settings); ok {
		ws = *s
	}
	if ws.CompilationCacheDir == "" {
		fmt.Fprintln(stderr, "codeport compile: no compilation cache directory (--compile-cache-dir) to compile into")
		return 2
	}
	var profiles []string // the configured one
	if all {
		profiles = wasm.Profiles()
	}
	start := time.Now()
	mods, err := wasm.Precompile(ctx, wasm.NewConfig().WithSettings(ws), profiles...)
	for _, m := range mods {
		name := m.Name
		if m.Profile != "" {
			name += " (profile " + m.Profile + ")"
		}
		verb := "compiled"
		if !m.Compiled {
			verb = "already cached; loaded"
		}
		fmt.Fprintf(stdout, "%-34s %5.1f MB, %s in %.1fs\n", name, float64(m.Bytes)/1e6, verb, m.Duration.Seconds())
	}
	if err != nil {
		fmt.Fprintf(stderr, "codeport compile: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "compilation cache %s ready in %.1fs\n", ws.CompilationCacheDir, time.Since(start).Seconds())
	return 0
}

// reportStartup tells a person waiting on a one-shot command (exec) why
// it waits: once the runtime has not been ready for a second (loading it
// from the cache takes less, so it is being compiled), then every five
// seconds until it is. It returns when r is ready, has failed or ctx ends.
func reportStartup(ctx context.Context, r interface{ WaitReady(context.Context) error }, cacheDir string, stderr io.Writer) {
	ready := make(chan struct{})
	go func() {
		defer close(ready)
		_ = r.WaitReady(ctx)
	}()
	start := time.Now()
	first := time.NewTimer(time.Second)
	defer first.Stop()
	select {
	case <-ready:
		return
	case <-first.C:
	}
	where := "nothing caches it (no --compile-cache-dir)"
	if cacheDir != "" {
		where = "cached in " + cacheDir + " for later runs; `codeport compile` fills it ahead of time"
	}
	fmt.Fprintf(stderr, "codeport: compiling the Python runtime (first run of this build); %s\n", where)
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ready:
			fmt.Fprintf(stderr, "codeport: runtime ready after %.0fs\n", time.Since(start).Seconds())
			return
		case <-tick.C:
			fmt.Fprintf(stderr, "codeport: still compiling (%.0fs)\n", time.Since(start).Seconds())
		}
	}
}

// isTerminal reports whether w is a terminal: exec's standard error is
// the program's, so start-up progress goes there only when a person is
// watching it, never into a pipe or file a script reads.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
