package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/internal/testkit/hostileprog"
	"github.com/codeport/codeport/port"
)

// The hostile phase (issue 27) runs beside the ordinary clients: programs
// that run their own code inside the host's steps around a snapshot, and
// clients that send forged, oversized or trickled bodies. What it checks:
//
//   - No session loses its variables silently. An ordinary session keeps
//     them through hibernation, snapshots and restores; a hostile one
//     either keeps them or says state_lost at its next call. A NameError
//     with state_lost false fails the soak, as does an ordinary session
//     that says state_lost.
//   - Every hostile request is answered within hostileBound, with the
//     statuses the server gives since issue 27's fixes: forged restores
//     400 invalid_snapshot or 503 at_capacity; a restore while the server
//     is at capacity 503 before a byte of its body is read, and no spool
//     made (capacityProbe); a restore of a snapshot spinning in its
//     restored step 500 runtime_failure within that step's deadline and
//     a slack (or 503, 429); bodies trickled below the minimum rate cut
//     off by the server (408, or the connection closed) long before the
//     client gives up; oversized JSON 413; malformed MCP messages 400
//     over HTTP and a JSON-RPC error over stdio (stdio.go).
//   - The figures come back afterwards (see run): the spool's files and
//     bytes, the hibernate-dir's, beside memory, goroutines and the rest;
//     the MCP listener's memory also against its figure at start.
//
// Durations are judged only as bounds far above what a loaded machine
// takes; verdicts rest on statuses and counts.

// hostileBound is how long a hostile request may go unanswered: far above
// what any of them takes on a loaded machine (a 100 MB body over loopback,
// a host step's 5 s deadline, a wake).
const hostileBound = 3 * time.Minute

// Programs that run their own code in the host's steps (see hostileprog):
// spinInRestore only in the one after a restore or a wake.
var (
	spinInFlush   = hostileprog.SpinInFlush
	spinInTrace   = hostileprog.SpinInTrace("")
	spinInRestore = hostileprog.SpinInTrace("", hostileprog.KindRestored)
)

// hostile is the phase's shared state: the server, what it answered, and
// what went wrong.
type hostile struct {
	base   string
	p      *port.Port
	client *http.Client
	// hibDir is the server's hibernate-dir, where a session's file
	// (<id>.hibernated) shows that the reaper hibernated it; empty when
	// the server does not hibernate (isolation process).
	hibDir string
	// tmpDir is the server's temporary directory, where its restore
	// spools are.
	tmpDir string
	// memoryLimit is the server's (--memory-limit).
	memoryLimit int64
	// mcp is the MCP listener, when the phase has one; stdio, how to
	// start codeport mcp over stdio (nil: not run).
	mcp   *mcpListener
	stdio *stdioConfig
	// probeClient waits for the server's 100 Continue before it sends a
	// body (see capacityProbe).
	probeClient *http.Client
	// restores is held shared by every restore the phase sends, and
	// alone by capacityProbe, so that no other restore is in flight
	// when it looks at the spool.
	restores sync.RWMutex

	mu       sync.Mutex
	counts   map[string]map[string]int
	problems []string
	// spinRestoreMax is the longest a spinning restore took to fail;
	// fullProbes counts the restores refused at capacity.
	spinRestoreMax time.Duration
	fullProbes     int
}

func newHostile(base string, p *port.Port, d dirs, memoryLimit int64) *hostile {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ExpectContinueTimeout = hostileBound
	return &hostile{base: base, p: p, hibDir: d.hibernate, tmpDir: d.tmp, memoryLimit: memoryLimit,
		client: &http.Client{}, probeClient: &http.Client{Transport: tr}, counts: map[string]map[string]int{}}
}

// note counts an answer to a kind of request.
func (h *hostile) note(what, outcome string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts[what] == nil {
		h.counts[what] = map[string]int{}
	}
	h.counts[what][outcome]++
}

func (h *hostile) fail(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.problems) < 20 {
		h.problems = append(h.problems, fmt.Sprintf(format, args...))
	}
}

// failed reports the problems so far, and forgets them.
func (h *hostile) failed() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.problems
	h.problems = nil
	return p
}

