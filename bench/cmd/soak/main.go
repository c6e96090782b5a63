// Command soak runs a codeport server under mixed, partly hostile load for
// a while and checks that it comes back to where it started: resident
// memory, goroutines, threads, open files and session directories before
// and after. A leak shows as a figure that grows with the load and does
// not come back once the load stops.
//
//	go run ./bench/cmd/soak -binary bin/codeport -duration 10m   # what `make soak` runs
//
// Each client loops over a session's life: cells, bash, the editor, an
// upload and its download, a call stopped at its deadline, a memory bomb,
// recursion in the shell, and a session destroyed while its call runs.
// The server runs as its own process, as it would in production, with a
// private sessions directory.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	httpadapter "github.com/codeport/codeport/adapters/http"
	"github.com/codeport/codeport/port"
)

func main() {
	binary := flag.String("binary", "bin/codeport", "the codeport binary to serve with")
	duration := flag.Duration("duration", 10*time.Minute, "how long to load the server")
	clients := flag.Int("clients", 4, "concurrent clients")
	isolation := flag.String("isolation", "in-process", "the server's isolation")
	warmup := flag.Duration("warmup", time.Minute, "load before the baseline is taken")
	flag.Parse()
	if err := run(*binary, *duration, *warmup, *clients, *isolation); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// figures are what must come back after the load.
type figures struct {
	rss, threads, fds, goroutines, sessionDirs, sessionsLive int64
	// dirs are the directories below the sessions directory, for the
	// report when they do not come back.
	dirs []string
}

func run(binary string, duration, warmup time.Duration, clients int, isolation string) error {
	dir, err := os.MkdirTemp("", "codeport-soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	sessions := filepath.Join(dir, "sessions")
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(binary, "serve", "--listen", addr, "--sessions-dir", sessions, "--isolation", isolation,
		"--memory-limit", "128MiB", "--max-sessions", strconv.Itoa(clients*3), "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	base := "http://" + addr
	if err := waitHealthy(base, 3*time.Minute); err != nil {
		return err
	}
	p, err := httpadapter.New(httpadapter.NewConfig(base))
	if err != nil {
		return err
	}
	defer p.Close()

	var iterations, failures atomic.Int64
	var firstErr error
	var errOnce sync.Once
	load := func(ctx context.Context, seed uint64) {
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(c), seed))
				for ctx.Err() == nil {
					if err := iteration(ctx, p, rng, false); err != nil && ctx.Err() == nil {
						failures.Add(1)
						errOnce.Do(func() { firstErr = err })
					}
					iterations.Add(1)
				}
			})
		}
		wg.Wait()
	}

	// Warm up under the same load, so that the baseline holds what any
	// loaded server holds (compiled code, the runtime's heap at its
	// working size, memory the allocator keeps for reuse) and the
	// comparison shows only what grows with time.
	if err := iteration(context.Background(), p, rand.New(rand.NewPCG(1, 2)), true); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	warm, cancelWarm := context.WithTimeout(context.Background(), warmup)
	load(warm, 7)
	cancelWarm()
	before, err := settle(base, cmd.Process.Pid, sessions)
	if err != nil {
		return err
	}
	iterations.Store(0)

	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		load(ctx, 42)
	}()
	start := time.Now()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
			now, err := measure(base, cmd.Process.Pid, sessions)
			if err == nil {
				fmt.Printf("%6s  %5d iterations  rss %s  goroutines %d  threads %d  fds %d  session dirs %d\n",
					time.Since(start).Round(time.Second), iterations.Load(), mib(now.rss), now.goroutines, now.threads, now.fds, now.sessionDirs)
			}
		}
	}
	<-done
	after, err := settle(base, cmd.Process.Pid, sessions)
	if err != nil {
		return err
	}

	fmt.Printf("\n%d iterations by %d clients in %s after a %s warm-up (isolation %s), %d failed\n\n", iterations.Load(), clients, duration, warmup, isolation, failures.Load())
	fmt.Println("| figure | before | after |")
	fmt.Println("|---|---|---|")
	fmt.Printf("| resident memory | %s | %s |\n", mib(before.rss), mib(after.rss))
	fmt.Printf("| goroutines | %d | %d |\n", before.goroutines, after.goroutines)
	fmt.Printf("| threads | %d | %d |\n", before.threads, after.threads)
	fmt.Printf("| open files | %d | %d |\n", before.fds, after.fds)
	fmt.Printf("| session directories | %d | %d |\n", before.sessionDirs, after.sessionDirs)
	fmt.Printf("| sessions live | %d | %d |\n", before.sessionsLive, after.sessionsLive)

	var problems []string
	if failures.Load() > 0 {
		problems = append(problems, fmt.Sprintf("%d iterations failed, the first with: %v", failures.Load(), firstErr))
	}
	if after.goroutines > before.goroutines+10 {
		problems = append(problems, "goroutines grew")
	}
	if after.fds > before.fds+8 {
		problems = append(problems, "open files grew")
	}
	if after.threads > before.threads+8 {
		problems = append(problems, "threads grew")
	}
	if after.sessionDirs > before.sessionDirs || after.sessionsLive > before.sessionsLive {
		problems = append(problems, fmt.Sprintf("sessions or their directories were left behind (before: %q; after: %q)", before.dirs, after.dirs))
	}
	// Memory is allowed the runtime's own slack: freed pages go back to
	// the system lazily, so a settled server's resident size wanders with
	// what the last minutes allocated.
	if after.rss > before.rss*5/4+32<<20 {
		problems = append(problems, "resident memory grew")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; ") + " (server log: kept in the output above)")
	}
	fmt.Println("\nflat: every figure came back")
	return nil
}

