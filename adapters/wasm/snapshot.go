package wasm

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/s2"
	"github.com/tetratelabs/wazero/api"

	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// A session snapshot (port.Snapshotter) is the session's whole state: the
// interpreter's linear memory and mutable globals, which are everything
// CPython and the program have (objects, frames of suspended generators,
// imported modules, the hash secret, the random state), and the files of
// the workspace and the temporary directory. Format 2 is:
//
//	payloadMagic
//	u32 length, then JSON snapshotMeta
//	the memory section (see snapshotmem.go): which chunks it holds, then
//	  their bytes in blocks, each compressed as an S2 block where that
//	  pays and stored as it is elsewhere
//	an S2 stream (klauspost/compress: Snappy's format, extended) of a
//	  tar archive of directories and regular files, named workspace/...
//	  and tmp/...
//
// Format 1, which earlier builds wrote and a restore still reads (a
// session hibernated by one of them, kept across an upgrade, wakes), was
// one S2 stream of the same description, the memory as (u32 chunk index,
// imageChunk bytes) for every chunk listed, in increasing order, then u32
// 0xFFFFFFFF, and the same tar archive. Decoding that stream and copying
// out of its buffer was most of a large session's restore; format 2's
// blocks are decoded on every core straight into the new interpreter's
// memory, and a block that compresses little is copied, not decoded.
//
// The whole memory is written, not its difference from the interpreter
// image: every process boots its own image, with its own hash secret, so
// two processes' images differ. A restore still leaves the chunks equal to
// this process's image shared with it.
//
// Not carried: the host's side of the program's open files (see
// driver.py's restored: the program's file objects are closed, and their
// descriptor numbers refuse every use), the bash tool's shell (the next
// bash call starts a fresh one, in the workspace directory), the editor's
// undo history, and the files earlier results listed by file_id.
type snapshotMeta struct {
	Format int `json:"format"`
	// Build names the runtime the memory belongs to (engine.buildID): a
	// memory is meaningful only to the same module, library and driver.
	Build    string        `json:"build"`
	Profile  string        `json:"profile"`
	Idle     time.Duration `json:"idle"`
	Lifetime time.Duration `json:"lifetime"`
	// Memory is the interpreter's memory size in bytes; 0 when the session
	// had lost its interpreter (the next call starts a fresh one).
	Memory uint32 `json:"memory"`
	// Lost: the session had lost its interpreter outside a call (a host
	// step the program did not let finish) and had not yet said so; the
	// restored session says so at its first call (state_lost). Memory is
	// then 0. A session whose loss was already reported is saved without
	// memory and without Lost: it has nothing more to lose.
	Lost    bool          `json:"lost,omitempty"`
	Globals []savedGlobal `json:"globals,omitempty"`
	// Base, when set, is the id of the interpreter image the memory was
	// written as a difference from (hibernation within one process): the
	// chunks listed are those that differ from it, and the others are
	// the image's. Empty: every non-zero chunk is listed.
	Base string `json:"base,omitempty"`
}

type savedGlobal struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

const (
	snapshotFormat = 2
	// snapshotFormatStream is format 1: everything in one S2 stream.
	snapshotFormatStream = 1
	// payloadMagic begins a snapshot of format 2 or later; format 1's
	// S2 stream begins with its own marker (0xff), never with this.
	payloadMagic = "codeport wasm snapshot\n"
	// hostStepTimeout bounds the host's step that runs in a session's
	// interpreter before a snapshot: the driver's 'Z' (note the open
	// descriptors; 'R', after a restore, has restoredStepTimeout, which
	// grows with the memory it may walk). It takes milliseconds; only a program that runs its own
	// code in them (a trace function, an audit hook, a finalizer) can
	// make it last, and such a step is stopped here, costing that
	// session its interpreter and nothing more. It is not the caller's
	// context's to cut short: a client that goes away must not cost the
	// session its state.
	hostStepTimeout = 5 * time.Second
	// snapshotMetaMax bounds the JSON a restore reads.
	snapshotMetaMax = 1 << 20
	chunkEnd        = 0xFFFFFFFF
)