// print writes what each kind of request was answered.
func (h *hostile) print(w io.Writer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintln(w, "| hostile request | answers |")
	fmt.Fprintln(w, "|---|---|")
	kinds := make([]string, 0, len(h.counts))
	for k := range h.counts {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		var parts []string
		outcomes := make([]string, 0, len(h.counts[k]))
		for o := range h.counts[k] {
			outcomes = append(outcomes, o)
		}
		slices.Sort(outcomes)
		for _, o := range outcomes {
			parts = append(parts, fmt.Sprintf("%s ×%d", o, h.counts[k][o]))
		}
		fmt.Fprintf(w, "| %s | %s |\n", k, strings.Join(parts, ", "))
	}
	if h.spinRestoreMax > 0 {
		fmt.Fprintf(w, "\nlongest failed restore of a snapshot spinning in its restored step: %s (its deadline %s)\n",
			h.spinRestoreMax.Round(time.Millisecond), restoredStepTimeout(h.memoryLimit))
	}
}

// verdicts are the phase's checks on what it saw as a whole, once it is
// over.
func (h *hostile) verdicts() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fullProbes == 0 {
		return []string{"no restore was sent while the server was at capacity (capacityProbe never filled it)"}
	}
	return nil
}

// outcome names an error as the contract's code (or "ok").
func outcome(err error) string {
	if err == nil {
		return "ok"
	}
	if c := port.ErrorCode(err); c != "" {
		return c
	}
	return "error"
}

// phase runs the hostile clients until ctx ends, then destroys every
// session they made.
func (h *hostile) phase(ctx context.Context) {
	var wg sync.WaitGroup
	workers := []func(context.Context, *rand.Rand){
		h.keeper, h.keeper, h.spinningFlush, h.spinningTrace, h.spinningRestore,
		h.forgedRestores, h.forgedRestores, h.trickledBodies, h.oversizedJSON, h.capacityProbe,
	}
	if h.mcp != nil {
		workers = append(workers, h.mcpOrdinary, h.mcpMalformed, h.mcpOversized)
	}
	if h.stdio != nil {
		workers = append(workers, h.mcpStdio)
	}
	for i, w := range workers {
		wg.Go(func() { w(ctx, rand.New(rand.NewPCG(uint64(i), 27))) })
	}
	wg.Wait()
}

// session is a session a hostile worker made and destroys at its end.
type session struct {
	id string
	x  int
}

// create makes a session, waiting out capacity refusals. It is not
// abandoned when ctx ends (a create the client gives up on may still make
// a session on the server, which nobody would destroy).
func (h *hostile) create(ctx context.Context) (string, error) {
	for ctx.Err() == nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hostileBound)
		s, err := h.p.CreateSession(cctx, port.CreateSessionRequest{})
		cancel()
		var ce *port.CapacityError
		if errors.As(err, &ce) {
			pause(ctx, time.Second)
			continue
		}
		return s.ID, err
	}
	return "", ctx.Err()
}

func (h *hostile) destroy(ctx context.Context, id string) {
	if id == "" {
		return
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hostileBound)
	defer cancel()
	if err := h.p.DestroySession(dctx, id); err != nil && !errors.Is(err, port.ErrSessionNotFound) {
		h.fail("destroying hostile-phase session %s: %v", id, err)
	}
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// run executes a cell, waiting out capacity refusals (a wake needs a slot
// of max-sessions).
func (h *hostile) run(ctx context.Context, id, code string) (port.Result, error) {
	for {
		rctx, cancel := context.WithTimeout(ctx, hostileBound)
		res, err := h.p.Execute(rctx, id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, Timeout: time.Minute})
		cancel()
		var ce *port.CapacityError
		if errors.As(err, &ce) && ctx.Err() == nil {
			pause(ctx, time.Second)
			continue
		}
		return res, err
	}
}

