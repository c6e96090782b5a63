package port

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// StreamRestorer is implemented by a driver that restores a snapshot as
// the Port reads it, rather than after the Port has spooled the whole
// snapshot to a temporary file and checked its seal: the Port computes the
// seal on another goroutine while the driver decodes, and no byte is
// written to disk and read back. A restore of tens of MiB spends most of
// its time there otherwise.
//
// What the driver reads before seal returns is not yet trusted: the driver
// may only stage it where nothing sees it (a new interpreter that has not
// run, new directories that no session has), checking it as input from
// outside. It must call seal once it has read what it needs and before the
// restored session runs anything or becomes visible; seal reads what the
// driver left unread, checks the snapshot's length and seal, and returns
// ErrInvalidSnapshot when they do not match, after which the driver
// discards everything it staged and returns that error, leaving no
// session. A refusal of the contents the driver makes before calling seal
// (ErrInvalidSnapshot, ErrFileTooLarge, ErrPathEscapesWorkspace) is
// answered as the seal's, when the seal fails: a forged snapshot is
// reported as forged, not as whatever its forged contents claimed. A driver that
// returns a session without a seal that passed has it destroyed, and the
// restore fails.
type StreamRestorer interface {
	// RestoreSessionStream makes a session from r, which holds what
	// SnapshotSession wrote and ends where that did, under id keep, or a
	// new id when keep is empty.
	RestoreSessionStream(ctx context.Context, r io.Reader, seal func() error, keep string) (Session, error)
}

// The blocks the sealing reader reads ahead in: several, so that reading
// and hashing go on while the driver decodes the block before.
const (
	sealBlockBytes = 256 << 10
	sealBlocks     = 4
	// sealTrailer is what ends a sealed snapshot: the payload's length
	// and the seal.
	sealTrailer = 8 + sha256.Size
)

// streamSnapshot restores a snapshot whose header (head, hb) has been read
// and checked, through a driver that decodes it as it is read.
func (p *Port) streamSnapshot(ctx context.Context, sr StreamRestorer, r io.Reader, head, hb []byte, mac sealer, keep string, readFailed func(error) error) (Session, error) {
	mac.Write(head)
	mac.Write(hb)
	prefix := int64(len(head) + len(hb))
	sv := newSealReader(io.LimitReader(r, p.maxSnapshot+1-prefix), mac)
	defer sv.close()
	seal := func() error {
		return sv.check(func(n int64, tail []byte, err error) error {
			switch {
			case err != nil:
				return readFailed(err)
			case prefix+n+int64(len(tail)) > p.maxSnapshot:
				return fmt.Errorf("%w: it is larger than %d bytes", ErrInvalidSnapshot, p.maxSnapshot)
			case len(tail) < sealTrailer:
				return fmt.Errorf("%w: it is too short to be a snapshot", ErrInvalidSnapshot)
			}
			// The seal covers the length before it, as sealSnapshot wrote.
			mac.Write(tail[:8])
			switch {
			case !hmac.Equal(tail[8:], mac.Sum(nil)):
				return fmt.Errorf("%w: its seal does not match: it was altered or truncated, or sealed with another key", ErrInvalidSnapshot)
			case int64(binary.BigEndian.Uint64(tail[:8])) != n:
				return fmt.Errorf("%w: its length does not match its contents", ErrInvalidSnapshot)
			}
			return nil
		})
	}
	sess, err := sr.RestoreSessionStream(ctx, sv, seal, keep)
	if err != nil {
		if !sv.checked() && ctx.Err() == nil && refusesContents(err) {
			// The driver refused what it read before the seal was
			// checked: a snapshot that is not what its seal says is
			// refused as such. (A refusal that is not the contents'
			// fault, at capacity say, is answered without reading on.)
			if serr := seal(); serr != nil {
				return Session{}, serr
			}
		}
		return Session{}, err
	}
	if serr := sv.passed(); serr != nil {
		if derr := p.d.DestroySession(context.WithoutCancel(ctx), sess.ID); derr != nil {
			return Session{}, fmt.Errorf("%w: restore: %s adapter restored a session without checking its seal (%v), and destroying it failed: %v", ErrRuntimeFailure, p.info.Name, serr, derr)
		}
		return Session{}, fmt.Errorf("%w: restore: %s adapter restored a session without checking its seal: %v", ErrRuntimeFailure, p.info.Name, serr)
	}
	return sess, nil
}

