package port

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Snapshotter is implemented by a driver that can save a session between
// calls and make a new session from what it saved: the session's whole
// state (for the wasm adapter, the interpreter's memory, its globals and
// the workspace), not a pickle of its variables. The Port seals what the
// driver writes (see WithSnapshotKey) and checks the seal before the driver
// reads anything back (or, for a StreamRestorer, before the driver uses
// anything it read), so a driver uses only snapshots the same key made;
// it still refuses one of another build or format with ErrInvalidSnapshot.
type Snapshotter interface {
	// SnapshotSession writes the state of a session that is not in a call
	// to w, in the driver's own format; the session stays live. A session
	// in a call is ErrSessionBusy.
	SnapshotSession(ctx context.Context, sessionID string, w io.Writer) error
	// RestoreSession makes a new session, with a new id, from r, which
	// holds size bytes that SnapshotSession wrote (in this process or
	// another one of the same build).
	RestoreSession(ctx context.Context, r io.Reader, size int64) (Session, error)
}

// SealedSnapshotter is implemented by a driver whose snapshots are sealed
// by the backend it talks to (a remote codeport): the Port passes them
// through unchanged, in both directions, with the options (the remote
// binds the tenant), and needs no key.
type SealedSnapshotter interface {
	// SealsSnapshots reports whether the backend offers snapshots now.
	// Asking may take a call to the backend, which ctx bounds; a call
	// that failed is its error (the backend unreachable, ctx ended), so
	// that it is not mistaken for a backend without snapshots.
	SealsSnapshots(ctx context.Context) (bool, error)
	SnapshotSealed(ctx context.Context, sessionID string, w io.Writer, opt SnapshotOptions) error
	RestoreSealed(ctx context.Context, r io.Reader, opt SnapshotOptions) (Session, error)
}

// SessionSnapshots is what a port that can offer session snapshots has
// besides CodeExecutionPort (*Port has it; SnapshotsOffered says whether
// they work with its driver and configuration).
type SessionSnapshots interface {
	SnapshotsOffered(ctx context.Context) bool
	SnapshotSession(ctx context.Context, sessionID string, w io.Writer, opt SnapshotOptions) error
	RestoreSession(ctx context.Context, r io.Reader, opt SnapshotOptions) (Session, error)
}

var _ SessionSnapshots = (*Port)(nil)

// SnapshotOptions bind a snapshot to its owner.
type SnapshotOptions struct {
	// Tenant is who may restore the snapshot: a restore with another
	// Tenant is refused as if the snapshot were forged. Servers set it
	// from the caller's credential.
	Tenant string
	// SessionID, for RestoreSession, is the id the restored session
	// keeps instead of a new one: the id it had where it was snapshotted,
	// when it moves to another node (see SessionMover). It must pass
	// CheckMovedID and be spelled as this Port's calls reach it (see
	// keptID), and the snapshot must be of that session: its seal binds
	// the id the session had when it was snapshotted, and a snapshot of
	// another session is ErrInvalidSnapshot, checked before any session
	// is looked up. So a restore cannot learn whether some other session
	// has an id, nor take it; an id that a session here has already (the
	// same session, restored twice) is ErrInvalidRequest. Ignored by
	// SnapshotSession.
	SessionID string
	// Size, for RestoreSession, is the snapshot's length when the caller
	// knows it (an HTTP Content-Length), 0 or less when not: a snapshot
	// announced larger than the Port's cap (WithMaxSnapshotBytes) is
	// refused before any of it is read. Ignored by SnapshotSession.
	Size int64
	// Release, for SnapshotSession, destroys the session once its
	// snapshot is written, with no call on it in between (see
	// SessionMover.ReleaseSession): the session moves out. A snapshot
	// that fails leaves the session as it was. Ignored by RestoreSession.
	Release bool
	// Commit, with Release, is called once the sealed snapshot is wholly
	// written to w, before the session is destroyed: an error keeps the
	// session. A server hands the snapshot to its client there, so that a
	// session is released only once its snapshot has left.
	Commit func() error
}

// ErrInvalidSnapshot: a snapshot that cannot be restored here: not a
// snapshot, truncated, altered, sealed with another key, made for another
// tenant, or made by another build of the backend.
var ErrInvalidSnapshot = errors.New("invalid snapshot")