// arm sets the session's variable (and a file), then runs the program.
func (h *hostile) arm(ctx context.Context, s *session, rng *rand.Rand, program string) error {
	s.x = rng.IntN(1 << 30)
	res, err := h.run(ctx, s.id, fmt.Sprintf("x = %d\nopen('k.txt', 'w').write(str(x))\n%sprint('armed')", s.x, program))
	if err != nil {
		return err
	}
	if res.Outcome != port.OutcomeCompleted || res.Stdout != "armed\n" {
		return fmt.Errorf("arming: outcome %s, stdout %q", res.Outcome, res.Stdout)
	}
	return nil
}

// check asks the session for its variable after what. It reports lost
// when the session said state_lost (acceptable for a hostile session
// only), and records a silent loss as a failure.
func (h *hostile) check(ctx context.Context, s *session, hostileProgram bool, what string) (lost bool) {
	res, err := h.run(ctx, s.id, "print(x, open('k.txt').read())")
	if ctx.Err() != nil {
		return false
	}
	kind := "ordinary session"
	if hostileProgram {
		kind = "hostile session"
	}
	if err != nil {
		h.note(what+": next call", outcome(err))
		h.fail("%s %s: its call after %s: %v", kind, s.id, what, err)
		return false
	}
	want := fmt.Sprintf("%d %d\n", s.x, s.x)
	switch {
	case res.StateLost:
		h.note(what+": next call", "state_lost")
		if !hostileProgram {
			h.fail("%s %s lost its variables after %s (state_lost true): %q", kind, s.id, what, res.Stderr)
		}
		return true
	case res.Outcome == port.OutcomeCompleted && res.Stdout == want:
		h.note(what+": next call", "kept")
		return false
	case strings.Contains(res.Stderr, "NameError"):
		h.note(what+": next call", "SILENT LOSS")
		h.fail("%s %s lost its variables silently after %s: NameError with state_lost false", kind, s.id, what)
		return true
	default:
		h.note(what+": next call", "wrong answer")
		h.fail("%s %s after %s: outcome %s, stdout %q, stderr %q", kind, s.id, what, res.Outcome, res.Stdout, res.Stderr)
		return false
	}
}

// awaitHibernation waits until the reaper has hibernated the session
// (its file is in the hibernate-dir). It reports false when the server
// does not hibernate, or ctx ended first.
func (h *hostile) awaitHibernation(ctx context.Context, id string) bool {
	if h.hibDir == "" {
		return false
	}
	path := filepath.Join(h.hibDir, id+".hibernated")
	deadline := time.Now().Add(hostileBound)
	for ctx.Err() == nil {
		if _, err := os.Stat(path); err == nil {
			return true
		}
		if time.Now().After(deadline) {
			h.fail("session %s idle for %s and not hibernated", id, hostileBound)
			return false
		}
		pause(ctx, 250*time.Millisecond)
	}
	return false
}

// snapshot takes a snapshot of the session, answered (any way) within
// hostileBound. A refusal for want of a slot of the snapshots and
// restores at once (503 at_capacity, before any work) is counted and
// waited out.
func (h *hostile) snapshot(ctx context.Context, id, what string) ([]byte, error) {
	for {
		var buf bytes.Buffer
		sctx, cancel := context.WithTimeout(ctx, hostileBound)
		err := h.p.SnapshotSession(sctx, id, &buf, port.SnapshotOptions{})
		timedOut := sctx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		h.note(what, outcome(err))
		if timedOut {
			h.fail("%s of %s: no answer within %s", what, id, hostileBound)
		}
		var ce *port.CapacityError
		if errors.As(err, &ce) {
			pause(ctx, time.Second)
			continue
		}
		return buf.Bytes(), err
	}
}

// restore restores a snapshot, answered (any way) within hostileBound;
// capacity refusals are counted and reported as errors. It holds a share
// of h.restores (see capacityProbe).
func (h *hostile) restore(ctx context.Context, b []byte, what string) (string, time.Duration, error) {
	h.restores.RLock()
	defer h.restores.RUnlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hostileBound)
	defer cancel()
	start := time.Now()
	s, err := h.p.RestoreSession(rctx, bytes.NewReader(b), port.SnapshotOptions{})
	took := time.Since(start)
	h.note(what, outcome(err))
	if rctx.Err() != nil {
		h.fail("%s: no answer within %s", what, hostileBound)
	}
	return s.ID, took, err
}

