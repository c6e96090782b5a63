package port

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Snapshotter is implemented by a driver that can save a session between
// calls and make a new session from what it saved: the session's whole
// state (for the wasm adapter, the interpreter's memory, its globals and
// the workspace), not a pickle of its variables. The Port seals what the
// driver writes (see WithSnapshotKey) and checks the seal before the driver
// reads anything back, so a driver reads only snapshots the same key made;
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
	SealsSnapshots() bool
	SnapshotSealed(ctx context.Context, sessionID string, w io.Writer, opt SnapshotOptions) error
	RestoreSealed(ctx context.Context, r io.Reader, opt SnapshotOptions) (Session, error)
}

// SessionSnapshots is what a port that can offer session snapshots has
// besides CodeExecutionPort (*Port has it; SnapshotsOffered says whether
// they work with its driver and configuration).
type SessionSnapshots interface {
	SnapshotsOffered() bool
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
	// CheckMovedID; an id that a session here has already is
	// ErrInvalidRequest. Ignored by SnapshotSession.
	SessionID string
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

// snapshotMagic starts every sealed snapshot; the version is in it.
const snapshotMagic = "codeport-snapshot-v1\n"

// snapshotHeaderMax bounds the header a restore reads before its seal is
// checked.
const snapshotHeaderMax = 64 << 10

// DefaultMaxSnapshotBytes bounds a snapshot a restore accepts unless
// WithMaxSnapshotBytes says otherwise: what a session at the default
// memory and workspace limits can need, with room.
const DefaultMaxSnapshotBytes = 2 << 30

// snapshotHeader is the sealed snapshot's clear-text header. It is covered
// by the seal.
type snapshotHeader struct {
	Adapter string    `json:"adapter"`
	Tenant  string    `json:"tenant"`
	Created time.Time `json:"created"`
}

// WithSnapshotKey turns snapshots on for a driver that can make them
// (Snapshotter): every snapshot is sealed with HMAC-SHA256 under key, and
// a restore checks the seal, in constant time, before the driver reads a
// byte. Without a key, or with one shorter than MinSnapshotKeyBytes, the
// Port refuses both operations (ErrUnsupported).
func WithSnapshotKey(key []byte) Option {
	return func(o *options) { o.snapshotKey = append([]byte(nil), key...) }
}

// WithMaxSnapshotBytes bounds the size of a snapshot RestoreSession reads
// (DefaultMaxSnapshotBytes otherwise); a larger one is ErrInvalidSnapshot.
func WithMaxSnapshotBytes(n int64) Option {
	return func(o *options) {
		if n > 0 {
			o.maxSnapshot = n
		}
	}
}

// MinSnapshotKeyBytes is the shortest key WithSnapshotKey accepts.
const MinSnapshotKeyBytes = 32

// SnapshotsOffered reports whether SnapshotSession and RestoreSession can
// succeed: the driver makes snapshots, and they can be sealed.
func (p *Port) SnapshotsOffered() bool {
	_, _, err := p.snapshotter()
	return err == nil
}

// snapshotter is the driver's snapshot operations: sealed ones (passed
// through) or the driver's own (sealed here, which needs the key).
func (p *Port) snapshotter() (SealedSnapshotter, Snapshotter, error) {
	if s, ok := p.d.(SealedSnapshotter); ok {
		if !s.SealsSnapshots() {
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
	sealed, s, err := p.snapshotter()
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
		}, w, opt)
	} else if sealed != nil {
		err = sealed.SnapshotSealed(k.ctx, id, w, opt)
	} else {
		err = p.sealSnapshot(k.ctx, func(ctx context.Context, w io.Writer, seal func() error) error {
			if err := s.SnapshotSession(ctx, id, w); err != nil {
				return err
			}
			return seal()
		}, w, opt)
	}
	k.done(err)
	return err
}

