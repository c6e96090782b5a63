//go:build wasip1

package main

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	mathrand "math/rand/v2"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/codeport/codeport/adapters/wasm/internal/shell"
	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell/protocol"
)

// The host's functions; see package wasmshell. The module name must be
// written out here: it is protocol.Module.

//go:wasmimport codeport_shell take
func hostTake(ptr unsafe.Pointer, size uint32)

//go:wasmimport codeport_shell stop_reason
func hostStopReason() uint32

//go:wasmimport codeport_shell python
func hostPython(ptr unsafe.Pointer, size uint32) uint32

//go:wasmimport codeport_shell chmod
func hostChmod(ptr unsafe.Pointer, size uint32, mode uint32) uint32

//go:wasmimport codeport_shell mode
func hostMode(ptr unsafe.Pointer, size uint32) int32

//go:wasmimport codeport_shell quota_limit
func hostQuotaLimit() int64

//go:wasmimport codeport_shell quota_used
func hostQuotaUsed() int64

//go:wasmimport codeport_shell zone
func hostZone(ptr unsafe.Pointer, size uint32) uint32

// take returns the n bytes the host announced (a request, a python
// result).
func take(n uint32) []byte {
	buf := make([]byte, n)
	if n > 0 {
		hostTake(unsafe.Pointer(&buf[0]), n)
	}
	return buf
}

// main is not run: the guest is a reactor (built with -buildmode=c-shared),
// whose _initialize starts the Go runtime and runs the packages' init.
// The host then calls warm once, takes an image of the instance, and
// starts every session's shell from that image: it calls setup once and
// run for each call. Between the host's calls nothing of the guest runs
// (no call of it is under way), so its memory and globals are all of its
// state, which is what lets an image of it be taken and restored.
func main() {}

// guest is the instance's state: its stopper, made by warm, and the
// session's shell, made by setup. It is the one piece of package state:
// the host's calls (warm, setup, run) are functions of the package, not
// methods, and this is the instance they serve. The image is taken before
// setup, so it holds no session's shell.
var guest struct {
	sh   *shell.Shell
	stop *stopper
}

// warm readies the template before the host takes its image: it makes
// the instance's stopper, and runs warmUp in shells of its own, which it
// then drops. What those runs leave is then in the image, read by every
// session rather than made, and written, by each: the goroutine stacks
// grown to what a command needs, the interpreter's and the commands'
// lazily built tables. The collection between the two runs has the
// runtime size new goroutines' stacks (a pipeline stage's) from the stacks
// the first run made (its adaptive starting stack size), for the second
// run and every session. Measured (BenchmarkFirstBashMemory), a session's
// first `x=1; ls | wc -l` added 3.4 MiB of resident memory after one run,
// 3.05 after two; a collection after the second run made it 3.7. Nothing
// of the shells is left: no variable, no directory, no output (the
// template's streams go nowhere).
//
//go:wasmexport warm
func warm() {
	guest.stop = newStopper()
	opts := shell.Options{Poll: guest.stop.poll}
	serve(shell.New(opts), guest.stop, warmUp)
	runtime.GC()
	serve(shell.New(opts), guest.stop, warmUp)
}

// warmUp is what warm runs: a builtin, a function, a pipeline, a command
// substitution and a few of the shell's commands, over nothing of the
// session's.
const warmUp = `f() { echo "$1"; }; x=$(f y | cat); [ -n "$x" ] && printf '%s\n' "$x" | wc -l >/dev/null; ls / >/dev/null`

// setup makes the session's shell: maxFile is its MaxFileBytes, python
// whether the host runs python commands. The host calls it once, first.
//
//go:wasmexport setup
func setup(maxFile int64, python int32) {
	reseed()
	py := shell.Python(runPython)
	if python == 0 {
		py = nil
	}
	if guest.stop == nil {
		guest.stop = newStopper()
	}
	guest.sh = shell.New(shell.Options{MaxFileBytes: maxFile, Python: py, Poll: guest.stop.poll, Chmod: chmod, Mode: mode, Quota: quota, Zone: zone})
}

// run runs the command in the request of size bytes that the host
// announced (protocol.EncodeRequest) and returns its exit status.
//
//go:wasmexport run
func run(size uint32) int32 {
	command, ok := protocol.DecodeRequest(take(size))
	if !ok || guest.sh == nil {
		fmt.Fprintf(os.Stderr, "bash: internal error: bad request from the host\n")
		return 1
	}
	return int32(serve(guest.sh, guest.stop, command))
}

// reseed moves the Go runtime's random generator to a point of its own.
// Every session's shell starts from one image, so the generator's state
// in it (which the Go runtime seeded once, for the image) would otherwise
// be every session's: the same $RANDOM in each (math/rand/v2, which the
// interpreter uses), the same map seeds. There is no call to reseed it;
// drawing a number of values the host's randomness chooses (up to 2^16)
// puts each session at a different point of the stream. That is enough
// for what the generator is for (none of it is a secret: crypto/rand,
// $SRANDOM, reads the host's randomness at each use).
func reseed() {
	var b [2]byte
	_, _ = cryptorand.Read(b[:])
	for range binary.LittleEndian.Uint16(b[:]) {
		mathrand.Uint64()
	}
}

// stopper turns the host's stop into the cancellation of the current
// call's context.
type stopper struct {
	cancel context.CancelCauseFunc // nil between calls
	skip   uint32                  // polls left before the next question
	// tick runs during a call only; a goroutine started once polls at
	// each of its ticks. (A goroutine and a ticker of each call's own
	// cost a sixth of an `echo hi`.) During a call there is thus always a
	// timer to wake the guest, whatever its goroutines wait for.
	tick *time.Ticker
}