// restorePost is post to /snapshots/restore, holding a share of
// h.restores.
func (h *hostile) restorePost(ctx context.Context, what string, body io.Reader, size int64, header http.Header, giveUp time.Duration, want ...string) reply {
	h.restores.RLock()
	defer h.restores.RUnlock()
	return h.post(ctx, what, "/snapshots/restore", contract.SnapshotMediaType, body, size, header, giveUp, want...)
}

// loop runs round until ctx ends, with a session of its own made for it
// (remade when round asks) and destroyed at the end.
func (h *hostile) loop(ctx context.Context, name string, round func(s *session) (remake bool)) {
	h.loopEnding(ctx, name, false, round)
}

// loopEnding is loop; with hibernated, the session is destroyed once the
// reaper has hibernated it, so that destroying a hibernated session is
// part of what must leave the hibernate-dir as it was.
func (h *hostile) loopEnding(ctx context.Context, name string, hibernated bool, round func(s *session) (remake bool)) {
	var s session
	defer func() {
		if hibernated && s.id != "" {
			h.awaitHibernation(context.WithoutCancel(ctx), s.id)
		}
		h.destroy(ctx, s.id)
	}()
	for ctx.Err() == nil {
		if s.id == "" {
			id, err := h.create(ctx)
			if err != nil {
				if ctx.Err() == nil {
					h.fail("%s: create: %v", name, err)
					pause(ctx, time.Second)
				}
				continue
			}
			s = session{id: id}
		}
		if round(&s) {
			h.destroy(ctx, s.id)
			s = session{}
		}
	}
}

// keeper is an ordinary session whose variables must survive everything:
// hibernation and its wake, a snapshot, and the copy restored from it.
func (h *hostile) keeper(ctx context.Context, rng *rand.Rand) {
	armed := false
	h.loopEnding(ctx, "keeper", true, func(s *session) bool {
		if !armed {
			if err := h.arm(ctx, s, rng, ""); err != nil {
				if ctx.Err() == nil {
					h.fail("keeper: %v", err)
				}
				return true
			}
			armed = true
		}
		if h.awaitHibernation(ctx, s.id) && h.check(ctx, s, false, "ordinary: wake") {
			armed = false
			return true
		}
		b, err := h.snapshot(ctx, s.id, "ordinary: snapshot")
		if ctx.Err() != nil {
			return false
		}
		if err != nil {
			h.fail("snapshot of ordinary session %s: %v", s.id, err)
			return false
		}
		if h.check(ctx, s, false, "ordinary: snapshot") {
			armed = false
			return true
		}
		id, _, err := h.restore(ctx, b, "ordinary: restore")
		if err != nil {
			var ce *port.CapacityError
			if !errors.As(err, &ce) && ctx.Err() == nil {
				h.fail("restore of ordinary session %s's snapshot: %v", s.id, err)
			}
			return false
		}
		copied := session{id: id, x: s.x}
		h.check(ctx, &copied, false, "ordinary: restored copy")
		h.destroy(ctx, id)
		return false
	})
}

// spinningFlush is a session whose sys.stdout.flush spins in the host's
// steps; snapshots of it, their restored copies and its wakes from
// hibernation must keep its variables or say state_lost.
func (h *hostile) spinningFlush(ctx context.Context, rng *rand.Rand) {
	h.spinning(ctx, rng, "flush", spinInFlush)
}

// spinningTrace is the same with a trace function, which runs in the
// host's steps whatever the driver does.
func (h *hostile) spinningTrace(ctx context.Context, rng *rand.Rand) {
	h.spinning(ctx, rng, "trace", spinInTrace)
}