// buildID identifies the runtime a memory belongs to: the module, its
// library (the zips on sys.path, whose directories the memory caches by
// offset), the preopened directories (whose descriptors libc keeps in the
// memory) and the driver, hashed once.
func (e *engine) buildID() string {
	e.buildOnce.Do(func() {
		h := sha256.New()
		fmt.Fprintf(h, "profile %s\nmodule %d\n", e.rt.Profile, len(e.rt.Module))
		h.Write(e.rt.Module)
		fmt.Fprintf(h, "mounts %q\n", guestMounts())
		fmt.Fprintf(h, "driver %d\n", len(driverSource))
		h.Write([]byte(driverSource))
		err := fs.WalkDir(e.rt.Lib, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := fs.ReadFile(e.rt.Lib, p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "lib %s %d\n", p, len(b))
			h.Write(b)
			return nil
		})
		if err != nil {
			// An embedded file system that cannot be read: no snapshot of
			// this build can be trusted to match another.
			e.build = "unreadable library: " + err.Error()
			return
		}
		e.build = hex.EncodeToString(h.Sum(nil))
	})
	return e.build
}

// SnapshotSession implements port.Snapshotter.
func (a *adapter) SnapshotSession(ctx context.Context, id string, w io.Writer) error {
	return a.snapshot(ctx, id, w, nil)
}

// ReleaseSession implements port.SessionMover: the snapshot is written
// and the session destroyed under its lock, so no call runs on it in
// between.
func (a *adapter) ReleaseSession(ctx context.Context, id string, w io.Writer, commit func() error) error {
	return a.snapshot(ctx, id, w, commit)
}

// snapshot writes the session's snapshot to w under its lock. With a
// commit function (a release), commit is called once the snapshot is
// written, and the session is destroyed, still under its lock, if commit
// succeeds.
func (a *adapter) snapshot(ctx context.Context, id string, w io.Writer, commit func() error) error {
	if err := a.WaitReady(ctx); err != nil {
		return err
	}
	s, err := a.lookup(id)
	if err != nil {
		return err
	}
	if err := a.lockCall(ctx, s); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if s.gone.Load() {
		return fmt.Errorf("%w: %q", port.ErrSessionNotFound, s.id)
	}
	// A hibernated session is woken: its file may hold only what differs
	// from this process's image, and a snapshot must restore anywhere.
	if err := a.wake(ctx, s); err != nil {
		return err
	}
	// No file operation runs during the snapshot (and, for a release,
	// until the session is destroyed), so that an upload is in it whole
	// or refused, never half saved, nor reported done and lost. One under
	// way makes the session busy, as a call does: an upload may take
	// long, and is not waited for.
	if !s.hmu.TryLock() {
		return fmt.Errorf("%w: session %s has a file operation under way", port.ErrSessionBusy, s.id)
	}
	defer s.hmu.Unlock()
	s.busy.Store(true)
	if s.interp != nil {
		err = a.prepareLocked(ctx, s)
	}
	if err == nil {
		_, err = a.saveLocked(s, w, false, a.cfg.settings.CompactSnapshots)
	}
	if err == nil && commit != nil {
		err = commit()
	}
	s.busy.Store(false)
	if err != nil || commit == nil {
		return err
	}
	a.mu.Lock()
	if a.sessions[id] == s {
		delete(a.sessions, id)
	}
	a.mu.Unlock()
	// Awake (woken above), so its slot is held.
	s.destroyLocked()
	a.releaseSlot()
	a.metrics.SessionClosed()
	return nil
}

