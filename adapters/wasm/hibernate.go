package wasm

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
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
// the restore. A hibernated session holds no slot of MaxSessions. A call
// that arrives while its session is being hibernated waits for the
// hibernation, then wakes it.
//
// With a hibernation directory of its own (Settings.HibernateDir) the
// adapter also hibernates every live session when it is closed, and at
// start takes the sessions the directory holds: a restart of the process
// keeps its clients' session ids and state. One process uses a directory
// at a time (a lock file). Without one, hibernated sessions live in the
// process's part of the sessions directory and end with it.
//
// What is kept is never reported as more than it is. A session whose
// program does not let the step before the save finish (its own code
// running there: see hostStepTimeout) loses its interpreter: it is saved
// with its files only, marked so, and says state_lost at its next call.
// A file whose memory this process cannot take (another runtime build, a
// smaller memory limit) wakes the same way. Only a file that fails its
// checks is set aside (renamed *.unreadable); a host error while waking
// (no space, an I/O error) leaves the file and the session as they were
// and refuses the call as at capacity, to be retried.
//
// The directory's files are opened without following links, written
// 0600, and the directory itself must not be writable by others (see
// checkHibernateDir).

// hibernateOnCloseLimit bounds how long Close goes on starting the saves
// of live sessions; the ones not started by then are lost, and logged by
// id. A save already started is not cut: its step in the interpreter has
// its own deadline (hostStepTimeout), and the rest is writing the file.
const hibernateOnCloseLimit = 60 * time.Second

// unreadableKeep is how long a file set aside as unreadable is kept, for
// an operator to look at, before a start of the adapter removes it. A
// temporary left by a save that never finished (the process was killed)
// is removed at the next start at once: the directory's lock is then
// that process's, so no writer is left.
const unreadableKeep = 7 * 24 * time.Hour

// hibernatedHeader is the first line of a hibernation file.
type hibernatedHeader struct {
	ID         string    `json:"id"`
	Created    time.Time `json:"created"`
	LastActive time.Time `json:"last_active"`
	Idle       string    `json:"idle"`
	Lifetime   string    `json:"lifetime"`
	// StateLost: the file holds the session's files but not its
	// interpreter (see snapshotMeta.Lost).
	StateLost bool `json:"state_lost,omitempty"`
}

// hibernatedHeaderMax bounds the header line, its newline included.
const hibernatedHeaderMax = 4096

const (
	hibernatedSuffix = ".hibernated"
	unreadableSuffix = ".unreadable"
	tmpSuffix        = ".tmp"
)

// openHibernation makes the directory hibernated sessions are kept in,
// and, when it is the configured one, checks its mode, locks it, sweeps
// what earlier processes left and takes their sessions.
func (a *adapter) openHibernation() error {
	if a.cfg.settings.HibernateDir == "" {
		a.hibDir = filepath.Join(a.sessionsDir, "hibernated")
		return os.MkdirAll(a.hibDir, 0o700)
	}
	dir, err := filepath.Abs(a.cfg.settings.HibernateDir)
	if err != nil {
		return fmt.Errorf("hibernate-dir: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("hibernate-dir: %w", err)
	}
	if err := checkHibernateDir(dir, a.cfg.logger); err != nil {
		return fmt.Errorf("hibernate-dir %s: %w", dir, err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return fmt.Errorf("hibernate-dir %s: %w", dir, err)
	}
	a.hibDir, a.hibLock = dir, lock
	a.sweepHibernated(time.Now())
	return a.loadHibernated()
}

// sweepHibernated removes from the hibernation directory the temporaries
// of saves that never finished and the files set aside longer ago than
// unreadableKeep.
func (a *adapter) sweepHibernated(now time.Time) {
	entries, err := os.ReadDir(a.hibDir)
	if err != nil {
		a.cfg.logger.Warn("hibernate-dir: cannot list it to remove leftovers", "error", err)
		return
	}
	var tmps, unreadable int
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			continue
		}
		switch {
		case strings.HasSuffix(name, hibernatedSuffix+tmpSuffix):
			if os.Remove(filepath.Join(a.hibDir, name)) == nil {
				tmps++
			}
		case strings.HasSuffix(name, unreadableSuffix):
			fi, err := e.Info()
			if err == nil && now.Sub(fi.ModTime()) >= unreadableKeep && os.Remove(filepath.Join(a.hibDir, name)) == nil {
				unreadable++
			}
		}
	}
	if tmps+unreadable > 0 {
		a.cfg.logger.Info("hibernate-dir: removed leftovers", "unfinished_saves", tmps, "unreadable_files", unreadable, "unreadable_kept_for", unreadableKeep.String())
	}
}