func (h *hostile) spinning(ctx context.Context, rng *rand.Rand, name, program string) {
	armed := false
	what := "hostile " + name + ": "
	round := 0
	h.loop(ctx, name, func(s *session) bool {
		if !armed {
			if err := h.arm(ctx, s, rng, program); err != nil {
				if ctx.Err() == nil {
					h.fail("%s: %v", name, err)
				}
				return true
			}
			armed = true
		}
		round++
		if round%2 == 0 {
			// Hibernated by the reaper, then woken by a call.
			if h.awaitHibernation(ctx, s.id) && h.check(ctx, s, true, what+"wake") {
				armed = false
			}
			return false
		}
		b, err := h.snapshot(ctx, s.id, what+"snapshot")
		if ctx.Err() != nil {
			return false
		}
		if err == nil {
			id, _, err := h.restore(ctx, b, what+"restore")
			if err == nil {
				copied := session{id: id, x: s.x}
				h.check(ctx, &copied, true, what+"restored copy")
				h.destroy(ctx, id)
			}
		}
		if h.check(ctx, s, true, what+"snapshot") {
			armed = false
		}
		return false
	})
}

// spinningRestore restores, in a loop, a sealed snapshot whose program
// spins in the step after a restore (issue 27, defect 3).
func (h *hostile) spinningRestore(ctx context.Context, rng *rand.Rand) {
	var snap []byte
	for ctx.Err() == nil && snap == nil {
		id, err := h.create(ctx)
		if err != nil {
			continue
		}
		s := session{id: id}
		if err := h.arm(ctx, &s, rng, spinInRestore); err == nil {
			snap, err = h.snapshot(ctx, id, "hostile restore: its snapshot")
			if err != nil {
				snap = nil
				if ctx.Err() == nil {
					h.fail("snapshot of a session that spins only after a restore: %v", err)
				}
			}
		} else if ctx.Err() == nil {
			h.fail("restore spinner: %v", err)
		}
		h.destroy(ctx, id)
	}
	// Each restore must fail in the restored step (500 runtime_failure),
	// within its deadline and a generous slack for the rest of the
	// restore on a loaded machine, or be refused before it starts: for
	// want of a slot (503), or by the tenant's rate (429).
	bound := restoredStepTimeout(h.memoryLimit) + restoreSlack
	for ctx.Err() == nil {
		id, took, err := h.restore(ctx, snap, "hostile restore: restore")
		switch c := outcome(err); {
		case ctx.Err() != nil:
		case c == "runtime_failure":
			h.mu.Lock()
			h.spinRestoreMax = max(h.spinRestoreMax, took)
			h.mu.Unlock()
			if took > bound {
				h.fail("a restore whose program spins in the restored step took %s to fail, over its deadline and slack (%s)", took.Round(time.Millisecond), bound)
			}
		case c == "at_capacity" || c == "rate_limited":
			pause(ctx, time.Second)
		case err == nil:
			h.fail("a snapshot whose program spins in the restored step was restored (as %s)", id)
			h.destroy(ctx, id)
		default:
			h.fail("a restore whose program spins in the restored step: %v; want 500 runtime_failure, 503 or 429", err)
		}
	}
}

// restoredStepTimeout is the deadline of the restored step of a server
// with the given memory limit: adapters/wasm's (2 s, and 20 ms per MiB of
// the limit).
func restoredStepTimeout(memoryLimit int64) time.Duration {
	return 2*time.Second + time.Duration(memoryLimit>>20)*20*time.Millisecond
}

// restoreSlack is what a restore that fails in its restored step may take
// beyond the step's deadline: reading and unsealing the snapshot and
// starting its interpreter, on a loaded machine. It is far above that,
// and below the 30 s such a restore cost before issue 27's fix.
const restoreSlack = 25 * time.Second

// reply is how a hostile request was answered: the status and the
// contract's code of the error body (if any); status 0 when there was no
// answer, and then how it ended.
type reply struct {
	status int
	code   string
	// ended is, without a status: "closed" (the server closed the
	// connection while the body was being sent), "refused" (nothing
	// listens), "abandoned" (the client gave up first), "phase ended" or
	// "no answer".
	ended string
}

func (r reply) String() string {
	switch {
	case r.status == 0:
		return r.ended
	case r.code != "":
		return fmt.Sprintf("%d %s", r.status, r.code)
	}
	return strconv.Itoa(r.status)
}