// saveLocked writes a snapshot of s, which is awake and prepared (its
// interpreter, if it has one, has just completed prepareLocked); s.mu is
// held. With diff, the memory is written as its difference from this
// process's image: far smaller, but restorable only in this process. A
// session without an interpreter is saved without memory, marked Lost if
// it has a loss to report, and lost says so: nothing is saved as whole
// that is not.
func (a *adapter) saveLocked(s *session, w io.Writer, diff, compact bool) (lost bool, err error) {
	meta := snapshotMeta{Format: snapshotFormat, Build: a.eng.buildID(), Profile: a.eng.rt.Profile, Idle: s.idle, Lifetime: s.lifetime}
	var base *image
	if diff {
		base, meta.Base = a.eng.image, a.eng.image.id
	}
	var mem []byte
	if it := s.interp; it != nil {
		m := it.mod.Memory()
		view, ok := m.Read(0, m.Size())
		if !ok {
			return false, fmt.Errorf("%w: cannot read the interpreter's memory", port.ErrRuntimeFailure)
		}
		globals, err := snapshotGlobals(it.mod, a.eng.rt.Module)
		if err != nil {
			return false, fmt.Errorf("%w: %v", port.ErrRuntimeFailure, err)
		}
		for _, g := range globals {
			meta.Globals = append(meta.Globals, savedGlobal{g.name, g.value})
		}
		meta.Memory, mem = uint32(len(view)), view
	} else {
		meta.Lost = s.lost != ""
	}
	if err := writeSnapshot(w, meta, mem, base, compact, s.sandbox); err != nil {
		return false, err
	}
	return meta.Lost, nil
}

// prepareLocked runs the driver's 'Z' step in s's interpreter (s.mu held),
// under hostStepTimeout and not under ctx's cancellation. If the step does
// not complete, the interpreter is not trusted with the save: it is
// stopped, the loss recorded for the session's next call, and the error
// says so.
func (a *adapter) prepareLocked(ctx context.Context, s *session) error {
	r := s.interp.run(context.WithoutCancel(ctx), requestSnapshot, "", hostStepTimeout, 4096, a.cfg.settings.Limits().MemoryBytes)
	if !r.dead && r.outcome == port.OutcomeCompleted {
		return nil
	}
	s.interp.kill()
	s.interp = nil
	why := fmt.Sprintf("the program's own code ran in the host's step before a snapshot and did not let it finish within %s (%s)", hostStepTimeout, r.outcome)
	s.lost = why
	a.cfg.logger.Warn("session's interpreter stopped: the step before its snapshot did not finish", "session", s.id, "outcome", r.outcome, "limit", hostStepTimeout)
	return fmt.Errorf("%w: session %s cannot be saved: %s; its interpreter was stopped, and its next call starts a fresh one (state_lost)", port.ErrRuntimeFailure, s.id, why)
}

// lostNote is the line a call adds to its stderr when it reports a loss
// that happened outside any call (session.lost).
func lostNote(why string) string {
	return fmt.Sprintf("[codeport: this session's Python interpreter was lost outside any call: %s; its variables and imports are gone, its files are kept, and a fresh interpreter runs its code from now on]", why)
}

func writeSnapshot(w io.Writer, meta snapshotMeta, mem []byte, base *image, compact bool, sb *sandbox) error {
	fail := func(err error) error { return fmt.Errorf("%w: writing the snapshot: %v", port.ErrRuntimeFailure, err) }
	mb, err := json.Marshal(meta)
	if err != nil {
		return fail(err)
	}
	var u32 [4]byte
	binary.BigEndian.PutUint32(u32[:], uint32(len(mb)))
	for _, b := range [][]byte{[]byte(payloadMagic), u32[:], mb} {
		if _, err := w.Write(b); err != nil {
			return fail(err)
		}
	}
	if err := writeMemory(w, mem, base, compact); err != nil {
		return fail(err)
	}
	// Two blocks compressed at once: the files may be as large as the
	// memory, and a session's snapshot is taken while it is idle.
	enc := s2.NewWriter(w, s2.WriterConcurrency(2))
	defer enc.Close()
	bw := bufio.NewWriterSize(enc, 256<<10)
	tw := tar.NewWriter(bw)
	for _, dir := range []struct{ prefix, root string }{{"workspace", sb.ws.Root()}, {"tmp", sb.tmpDir}} {
		if err := tarTree(tw, dir.prefix, dir.root); err != nil {
			return fail(err)
		}
	}
	if err := tw.Close(); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := enc.Close(); err != nil {
		return fail(err)
	}
	return nil
}