// setAside renames a hibernation file that cannot be restored to
// *.unreadable, dated now (its age is counted from now: sweepHibernated).
func setAside(path string) {
	if os.Rename(path, path+unreadableSuffix) == nil {
		touchNoFollow(path + unreadableSuffix)
	}
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
			setAside(path)
			continue
		}
		// A time to come (a clock set back since, an edited file) would
		// make the session's age negative, and its lifetime endless.
		created := h.Created
		if created.After(now) {
			created = now
		}
		sctx, cancel := context.WithCancel(context.Background())
		s := &session{id: h.ID, created: created, idle: a.cfg.settings.Limits().IdleTimeout(idle),
			lifetime: a.cfg.settings.Limits().Lifetime(lifetime), ctx: sctx, cancel: cancel, hibFile: path, hibLost: h.StateLost}
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

// openHibernated opens the hibernation file at path for reading: without
// following a link, and only a regular file. A FIFO put in its place is
// not opened (an open for reading waits for a writer, past any deadline,
// and would let a waiting writer through); one that takes its place
// during the open is opened without waiting (nonBlock), and refused.
func openHibernated(path string) (*os.File, error) {
	notRegular := fmt.Errorf("%w: %s is not a regular file", port.ErrInvalidSnapshot, filepath.Base(path))
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular
	}
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = notRegular
		}
		return nil, err
	}
	return f, nil
}

func readHibernatedHeader(path string) (hibernatedHeader, error) {
	var h hibernatedHeader
	f, err := openHibernated(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, hibernatedHeaderMax)).ReadString('\n')
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
// raced), or when saving fails (the session then stays as it was, less
// its interpreter if that was lost in the step before the save). A
// session whose interpreter is lost in that step is hibernated with its
// files only, and says state_lost when woken.
func (a *adapter) hibernate(ctx context.Context, s *session, wait bool) bool {
	// A call that meets the hibernation waits for it (lockCall). The
	// channel is closed, and the mark removed, only after s.mu is
	// released (defers run last first).
	done := make(chan struct{})
	s.hibernating.Store(&done)
	defer func() {
		s.hibernating.CompareAndSwap(&done, nil)
		close(done)
	}()
	if wait {
		s.mu.Lock()
	} else if !s.mu.TryLock() {
		return false
	}
	defer s.mu.Unlock()
	if s.gone.Load() || s.asleep.Load() {
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
	lost, err := a.writeHibernated(ctx, s, path)
	if err != nil {
		_ = os.Remove(path + tmpSuffix)
		a.cfg.logger.Warn("session not hibernated", "session", s.id, "error", err)
		return false
	}
	if s.shell != nil {
		s.shell.Close()
		s.shell = nil
	}
	s.sandbox.discard()
	s.sandbox, s.hibFile, s.hibLost = nil, path, lost
	s.editor = nil
	s.asleep.Store(true)
	a.releaseSlot()
	a.metrics.Hibernated(1)
	if lost {
		a.cfg.logger.Warn("session hibernated with its files only: its interpreter was lost", "session", s.id, "seconds", time.Since(t).Seconds())
	} else {
		a.cfg.logger.Info("session hibernated", "session", s.id, "seconds", time.Since(t).Seconds())
	}
	return true
}

// writeHibernated saves s to path (through path.tmp, opened without
// following a link and written 0600); lost reports that the session's
// interpreter was lost, in the step before the save or earlier, and the
// file holds its files only.
func (a *adapter) writeHibernated(ctx context.Context, s *session, path string) (lost bool, err error) {
	if s.interp != nil {
		// A failure costs the interpreter (the session reports it), not
		// the session: its files are saved below, marked lost.
		_ = a.prepareLocked(ctx, s)
	}
	lost = s.interp == nil && s.lost != ""
	tmp := path + tmpSuffix
	// A leftover (or anything else) at the temporary's name is removed,
	// not followed: O_EXCL then creates the file or fails.
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return false, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 256<<10)
	hdr, _ := json.Marshal(hibernatedHeader{ID: s.id, Created: s.created, LastActive: time.Unix(0, s.lastActive.Load()),
		Idle: s.idle.String(), Lifetime: s.lifetime.String(), StateLost: lost})
	bw.Write(hdr)
	bw.WriteByte('\n')
	// Within this process the image is the same: only what differs from
	// it is written. Kept for the next start, the whole memory is. Always
	// compact: a node holds thousands of these on its disk.
	if _, err := a.saveLocked(s, bw, a.hibLock == nil, true); err != nil {
		return false, err
	}
	if err := bw.Flush(); err != nil {
		return false, err
	}
	if err := f.Sync(); err != nil {
		return false, err
	}
	if err := f.Close(); err != nil {
		return false, err
	}
	return lost, os.Rename(tmp, path)
}