// ErrUnsupported: the backend does not offer the operation (snapshots,
// where the driver cannot make them or no key is configured).
var ErrUnsupported = errors.New("unsupported operation")

// snapshotHeaderMax bounds the header a restore reads before its seal is
// checked.
const snapshotHeaderMax = 64 << 10

// DefaultMaxSnapshotBytes bounds a snapshot a restore accepts when neither
// WithMaxSnapshotBytes nor the driver's limits say otherwise (see
// MaxSnapshotBytesFor): a driver that states no memory or workspace limit.
const DefaultMaxSnapshotBytes = 2 << 30

// What a sealed snapshot holds besides a session's memory and file bytes,
// for MaxSnapshotBytesFor. A file or directory costs an archive header
// (512 bytes), a PAX header and its records (a path of up to MaxPathBytes
// and the times: at most 1 KiB + MaxPathBytes) and the padding of its
// data to 512 bytes; the memory costs 4 bytes of index per 4 KiB chunk;
// the compressed stream stores a block it cannot shrink as it is, with 8
// bytes of framing per block of 64 KiB or more; the rest (the driver's
// metadata, bounded at 1 MiB, the seal's header, its trailer) is fixed.
const (
	snapshotEntryOverhead = 2<<10 + MaxPathBytes
	snapshotFixedOverhead = 4 << 20
	// The proportional part covers the chunk index (1/1024) and the
	// stream's framing (1/8192) with room.
	snapshotOverheadShare = 64
)

// MaxSnapshotBytesFor is the largest sealed snapshot a session within l
// can need: its memory, its files (the workspace limit covers every file
// a session holds, its temporary directory's included), each file's
// archive header, and the framing, which compression never makes larger
// than the bytes it frames plus a small share. It is 0 when l states no
// memory, workspace or entry limit: the size of such a session's snapshot
// is not bounded by its limits.
func MaxSnapshotBytesFor(l Limits) int64 {
	if l.MemoryBytes <= 0 || l.WorkspaceBytes <= 0 || l.WorkspaceEntries <= 0 {
		return 0
	}
	state := l.MemoryBytes + l.WorkspaceBytes
	return state + state/snapshotOverheadShare + int64(l.WorkspaceEntries)*snapshotEntryOverhead + snapshotFixedOverhead
}

// snapshotHeader is the sealed snapshot's clear-text header. It is covered
// by the seal.
type snapshotHeader struct {
	Adapter string    `json:"adapter"`
	Tenant  string    `json:"tenant"`
	Created time.Time `json:"created"`
	// Session is the id of the session snapshotted, as the Port's caller
	// gave it: a restore may keep that id and no other.
	Session string `json:"session,omitempty"`
	// Salt, in format 2, is the seal's per-snapshot salt (segmentSeal).
	Salt []byte `json:"salt,omitempty"`
}

// WithSnapshotKey turns snapshots on for a driver that can make them
// (Snapshotter): every snapshot is sealed under key (HMAC-SHA256 over
// AES-GMAC tags of its segments, see segmentSeal), and
// a restore checks the seal, in constant time, before the driver reads a
// byte. Without a key, or with one shorter than MinSnapshotKeyBytes, the
// Port refuses both operations (ErrUnsupported).
func WithSnapshotKey(key []byte) Option {
	return func(o *options) { o.snapshotKey = append([]byte(nil), key...) }
}

// WithMaxSnapshotBytes bounds the size of a snapshot RestoreSession reads;
// a larger one is ErrInvalidSnapshot. Without it (or with n <= 0), the
// bound follows from the driver's limits (MaxSnapshotBytesFor), or is
// DefaultMaxSnapshotBytes for a driver that states none.
func WithMaxSnapshotBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.maxSnapshot = n
		}
	}
}

// MinSnapshotKeyBytes is the shortest key WithSnapshotKey accepts.
const MinSnapshotKeyBytes = 32

// MaxSnapshotBytes is the largest snapshot RestoreSession reads (see
// WithMaxSnapshotBytes).
func (p *Port) MaxSnapshotBytes() int64 { return p.maxSnapshot }

