package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"mvdan.cc/sh/v3/syntax"
)

// The interpreter runs shell functions, eval, source, $(...) and child
// shells (bash -c, ./script) by recursion on the Go stack of the goroutine
// that runs the script, and its parser recurses once per level of nesting
// in the text it parses ("$($($(..." costs 2 to 4 KB of stack per level).
// Go ends the whole process, not the goroutine, when a stack passes its
// 1 GB limit ("fatal error: stack overflow", which no recover catches), so
// a one-line "f() { f; }; f" would take every session of the gateway with
// it. The stack guard refuses to go deeper than maxStackFrames Go frames,
// far below that limit and far above what scripts need.
//
// Measured (go1.26, amd64), frames per level of nesting: a function call 7
// to 12, eval 13 to 18, x=$(f) about 22, parsing 6 to 11 ("$((" 57, in
// small frames). At the limit a goroutine's stack is 32 MB (functions) to
// 64 MB (eval) as allocated: scripts run about 4,500 levels of plain
// function recursion, 2,500 of eval or $(...), 900 of a function whose
// body is five nested evals (bash has no default limit, and scripts that
// recurse more than a few hundred levels are rare).
//
// In the WASI guest (guard_wasip1.go) the limit is lower: each Go frame is
// also a frame of wazero's native stack, which grows for the instance's
// whole life, and deep recursions one after the other overflowed it.

// Counting a goroutine's frames (runtime.Callers) costs up to 1 µs a frame
// on the interpreter's stacks (their many distinct functions defeat the
// runtime's caches): 25 ms at the limit, too much before every command of
// a deep recursion. So the guard remembers, per shell, the last stackSlots
// stack addresses at which it counted, and counts again only when a
// command runs farther from all of them than a window that grows with the
// depth counted there (stackWindow, or windowPerFrame bytes a frame): a
// loop at a constant depth is never counted again, and a recursion is
// counted a few dozen times on its way to the limit (a few percent of the
// time it takes to get there).
//
// Whatever the interleaving of goroutines, and whatever stack moves (a
// stack copied to a bigger one lands at new addresses, away from the
// remembered ones, and is counted again), a goroutine grows by at most
// stackSlots windows, each twice the window of a count below the limit,
// between two counts: at the limit that is 8 x 2 x 4 MB, against the 1 GB
// of Go's limit.
const (
	stackWindow    = 512 << 10
	windowPerFrame = 128
	stackSlots     = 8
)

// stackGuard decides when a command would nest too deeply. It is shared by
// the goroutines of one shell (pipeline stages, background jobs, child
// shells).
type stackGuard struct {
	mu    sync.Mutex
	marks [stackSlots]stackMark // the last counts
	next  int
	// pcs holds the buffers of program counters countFrames asks for
	// (maxStackFrames+1 each, 128 KiB in the guest): the shell's, not the
	// package's.
	pcs sync.Pool
}

// stackMark is a count: at the stack address sp a goroutine had frames
// frames; within window bytes of sp there is no need to count again.
type stackMark struct {
	sp, window uintptr
	frames     int
}

// tooDeep reports whether the calling goroutine's stack holds more than
// maxStackFrames frames, counting them only away from the last counts (see
// above).
func (g *stackGuard) tooDeep() bool {
	var marker byte
	// The address of a local is where this goroutine's stack is now; it is
	// compared, never dereferenced.
	sp := uintptr(unsafe.Pointer(&marker))
	g.mu.Lock()
	for _, m := range g.marks {
		if m.window != 0 && distance(sp, m.sp) < m.window {
			g.mu.Unlock()
			return false
		}
	}
	g.mu.Unlock()
	n := g.countFrames()
	if n > maxStackFrames {
		return true
	}
	g.mu.Lock()
	g.marks[g.next] = stackMark{sp: sp, window: max(stackWindow, uintptr(n)*windowPerFrame), frames: n}
	g.next = (g.next + 1) % stackSlots
	g.mu.Unlock()
	return false
}

// countFrames returns the number of frames on the calling goroutine's
// stack, or maxStackFrames+1 if there are more.
func (g *stackGuard) countFrames() int {
	b, _ := g.pcs.Get().(*[]uintptr)
	if b == nil {
		pcs := make([]uintptr, maxStackFrames+1)
		b = &pcs
	}
	defer g.pcs.Put(b)
	return runtime.Callers(0, *b)
}

func distance(a, b uintptr) uintptr {
	if a > b {
		return a - b
	}
	return b - a
}

// errNesting is the cause of a run stopped by the stack guard.
var errNesting = errors.New("maximum function nesting level exceeded")

// nestingMessage is what bash prints when FUNCNEST is exceeded, with the
// limit explained.
func nestingMessage(name string) string {
	return fmt.Sprintf("bash: %s: maximum function nesting level exceeded (functions, eval, source, $(...) and child shells nest at most a few thousand levels deep here)\n", name)
}

// runState is what the stack guard needs of the Run in progress.
type runState struct {
	stop    context.CancelCauseFunc // ends the whole Run
	refused atomic.Pointer[string]  // the command refused first
}

// refuse ends the Run in progress: every statement of it, in every
// goroutine and child shell, stops at its next step, as its context is
// done. Ending the whole command (not only the call that went too deep)
// keeps a script from retrying at the limit forever.
func (s *Shell) refuse(name string) {
	st := s.active.Load()
	if st == nil {
		return
	}
	// An internal command (a rewritten time clause's) by the name the
	// script used.
	name = strings.TrimLeft(name, internalPrefix)
	st.refused.CompareAndSwap(nil, &name)
	st.stop(errNesting)
}

// errParseNesting is the error of a parse the stack guard stopped.
var errParseNesting = errors.New("maximum nesting level exceeded while parsing")

// guardedReader feeds a parser and stops it when it is nested too deep. The
// parser reads (in 1 KB chunks) from wherever its recursion is, so the
// check runs at the deepest point it reaches, every 1 KB of source.
type guardedReader struct {
	r io.Reader
	g *stackGuard
}

func (r guardedReader) Read(p []byte) (int, error) {
	if r.g.tooDeep() {
		return 0, errParseNesting
	}
	return r.r.Read(p)
}

// parseGuarded parses src as bash with p (nil: a new parser), refusing
// nesting the stack guard would not survive.
func (s *Shell) parseGuarded(p *syntax.Parser, src, name string) (*syntax.File, error) {
	if p == nil {
		p = newParser()
	}
	return p.Parse(guardedReader{strings.NewReader(src), &s.guard}, name)
}

func newParser() *syntax.Parser { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }

// maxTestArgs bounds the arguments of test and [: the interpreter parses
// them recursively ("[ ! ! ! ... ]" costs three frames an argument)
// without the call handler in between.
const maxTestArgs = 10000
