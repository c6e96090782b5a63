package wasm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/codeport/codeport/port"
)

// Hibernation (Settings.HibernateAfter): a session idle that long is saved
// to a file in the hibernation directory (a session snapshot, as
// SnapshotSession writes it, after a line of JSON naming the session) and
// its sandbox released: its memory, its interpreter and its directories.
// Its id stays in the adapter's map, so the next call on it restores it
// under the same id, transparently (StateLost false); only that call pays
// the restore. A hibernated session holds no slot of MaxSessions.
//
// With a hibernation directory of its own (Settings.HibernateDir) the
// adapter also hibernates every live session when it is closed, within
// hibernateOnCloseLimit, and at start takes the sessions the directory
// holds: a restart of the process keeps its clients' session ids and
// state. One process uses a directory at a time (a lock file). Without
// one, hibernated sessions live in the process's part of the sessions
// directory and end with it.

// hibernateOnCloseLimit bounds how long Close spends saving sessions; the
// ones not saved by then are lost, and logged.
const hibernateOnCloseLimit = 60 * time.Second

// hibernatedHeader is the first line of a hibernation file.
type hibernatedHeader struct {
	ID         string    `json:"id"`
	Created    time.Time `json:"created"`
	LastActive time.Time `json:"last_active"`
	Idle       string    `json:"idle"`
	Lifetime   string    `json:"lifetime"`
}

const hibernatedSuffix = ".hibernated"

// hibernationDir makes the directory hibernated sessions are kept in, and
// locks it when it is the configured one.
func (a *adapter) openHibernation() error {
	if a.cfg.HibernateDir == "" {
		a.hibDir = filepath.Join(a.sessionsDir, "hibernated")
		return os.MkdirAll(a.hibDir, 0o700)
	}
	dir, err := filepath.Abs(a.cfg.HibernateDir)
	if err != nil {
		return fmt.Errorf("hibernate-dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hibernate-dir: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return fmt.Errorf("hibernate-dir %s: %w", dir, err)
	}
	a.hibDir, a.hibLock = dir, lock
	return a.loadHibernated()
}

// loadHibernated registers the sessions a previous process left in the
// hibernation directory, asleep. A file that cannot be read is set aside
// (renamed *.unreadable) and logged, never deleted.
func (a *adapter) loadHibernated() error {
	entries, err := os.ReadDir(a.hibDir)
	if err != nil {
		return fmt.Errorf("hibernate-dir: %w", err)
	}
	now := time.Now()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, hibernatedSuffix) || !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(a.hibDir, name)
		h, err := readHibernatedHeader(path)
		if err == nil && h.ID+hibernatedSuffix != name {
			err = errors.New("the file's name is not its session's id")
		}
		var idle, lifetime time.Duration
		if err == nil {
			idle, err = time.ParseDuration(h.Idle)
		}
		if err == nil {
			lifetime, err = time.ParseDuration(h.Lifetime)
		}
		if err != nil {
			a.cfg.logger.Warn("hibernated session unreadable; set aside", "file", name, "error", err)
			_ = os.Rename(path, path+".unreadable")
			continue
		}
		sctx, cancel := context.WithCancel(context.Background())
		s := &session{id: h.ID, created: h.Created, idle: a.cfg.Limits().IdleTimeout(idle),
			lifetime: a.cfg.Limits().Lifetime(lifetime), ctx: sctx, cancel: cancel, hibFile: path}
		s.asleep.Store(true)
		// The time it spent stopped counts as idle: a session past its
		// idle timeout or lifetime is reclaimed by the next reap.
		last := h.LastActive
		if last.After(now) {
			last = now
		}
		s.lastActive.Store(last.UnixNano())
		a.sessions[s.id] = s
		a.metrics.SessionOpened()
		a.metrics.Hibernated(1)
	}
	return nil
}

func readHibernatedHeader(path string) (hibernatedHeader, error) {
	var h hibernatedHeader
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
	if err != nil {
		return h, fmt.Errorf("no header line: %w", err)
	}
	if err := json.Unmarshal([]byte(line), &h); err != nil {
		return h, err
	}
	// An id of the adapter's own, or one a moved session kept: both are
	// safe as file names.
	if err := port.CheckMovedID(h.ID); err != nil {
		return h, err
	}
	return h, nil
}

// hibernate saves an idle session to its file and releases its sandbox. It
// gives up (false) when the session is in a call or its files are in use
// (unless wait: then it waits for them, as Close does once no call can be
// in flight, so that a hibernation the reaper has begun is finished, not
// raced), or when saving fails (the session then stays as it was).
func (a *adapter) hibernate(ctx context.Context, s *session, wait bool) bool {
	if wait {
		s.mu.Lock()
	} else if !s.mu.TryLock() {
		return false
	}
	defer s.mu.Unlock()
	if s.gone || s.asleep.Load() {
		return false
	}
	if wait {
		s.hmu.Lock()
	} else if !s.hmu.TryLock() {
		return false // a file operation is under way
	}
	defer s.hmu.Unlock()
	t := time.Now()
	path := filepath.Join(a.hibDir, s.id+hibernatedSuffix)
	if err := a.writeHibernated(ctx, s, path); err != nil {
		_ = os.Remove(path + ".tmp")
		a.cfg.logger.Warn("session not hibernated", "session", s.id, "error", err)
		return false
	}
	if s.shell != nil {
		s.shell.Close()
		s.shell = nil
	}
	s.sandbox.discard()
	s.sandbox, s.hibFile = nil, path
	s.editor = nil
	s.asleep.Store(true)
	a.releaseSlot()
	a.metrics.Hibernated(1)
	a.cfg.logger.Info("session hibernated", "session", s.id, "seconds", time.Since(t).Seconds())
	return true
}