// tarTree adds the directories and regular files under root, named
// prefix/relative path, without following symbolic links (the sandbox
// makes none; anything else is left out).
func tarTree(tw *tar.Writer, prefix, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		name := prefix + "/" + filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			info, err := d.Info()
			if err != nil {
				return err
			}
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: int64(info.Mode().Perm()), Format: tar.FormatPAX})
		case d.Type().IsRegular():
			f, err := os.Open(p)
			if errors.Is(err, fs.ErrPermission) {
				f, err = openUnreadable(p, d, err)
			}
			if err != nil {
				return err
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return err
			}
			hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: int64(fi.Mode().Perm()), Size: fi.Size(), ModTime: fi.ModTime(), Format: tar.FormatPAX}
			if err := tw.WriteHeader(hdr); err != nil {
				return err
			}
			// A file that changes size while it is copied: exactly Size
			// bytes are written, or the snapshot fails.
			if _, err := io.CopyN(tw, f, fi.Size()); err != nil {
				return err
			}
		}
		return nil
	})
}

// openUnreadable opens the file p of a tree a program made unreadable
// (chmod 000) after the open failed with openErr, through a root of its
// directory (workspace.OpenUnreadable). The session is held, so no
// program races the bits back. Only this rare open pays for the root: an
// os.Root open costs more than twice a plain one (12.9 against 5.5 us a
// file, measured), which a snapshot of many files would pay for each.
func openUnreadable(p string, d fs.DirEntry, openErr error) (*os.File, error) {
	info, err := d.Info()
	if err != nil {
		return nil, openErr
	}
	r, err := os.OpenRoot(filepath.Dir(p))
	if err != nil {
		return nil, openErr
	}
	defer r.Close()
	return workspace.OpenUnreadable(r, filepath.Base(p), info.Mode().Perm(), openErr)
}

// RestoreSession implements port.Snapshotter.
func (a *adapter) RestoreSession(ctx context.Context, r io.Reader, _ int64) (port.Session, error) {
	return a.restoreAs(ctx, r, "", nil)
}

// RestoreSessionAs implements port.SessionMover.
func (a *adapter) RestoreSessionAs(ctx context.Context, r io.Reader, _ int64, id string) (port.Session, error) {
	if err := port.CheckMovedID(id); err != nil {
		return port.Session{}, err
	}
	return a.restoreAs(ctx, r, id, nil)
}

// RestoreSessionStream implements port.StreamRestorer: the memory is
// decoded into a new interpreter and the files into new directories as the
// snapshot arrives, and seal is checked before the interpreter runs (its
// restored step) and before the session is registered.
func (a *adapter) RestoreSessionStream(ctx context.Context, r io.Reader, seal func() error, id string) (port.Session, error) {
	if id != "" {
		if err := port.CheckMovedID(id); err != nil {
			return port.Session{}, err
		}
	}
	if seal == nil {
		return port.Session{}, fmt.Errorf("%w: a streamed restore without a seal to check", port.ErrRuntimeFailure)
	}
	return a.restoreAs(ctx, r, id, seal)
}

// restoreAs restores a session under id, or a new id when id is empty;
// seal, when not nil, is checked before anything restored runs or is
// seen (see port.StreamRestorer).
func (a *adapter) restoreAs(ctx context.Context, r io.Reader, id string, seal func() error) (port.Session, error) {
	if id != "" && a.HasSession(id) {
		// Checked again when the session is registered; this saves the
		// work of a restore that would be refused.
		return port.Session{}, errSessionExists(id)
	}
	if err := a.WaitReady(ctx); err != nil {
		return port.Session{}, err
	}
	if err := a.reserveSlot(); err != nil {
		return port.Session{}, err
	}
	rs, err := a.restoreSandbox(ctx, r, false, seal)
	if err != nil {
		a.releaseSlot()
		return port.Session{}, err
	}
	if id == "" {
		id = uuid.NewString()
	}
	s := a.sessionOver(rs.sb, id, rs.meta.Idle, rs.meta.Lifetime)
	s.lost = rs.lost
	a.mu.Lock()
	if a.sessions[id] != nil {
		a.mu.Unlock()
		s.destroy()
		a.releaseSlot()
		return port.Session{}, errSessionExists(id)
	}
	a.sessions[s.id] = s
	a.mu.Unlock()
	a.metrics.SessionOpened()
	return s.handle(), nil
}