// iteration is one session's life, with a random share of the hostile
// steps (all of them when all is set).
func iteration(ctx context.Context, p port.CodeExecutionPort, rng *rand.Rand, all bool) error {
	// Not abandoned when the load ends: a create the client gives up on
	// may still make a session on the server, which nobody would destroy
	// (it would be reclaimed only at its idle timeout, after the figures
	// are taken).
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	s, err := p.CreateSession(cctx, port.CreateSessionRequest{})
	cancel()
	if err != nil {
		var ce *port.CapacityError
		if errors.As(err, &ce) {
			time.Sleep(100 * time.Millisecond)
			return nil
		}
		return fmt.Errorf("create: %w", err)
	}
	destroyed := false
	defer func() {
		if !destroyed {
			_ = p.DestroySession(context.WithoutCancel(ctx), s.ID)
		}
	}()
	exec := func(req port.ExecuteRequest, want func(port.Result) bool, what string) error {
		res, err := p.Execute(ctx, s.ID, req)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if !want(res) {
			return fmt.Errorf("%s: outcome %s, return code %d", what, res.Outcome, res.ReturnCode)
		}
		return nil
	}
	completed := func(r port.Result) bool { return r.Outcome == port.OutcomeCompleted }
	failed := func(r port.Result) bool { return r.Outcome != port.OutcomeCompleted }
	steps := []func() error{
		func() error {
			return exec(port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import json\nx = sum(range(10**5))\nprint(json.dumps({'x': x}))"}, completed, "cell")
		},
		func() error {
			return exec(port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "echo hi > f.txt && ls -la | wc -l && cat f.txt"}, completed, "bash")
		},
		func() error {
			text := strings.Repeat("line\n", 100)
			return exec(port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorCreate, Path: "e.txt", FileText: &text}}, completed, "editor")
		},
		func() error {
			data := strings.Repeat("d", 64<<10)
			if _, err := p.PutFile(ctx, s.ID, "up/data.bin", strings.NewReader(data)); err != nil {
				return fmt.Errorf("upload: %w", err)
			}
			rc, _, err := p.GetFile(ctx, s.ID, "up/data.bin")
			if err != nil {
				return fmt.Errorf("download: %w", err)
			}
			defer rc.Close()
			n, err := io.Copy(io.Discard, rc)
			if err != nil || n != int64(len(data)) {
				return fmt.Errorf("download: %d bytes, %v", n, err)
			}
			return nil
		},
	}
	hostile := []func() error{
		func() error {
			return exec(port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "while True:\n    pass", Timeout: time.Second}, failed, "busy loop")
		},
		func() error {
			return exec(port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "b = bytearray(1 << 30)"}, failed, "memory bomb")
		},
		func() error {
			return exec(port.ExecuteRequest{Tool: port.ToolBashCodeExecution, Command: "f() { f; }; f", Timeout: 2 * time.Second}, failed, "shell recursion")
		},
		func() error {
			// Destroyed while its call runs.
			done := make(chan error, 1)
			go func() {
				_, err := p.Execute(ctx, s.ID, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import time\ntime.sleep(30)", Timeout: time.Minute})
				done <- err
			}()
			time.Sleep(200 * time.Millisecond)
			// Not under ctx either, for the same reason: a destroy cut
			// short by the end of the load would leave the session.
			if err := p.DestroySession(context.WithoutCancel(ctx), s.ID); err != nil {
				return fmt.Errorf("destroy mid-call: %w", err)
			}
			destroyed = true
			select {
			case <-done:
				return nil
			case <-time.After(30 * time.Second):
				return errors.New("destroy mid-call: the call did not end")
			}
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	for _, h := range hostile {
		if all || rng.IntN(3) == 0 {
			if err := h(); err != nil {
				return err
			}
			if destroyed {
				return nil
			}
		}
	}
	return nil
}

// settle waits for the server to come back to rest (the warm pool
// refilled, sessions reclaimed, the runtime's background work done) and
// measures it.
func settle(base string, pid int, sessions string) (figures, error) {
	var last figures
	for i := range 30 {
		time.Sleep(2 * time.Second)
		f, err := measure(base, pid, sessions)
		if err != nil {
			return figures{}, err
		}
		if i > 2 && f.goroutines == last.goroutines && f.threads == last.threads && f.fds == last.fds {
			return f, nil
		}
		last = f
	}
	return last, nil
}

func measure(base string, pid int, sessions string) (figures, error) {
	var f figures
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return f, err
	}
	sc := bufio.NewScanner(strings.NewReader(string(status)))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		n, _ := strconv.ParseInt(strings.Fields(v + " 0")[0], 10, 64)
		switch k {
		case "VmRSS":
			f.rss = n << 10
		case "Threads":
			f.threads = n
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return f, err
	}
	f.fds = int64(len(fds))
	f.dirs = listDirs(sessions)
	f.sessionDirs = int64(len(f.dirs))
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return f, err
	}
	defer resp.Body.Close()
	sc = bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			f.goroutines = int64(v)
		}
		if rest, ok := strings.CutPrefix(sc.Text(), "codeport_sessions_live "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			f.sessionsLive = int64(v)
		}
	}
	return f, sc.Err()
}

// listDirs lists the directories below root, relative to it: session
// workspaces, their temporary directories and the server's claim. What a
// session made inside its workspace is not listed, only that it is there.
func listDirs(root string) []string {
	var out []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, rel)
		if strings.Count(rel, string(filepath.Separator)) >= 3 {
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

func waitHealthy(base string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return errors.New("the server did not become healthy")
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
