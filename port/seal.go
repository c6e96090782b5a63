package port

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
)

// The two seal formats, named by the magic a sealed snapshot starts with.
// Both are the same length, so that a restore reads either before it
// knows which it has.
const (
	// snapshotMagicV1: HMAC-SHA256 under the key over everything before
	// the seal. Restored; no longer written.
	snapshotMagicV1 = "codeport-snapshot-v1\n"
	// snapshotMagic (format 2): a segmented GMAC (segmentSeal), whose
	// per-snapshot salt is in the clear-text header. Checking a seal was
	// a third of a large restore's CPU time with HMAC-SHA256 (1.7 GB/s
	// on the development machine's SHA extensions); GHASH runs at
	// 7–8 GB/s there.
	snapshotMagic = "codeport-snapshot-v2\n"
)

// sealSaltBytes is the length of a format 2 snapshot's salt.
const sealSaltBytes = 16

// sealSegmentBytes is the length of the segments a format 2 seal tags one
// by one: long enough that a segment's tag is noise next to its GHASH,
// short enough that a writer's small writes are gathered in a buffer that
// stays in cache.
const sealSegmentBytes = 256 << 10

// sealer is what seals the bytes written to it: Sum, called once after the
// last Write, returns the 32-byte seal.
type sealer interface {
	Write(p []byte) (int, error)
	Sum(b []byte) []byte
}

// newSealer returns the sealer of a snapshot of the given magic under key;
// salt is a format 2 snapshot's, from its header.
func newSealer(key []byte, magic string, salt []byte) (sealer, error) {
	switch magic {
	case snapshotMagicV1:
		return hmac.New(sha256.New, key), nil
	case snapshotMagic:
		return newSegmentSeal(key, salt)
	}
	return nil, fmt.Errorf("%w: it is not a codeport snapshot (or of another format version)", ErrInvalidSnapshot)
}

// segmentSeal is format 2's seal: the stream is cut into segments of
// sealSegmentBytes (the last one shorter, possibly empty); segment i is
// tagged with GMAC (AES-256-GCM with no plaintext, the segment as its
// additional data) under a key derived from the snapshot key and the
// snapshot's salt, with i as its nonce; the seal is HMAC-SHA256 under the
// snapshot key of a label, the salt, every tag in order, and the stream's
// length.
//
// Why it is a seal: the derived key is fresh for every snapshot (a random
// salt), so no two segments an honest writer tags share a key and a
// nonce, which is what GMAC's security needs; a segment changed, moved,
// dropped or added changes its tag or the tags' sequence or the length,
// which the HMAC binds; the salt and the label keep the HMAC's inputs
// apart from format 1's and from any other use of the key. Forging a tag
// without the derived key succeeds with probability about the segment's
// length in 16-byte blocks over 2^128.
type segmentSeal struct {
	gcm   cipher.AEAD
	outer hash.Hash
	buf   []byte // the segment being gathered
	seg   uint64 // index of the next segment tagged
	total uint64 // bytes written
	nonce [12]byte
	tag   [16]byte
}

func newSegmentSeal(key, salt []byte) (*segmentSeal, error) {
	if len(salt) != sealSaltBytes {
		return nil, fmt.Errorf("%w: its header is malformed (no seal salt)", ErrInvalidSnapshot)
	}
	kdf := hmac.New(sha256.New, key)
	kdf.Write([]byte("codeport snapshot seal v2: segment key\x00"))
	kdf.Write(salt)
	block, err := aes.NewCipher(kdf.Sum(nil))
	if err != nil {
		return nil, fmt.Errorf("%w: seal: %v", ErrRuntimeFailure, err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: seal: %v", ErrRuntimeFailure, err)
	}
	outer := hmac.New(sha256.New, key)
	outer.Write([]byte("codeport snapshot seal v2: tags\x00"))
	outer.Write(salt)
	return &segmentSeal{gcm: gcm, outer: outer, buf: make([]byte, 0, sealSegmentBytes)}, nil
}

// Write tags every segment p completes; whole segments of p are tagged
// where they lie, the rest gathered.
func (s *segmentSeal) Write(p []byte) (int, error) {
	n := len(p)
	s.total += uint64(n)
	if len(s.buf) > 0 {
		k := copy(s.buf[len(s.buf):cap(s.buf)], p)
		s.buf, p = s.buf[:len(s.buf)+k], p[k:]
		if len(s.buf) < sealSegmentBytes {
			return n, nil
		}
		s.tagSegment(s.buf)
		s.buf = s.buf[:0]
	}
	for len(p) >= sealSegmentBytes {
		s.tagSegment(p[:sealSegmentBytes])
		p = p[sealSegmentBytes:]
	}
	s.buf = append(s.buf, p...)
	return n, nil
}

func (s *segmentSeal) tagSegment(b []byte) {
	binary.BigEndian.PutUint64(s.nonce[4:], s.seg)
	s.seg++
	s.outer.Write(s.gcm.Seal(s.tag[:0], s.nonce[:], nil, b))
}

// Sum tags the last segment and returns the seal appended to b. It ends
// the sealer: nothing may be written after it.
func (s *segmentSeal) Sum(b []byte) []byte {
	s.tagSegment(s.buf)
	s.buf = nil
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], s.total)
	s.outer.Write(n[:])
	return s.outer.Sum(b)
}