func errSessionExists(id string) error {
	return fmt.Errorf("%w: a session with id %q is here already", port.ErrInvalidRequest, id)
}

// HasSession implements port.SessionMover.
func (a *adapter) HasSession(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sessions[id] != nil
}

// SessionIDs implements port.SessionMover.
func (a *adapter) SessionIDs() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.sessions))
	for id := range a.sessions {
		ids = append(ids, id)
	}
	return ids
}

// restored is what restoreSandbox made: the sandbox, the snapshot's
// description, and, when the snapshot's interpreter did not come back,
// why (for session.lost).
type restored struct {
	sb   *sandbox
	meta snapshotMeta
	lost string
}

// restoreSandbox makes a sandbox whose interpreter and files are the
// snapshot's, read from r (without the Port's seal).
//
// With salvage (a hibernated session being woken), a memory this backend
// cannot take (another runtime build's, larger than its memory limit) or
// an interpreter that does not resume within its deadline
// (restoredStepTimeout) costs the session its interpreter, not its files:
// the sandbox comes back without an interpreter, and the session says
// state_lost at its next call.
// Without salvage (a snapshot a client restores) those are errors.
//
// seal, when not nil, is the check of the snapshot's seal (see
// port.StreamRestorer): what is read before it passes is staged in the
// new interpreter and directories only, and nothing runs in the
// interpreter before it has passed.
func (a *adapter) restoreSandbox(ctx context.Context, r io.Reader, salvage bool, seal func() error) (restored, error) {
	var rs restored
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", port.ErrInvalidSnapshot, fmt.Sprintf(format, args...))
	}
	meta := &rs.meta
	// Format 2 and later begin with payloadMagic; anything else is read
	// as format 1's S2 stream, and refused if it is not one. The buffer
	// is small: format 2's blocks, far larger, are read past it, straight
	// into the memory or a block's buffer.
	raw := bufio.NewReaderSize(r, 4<<10)
	format, br := snapshotFormatStream, raw
	if head, _ := raw.Peek(len(payloadMagic)); string(head) == payloadMagic {
		format = snapshotFormat
		if _, err := raw.Discard(len(payloadMagic)); err != nil {
			return rs, invalid("its contents end early")
		}
	} else {
		br = bufio.NewReaderSize(s2.NewReader(raw), 256<<10)
	}
	var u32 [4]byte
	if _, err := io.ReadFull(br, u32[:]); err != nil {
		return rs, invalid("its contents end early")
	}
	n := binary.BigEndian.Uint32(u32[:])
	if n > snapshotMetaMax {
		return rs, invalid("its description is malformed")
	}
	mb := make([]byte, n)
	if _, err := io.ReadFull(br, mb); err != nil {
		return rs, invalid("its contents end early")
	}
	if err := json.Unmarshal(mb, meta); err != nil || meta.Format != format {
		return rs, invalid("it is of another snapshot format (format %d; this build reads %d and %d)", meta.Format, snapshotFormatStream, snapshotFormat)
	}
	if meta.Lost {
		if meta.Memory != 0 {
			return rs, invalid("its description is malformed")
		}
		rs.lost = "the snapshot it was restored from was taken after its interpreter had been lost"
	}
	// Why the memory, if any, cannot be used here.
	var unusable string
	limit := a.cfg.settings.Limits().MemoryBytes
	switch {
	case meta.Build != a.eng.buildID() || meta.Profile != a.eng.rt.Profile:
		unusable = fmt.Sprintf("it was made by another runtime build (profile %q); this backend runs profile %q, and a session's memory is meaningful only to the build that made it", meta.Profile, a.eng.rt.Profile)
	case limit > 0 && int64(meta.Memory) > limit:
		unusable = fmt.Sprintf("its interpreter has %d bytes of memory, over this backend's limit of %d", meta.Memory, limit)
	case meta.Memory > 0 && meta.Base != "" && meta.Base != a.eng.image.id:
		unusable = "it was saved as a difference from another process's interpreter image"
	}
	if unusable != "" {
		if !salvage {
			return rs, invalid("%s", unusable)
		}
		rs.lost = "its saved memory could not be restored here (" + unusable + ")"
	}
	sb, err := a.newSandboxDirs()
	if err != nil {
		return rs, err
	}
	ok := false
	defer func() {
		if !ok {
			sb.discard()
		}
	}()
	switch {
	case meta.Memory > 0 && unusable == "":
		t := time.Now()
		it, err := a.eng.restoreInterpreter(ctx, sb.mounts(), *meta, br, seal != nil)
		if err != nil {
			return rs, err
		}
		sb.interp = it
		a.metrics.InstanceStarted(time.Since(t).Seconds())
	case format == snapshotFormatStream:
		if err := skipChunks(br, meta.Memory); err != nil {
			return rs, err
		}
	default:
		if err := skipMemory(br, meta.Memory); err != nil {
			return rs, err
		}
	}
	files := io.Reader(br)
	if format != snapshotFormatStream {
		files = s2.NewReader(br)
	}
	if err := a.restoreFiles(files, sb); err != nil {
		return rs, err
	}
	if seal != nil {
		if err := seal(); err != nil {
			return rs, err
		}
	}
	if sb.interp != nil {
		// Not under ctx's cancellation: a caller that goes away must not
		// leave a restore half done (see hostStepTimeout).
		step := restoredStepTimeout(limit)
		res := sb.interp.run(context.WithoutCancel(ctx), requestRestored, a.workspaceFigures(), step, 4096, limit)
		if res.dead || res.outcome != port.OutcomeCompleted {
			why := fmt.Sprintf("the program's own code ran in the host's step after a restore and did not let it finish within %s (%s)", step, res.outcome)
			if !salvage {
				return rs, fmt.Errorf("%w: resuming the restored interpreter: %s", port.ErrRuntimeFailure, why)
			}
			sb.interp.kill()
			sb.interp = nil
			rs.lost = why
		}
	}
	ok = true
	rs.sb = sb
	return rs, nil
}

