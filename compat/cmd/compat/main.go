// Command compat runs CPython's own test suite (Lib/test of the runtime's
// pinned source) inside sessions of the in-process runtime, one module a
// session, and, with -wheels, slices of numpy's and pandas' suites with
// pytest in sessions of the scientific profile, one test file a session;
// it compares what did not pass with an expectations file: every
// difference that remains, with why. It prints each module's and file's
// counts and exits 1 when a difference is not listed (or, with -strict,
// when a listed one has gone: remove it). make compat fetches the sources
// and wheels and runs it.
//
//	go run ./compat/cmd/compat -lib DIR/Lib/test -wheels DIR -expect compat/expectations.txt
//
// -modules and -files choose what runs; given one of them alone, only
// that kind runs.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/codeport/codeport/adapters/wasm"
	_ "github.com/codeport/codeport/adapters/wasm/scientific"
	"github.com/codeport/codeport/compat"
	"github.com/codeport/codeport/port"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compat", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lib := fs.String("lib", "", "CPython's Lib/test directory (required)")
	wheelsDir := fs.String("wheels", "", "the directory compat/wheels.sh prints: run numpy's and pandas' slices too")
	files := fs.String("files", "", "comma-separated test files of numpy's and pandas' suites (default, with -wheels: "+fmt.Sprint(len(compat.Slices()))+" files)")
	expectPath := fs.String("expect", "", "expectations file: the differences known to remain, ID<TAB>REASON")
	modules := fs.String("modules", "", "comma-separated test modules (default: "+fmt.Sprint(len(compat.Modules()))+" modules of the standard library a model's code uses)")
	parallel := fs.Int("parallel", 2, "modules run at once")
	timeout := fs.Duration("timeout", 15*time.Minute, "time a module may take")
	write := fs.String("write", "", "write an expectations file of this run's differences here, keeping the reasons -expect gives")
	jsonOut := fs.String("json", "", "write every module's result here as JSON")
	strict := fs.Bool("strict", false, "fail too when a listed difference is gone")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *lib == "" || fs.NArg() != 0 || *parallel < 1 || *timeout <= 0 {
		fmt.Fprintln(stderr, "usage: compat -lib DIR [-wheels DIR] [-expect FILE] [-modules a,b] [-files a,b] [-parallel N] [-timeout D] [-write FILE] [-json FILE] [-strict]")
		return 2
	}
	suite, err := compat.Open(*lib)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	list := compat.Modules()
	switch {
	case *modules != "":
		list = strings.Split(*modules, ",")
	case *files != "":
		list = nil
	}
	for _, m := range list {
		if !suite.Has(m) {
			fmt.Fprintf(stderr, "compat: no test module %q in %s\n", m, *lib)
			return 2
		}
	}
	var wheels *compat.Wheels
	var fileList []string
	if *files != "" && *wheelsDir == "" {
		fmt.Fprintln(stderr, "compat: -files needs -wheels")
		return 2
	}
	if *wheelsDir != "" {
		if wheels, err = compat.OpenWheels(*wheelsDir); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		defer wheels.Close()
		switch {
		case *files != "":
			fileList = strings.Split(*files, ",")
		case *modules == "":
			fileList = compat.Slices()
		}
		for _, f := range fileList {
			if !wheels.Has(f) {
				fmt.Fprintf(stderr, "compat: no test file %q in the wheels of %s\n", f, *wheelsDir)
				return 2
			}
		}
	}
	exp := compat.Expectations{}
	if *expectPath != "" {
		f, err := os.Open(*expectPath)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		exp, err = compat.ParseExpectations(f)
		f.Close()
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := wasm.NewConfig().WithTimeouts(*timeout, *timeout).WithMaxSessions(*parallel+1).
		WithSessionLifetimes(*timeout+time.Minute, *timeout+time.Minute, *timeout+time.Minute).WithWarmPool(0, nil)
	// What runs: a test module in a session of the default profile, or a
	// test file in one of the scientific profile.
	type job struct {
		name string
		run  func() (compat.Result, error)
	}
	var jobs []job
	if len(list) > 0 {
		p, err := open(ctx, cfg)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer p.Close()
		for _, m := range list {
			jobs = append(jobs, job{m, func() (compat.Result, error) { return suite.RunModule(ctx, p, m, *timeout) }})
		}
	}
	if len(fileList) > 0 {
		// numpy's and pandas' tests make and write arrays of hundreds of
		// megabytes.
		p, err := open(ctx, cfg.WithProfile("scientific").WithMemoryLimit(1<<30).WithWorkspaceLimit(1<<30))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		defer p.Close()
		for _, f := range fileList {
			jobs = append(jobs, job{f, func() (compat.Result, error) { return wheels.RunFile(ctx, p, f, *timeout) }})
		}
	}

	results := make([]compat.Result, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range *parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i], errs[i] = jobs[i].run()
				mu.Lock()
				report(stderr, results[i], errs[i], jobs[i].name)
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range jobs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			fmt.Fprintf(stderr, "compat: %s: %v\n", jobs[i].name, err)
			return 1
		}
	}
	if ctx.Err() != nil {
		fmt.Fprintln(stderr, "compat: interrupted")
		return 1
	}

	table(stdout, results)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	if *write != "" {
		if err := writeExpectations(*write, results, exp); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	unexpected, fixed := compat.Compare(results, exp)
	why := map[string]string{}
	for _, r := range results {
		for _, id := range r.Differences() {
			why[id] = r.Why(id)
		}
	}
	for _, id := range unexpected {
		fmt.Fprintf(stdout, "UNEXPECTED %s: %s\n", id, why[id])
	}
	for _, id := range fixed {
		fmt.Fprintf(stdout, "GONE %s (listed: %s): remove it from the expectations\n", id, exp[id])
	}
	fmt.Fprintf(stdout, "%d differences not in the expectations, %d listed ones gone\n", len(unexpected), len(fixed))
	if len(unexpected) > 0 || *strict && len(fixed) > 0 {
		return 1
	}
	return 0
}

