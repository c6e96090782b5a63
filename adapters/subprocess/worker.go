package subprocess

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/codeport/codeport/port"
)

// Causes of a worker's end, the label of the restarts metric.
const (
	causeRecycled = "recycled" // hosted its share of sessions; retired by us
	causeEvicted  = "evicted"  // a tenant worker hosting nothing, retired by us to make room for another tenant's
	causeDeadline = "deadline" // a call overran its deadline by the grace; killed by us
	causeCancel   = "cancel"   // a call did not stop within the grace of its cancellation; killed by us
	causeOOM      = "oom"      // ran out of memory under its OS limit
	causeKilled   = "killed"   // killed by a signal we did not send
	causeCrashed  = "crashed"  // exited on its own
	causeShutdown = "shutdown" // the adapter closed
	causeStart    = "start"    // failed to start
)

// worker is one worker process and the connection to it. The fields after
// the first block are guarded by the adapter's mutex.
type worker struct {
	id       int
	client   *plugin.Client
	cmd      *exec.Cmd
	rpc      *rpcClient
	pid      int
	dir      string // its sessions directory, removed when it ends
	sockDir  string // where its go-plugin server puts its socket, removed when it ends
	cgroup   string // its cgroup directory, "" when none
	warm     bool
	oomNoted atomic.Bool // its stderr reported an out-of-memory death
	// endLife kills the process through the context it was started
	// with: the one way to give up a start in progress (see
	// startWorker). Called once the process is gone, it only releases
	// the context.
	endLife context.CancelFunc

	sessions int  // sessions it hosts now
	hosted   int  // sessions it has hosted in all
	ending   bool // being stopped: hand it no session
	ended    bool // stopped and accounted for
	// With tenant workers, the tenant whose sessions it hosts: set by
	// its first session, never changed.
	tenant string
}

// workerSpec is what the parent tells a worker, in its environment.
type workerSpec struct {
	// Wasm is the wasm.Settings its runtime runs under.
	Wasm      json.RawMessage `json:"wasm"`
	DataLimit int64           `json:"data_limit"`
	WaitWarm  bool            `json:"wait_warm"`
}

// specEnv names the environment variable holding the workerSpec.
const specEnv = "CODEPORT_WORKER_SPEC"

func handshake() plugin.HandshakeConfig {
	return plugin.HandshakeConfig{
		ProtocolVersion:  5, // 2: errors carry port.ErrorCode codes; no Describe. 3: GetFile by output file id. 4: streamed output. 5: snapshots
		MagicCookieKey:   "CODEPORT_WORKER_COOKIE",
		MagicCookieValue: "7b0e7c4a-codeport-worker-v1",
	}
}

// grpcPlugin glues the worker protocol into go-plugin: the worker side
// registers the service, the parent side gets an rpcClient.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	server *workerServer
}

func (p *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(serviceDesc(), p.server)
	return nil
}

func (p *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &rpcClient{conn: c}, nil
}

// maxMessage bounds one message of the worker protocol: a result carries
// up to two output streams of the output limit, which JSON may escape up
// to six times over, and up to inlineImages bytes of images, in base64.
// The transport refuses (never truncates) anything bigger.
func maxMessage(lim port.Limits, inlineImages int64) int {
	return int(max(8*(2*lim.OutputBytes+lim.SourceBytes)+2*inlineImages+1<<20, 16<<20))
}