// is reports whether the reply is one of want, each "<status> <code>",
// "<status>" or how it ended ("closed").
func (r reply) is(want ...string) bool {
	return slices.Contains(want, r.String()) || r.status != 0 && slices.Contains(want, strconv.Itoa(r.status))
}

// post sends a request to serve and reads its answer, within hostileBound
// unless giveUp is shorter (then the client abandons it). The answer must
// be one of want (see reply.is); the end of the phase is not judged.
func (h *hostile) post(ctx context.Context, what, path, contentType string, body io.Reader, size int64, header http.Header, giveUp time.Duration, want ...string) reply {
	r := h.postTo(ctx, h.client, what, h.base+path, contentType, body, size, header, giveUp)
	if r.ended != "phase ended" && !r.is(want...) {
		h.fail("%s: answered %s, want one of %q", what, r, want)
	}
	return r
}

// postTo is post to any URL with any client, without judging the answer,
// which it counts and returns.
func (h *hostile) postTo(ctx context.Context, client *http.Client, what, url, contentType string, body io.Reader, size int64, header http.Header, giveUp time.Duration) reply {
	rctx, cancel := context.WithTimeout(ctx, min(giveUp, hostileBound))
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, url, body)
	if err != nil {
		h.fail("%s: %v", what, err)
		return reply{ended: "no request"}
	}
	req.ContentLength = size
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err == nil {
		r := reply{status: resp.StatusCode}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		var e contract.Error
		if json.Unmarshal(b, &e) == nil {
			r.code = e.Code
		}
		h.note(what, r.String())
		return r
	}
	var r reply
	switch {
	case ctx.Err() != nil:
		return reply{ended: "phase ended"}
	case rctx.Err() != nil && giveUp < hostileBound:
		r.ended = "abandoned"
	case rctx.Err() != nil:
		r.ended = "no answer"
	case errors.Is(err, syscall.ECONNREFUSED):
		// Nothing listens: the server is gone.
		r.ended = "refused"
	default:
		// The server closed the connection without an answer while the
		// body was being sent: a refusal, if a blunt one.
		r.ended = "closed"
	}
	h.note(what, r.ended)
	return r
}

// randomBody is n bytes: prefix, then random bytes, made as they are read.
type randomBody struct {
	prefix []byte
	rng    *rand.ChaCha8
	left   int64
}

func newRandomBody(prefix string, n int64, seed uint64) *randomBody {
	var s [32]byte
	for i := range s {
		s[i] = byte(seed >> (8 * (i % 8)))
	}
	return &randomBody{prefix: []byte(prefix), rng: rand.NewChaCha8(s), left: n}
}

func (r *randomBody) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), r.left)]
	n := copy(p, r.prefix)
	r.prefix = r.prefix[n:]
	_, _ = r.rng.Read(p[n:])
	r.left -= int64(len(p))
	return len(p), nil
}

// snapshotMagic is how a snapshot begins (port's format, version 1): a
// forged body that starts so is read and hashed in full before its seal
// fails.
const snapshotMagic = "codeport-snapshot-v1\n"

// forgedRestores sends forged restore bodies of 100 MB, streamed (chunked)
// or announced (Content-Length), some with another session's id to keep,
// and checks that an ordinary session beside them keeps its variables.
func (h *hostile) forgedRestores(ctx context.Context, rng *rand.Rand) {
	armed := false
	h.loop(ctx, "forged restores", func(s *session) bool {
		if !armed {
			if err := h.arm(ctx, s, rng, ""); err != nil {
				if ctx.Err() == nil {
					h.fail("forged restores: %v", err)
				}
				return true
			}
			armed = true
		}
		const size = 100 << 20
		// Refused as forged, or for want of a slot (of the restores at
		// once, or of max-sessions) before a byte is read: never a
		// session, never a failure of the server's.
		forged := []string{"400 invalid_snapshot", "503 at_capacity"}
		h.restorePost(ctx, "forged restore, 100 MB streamed",
			newRandomBody(snapshotMagic, size, rng.Uint64()), -1, nil, hostileBound, forged...)
		h.restorePost(ctx, "forged restore, 100 MB announced",
			newRandomBody("", size, rng.Uint64()), size, nil, hostileBound, forged...)
		// Another session's id to keep: it must answer as for any id
		// (issue 27, defect 11), and leave that session as it was.
		h.restorePost(ctx, "forged restore keeping a live session's id",
			newRandomBody(snapshotMagic, 1<<20, rng.Uint64()), -1, http.Header{contract.KeepSessionIDHeader: {s.id}}, hostileBound, forged...)
		if h.check(ctx, s, false, "forged restores beside it") {
			armed = false
			return true
		}
		return false
	})
}