func (a *adapter) writeHibernated(ctx context.Context, s *session, path string) error {
	f, err := os.OpenFile(path+".tmp", os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 256<<10)
	hdr, _ := json.Marshal(hibernatedHeader{ID: s.id, Created: s.created, LastActive: time.Unix(0, s.lastActive.Load()),
		Idle: s.idle.String(), Lifetime: s.lifetime.String()})
	bw.Write(hdr)
	bw.WriteByte('\n')
	// Within this process the image is the same: only what differs from
	// it is written. Kept for the next start, the whole memory is.
	if err := a.saveLocked(ctx, s, bw, a.hibLock == nil); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// wake restores a hibernated session in place, under its id; s.mu is
// held. A session whose file cannot be restored is lost: it is removed
// and the call gets ErrSessionNotFound saying why.
func (a *adapter) wake(ctx context.Context, s *session) error {
	if !s.asleep.Load() {
		return nil
	}
	s.hmu.Lock()
	defer s.hmu.Unlock()
	if !s.asleep.Load() {
		return nil
	}
	if err := a.WaitReady(ctx); err != nil {
		return err
	}
	if err := a.reserveSlot(); err != nil {
		return err
	}
	t := time.Now()
	sb, err := a.restoreFile(ctx, s.hibFile)
	if err != nil {
		a.releaseSlot()
		if errors.Is(err, port.ErrAtCapacity) || ctx.Err() != nil {
			return err
		}
		a.cfg.logger.Warn("hibernated session could not be restored; removed", "session", s.id, "error", err)
		a.mu.Lock()
		if a.sessions[s.id] == s {
			delete(a.sessions, s.id)
		}
		a.mu.Unlock()
		_ = os.Rename(s.hibFile, s.hibFile+".unreadable")
		s.gone = true
		s.cancel()
		a.metrics.Hibernated(-1)
		a.metrics.SessionClosed()
		return fmt.Errorf("%w: session %s was hibernated and could not be restored", port.ErrSessionNotFound, s.id)
	}
	_ = os.Remove(s.hibFile)
	s.sandbox, s.hibFile = sb, ""
	s.editor = a.newEditor(sb)
	s.asleep.Store(false)
	a.metrics.Hibernated(-1)
	a.metrics.Woken(time.Since(t).Seconds())
	return nil
}

func (a *adapter) restoreFile(ctx context.Context, path string) (*sandbox, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	if _, err := br.ReadString('\n'); err != nil {
		return nil, fmt.Errorf("%w: no header line", port.ErrInvalidSnapshot)
	}
	sb, _, err := a.restoreSandbox(ctx, br)
	return sb, err
}

// awake makes sure s has its sandbox before a call that does not hold
// s.mu (the file operations): it wakes s if needed, then holds s.hmu for
// reading until release is called, so that s cannot be hibernated under
// the operation.
func (a *adapter) awake(ctx context.Context, s *session) (release func(), err error) {
	for {
		s.hmu.RLock()
		if !s.asleep.Load() {
			return s.hmu.RUnlock, nil
		}
		s.hmu.RUnlock()
		s.mu.Lock()
		err := a.wake(ctx, s)
		gone := s.gone
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if gone {
			return nil, fmt.Errorf("%w: %q", port.ErrSessionNotFound, s.id)
		}
	}
}

// hibernateIdle hibernates the sessions idle past HibernateAfter.
func (a *adapter) hibernateIdle(ctx context.Context, now time.Time) {
	if a.cfg.HibernateAfter <= 0 {
		return
	}
	a.mu.Lock()
	var sleepy []*session
	for _, s := range a.sessions {
		if !s.asleep.Load() && !s.busy.Load() && now.Sub(time.Unix(0, s.lastActive.Load())) >= a.cfg.HibernateAfter {
			sleepy = append(sleepy, s)
		}
	}
	a.mu.Unlock()
	for _, s := range sleepy {
		if ctx.Err() != nil {
			return
		}
		a.hibernate(ctx, s, false)
	}
}

// hibernateAll saves every live session that is awake, at Close, within
// hibernateOnCloseLimit, two at a time.
func (a *adapter) hibernateAll(live []*session) {
	ctx, cancel := context.WithTimeout(context.Background(), hibernateOnCloseLimit)
	defer cancel()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, s := range live {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			a.hibernate(ctx, s, true)
		}()
	}
	wg.Wait()
}