// skipChunks reads past the memory section of a snapshot whose memory is
// not restored: memory bytes of chunks in increasing order (none when the
// snapshot has no memory), then the end marker.
func skipChunks(r io.Reader, memory uint32) error {
	malformed := fmt.Errorf("%w: its memory section is malformed", port.ErrInvalidSnapshot)
	nChunks := (int64(memory) + imageChunk - 1) / imageChunk
	var u32 [4]byte
	next := int64(0)
	for {
		if _, err := io.ReadFull(r, u32[:]); err != nil {
			return malformed
		}
		idx := binary.BigEndian.Uint32(u32[:])
		if idx == chunkEnd {
			return nil
		}
		if int64(idx) < next || int64(idx) >= nChunks {
			return malformed
		}
		size := min(int64(idx+1)*imageChunk, int64(memory)) - int64(idx)*imageChunk
		if n, err := io.CopyN(io.Discard, r, size); err != nil || n != size {
			return malformed
		}
		next = int64(idx) + 1
	}
}

// restoreInterpreter makes an interpreter over m whose memory and globals
// are the snapshot's: an instance restored from this process's image (so
// that chunks equal to it stay shared), then every chunk that differs
// overwritten and, unless the snapshot is a difference from the image,
// every chunk the snapshot does not list cleared.
func (e *engine) restoreInterpreter(ctx context.Context, m mounts, meta snapshotMeta, r io.Reader, sealed bool) (*interpreter, error) {
	invalid := func(what string) error {
		return fmt.Errorf("%w: its memory section is %s", port.ErrInvalidSnapshot, what)
	}
	if meta.Memory%wasmPage != 0 || meta.Memory < uint32(e.image.size) {
		return nil, invalid("of an impossible size")
	}
	if meta.Base != "" && meta.Base != e.image.id {
		return nil, fmt.Errorf("%w: it was saved as a difference from another process's interpreter image", port.ErrInvalidSnapshot)
	}
	diff := meta.Base != ""
	it, err := e.fromImage(ctx, m)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*interpreter, error) {
		it.kill()
		return nil, err
	}
	mem := it.mod.Memory()
	have := mem.Size()
	if have < meta.Memory {
		if _, ok := mem.Grow((meta.Memory - have) / wasmPage); !ok {
			return fail(fmt.Errorf("%w: its interpreter's %d bytes of memory do not fit under this backend's limit", port.ErrInvalidSnapshot, meta.Memory))
		}
	}
	view, ok := mem.Read(0, meta.Memory)
	if !ok {
		return fail(fmt.Errorf("%w: cannot address the instance's memory", port.ErrRuntimeFailure))
	}
	// Past what the instance had, the memory was grown for this restore:
	// zero, and shared with nothing.
	t := &memoryTarget{view: view, shared: min(int(have), len(view))}
	nChunks := (len(view) + imageChunk - 1) / imageChunk
	var listing []byte
	if meta.Format == snapshotFormatStream {
		listing, err = readChunks(r, t)
	} else {
		listing, err = readMemory(r, t, it.alloc, sealed)
	}
	if err != nil {
		return fail(err)
	}
	if !diff {
		// Unlisted chunks are zero; where the instance had memory, the
		// image's are cleared. (With diff, they are the image's, which
		// the restore put there.)
		for i := range min(nChunks, (t.shared+imageChunk-1)/imageChunk) {
			if listing[i/8]&(1<<(i%8)) == 0 {
				if c := view[i*imageChunk : min((i+1)*imageChunk, len(view))]; !allZero(c) {
					clear(c)
				}
			}
		}
	}
	want, err := snapshotGlobals(it.mod, e.rt.Module)
	if err != nil {
		return fail(fmt.Errorf("%w: %v", port.ErrRuntimeFailure, err))
	}
	if len(want) != len(meta.Globals) {
		return fail(fmt.Errorf("%w: its globals do not match this runtime's", port.ErrInvalidSnapshot))
	}
	for i, g := range meta.Globals {
		if g.Name != want[i].name {
			return fail(fmt.Errorf("%w: its globals do not match this runtime's", port.ErrInvalidSnapshot))
		}
		mg, ok := it.mod.ExportedGlobal(g.Name).(api.MutableGlobal)
		if !ok {
			return fail(fmt.Errorf("%w: global %s is not mutable", port.ErrRuntimeFailure, g.Name))
		}
		mg.Set(g.Value)
	}
	return it, nil
}