// pollEvery is how many polls share one question to the host: a poll sits
// in every context check, once a line in the commands' loops, and a host
// call each time cost more than the line. The stopper's goroutine asks
// every pollInterval regardless, whenever the others wait.
const (
	pollEvery    = 64
	pollInterval = 5 * time.Millisecond
)

func newStopper() *stopper {
	s := &stopper{tick: time.NewTicker(pollInterval)}
	s.tick.Stop()
	go waitDeep(stopperDepth, func() {
		for range s.tick.C {
			s.poll()
		}
	})
	return s
}

// stopperDepth is how many KiB deep in its stack the stopper's goroutine
// waits. The Go runtime starts a goroutine's stack at the average depth of
// the stacks its last collection found (2 KiB when they are shallow), and
// a pipeline stage, which the interpreter runs on a goroutine of its own,
// then grew its stack four or five times, each a copy whose frames the
// runtime adjusts one by one: a quarter of a `: | :` in the guest. Waiting
// this deep raises the average to about what a stage needs (64 KiB of the
// guest's memory, for the instance's life).
const stopperDepth = 64

// waitDeep calls f depth KiB deeper in the stack.
//
//go:noinline
func waitDeep(depth int, f func()) {
	var pad [1 << 10]byte
	pad[depth%len(pad)] = byte(depth)
	if depth > 0 {
		waitDeep(depth-1, f)
	} else {
		f()
	}
	runtime.KeepAlive(pad[depth%len(pad)])
}

// begin and end bracket a call.
func (s *stopper) begin(cancel context.CancelCauseFunc) {
	s.cancel = cancel
	s.tick.Reset(pollInterval)
}

func (s *stopper) end() {
	// A stopped ticker delivers no tick received after Stop (Go 1.23's
	// timers): the goroutine polls no more until the next call.
	s.tick.Stop()
	s.cancel = nil
}

// poll asks the host whether the call is to stop, and cancels it if so.
// It also yields to the guest's other goroutines: wasip1 has one thread
// and no preemption, so a loop that never blocks ("timeout 1 bash -c
// 'while :; do :; done'") would otherwise keep the scheduler from ever
// firing a timer (timeout's context never ended, and the loop ran until
// the host's deadline), a background job or another pipeline stage from
// running.
func (s *stopper) poll() {
	if s.cancel == nil {
		return
	}
	if s.skip > 0 {
		s.skip--
		return
	}
	s.skip = pollEvery - 1
	runtime.Gosched()
	if s.cancel == nil {
		// The call ended while others ran (the stopper's goroutine may
		// resume only after it).
		return
	}
	switch protocol.Stop(hostStopReason()) {
	case protocol.StopDeadline:
		s.cancel(context.DeadlineExceeded)
	case protocol.StopCancelled:
		s.cancel(context.Canceled)
	}
}

// serve runs one call under a context that ends when the host says so:
// the shell polls before every command and in its commands' loops, and the
// stopper's goroutine polls every pollInterval whenever the others wait. A
// command busy without polling is stopped by the host instead, which ends
// this instance.
func serve(sh *shell.Shell, stop *stopper, command string) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stop.begin(cancel)
	defer stop.end()
	code, _ := sh.Run(ctx, command, os.Stdout, os.Stderr)
	return code
}

// chmod asks the host to set a file's permission bits.
func chmod(guestPath string, mode fs.FileMode) error {
	if guestPath == "" {
		return syscall.ENOENT
	}
	b := []byte(guestPath)
	switch hostChmod(unsafe.Pointer(&b[0]), uint32(len(b)), uint32(mode.Perm())) {
	case protocol.ChmodOK:
		return nil
	case protocol.ChmodNotFound:
		return syscall.ENOENT
	case protocol.ChmodRefused:
		return syscall.EPERM
	}
	return syscall.EIO
}

// runPython hands a python command line to the host, which runs it while
// this instance waits.
func runPython(ctx context.Context, argv []string, stdin []byte, stdout, stderr io.Writer) (int, error) {
	inv, _ := shell.InvocationFrom(ctx)
	req, err := json.Marshal(protocol.PythonRequest{Argv: argv, Stdin: stdin, Dir: inv.Dir, Env: inv.Env})
	if err != nil {
		return 1, err
	}
	var res protocol.PythonResult
	if err := json.Unmarshal(take(hostPython(unsafe.Pointer(&req[0]), uint32(len(req)))), &res); err != nil {
		return 1, fmt.Errorf("bad answer from the host: %w", err)
	}
	if _, err := stdout.Write(res.Stdout); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return 1, err
	}
	_, _ = stderr.Write(res.Stderr)
	if res.Error != "" {
		return 1, errors.New(res.Error)
	}
	return res.Code, nil
}

// mode asks the host for a file's permission bits.
func mode(guestPath string) (fs.FileMode, bool) {
	if guestPath == "" {
		return 0, false
	}
	b := []byte(guestPath)
	m := hostMode(unsafe.Pointer(&b[0]), uint32(len(b)))
	if m < 0 {
		return 0, false
	}
	return fs.FileMode(m) & fs.ModePerm, true
}

// zone asks the host for a time zone's TZif data.
func zone(name string) ([]byte, bool) {
	if name == "" || len(name) > protocol.MaxZoneName {
		return nil, false
	}
	b := []byte(name)
	n := hostZone(unsafe.Pointer(&b[0]), uint32(len(b)))
	if n == protocol.NoZone {
		return nil, false
	}
	return take(n), true
}

// quota asks the host for the session's byte quota and its use.
func quota() (limit, used int64) { return hostQuotaLimit(), hostQuotaUsed() }