// SnapshotsOffered reports whether SnapshotSession and RestoreSession can
// succeed: the driver makes snapshots, and they can be sealed. A driver
// that passes a backend's sealed snapshots through may ask the backend,
// within ctx.
func (p *Port) SnapshotsOffered(ctx context.Context) bool {
	_, _, err := p.snapshotter(ctx)
	return err == nil
}

// snapshotter is the driver's snapshot operations: sealed ones (passed
// through) or the driver's own (sealed here, which needs the key).
func (p *Port) snapshotter(ctx context.Context) (SealedSnapshotter, Snapshotter, error) {
	if s, ok := p.d.(SealedSnapshotter); ok {
		offered, err := s.SealsSnapshots(ctx)
		if err != nil {
			return nil, nil, err
		}
		if !offered {
			return nil, nil, fmt.Errorf("%w: the %s adapter's backend offers no snapshots", ErrUnsupported, p.info.Name)
		}
		return s, nil, nil
	}
	s, ok := p.d.(Snapshotter)
	if !ok {
		return nil, nil, fmt.Errorf("%w: the %s adapter cannot snapshot sessions", ErrUnsupported, p.info.Name)
	}
	if len(p.snapshotKey) < MinSnapshotKeyBytes {
		return nil, nil, fmt.Errorf("%w: snapshots are off (no snapshot key of at least %d bytes is configured)", ErrUnsupported, MinSnapshotKeyBytes)
	}
	return nil, s, nil
}

// SnapshotSession writes a sealed snapshot of a session that is not in a
// call to w. The session stays live. On an error, w may have received part
// of a snapshot, which a restore refuses.
func (p *Port) SnapshotSession(ctx context.Context, sessionID string, w io.Writer, opt SnapshotOptions) error {
	id, err := p.driverID(sessionID)
	if err != nil {
		return p.refuse(ctx, OpSnapshotSession, loggedID(sessionID), err)
	}
	sealed, s, err := p.snapshotter(ctx)
	if err != nil {
		return p.refuse(ctx, OpSnapshotSession, sessionID, err)
	}
	var mover SessionMover
	if opt.Release && sealed == nil {
		m, ok := p.d.(SessionMover)
		if !ok {
			return p.refuse(ctx, OpSnapshotSession, sessionID, fmt.Errorf("%w: the %s adapter cannot release a session with its snapshot", ErrUnsupported, p.info.Name))
		}
		mover = m
	}
	k, err := p.begin(ctx, OpSnapshotSession, sessionID)
	if err != nil {
		return err
	}
	k.observe()
	if mover != nil {
		err = p.sealSnapshot(k.ctx, func(ctx context.Context, w io.Writer, seal func() error) error {
			return mover.ReleaseSession(ctx, id, w, func() error {
				if err := seal(); err != nil {
					return err
				}
				if opt.Commit != nil {
					return opt.Commit()
				}
				return nil
			})
		}, w, opt, sessionID)
	} else if sealed != nil {
		err = sealed.SnapshotSealed(k.ctx, id, w, opt)
	} else {
		err = p.sealSnapshot(k.ctx, func(ctx context.Context, w io.Writer, seal func() error) error {
			if err := s.SnapshotSession(ctx, id, w); err != nil {
				return err
			}
			return seal()
		}, w, opt, sessionID)
	}
	k.done(err)
	return err
}