// startWorker starts a worker process and connects to it. A warm worker
// has booted an interpreter and imported the warm modules before it
// answers; a cold one answers as soon as the runtime is compiled.
func (a *adapter) startWorker(ctx context.Context, warm bool) (*worker, error) {
	id := int(a.nextID.Add(1))
	w := &worker{id: id, warm: warm, dir: filepath.Join(a.sessionsDir, "worker-"+strconv.Itoa(id))}
	wc := a.cfg.wasmConfig().WithSessionsDir(w.dir).WithMaxSessions(a.cfg.settings.SessionsPerWorker)
	if warm {
		// Enough interpreters for the sessions this worker will host at
		// once, booted once: a refill would boot one nobody takes when
		// the worker dies with its session.
		refill := 0
		if a.cfg.recycle() > a.cfg.settings.SessionsPerWorker {
			refill = 1
		}
		wc = wc.WithWarmPool(min(a.cfg.settings.SessionsPerWorker, a.cfg.recycle()), nil).WithWarmPoolRefill(refill)
	} else {
		wc = wc.WithWarmPool(0, nil)
	}
	wj, err := json.Marshal(wc.Settings())
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(workerSpec{Wasm: wj, DataLimit: a.cfg.dataLimit(), WaitWarm: warm})
	if err != nil {
		return nil, err
	}
	if w.sockDir, err = a.socketDir(id); err != nil {
		return nil, fmt.Errorf("start worker: socket directory: %w", err)
	}
	// go-plugin's Kill waits for a start in progress (the handshake, up
	// to the start timeout) before it kills anything, so a start given
	// up ends the process through its context instead.
	life, endLife := context.WithCancel(context.Background())
	w.endLife = endLife
	cmd := exec.CommandContext(life, a.cfg.command[0], a.cfg.command[1:]...)
	// Nothing inherited: the worker sees its spec, where to put its
	// socket, and go-plugin's handshake variables, and no other
	// environment.
	cmd.Env = append([]string{specEnv + "=" + string(spec), plugin.EnvUnixSocketDir + "=" + w.sockDir}, a.cfg.traceEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// If the gateway dies, its workers die with it: no orphans.
		Pdeathsig: syscall.SIGKILL,
		// Its own process group, so that a terminal's ^C reaches only the
		// gateway, which then stops its workers in order.
		Setpgid: true,
	}
	log := a.cfg.logger.With("worker", id)
	w.cmd = cmd
	w.client = plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  handshake(),
		Plugins:          plugin.PluginSet{"port": &grpcPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		SkipHostEnv:      true,
		StartTimeout:     a.cfg.startTimeout,
		Stderr:           &stderrLog{log: log, w: w},
		Logger: hclog.New(&hclog.LoggerOptions{
			Name: "go-plugin", Level: hclog.Off,
			Output: &stderrLog{log: log.With("source", "go-plugin")},
		}),
		GRPCDialOptions: []grpc.DialOption{grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(maxMessage(a.cfg.settings.Limits(), a.cfg.settings.InlineImageBytes)), grpc.MaxCallSendMsgSize(maxMessage(a.cfg.settings.Limits(), a.cfg.settings.InlineImageBytes))),
			grpc.WithChainUnaryInterceptor(injectUnary), grpc.WithChainStreamInterceptor(injectStream)},
	})
	started := make(chan error, 1)
	go func() {
		rc, err := w.client.Client()
		if err == nil {
			var raw any
			if raw, err = rc.Dispense("port"); err == nil {
				w.rpc = raw.(*rpcClient)
			}
		}
		started <- err
	}()
	select {
	case err = <-started:
	case <-ctx.Done():
		endLife() // Client() returns once the process is gone
		<-started
		err = ctx.Err()
	}
	if err != nil {
		w.client.Kill()
		a.cleanupWorker(w)
		return nil, fmt.Errorf("start worker: %w", err)
	}
	if rc := w.client.ReattachConfig(); rc != nil {
		w.pid = rc.Pid
	}
	if a.cgroups.ok() && a.cfg.cgroupMemory {
		var cerr error
		if w.cgroup, cerr = a.cgroups.place(w.pid, a.cfg.settings.Limits().MemoryBytes*int64(a.cfg.settings.SessionsPerWorker)+workerMemoryOverhead); cerr != nil {
			log.Warn("worker cgroup not set; its rlimits still apply", "error", cerr)
		}
	}
	log.Info("worker started", "pid", w.pid, "warm", warm)
	return w, nil
}

// maxSocketDir is the longest directory a worker's socket goes in: its
// go-plugin server names the socket "plugin" and up to ten digits there,
// and a Unix socket's address holds 107 bytes on Linux.
const maxSocketDir = 107 - len("/plugin") - 10

// socketDir makes the directory worker id's go-plugin server puts its
// socket in. The server removes the socket when it exits, but a worker
// killed (its memory exceeded, its deadline ignored, the gateway's kill)
// left it in the temporary directory for good, one file each. Beside the
// worker's sessions directory, it goes with them (cleanupWorker, and the
// sweep of a dead gateway's directories); where that path is too long for
// a socket, it is a directory of its own under the temporary directory,
// which cleanupWorker removes.
func (a *adapter) socketDir(id int) (string, error) {
	dir := filepath.Join(a.sessionsDir, "socket-"+strconv.Itoa(id))
	if len(dir) <= maxSocketDir {
		return dir, os.Mkdir(dir, 0o700)
	}
	return os.MkdirTemp("", "codeport-socket-")
}

