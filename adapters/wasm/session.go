package wasm

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell"
	"github.com/codeport/codeport/internal/editor"
	"github.com/codeport/codeport/port"
)

// session is one leased session: a sandbox (an interpreter, a workspace and
// a temporary directory that share one quota) and its lease.
type session struct {
	// sandbox's interp is nil after a loss, until the next Python call;
	// it is guarded by mu.
	*sandbox
	id      string
	created time.Time
	idle    time.Duration
	// lifetime bounds the session from created.
	lifetime time.Duration

	lastActive atomic.Int64 // UnixNano
	busy       atomic.Bool
	// fileOps counts the file operations under way (awake): like a
	// call, they keep the session from being idle.
	fileOps atomic.Int32

	// ctx ends when the session is destroyed; a running call watches it.
	ctx    context.Context
	cancel context.CancelFunc

	// mu is held by the call in progress: one call at a time, and a second
	// one is refused rather than queued (unless mu is held by a
	// hibernation: see lockCall).
	mu     sync.Mutex
	editor *editor.Editor
	shell  *wasmshell.Shell // nil until the first bash call
	// gone is set under mu; the file operations, which do not take it,
	// read it too.
	gone atomic.Bool
	// lost, guarded by mu, says why the session's interpreter was lost
	// outside a call (a host step the program did not let finish, a
	// snapshot saved without the memory): its next call reports it
	// (StateLost, and a note saying why), then it is cleared. A loss in a
	// call is reported by that call and never set here.
	lost string

	// hibernating is set, to a channel closed when it ends, while a
	// hibernation holds or tries to take mu, so that a call meeting it
	// waits for it instead of being refused as busy.
	hibernating atomic.Pointer[chan struct{}]

	// asleep: the session is hibernated (see hibernate.go): its sandbox
	// and editor are nil and its state is in hibFile. It changes under mu
	// and hmu; the file operations, which do not take mu, hold hmu for
	// reading so that the session is not hibernated under them.
	asleep  atomic.Bool
	hmu     sync.RWMutex
	hibFile string
	// hibLost: the file holds the session's files but not its memory
	// (see snapshotMeta.Lost); guarded like hibFile.
	hibLost bool
}

func (s *session) touch() { s.lastActive.Store(time.Now().UnixNano()) }

func (s *session) handle() port.Session {
	return port.Session{
		ID:             s.id,
		IdleTimeout:    s.idle,
		MaxLifetime:    s.lifetime,
		CreatedAt:      s.created,
		LastActivityAt: time.Unix(0, s.lastActive.Load()),
	}
}

// expired says why the session should be reclaimed at now, or "".
func (s *session) expired(now time.Time) string {
	if now.Sub(s.created) >= s.lifetime {
		return "lifetime"
	}
	if s.idleSince(now) >= s.idle {
		return "idle"
	}
	return ""
}

// idleSince is how long s has been idle at now: 0 while a call or a file
// operation is under way (an upload may outlast the idle timeout).
func (s *session) idleSince(now time.Time) time.Duration {
	if s.busy.Load() || s.fileOps.Load() > 0 {
		return 0
	}
	return now.Sub(time.Unix(0, s.lastActive.Load()))
}

// destroy stops a call in progress, waits for it, and removes everything
// the session holds; it reports whether the session was hibernated (it
// then held no slot). The session must already be out of the adapter's
// map. A file operation that found the session before finds it gone
// (awake); one already under way is not waited for (an upload may take
// long), but the session's directories are then removed, never handed
// to another session while it may still reach them.
func (s *session) destroy() (wasAsleep bool) {
	s.cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hmu.TryLock() {
		defer s.hmu.Unlock()
	} else if s.sandbox != nil {
		s.spareDirs = nil
	}
	return s.destroyLocked()
}

// destroyLocked is destroy with s.mu held, and s.hmu unless the
// sandbox's directories will not be reused.
func (s *session) destroyLocked() (wasAsleep bool) {
	s.cancel()
	if s.gone.Load() {
		return false
	}
	s.gone.Store(true)
	if s.asleep.Load() {
		_ = os.Remove(s.hibFile)
		return true
	}
	if s.shell != nil {
		s.shell.Close()
	}
	s.discard()
	s.interp = nil
	return false
}