// sealSnapshot frames what save writes with the header and the seal; save
// calls its seal function once the driver has written the snapshot.
func (p *Port) sealSnapshot(ctx context.Context, save func(ctx context.Context, w io.Writer, seal func() error) error, w io.Writer, opt SnapshotOptions, sessionID string) error {
	salt := make([]byte, sealSaltBytes)
	rand.Read(salt)
	hdr, err := json.Marshal(snapshotHeader{Adapter: p.info.Name, Tenant: opt.Tenant, Created: time.Now().UTC(), Session: sessionID, Salt: salt})
	if err != nil {
		return fmt.Errorf("%w: snapshot header: %v", ErrRuntimeFailure, err)
	}
	mac, err := newSegmentSeal(p.snapshotKey, salt)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	sealed := io.MultiWriter(bw, mac)
	var lenBuf [4]byte
	binary.BigEndian.PutUint32(lenBuf[:], uint32(len(hdr)))
	for _, b := range [][]byte{[]byte(snapshotMagic), lenBuf[:], hdr} {
		if _, err := sealed.Write(b); err != nil {
			return fmt.Errorf("%w: writing the snapshot: %v", ErrRuntimeFailure, err)
		}
	}
	cw := &countWriter{w: sealed}
	return save(ctx, cw, func() error {
		var trailer [8]byte
		binary.BigEndian.PutUint64(trailer[:], uint64(cw.n))
		if _, err := sealed.Write(trailer[:]); err != nil {
			return fmt.Errorf("%w: writing the snapshot: %v", ErrRuntimeFailure, err)
		}
		if _, err := bw.Write(mac.Sum(nil)); err != nil {
			return fmt.Errorf("%w: writing the snapshot: %v", ErrRuntimeFailure, err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("%w: writing the snapshot: %v", ErrRuntimeFailure, err)
		}
		return nil
	})
}

// RestoreSession makes a new session from a sealed snapshot that
// SnapshotSession wrote with the same key, for the same tenant. Before a
// byte of the snapshot is read, the restore is admitted: refused if the
// snapshot is announced larger than the cap (SnapshotOptions.Size), or if
// the driver has no room for a session (Admitter). Its header is then
// read and checked (the format, the adapter, the tenant and the session
// whose id is kept) before anything more is read; the whole snapshot is
// then read (into a temporary file) and its seal checked before the
// driver sees any of it, or, with a driver that is a StreamRestorer,
// handed to the driver as it is read, its seal computed alongside and
// checked before the driver uses any of it: a snapshot that is
// truncated, altered, sealed with another key or made for another tenant
// is ErrInvalidSnapshot. A temporary file that cannot be written for want
// of space is ErrAtCapacity, with a retry hint: the snapshot may be fine.
func (p *Port) RestoreSession(ctx context.Context, r io.Reader, opt SnapshotOptions) (Session, error) {
	sealed, s, err := p.snapshotter(ctx)
	if err != nil {
		return Session{}, p.refuse(ctx, OpRestoreSession, "", err)
	}
	var keep string
	if opt.SessionID != "" {
		if sealed != nil {
			// Passed through: the backend that restores it spells its
			// ids, and checks this one against its own node id.
			keep, err = opt.SessionID, CheckMovedID(opt.SessionID)
		} else {
			keep, err = p.keptID(opt.SessionID)
		}
		if err == nil && sealed != nil && p.nodeID != "" {
			err = fmt.Errorf("%w: a restore through the %s adapter cannot keep a session id on a node with a node id", ErrUnsupported, p.info.Name)
		}
		if _, ok := p.d.(SessionMover); err == nil && sealed == nil && !ok {
			err = fmt.Errorf("%w: the %s adapter cannot restore a session under a given id", ErrUnsupported, p.info.Name)
		}
		if err != nil {
			return Session{}, p.refuse(ctx, OpRestoreSession, "", err)
		}
	}
	if sealed == nil {
		if err := p.admitRestore(opt); err != nil {
			return Session{}, p.refuse(ctx, OpRestoreSession, "", err)
		}
	}
	k, err := p.begin(ctx, OpRestoreSession, "")
	if err != nil {
		return Session{}, err
	}
	k.observe()
	var sess Session
	if sealed != nil {
		sess, err = sealed.RestoreSealed(k.ctx, r, opt)
	} else {
		sess, err = p.openSnapshot(k.ctx, s, r, opt, keep)
	}
	switch {
	case err == nil && sess.ID == "":
		err = fmt.Errorf("%w: %s adapter restored a session without an id", ErrRuntimeFailure, p.info.Name)
	case err == nil && keep != "" && sess.ID != keep:
		err = fmt.Errorf("%w: %s adapter restored the session as %q, not under the id it was asked to keep", ErrRuntimeFailure, p.info.Name, shortID(sess.ID))
	}
	if keep != "" && err == nil {
		sess.ID = opt.SessionID
	} else {
		sess.ID = p.publicID(sess.ID)
	}
	k.c.SessionID = sess.ID
	k.done(err)
	if err != nil {
		return Session{}, err
	}
	return sess, nil
}

// Admitter is implemented by a driver that can tell, without making a
// session, whether it has room for one now. A restore asks it before it
// reads the snapshot, so that a restore the driver would refuse for want
// of room is refused before any of the snapshot is read or spooled.
type Admitter interface {
	// HasRoom returns nil when a session could be made now, else the
	// error CreateSession would refuse with (a *CapacityError). It
	// reserves nothing: a session made meanwhile may still take the room,
	// and the restore is then refused when it makes its session.
	HasRoom() error
}

// admitRestore refuses, before any of it is read, a restore this Port
// would refuse after reading it: one announced over the cap, or one the
// driver has no room for.
func (p *Port) admitRestore(opt SnapshotOptions) error {
	if opt.Size > p.maxSnapshot {
		return fmt.Errorf("%w: it is larger than %d bytes", ErrInvalidSnapshot, p.maxSnapshot)
	}
	if a, ok := p.d.(Admitter); ok {
		return a.HasRoom()
	}
	return nil
}

// spoolRetryAfter is the retry hint of a restore refused because its
// temporary file could not be written for want of space: the space held
// by other restores is released as they end.
const spoolRetryAfter = 10 * time.Second

// spoolFailure is the error of a temporary file that could not be made or
// written: for want of space (or quota), ErrAtCapacity with a retry hint,
// since the snapshot itself may be fine and nothing was restored; else
// ErrRuntimeFailure.
func spoolFailure(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return &CapacityError{Resource: "disk space for restores", RetryAfter: spoolRetryAfter,
			Detail: fmt.Sprintf("at capacity: the server has no disk space left to receive the snapshot; nothing was restored; retry after %s", spoolRetryAfter)}
	}
	return fmt.Errorf("%w: restore: temporary file: %v", ErrRuntimeFailure, err)
}