// wake restores a hibernated session in place, under its id; s.mu is
// held. A session whose file fails its checks is lost: the file is set
// aside, the session removed, and the call gets ErrSessionNotFound saying
// why. A host error (no space, an I/O error, a full process) changes
// nothing: the call is refused as at capacity, and a later one retries.
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
	rs, err := a.restoreFile(ctx, s.hibFile)
	if err != nil {
		a.releaseSlot()
		switch {
		case errors.Is(err, port.ErrAtCapacity) || ctx.Err() != nil:
			return err
		case errors.Is(err, fs.ErrNotExist):
			a.cfg.logger.Warn("hibernated session's file is gone; session removed", "session", s.id, "error", err)
		case unrestorable(err):
			a.cfg.logger.Warn("hibernated session could not be restored; file set aside, session removed", "session", s.id, "error", err)
			setAside(s.hibFile)
		default:
			a.cfg.logger.Warn("hibernated session not woken: a host error; its file is kept for a later call", "session", s.id, "error", err)
			retry := max(a.cfg.settings.RetryAfter, time.Second)
			return &port.CapacityError{Resource: "host", RetryAfter: retry,
				Detail: fmt.Sprintf("at capacity: session %s is hibernated and could not be woken now (a host error, logged); retry after %s", s.id, retry)}
		}
		a.mu.Lock()
		if a.sessions[s.id] == s {
			delete(a.sessions, s.id)
		}
		a.mu.Unlock()
		s.gone.Store(true)
		s.cancel()
		a.metrics.Hibernated(-1)
		a.metrics.SessionClosed()
		return fmt.Errorf("%w: session %s was hibernated and could not be restored", port.ErrSessionNotFound, s.id)
	}
	_ = os.Remove(s.hibFile)
	s.sandbox, s.hibFile, s.hibLost = rs.sb, "", false
	s.lost = rs.lost
	s.editor = a.newEditor(rs.sb)
	s.asleep.Store(false)
	a.metrics.Hibernated(-1)
	a.metrics.Woken(time.Since(t).Seconds())
	return nil
}

// unrestorable says whether a restore failed on what the file holds (it
// fails its checks, or its files do not fit this backend's limits), as
// opposed to a host error, after which the same file may restore.
func unrestorable(err error) bool {
	return errors.Is(err, port.ErrInvalidSnapshot) || errors.Is(err, port.ErrFileTooLarge) ||
		errors.Is(err, port.ErrPathEscapesWorkspace) || errors.Is(err, port.ErrInvalidRequest)
}