// trickle yields a few bytes a second, for ever.
type trickle struct {
	ctx   context.Context
	chunk []byte
}

func (t *trickle) Read(p []byte) (int, error) {
	select {
	case <-t.ctx.Done():
		return 0, t.ctx.Err()
	case <-time.After(time.Second):
	}
	return copy(p, t.chunk), nil
}

// trickledBodies sends a restore body and an exec's JSON body at 4 bytes
// a second, far below the server's minimum body rate (4 KiB/s averaged
// over 30 s): the server must cut each off, with 408 or by closing the
// connection, long before the client would give up (trickleGiveUp). The
// restore body begins with a real snapshot's header, so that it gets as
// far as the server's spool before it trickles.
func (h *hostile) trickledBodies(ctx context.Context, _ *rand.Rand) {
	// The client's patience: three times the server's window.
	const trickleGiveUp = 90 * time.Second
	var head []byte
	h.loop(ctx, "trickled bodies", func(s *session) bool {
		if head == nil {
			snap, err := h.snapshot(ctx, s.id, "trickled bodies: a snapshot for its header")
			if err != nil {
				if ctx.Err() == nil {
					h.fail("trickled bodies: snapshot: %v", err)
				}
				return true
			}
			if head = snapshotHead(snap); head == nil {
				h.fail("trickled bodies: the snapshot (%d bytes) has no header this soak can read", len(snap))
				return true
			}
		}
		tctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cutOff := []string{"408 request_timeout", "closed"}
		var wg sync.WaitGroup
		wg.Go(func() {
			// A restore may be refused before its body is read, for want
			// of a slot of the restores at once: sent again until one is
			// admitted and trickles, or the phase ends.
			for tctx.Err() == nil {
				body := io.MultiReader(bytes.NewReader(head), &trickle{ctx: tctx, chunk: []byte("abcd")})
				r := h.restorePost(tctx, "restore body trickled", body, -1, nil, trickleGiveUp, append(cutOff, "503 at_capacity")...)
				if !r.is("503 at_capacity") {
					return
				}
				pause(tctx, time.Second)
			}
		})
		wg.Go(func() {
			body := io.MultiReader(strings.NewReader(`{"tool":"code_execution","code":"`), &trickle{ctx: tctx, chunk: []byte("1+1;")})
			h.post(tctx, "exec body trickled", "/sessions/"+s.id+"/exec", "application/json", body, -1, nil, trickleGiveUp, cutOff...)
		})
		wg.Wait()
		return false
	})
}

// snapshotHead is the header of a sealed snapshot (port's format: the
// magic, a 4-byte length, the header's JSON), nil when it is not one.
func snapshotHead(snap []byte) []byte {
	n := len(snapshotMagic) + 4
	if len(snap) < n || string(snap[:len(snapshotMagic)]) != snapshotMagic {
		return nil
	}
	n += int(binary.BigEndian.Uint32(snap[len(snapshotMagic):n]))
	if n > len(snap) || n > 1<<20 {
		return nil
	}
	return snap[:n]
}