func (p *Port) openSnapshot(ctx context.Context, s Snapshotter, r io.Reader, opt SnapshotOptions, keep string) (Session, error) {
	invalid := func(why string) error { return fmt.Errorf("%w: %s", ErrInvalidSnapshot, why) }
	readFailed := func(err error) error {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return invalid("it is too short to be a snapshot")
		}
		return invalid(fmt.Sprintf("reading it failed: %v", err))
	}
	// The header first, before anything is spooled: a body that is not a
	// snapshot of this adapter's, for this tenant (and of the session
	// whose id is kept), is refused once its header has been read. It is
	// not trusted yet: it is checked again, sealed, once all is in.
	head := make([]byte, len(snapshotMagic)+4)
	if _, err := io.ReadFull(r, head); err != nil {
		return Session{}, readFailed(err)
	}
	magic := string(head[:len(snapshotMagic)])
	if magic != snapshotMagic && magic != snapshotMagicV1 {
		return Session{}, invalid("it is not a codeport snapshot (or of another format version)")
	}
	hlen := int64(binary.BigEndian.Uint32(head[len(snapshotMagic):]))
	if hlen > snapshotHeaderMax {
		return Session{}, invalid("its header is malformed")
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return Session{}, readFailed(err)
	}
	hdr, err := p.checkHeader(hb, opt)
	if err != nil {
		return Session{}, err
	}
	mac, err := newSealer(p.snapshotKey, magic, hdr.Salt)
	if err != nil {
		return Session{}, err
	}
	if sr, ok := s.(StreamRestorer); ok && !p.spoolAlways {
		return p.streamSnapshot(ctx, sr, r, head, hb, mac, keep, readFailed)
	}

	f, err := os.CreateTemp("", "codeport-restore-")
	if err != nil {
		return Session{}, spoolFailure(err)
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	// The header is written as read; the rest is copied as it arrives,
	// up to one byte over the cap. A write that fails is the server's
	// (its disk), a read that fails the snapshot's.
	// The seal is computed as the snapshot is spooled, over all but the
	// last 32 bytes (the seal itself), which sealTail holds back: one pass
	// over the bytes, not a second reading of the file.
	tail := &sealTail{h: mac}
	spool := io.Writer(f)
	if p.spoolSink != nil {
		spool = p.spoolSink(f)
	}
	dst := &spoolWriter{w: io.MultiWriter(spool, tail)}
	for _, b := range [][]byte{head, hb} {
		if _, err := dst.Write(b); err != nil {
			return Session{}, spoolFailure(err)
		}
	}
	n := int64(len(head) + len(hb))
	m, err := io.Copy(dst, io.LimitReader(r, p.maxSnapshot+1-n))
	n += m
	if dst.err != nil {
		return Session{}, spoolFailure(dst.err)
	}
	if err != nil {
		return Session{}, readFailed(err)
	}
	if n > p.maxSnapshot {
		return Session{}, invalid(fmt.Sprintf("it is larger than %d bytes", p.maxSnapshot))
	}
	payloadStart := int64(len(snapshotMagic)) + 4 + hlen
	if n < payloadStart+8+sha256.Size {
		return Session{}, invalid("it is too short to be a snapshot")
	}
	// Everything up to the seal was hashed as it was spooled; the last 32
	// bytes, held back, are the seal itself.
	if !hmac.Equal(tail.held(), mac.Sum(nil)) {
		return Session{}, invalid("its seal does not match: it was altered or truncated, or sealed with another key")
	}
	// Sealed by this key: the rest is what sealSnapshot wrote, and the
	// header checked above is the one sealed (it was spooled as read).
	var trailer [8]byte
	if _, err := f.ReadAt(trailer[:], n-sha256.Size-8); err != nil {
		return Session{}, fmt.Errorf("%w: restore: %v", ErrRuntimeFailure, err)
	}
	size := int64(binary.BigEndian.Uint64(trailer[:]))
	if size != n-sha256.Size-8-payloadStart {
		return Session{}, invalid("its length does not match its contents")
	}
	payload := io.NewSectionReader(f, payloadStart, size)
	if keep != "" {
		return s.(SessionMover).RestoreSessionAs(ctx, payload, size, keep)
	}
	return s.RestoreSession(ctx, payload, size)
}