// refusesContents says whether a driver's error refuses what the snapshot
// holds, which its seal may show forged.
func refusesContents(err error) bool {
	return errors.Is(err, ErrInvalidSnapshot) || errors.Is(err, ErrFileTooLarge) || errors.Is(err, ErrPathEscapesWorkspace)
}

// sealReader reads a sealed snapshot's payload ahead, on a goroutine of
// its own, in blocks that it hashes as they arrive; Read hands them on
// without the last sealTrailer bytes of the stream, which it holds back
// (where the stream ends is known only once it has).
type sealReader struct {
	full chan *sealBlock // read and hashed, for Read
	free chan *sealBlock // back from Read, for the reader
	stop chan struct{}   // closed by close
	wg   sync.WaitGroup

	cur *sealBlock
	off int

	// Set by the reading goroutine before it closes full: the bytes
	// handed on, the ones held back, and a read's error other than the
	// end of the stream.
	n    int64
	tail []byte
	err  error

	once   sync.Once
	result error
	done   bool
}

type sealBlock struct {
	buf  []byte
	data []byte
}

func newSealReader(src io.Reader, mac sealer) *sealReader {
	s := &sealReader{full: make(chan *sealBlock, sealBlocks), free: make(chan *sealBlock, sealBlocks), stop: make(chan struct{})}
	for range sealBlocks {
		s.free <- &sealBlock{buf: make([]byte, sealTrailer+sealBlockBytes)}
	}
	s.wg.Add(1)
	go s.readAhead(src, mac)
	return s
}

// readAhead reads src into blocks, each starting with the bytes the one
// before held back, hashes what it hands on and holds back the last
// sealTrailer bytes read.
func (s *sealReader) readAhead(src io.Reader, mac sealer) {
	defer s.wg.Done()
	defer close(s.full)
	var tail [sealTrailer]byte
	held := 0
	for {
		var b *sealBlock
		select {
		case b = <-s.free:
		case <-s.stop:
			return
		}
		copy(b.buf, tail[:held])
		// What one read brings, not a block's worth: a restore that
		// ends early stops this goroutine without waiting for a slow
		// body to fill a block.
		got, err := 0, error(nil)
		for got == 0 && err == nil {
			got, err = src.Read(b.buf[held:])
		}
		end := errors.Is(err, io.EOF)
		total := held + got
		give := max(0, total-sealTrailer)
		mac.Write(b.buf[:give])
		held = copy(tail[:], b.buf[give:total])
		b.data = b.buf[:give]
		s.n += int64(give)
		if err != nil {
			if !end {
				s.err = err
			}
			s.tail = append([]byte(nil), tail[:held]...)
		}
		if len(b.data) > 0 {
			select {
			case s.full <- b:
			case <-s.stop:
				return
			}
		} else {
			s.free <- b
		}
		if err != nil {
			return
		}
	}
}

// Read hands on the payload; at its end, io.EOF, or the error that ended
// the reading.
func (s *sealReader) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	for s.cur == nil || s.off == len(s.cur.data) {
		if s.cur != nil {
			s.free <- s.cur
			s.cur = nil
		}
		b, ok := <-s.full
		if !ok {
			if s.err != nil {
				return 0, s.err
			}
			return 0, io.EOF
		}
		s.cur, s.off = b, 0
	}
	n := copy(p, s.cur.data[s.off:])
	s.off += n
	return n, nil
}

// check reads what is left of the stream and returns what verify says of
// it (the bytes handed on, those held back, a read's error), once: later
// calls return the same. Nothing is read after it.
func (s *sealReader) check(verify func(n int64, tail []byte, err error) error) error {
	s.once.Do(func() {
		for {
			if s.cur != nil {
				s.free <- s.cur // never blocks: free holds every block
				s.cur = nil
			}
			b, ok := <-s.full
			if !ok {
				break
			}
			s.cur = b
		}
		s.done = true
		s.result = verify(s.n, s.tail, s.err)
	})
	return s.result
}

// checked says whether check has run.
func (s *sealReader) checked() bool { return s.done }

// passed is nil when check ran and the seal matched.
func (s *sealReader) passed() error {
	if !s.done {
		return errors.New("the seal was never checked")
	}
	return s.result
}

// close stops the reading goroutine and waits for it: nothing reads the
// caller's reader once the restore has returned.
func (s *sealReader) close() {
	close(s.stop)
	s.wg.Wait()
}