// readErr is a reader that keeps the first error of its reader other than
// its end, so that a restore that fails on a read error (EIO) is told
// from one that fails on the contents.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// restoreFile restores the hibernation file at path; a memory this
// process cannot take, or an interpreter that does not resume, costs the
// session its interpreter, not its files (restoreSandbox's salvage).
func (a *adapter) restoreFile(ctx context.Context, path string) (restored, error) {
	f, err := openHibernated(path)
	if err != nil {
		return restored{}, err
	}
	defer f.Close()
	re := &readErr{r: f}
	br := bufio.NewReaderSize(re, 256<<10)
	// The header is bounded as at start (the file may have been replaced
	// since): a line that does not end in time fails, in the buffer.
	line, err := br.ReadSlice('\n')
	if err == nil && len(line) > hibernatedHeaderMax {
		err = bufio.ErrBufferFull
	}
	var rs restored
	if err == nil {
		rs, err = a.restoreSandbox(ctx, br, true, nil)
	} else {
		err = fmt.Errorf("%w: no header line", port.ErrInvalidSnapshot)
	}
	if err != nil && re.err != nil {
		return restored{}, fmt.Errorf("%w: reading %s: %w", port.ErrRuntimeFailure, filepath.Base(path), re.err)
	}
	return rs, err
}

// awake makes sure s has its sandbox before a call that does not hold
// s.mu (the file operations): it wakes s if needed, then holds s.hmu for
// reading until release is called, so that s cannot be hibernated under
// the operation, nor its directories handed to another session (see
// destroy). A session destroyed since the operation found it is not
// found: its directories may be another session's now.
func (a *adapter) awake(ctx context.Context, s *session) (release func(), err error) {
	for {
		s.hmu.RLock()
		if s.gone.Load() {
			s.hmu.RUnlock()
			return nil, fmt.Errorf("%w: %q", port.ErrSessionNotFound, s.id)
		}
		if !s.asleep.Load() {
			// The session is in use until the operation ends (expired):
			// an upload may outlast the idle timeout.
			s.fileOps.Add(1)
			return func() {
				s.touch()
				s.fileOps.Add(-1)
				s.hmu.RUnlock()
			}, nil
		}
		s.hmu.RUnlock()
		s.mu.Lock()
		err := a.wake(ctx, s)
		gone := s.gone.Load()
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
	if a.cfg.settings.HibernateAfter <= 0 {
		return
	}
	a.mu.Lock()
	var sleepy []*session
	for _, s := range a.sessions {
		if !s.asleep.Load() && s.idleSince(now) >= a.cfg.settings.HibernateAfter {
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

// hibernateAll saves every live session that is awake, at Close (the
// background work stopped: nothing else hibernates), several at a time,
// and starts no save after hibernateOnCloseLimit; it logs what was kept,
// kept without memory, and lost (by id), as the sessions' state is.
func (a *adapter) hibernateAll(live []*session) {
	deadline := time.NewTimer(hibernateOnCloseLimit)
	defer deadline.Stop()
	// A session whose program spins in the step before the save holds
	// its place for hostStepTimeout: with several places, the others go
	// on meanwhile. The rest is compression, bounded by the cores.
	sem := make(chan struct{}, max(4, 2*runtime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	notStarted := map[*session]bool{}
	for i, s := range live {
		if s.asleep.Load() {
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-deadline.C:
			// The budget is spent: no save starts after it.
			for _, rest := range live[i:] {
				if !rest.asleep.Load() {
					notStarted[rest] = true
				}
			}
		}
		if len(notStarted) > 0 {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			a.hibernate(context.Background(), s, true)
		})
	}
	wg.Wait()
	var kept, keptLost int
	var lost, unsaved []string
	for _, s := range live {
		switch {
		case s.asleep.Load() && s.hibLost:
			keptLost++
		case s.asleep.Load():
			kept++
		case notStarted[s]:
			unsaved = append(unsaved, s.id)
		default:
			lost = append(lost, s.id)
		}
	}
	if len(unsaved) > 0 {
		a.cfg.logger.Warn("sessions lost: their saves had not started when the shutdown's budget ended", "budget", hibernateOnCloseLimit.String(), "sessions", unsaved)
	}
	if len(lost) > 0 {
		a.cfg.logger.Warn("sessions lost: their saves failed (logged above)", "sessions", lost)
	}
	a.cfg.logger.Info("sessions kept hibernated for the next start", "kept", kept, "kept_without_memory", keptLost, "lost", len(lost)+len(unsaved))
}