// checkHeader checks a snapshot's header against the restore: made by
// this adapter, for the restore's tenant, and of the session whose id the
// restore keeps, if any. Every refusal is ErrInvalidSnapshot, whether or
// not a session has the id to keep.
func (p *Port) checkHeader(hb []byte, opt SnapshotOptions) (snapshotHeader, error) {
	invalid := func(why string) error { return fmt.Errorf("%w: %s", ErrInvalidSnapshot, why) }
	var hdr snapshotHeader
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return hdr, invalid("its header is malformed")
	}
	if !hmac.Equal([]byte(hdr.Tenant), []byte(opt.Tenant)) {
		return hdr, invalid("it belongs to another tenant")
	}
	if hdr.Adapter != p.info.Name {
		return hdr, invalid(fmt.Sprintf("it was made by the %s adapter, not %s", hdr.Adapter, p.info.Name))
	}
	if opt.SessionID != "" && hdr.Session != opt.SessionID {
		return hdr, invalid("it is not a snapshot of the session whose id the restore is to keep (a session keeps its own id only)")
	}
	return hdr, nil
}

// sealTail hashes what is written to it but the last sha256.Size bytes,
// which it holds back: a snapshot ends with its seal, and where the
// stream ends is known only once it has.
type sealTail struct {
	h    sealer
	tail [sha256.Size]byte
	n    int // bytes held in tail
}

func (s *sealTail) Write(b []byte) (int, error) {
	if s.n+len(b) <= len(s.tail) {
		s.n += copy(s.tail[s.n:], b)
		return len(b), nil
	}
	// What is hashed now: the oldest of the bytes held, then all of b
	// but the bytes that stay held.
	over := s.n + len(b) - len(s.tail)
	fromTail := min(over, s.n)
	s.h.Write(s.tail[:fromTail])
	s.n = copy(s.tail[:], s.tail[fromTail:s.n])
	fromB := over - fromTail
	s.h.Write(b[:fromB])
	s.n += copy(s.tail[s.n:], b[fromB:])
	return len(b), nil
}

// held is the bytes held back: the last sha256.Size written, or all of
// them if fewer were.
func (s *sealTail) held() []byte { return s.tail[:s.n] }

// spoolWriter remembers why a write failed, to tell the server's failure
// (its disk) from the client's (the body) in io.Copy's error.
type spoolWriter struct {
	w   io.Writer
	err error
}

func (s *spoolWriter) Write(b []byte) (int, error) {
	n, err := s.w.Write(b)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
