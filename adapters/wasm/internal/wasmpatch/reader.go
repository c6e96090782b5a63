package wasmpatch

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// The errors Patch wraps, so that a caller can tell a broken file from a
// valid one this package cannot rewrite, and both from one it already did.
var (
	// ErrMalformed reports input that is not a well-formed WebAssembly
	// binary: truncated, a bad LEB128, an unknown opcode or section.
	ErrMalformed = errors.New("malformed module")
	// ErrUnsupported reports a well-formed module that uses something the
	// rewrite cannot handle safely: relaxed SIMD, threads, exception
	// handling, a mutable v128 global it would export, a data segment
	// whose offset is not a constant, an export name this package
	// reserves, or an env.invoke_ import it cannot make a dispatcher for.
	ErrUnsupported = errors.New("unsupported module")
	// ErrAlreadyPatched reports a module that already exports
	// InterruptGlobal. Patching twice would instrument every loop twice and
	// leave the first interrupt global unreachable by the host.
	ErrAlreadyPatched = errors.New("already patched")
)

// formatError says where in the input a problem is, as an absolute byte
// offset, so that it can be checked with any hex dump of the file.
type formatError struct {
	kind   error // one of the Err* sentinels above
	where  string
	offset int
	msg    string
}

func (e *formatError) Error() string {
	if e.where == "" {
		return fmt.Sprintf("wasmpatch: %v: offset %#x: %s", e.kind, e.offset, e.msg)
	}
	return fmt.Sprintf("wasmpatch: %v: %s, offset %#x: %s", e.kind, e.where, e.offset, e.msg)
}

func (e *formatError) Unwrap() error { return e.kind }

// reader decodes a window [pos, end) of the whole input. It never indexes
// past end, so malformed input turns into errors rather than panics, and it
// keeps absolute offsets so errors point into the original file.
type reader struct {
	buf   []byte // the whole input
	pos   int
	end   int
	where string // what is being decoded, for error messages
}

func (r *reader) remaining() int { return r.end - r.pos }

func (r *reader) errorf(kind error, format string, args ...any) error {
	return &formatError{kind: kind, where: r.where, offset: r.pos, msg: fmt.Sprintf(format, args...)}
}

func (r *reader) malformed(format string, args ...any) error {
	return r.errorf(ErrMalformed, format, args...)
}

func (r *reader) truncated(what string) error {
	return r.malformed("unexpected end of input reading %s", what)
}

// sub carves the next n bytes off as a reader of their own, so a section
// or function body cannot be decoded past its declared size.
func (r *reader) sub(n uint32, what string) (*reader, error) {
	if uint64(n) > uint64(r.remaining()) {
		return nil, r.malformed("%s declares %d bytes but only %d remain", what, n, r.remaining())
	}
	s := &reader{buf: r.buf, pos: r.pos, end: r.pos + int(n), where: r.where}
	r.pos += int(n)
	return s, nil
}

func (r *reader) byte(what string) (byte, error) {
	if r.pos >= r.end {
		return 0, r.truncated(what)
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

func (r *reader) bytes(n uint32, what string) ([]byte, error) {
	if uint64(n) > uint64(r.remaining()) {
		return nil, r.truncated(what)
	}
	b := r.buf[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b, nil
}

// u32 decodes an unsigned LEB128 of at most 32 bits, rejecting encodings
// longer than five bytes or with bits set beyond the 32nd, as the spec does.
func (r *reader) u32(what string) (uint32, error) {
	var v uint32
	for i := 0; ; i++ {
		start := r.pos
		b, err := r.byte(what)
		if err != nil {
			return 0, err
		}
		if i == 4 && b&0xf0 != 0 {
			r.pos = start
			return 0, r.malformed("%s: u32 LEB128 is too long or overflows", what)
		}
		v |= uint32(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v, nil
		}
	}
}

// signed decodes a signed LEB128 of at most bits bits (32, 33 or 64),
// rejecting over-long encodings and unused bits that are not a sign
// extension.
func (r *reader) signed(bits int, what string) (int64, error) {
	maxBytes := (bits + 6) / 7
	var v int64
	for i := 0; ; i++ {
		start := r.pos
		b, err := r.byte(what)
		if err != nil {
			return 0, err
		}
		if i == maxBytes-1 {
			// Only the low used bits of the last byte carry the value; the
			// rest must repeat the sign bit, and there is no continuation.
			used := bits - 7*i
			mask := byte(0x7f) &^ (1<<(used-1) - 1)
			if b&0x80 != 0 || (b&mask != 0 && b&mask != mask) {
				r.pos = start
				return 0, r.malformed("%s: s%d LEB128 is too long or overflows", what, bits)
			}
		}
		v |= int64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			if shift := 7 * (i + 1); shift < 64 && b&0x40 != 0 {
				v |= -1 << shift
			}
			return v, nil
		}
	}
}

// skipU32 and the like decode an immediate only to find where it ends:
// immediates are copied as they were encoded.
func (r *reader) skipU32(what string) error {
	_, err := r.u32(what)
	return err
}

func (r *reader) skipSigned(bits int, what string) error {
	_, err := r.signed(bits, what)
	return err
}

// name decodes a length-prefixed UTF-8 string.
func (r *reader) name(what string) (string, error) {
	n, err := r.u32(what + " length")
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n, what)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", r.malformed("%s is not valid UTF-8", what)
	}
	return string(b), nil
}

// done reports bytes left over in a window that should have been used up,
// which means the declared size and the content disagree.
func (r *reader) done(what string) error {
	if r.pos != r.end {
		return r.malformed("%s has %d unexpected bytes at its end", what, r.end-r.pos)
	}
	return nil
}

// appendU32 and appendS32 are LEB128 encoders for what the patch writes.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}