// sealSnapshot frames what save writes with the header and the seal; save
// calls its seal function once the driver has written the snapshot.
func (p *Port) sealSnapshot(ctx context.Context, save func(ctx context.Context, w io.Writer, seal func() error) error, w io.Writer, opt SnapshotOptions) error {
	hdr, err := json.Marshal(snapshotHeader{Adapter: p.info.Name, Tenant: opt.Tenant, Created: time.Now().UTC()})
	if err != nil {
		return fmt.Errorf("%w: snapshot header: %v", ErrRuntimeFailure, err)
	}
	mac := hmac.New(sha256.New, p.snapshotKey)
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
// SnapshotSession wrote with the same key, for the same tenant. The whole
// snapshot is read (into a temporary file) and its seal checked before the
// driver sees any of it: a snapshot that is truncated, altered, sealed
// with another key or made for another tenant is ErrInvalidSnapshot.
func (p *Port) RestoreSession(ctx context.Context, r io.Reader, opt SnapshotOptions) (Session, error) {
	sealed, s, err := p.snapshotter()
	if err != nil {
		return Session{}, p.refuse(ctx, OpRestoreSession, "", err)
	}
	var keep string
	if opt.SessionID != "" {
		keep, err = p.keptID(opt.SessionID)
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

func (p *Port) openSnapshot(ctx context.Context, s Snapshotter, r io.Reader, opt SnapshotOptions, keep string) (Session, error) {
	invalid := func(why string) error { return fmt.Errorf("%w: %s", ErrInvalidSnapshot, why) }
	f, err := os.CreateTemp("", "codeport-restore-")
	if err != nil {
		return Session{}, fmt.Errorf("%w: restore: temporary file: %v", ErrRuntimeFailure, err)
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	// Everything up to the seal is hashed as it arrives; the last 32 bytes
	// read are the seal itself, so the file is hashed once it is complete.
	n, err := io.Copy(f, io.LimitReader(r, p.maxSnapshot+1))
	if err != nil {
		if ctx.Err() != nil {
			return Session{}, ctx.Err()
		}
		return Session{}, invalid(fmt.Sprintf("reading it failed: %v", err))
	}
	if n > p.maxSnapshot {
		return Session{}, invalid(fmt.Sprintf("it is larger than %d bytes", p.maxSnapshot))
	}
	fixed := int64(len(snapshotMagic) + 4 + 8 + sha256.Size)
	if n < fixed {
		return Session{}, invalid("it is too short to be a snapshot")
	}
	magic := make([]byte, len(snapshotMagic))
	if _, err := f.ReadAt(magic, 0); err != nil || string(magic) != snapshotMagic {
		return Session{}, invalid("it is not a codeport snapshot (or of another format version)")
	}
	mac := hmac.New(sha256.New, p.snapshotKey)
	if _, err := io.Copy(mac, io.NewSectionReader(f, 0, n-sha256.Size)); err != nil {
		return Session{}, fmt.Errorf("%w: restore: %v", ErrRuntimeFailure, err)
	}
	seal := make([]byte, sha256.Size)
	if _, err := f.ReadAt(seal, n-sha256.Size); err != nil {
		return Session{}, fmt.Errorf("%w: restore: %v", ErrRuntimeFailure, err)
	}
	if !hmac.Equal(seal, mac.Sum(nil)) {
		return Session{}, invalid("its seal does not match: it was altered or truncated, or sealed with another key")
	}
	// Sealed by this key: the rest is what sealSnapshot wrote.
	var lenBuf [4]byte
	if _, err := f.ReadAt(lenBuf[:], int64(len(snapshotMagic))); err != nil {
		return Session{}, fmt.Errorf("%w: restore: %v", ErrRuntimeFailure, err)
	}
	hlen := int64(binary.BigEndian.Uint32(lenBuf[:]))
	payloadStart := int64(len(snapshotMagic)) + 4 + hlen
	if hlen > snapshotHeaderMax || payloadStart > n-8-sha256.Size {
		return Session{}, invalid("its header is malformed")
	}
	hb := make([]byte, hlen)
	if _, err := f.ReadAt(hb, int64(len(snapshotMagic))+4); err != nil {
		return Session{}, fmt.Errorf("%w: restore: %v", ErrRuntimeFailure, err)
	}
	var hdr snapshotHeader
	if err := json.Unmarshal(hb, &hdr); err != nil {
		return Session{}, invalid("its header is malformed")
	}
	if !hmac.Equal([]byte(hdr.Tenant), []byte(opt.Tenant)) {
		return Session{}, invalid("it belongs to another tenant")
	}
	if hdr.Adapter != p.info.Name {
		return Session{}, invalid(fmt.Sprintf("it was made by the %s adapter, not %s", hdr.Adapter, p.info.Name))
	}
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

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