// readChunks reads a format 1 memory section into t: (u32 chunk index,
// chunk bytes) in increasing order, then the end marker. It returns the
// listing, a bit per chunk of t's view, of the chunks read.
func readChunks(r io.Reader, t *memoryTarget) ([]byte, error) {
	invalid := func(what string) error {
		return fmt.Errorf("%w: its memory section is %s", port.ErrInvalidSnapshot, what)
	}
	nChunks := (len(t.view) + imageChunk - 1) / imageChunk
	listing := make([]byte, (nChunks+7)/8)
	buf := make([]byte, imageChunk)
	var u32 [4]byte
	next := 0
	for {
		if _, err := io.ReadFull(r, u32[:]); err != nil {
			return nil, invalid("truncated")
		}
		idx := binary.BigEndian.Uint32(u32[:])
		if idx == chunkEnd {
			return listing, nil
		}
		if int(idx) < next || int(idx) >= nChunks {
			return nil, invalid("out of order")
		}
		lo := int(idx) * imageChunk
		c := t.view[lo:min(lo+imageChunk, len(t.view))]
		if lo >= t.shared {
			// Straight into memory shared with nothing: every byte is
			// written, whatever was there.
			if _, err := io.ReadFull(r, c); err != nil {
				return nil, invalid("truncated")
			}
		} else {
			if _, err := io.ReadFull(r, buf[:len(c)]); err != nil {
				return nil, invalid("truncated")
			}
			t.put(lo, buf[:len(c)])
		}
		listing[idx/8] |= 1 << (idx % 8)
		next = int(idx) + 1
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// tarBlock is the unit of a tar archive; its end is two zero blocks.
const tarBlock = 512

// restoreFiles writes the snapshot's files, the tar archive r holds, into
// the sandbox through its workspaces, so that every byte and entry is
// charged to the session's quota: a snapshot whose files do not fit is
// refused. The archive must end with its trailer (tarTree's writer always
// writes it): the tar reader takes an input that ends between two entries
// for the archive's end, and a file cut there (an unsealed hibernation
// file) would otherwise restore without its later files, and no error.
func (a *adapter) restoreFiles(r io.Reader, sb *sandbox) error {
	tmp, err := workspace.New(sb.tmpDir, sb.quota)
	if err != nil {
		return fmt.Errorf("%w: %v", port.ErrRuntimeFailure, err)
	}
	in := &countingReader{r: r}
	tr := tar.NewReader(in)
	// Where the last entry's contents end, padded: the reader takes
	// exactly its headers, contents and padding from in.
	var end int64
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			if in.n != end+2*tarBlock {
				return fmt.Errorf("%w: its files end early (no end of archive)", port.ErrInvalidSnapshot)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: its files are malformed: %v", port.ErrInvalidSnapshot, err)
		}
		if hdr.Typeflag == tar.TypeReg { // a directory has no contents, whatever its size says
			end = in.n + (hdr.Size+tarBlock-1)/tarBlock*tarBlock
		} else {
			end = in.n
		}
		top, rel, found := strings.Cut(strings.TrimSuffix(hdr.Name, "/"), "/")
		if !found || rel == "" || path.Clean(rel) != rel {
			return fmt.Errorf("%w: it names a file outside the session (%q)", port.ErrInvalidSnapshot, clipName(hdr.Name))
		}
		var ws *workspace.Workspace
		switch top {
		case "workspace":
			ws = sb.ws
		case "tmp":
			ws = tmp
		default:
			return fmt.Errorf("%w: it names a file outside the session (%q)", port.ErrInvalidSnapshot, clipName(hdr.Name))
		}
		// Each entry gets its permission bits, within what a guest may set.
		perm := fs.FileMode(hdr.Mode) & fs.ModePerm
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err = ws.MkdirAll(rel); err == nil {
				err = ws.Chmod(rel, perm)
			}
		case tar.TypeReg:
			if err = ws.MkdirAll(path.Dir(rel)); err == nil {
				// A file's contents that end early or do not decompress
				// are the snapshot's fault, not the host's: told apart
				// by the error of the reader, not the writer.
				body := &readErr{r: tr}
				_, err = ws.WriteMode(rel, body, a.cfg.settings.WorkspaceLimit, perm)
				if err != nil && body.err != nil {
					return fmt.Errorf("%w: its files are malformed: %s/%s: %v", port.ErrInvalidSnapshot, top, clipName(rel), body.err)
				}
				if errors.Is(err, port.ErrIsDirectory) {
					// No session's files hold both: the file was made
					// so, and is no host error to retry.
					return fmt.Errorf("%w: it names %s/%s as a directory and as a file", port.ErrInvalidSnapshot, top, clipName(rel))
				}
			}
		default:
			return fmt.Errorf("%w: it holds an entry that is neither a file nor a directory", port.ErrInvalidSnapshot)
		}
		if err != nil {
			if errors.Is(err, port.ErrFileTooLarge) || errors.Is(err, port.ErrPathEscapesWorkspace) || errors.Is(err, port.ErrInvalidRequest) {
				return fmt.Errorf("restoring %s/%s: %w", top, clipName(rel), err)
			}
			if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
				// The host's disk, not the snapshot: as a spooled
				// restore's full disk is (a restore as it is read
				// writes its files where it would have spooled them).
				retry := max(a.cfg.settings.RetryAfter, time.Second)
				return &port.CapacityError{Resource: "disk space for restores", RetryAfter: retry,
					Detail: fmt.Sprintf("at capacity: the server has no disk space left for the snapshot's files; nothing was restored; retry after %s", retry)}
			}
			return fmt.Errorf("%w: restoring the files: %v", port.ErrRuntimeFailure, err)
		}
	}
}

func clipName(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