// kill stops the worker with SIGKILL and waits until it is reaped.
func (w *worker) kill() {
	if w.cmd.Process != nil && !w.client.Exited() {
		_ = syscall.Kill(w.pid, syscall.SIGKILL)
	}
	w.client.Kill()
}

// stop asks the worker to exit (its sessions' directories are removed by
// it), and kills it if it has not after a short wait.
func (w *worker) stop() { w.client.Kill() }

// waitExit waits up to d for the worker process to be reaped.
func (w *worker) waitExit(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for !w.client.Exited() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// exitCause classifies how a worker that has exited ended, and the return
// code a lost call reports for it.
func (w *worker) exitCause() (cause string, rc int) {
	if w.oomNoted.Load() {
		return causeOOM, port.ReturnCodeMemoryLimit
	}
	if !w.client.Exited() {
		return causeCrashed, 1 // not reaped (yet): nothing more is known
	}
	ps := w.cmd.ProcessState // set before Exited() turns true
	if ps == nil {
		return causeCrashed, 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return causeKilled, 128 + int(ws.Signal())
	}
	if ps.ExitCode() > 0 {
		return causeCrashed, ps.ExitCode()
	}
	return causeCrashed, 1
}

// cleanupWorker removes what a worker leaves behind when it cannot: its
// sessions directory (a killed worker removes nothing) and its cgroup.
func (a *adapter) cleanupWorker(w *worker) {
	if w.endLife != nil {
		w.endLife()
	}
	_ = os.RemoveAll(w.dir)
	if w.sockDir != "" {
		_ = os.RemoveAll(w.sockDir)
	}
	if w.cgroup != "" {
		if w.cgroupOOM() {
			w.oomNoted.Store(true)
		}
		_ = os.Remove(w.cgroup)
	}
}

// cgroupOOM reports whether the worker's cgroup saw an OOM kill.
func (w *worker) cgroupOOM() bool {
	b, err := os.ReadFile(filepath.Join(w.cgroup, "memory.events"))
	if err != nil {
		return false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// outOfMemory reports whether a worker's stderr line is its runtime dying
// of its memory limits: the Go runtime's "fatal error: runtime: out of
// memory" (the heap could not grow), its "fatal error: runtime: cannot
// allocate memory" (one of its own structures could not be mapped: which
// allocation meets the limit first depends on timing, and under load it
// was this one), or cgo's failure to map a new thread's stack under
// RLIMIT_AS, "runtime/cgo: pthread_create failed: Resource temporarily
// unavailable".
func outOfMemory(line string) bool {
	return strings.HasPrefix(line, "fatal error:") &&
		(strings.Contains(line, "out of memory") || strings.Contains(line, "cannot allocate memory")) ||
		strings.HasPrefix(line, "runtime/cgo: pthread_create failed")
}

// stderrLog passes a worker's stderr to the parent's logger, a line at a
// time: the worker's own log records (JSON, which never hold a program's
// output: the wasm adapter captures that in memory) keep their level and
// attributes; a line that starts the Go runtime's crash report, and all
// after it, are the crash report, whose first lines are logged as an
// error and the rest (a dump of every goroutine) counted, not logged;
// any other line (a library's stray print) is logged as a warning, its
// first ones only, and the records after it keep their levels. A line
// over maxLogLine is logged cut, and the rest of it dropped. An
// out-of-memory death is noted for the cause.
type stderrLog struct {
	log *slog.Logger
	w   *worker
	mu  sync.Mutex
	buf []byte
	// crash counts the lines of a crash report seen so far.
	crash int
	// stray counts the other lines that were not records.
	stray int
	// skip drops what is left of a line logged cut, up to its newline.
	skip bool
}

// maxLogLine caps one logged line; the rest of a longer line is dropped
// from the log and the cut marked.
const maxLogLine = 4 << 10

// maxCrashLines is how much of a crash report is logged: its reason and
// the crashing goroutine's first frames.
const maxCrashLines = 24

func (s *stderrLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	for {
		i := bytes.IndexByte(s.buf, '\n')
		if i < 0 {
			if len(s.buf) > maxLogLine {
				if !s.skip {
					s.emit(s.buf[:maxLogLine], true)
				}
				s.buf, s.skip = s.buf[:0], true
			}
			return len(p), nil
		}
		if !s.skip {
			s.emit(s.buf[:i], false)
		}
		s.buf, s.skip = s.buf[i+1:], false
	}
}

// crashStart reports whether line starts the Go runtime's report of a
// dying process.
func crashStart(line string) bool {
	for _, p := range []string{"panic: ", "fatal error: ", "runtime: ", "runtime/cgo: ", "unexpected fault address", "fatal: morestack", "SIG"} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

func (s *stderrLog) emit(line []byte, cut bool) {
	text := strings.TrimSpace(string(line))
	if text == "" {
		return
	}
	if s.w != nil && outOfMemory(text) {
		s.w.oomNoted.Store(true)
	}
	if s.crash == 0 && s.record(line) {
		return
	}
	if len(text) > maxLogLine {
		text, cut = text[:maxLogLine], true
	}
	if s.crash == 0 && !crashStart(text) {
		s.stray++
		logCapped(s.stray, func(msg string, args ...any) { s.log.Warn(msg, args...) }, "worker stderr", "that are not log records ", text, cut)
		return
	}
	s.crash++
	logCapped(s.crash, func(msg string, args ...any) { s.log.Error(msg, args...) }, "worker crash report", "", text, cut)
}

// logCapped logs the nth line of a kind (msg) up to maxCrashLines, then
// once that further lines (which) are not logged, then nothing.
func logCapped(n int, log func(string, ...any), msg, which, text string, cut bool) {
	switch {
	case n <= maxCrashLines:
		log(msg, "line", text, "cut", cut)
	case n == maxCrashLines+1:
		log(msg + ": further lines " + which + "are not logged")
	}
}

// record logs line as the worker's own slog JSON record, and reports
// whether it was one.
func (s *stderrLog) record(line []byte) bool {
	var rec map[string]any
	// Numbers as written: decoded as float64, an integer attribute would
	// reach the parent's handler as a float (7 became 7.0 to a handler
	// that looks at the kind, and digits past 2^53 were lost).
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if dec.Decode(&rec) != nil || dec.Decode(new(json.RawMessage)) != io.EOF {
		return false
	}
	// slog's JSON handler (the worker's own log) or hclog's (go-plugin's).
	msg, ok := rec["msg"].(string)
	levelText, ok2 := rec["level"].(string)
	if !ok && !ok2 {
		msg, ok = rec["@message"].(string)
		levelText, ok2 = rec["@level"].(string)
	}
	var level slog.Level
	if !ok || !ok2 || level.UnmarshalText([]byte(levelText)) != nil {
		return false
	}
	attrs := make([]slog.Attr, 0, len(rec))
	for k, v := range rec {
		switch k {
		case "time", "level", "msg", "@timestamp", "@level", "@message":
		default:
			attrs = append(attrs, attrOf(k, v))
		}
	}
	slices.SortFunc(attrs, func(a, b slog.Attr) int { return strings.Compare(a.Key, b.Key) })
	s.log.LogAttrs(context.Background(), level, "worker: "+msg, attrs...)
	return true
}

// attrOf is an attribute of a worker's record as the worker logged it: a
// whole number an integer, another number a float, an object a group
// (which is how a JSON handler writes one).
func attrOf(k string, v any) slog.Attr {
	switch x := v.(type) {
	case map[string]any:
		attrs := make([]slog.Attr, 0, len(x))
		for k, v := range x {
			attrs = append(attrs, attrOf(k, v))
		}
		slices.SortFunc(attrs, func(a, b slog.Attr) int { return strings.Compare(a.Key, b.Key) })
		return slog.Attr{Key: k, Value: slog.GroupValue(attrs...)}
	case json.Number:
		if n, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return slog.Int64(k, n)
		}
		if n, err := strconv.ParseUint(x.String(), 10, 64); err == nil {
			return slog.Uint64(k, n)
		}
		if f, err := x.Float64(); err == nil {
			return slog.Float64(k, f)
		}
		return slog.String(k, x.String())
	}
	return slog.Any(k, plain(v))
}

// plain is a decoded JSON value with its numbers as attrOf makes them, for
// the elements of an array.
func plain(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plain(e)
		}
		return out
	case json.Number:
		return attrOf("", x).Value.Any()
	}
	return v
}