// oversizedJSON sends JSON bodies far over the request limit, announced
// and streamed, and one nested past any decoder's depth.
func (h *hostile) oversizedJSON(ctx context.Context, rng *rand.Rand) {
	h.loop(ctx, "oversized JSON", func(s *session) bool {
		const size = 100 << 20
		head, tail := `{"tool":"code_execution","code":"`, `"}`
		code := func() io.Reader {
			return io.MultiReader(strings.NewReader(head), io.LimitReader(repeatReader('a'), size), strings.NewReader(tail))
		}
		tooLarge := "413 request_too_large"
		h.post(ctx, "exec JSON of 100 MB streamed", "/sessions/"+s.id+"/exec", "application/json", code(), -1, nil, hostileBound, tooLarge)
		h.post(ctx, "exec JSON of 100 MB announced", "/sessions/"+s.id+"/exec", "application/json", code(), int64(len(head)+size+len(tail)), nil, hostileBound, tooLarge)
		h.post(ctx, "create JSON of 100 MB streamed", "/sessions", "application/json",
			io.MultiReader(strings.NewReader(`{"metadata":{"a":"`), io.LimitReader(repeatReader('b'), size), strings.NewReader(`"}}`)), -1, nil, hostileBound, tooLarge)
		depth := 100000 + rng.IntN(1000)
		h.post(ctx, "exec JSON nested 100000 deep", "/sessions/"+s.id+"/exec", "application/json",
			strings.NewReader(strings.Repeat("[", depth)+strings.Repeat("]", depth)), -1, nil, hostileBound, "422 invalid_request")
		return false
	})
}

// repeatReader yields one byte for ever.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

// capacityProbe fills the server to max-sessions, then sends a restore
// (issue 27, defect 5): it must be refused with 503 at_capacity before a
// byte of its body is read. The body is announced and held back until the
// server asks for it (Expect: 100-continue), so the client knows whether
// it was read; and no restore spool may have appeared. A session freed
// by another client between the fill and the restore lets the restore in
// (400, its body being forged); the probe then fills again.
func (h *hostile) capacityProbe(ctx context.Context, rng *rand.Rand) {
	for ctx.Err() == nil {
		pause(ctx, 5*time.Second+time.Duration(rng.IntN(5000))*time.Millisecond)
		if ctx.Err() != nil {
			return
		}
		h.probeFull(ctx, rng)
	}
}

func (h *hostile) probeFull(ctx context.Context, rng *rand.Rand) {
	var made []string
	defer func() {
		for _, id := range made {
			h.destroy(ctx, id)
		}
	}()
	// Alone among the phase's restores, for the spool's sake.
	h.restores.Lock()
	defer h.restores.Unlock()
	for try := 0; try < 10 && ctx.Err() == nil; try++ {
		// Fill: create until the server says it is at capacity.
		for ctx.Err() == nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hostileBound)
			s, err := h.p.CreateSession(cctx, port.CreateSessionRequest{})
			cancel()
			if err == nil {
				made = append(made, s.ID)
				if len(made) > 500 {
					h.fail("capacity probe: %d sessions made and the server not at capacity", len(made))
					return
				}
				continue
			}
			var ce *port.CapacityError
			if !errors.As(err, &ce) {
				h.fail("capacity probe: create: %v", err)
				return
			}
			break
		}
		before := restoreSpools(h.tmpDir)
		body := &countingReader{r: newRandomBody("", 64<<20, rng.Uint64())}
		r := h.postTo(ctx, h.probeClient, "restore at capacity", h.base+"/snapshots/restore", contract.SnapshotMediaType,
			body, 64<<20, http.Header{"Expect": {"100-continue"}}, hostileBound)
		spools := restoreSpools(h.tmpDir)
		switch {
		case r.ended == "phase ended":
			return
		case r.is("503 at_capacity"):
			h.mu.Lock()
			h.fullProbes++
			h.mu.Unlock()
			if n := body.n.Load(); n > 0 {
				h.fail("restore at capacity: refused 503, but only after %d bytes of its body were read", n)
			}
			for name := range spools {
				if !before[name] {
					h.fail("restore at capacity: refused 503, and a restore spool %s appeared", name)
				}
			}
			return
		case r.is("400 invalid_snapshot"):
			// Room appeared; fill it and try again.
		default:
			h.fail("restore at capacity: answered %s, want 503 at_capacity", r)
			return
		}
	}
}

// restoreSpools are the names of the server's restore spools in dir.
func restoreSpools(dir string) map[string]bool {
	m := map[string]bool{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "codeport-restore-") {
			m[e.Name()] = true
		}
	}
	return m
}

// countingReader counts what was read of r.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