// open starts an adapter of cfg and waits until it can take sessions.
func open(ctx context.Context, cfg wasm.Config) (*port.Port, error) {
	p, err := wasm.New(cfg)
	if err != nil {
		return nil, err
	}
	if err := p.WaitReady(ctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func report(w io.Writer, r compat.Result, err error, module string) {
	switch {
	case err != nil:
		fmt.Fprintf(w, "%-20s error: %v\n", module, err)
	case r.Outcome != "":
		fmt.Fprintf(w, "%-20s %s\n", module, r.Outcome)
	case r.ImportError != "":
		fmt.Fprintf(w, "%-20s not loaded: %s\n", module, r.ImportError)
	default:
		fmt.Fprintf(w, "%-20s %5d run %3d failed %3d errors %4d skipped %7.1fs\n", module, r.Run, len(r.Failures), len(r.Errors), r.Skipped, r.Seconds)
	}
}

func table(w io.Writer, results []compat.Result) {
	width := len("module")
	for _, r := range results {
		width = max(width, len(r.Module))
	}
	fmt.Fprintf(w, "%-*s %6s %6s %6s %6s %8s  %s\n", width, "module", "run", "fail", "error", "skip", "seconds", "note")
	var run, fail, errs, skip int
	for _, r := range results {
		note := ""
		switch {
		case r.Outcome != "":
			note = "ended with " + string(r.Outcome)
		case r.ImportError != "":
			note = "not loaded: " + r.ImportError
		case r.SkippedModule != "":
			note = "skipped: " + r.SkippedModule
		}
		fmt.Fprintf(w, "%-*s %6d %6d %6d %6d %8.1f  %s\n", width, r.Module, r.Run, len(r.Failures)+len(r.UnexpectedSuccesses), len(r.Errors), r.Skipped, r.Seconds, note)
		run, fail, errs, skip = run+r.Run, fail+len(r.Failures)+len(r.UnexpectedSuccesses), errs+len(r.Errors), skip+r.Skipped
	}
	fmt.Fprintf(w, "%-*s %6d %6d %6d %6d\n", width, "total", run, fail, errs, skip)
}

// writeExpectations writes this run's differences, each with the reason
// exp gives it or else what was observed, grouped by module.
func writeExpectations(path string, results []compat.Result, exp compat.Expectations) error {
	var b strings.Builder
	b.WriteString("# The differences CPython's own test suite finds inside a session, each with\n")
	b.WriteString("# why (make compat). A test id, or a module's name when the module does not\n")
	b.WriteString("# run to its end, then a tab and the reason.\n")
	sorted := slices.Clone(results)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Module < sorted[j].Module })
	for _, r := range sorted {
		d := r.Differences()
		if len(d) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n# %s\n", r.Module)
		for _, id := range d {
			why := exp[id]
			if why == "" {
				why = r.Why(id)
			}
			fmt.Fprintf(&b, "%s\t%s\n", id, strings.ReplaceAll(why, "\n", " "))
		}
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
