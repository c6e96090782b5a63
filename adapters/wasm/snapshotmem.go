package wasm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/s2"

	"github.com/codeport/codeport/port"
)

// The memory section of a format 2 snapshot, laid out so that a restore
// decodes it straight into the new interpreter's memory, on every core,
// instead of through a stream decoder's buffer and a copy:
//
//	the listing: a bit per chunk of the memory (imageChunk bytes), set
//	  for each chunk the section holds; bits past the last chunk are 0;
//	  then u32 CRC-32C of the listing
//	then one block per run of listed chunks, a run ending where the
//	  listing has a gap and at every multiple of blockChunks:
//	  u32 0, u32 CRC-32C, then the run's bytes as they are (stored
//	  raw), or
//	  u32 n > 0, u32 CRC-32C, then n bytes: the run as one S2 block
//
// The checksums are of the bytes stored. A sealed snapshot's seal covers
// them too; a hibernated session's file has no seal, and they are what
// tells a file damaged on disk (format 1's S2 stream had them per chunk),
// which is set aside rather than woken into a corrupt interpreter.
//
// A block is stored raw unless compression shrinks it enough to pay for
// its decoding (storeCompressed): restoring a raw block is a copy,
// restoring a compressed one a decode of its whole length.
// The listing, read first, tells a restore which 2 MiB extents of its
// memory it is about to fill, which it has backed with huge pages.

// crc32c is b's CRC-32C, which the hardware computes (MakeTable returns
// the crc32 package's one table for it).
func crc32c(b []byte) uint32 { return crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)) }

// blockChunks is the most chunks a block holds: 1 MiB, so that a restore
// has blocks to decode on every core and a block's buffers stay small.
const blockChunks = 256

// blockRange is a block's chunks, [lo, hi).
type blockRange struct{ lo, hi int }

// memoryBlocks lists the blocks of a memory of nChunks chunks whose
// listing (bit i of listing[i/8]) is listing.
func memoryBlocks(listing []byte, nChunks int) []blockRange {
	var blocks []blockRange
	for i := 0; i < nChunks; {
		if !listed(listing, i) {
			i++
			continue
		}
		j := i + 1
		for j < nChunks && listed(listing, j) && j%blockChunks != 0 {
			j++
		}
		blocks = append(blocks, blockRange{i, j})
		i = j
	}
	return blocks
}

func listed(listing []byte, i int) bool { return listing[i/8]&(1<<(i%8)) != 0 }

// storeCompressed says whether a block of raw bytes is stored as enc, its
// S2 encoding. Compact, it is wherever that shrinks it by an eighth: a
// block that barely shrinks (data already compressed, random bytes) is
// copied on restore rather than decoded for nothing. Otherwise, only
// where it shrinks to a quarter or less, which restores fastest: a
// Python heap's blocks typically shrink to a half or a third, and S2
// decodes such blocks at about 2 GB/s, slower than the bytes it saves are
// read, sealed and copied. Measured on the 50 MB session of
// BenchmarkSnapshot: restore CPU 54 ms compressed at a half, 38.5 ms
// stored raw; the snapshot is 32 MiB one way, 66 MiB the other. Blocks
// that shrink to a quarter (zeros with a few words, repeated records)
// decode near copying speed and stay compressed either way.
func storeCompressed(raw, enc []byte, compact bool) bool {
	if compact {
		return len(enc) <= len(raw)-len(raw)/8
	}
	return len(enc) <= len(raw)/4
}

// restoreWorkers is how many blocks a restore decodes at once, and a save
// compresses: every core, up to 4 (the seal and the reading take one).
func restoreWorkers() int { return max(1, min(runtime.GOMAXPROCS(0), 4)) }

// probeBytes is how much of a block encodeBlock compresses first, when
// only a block that shrinks to a quarter is stored compressed.
const probeBytes = 64 << 10

// encodeBlock returns raw's S2 encoding (in dst, if it fits), or nil
// where it would not be stored compressed anyway: unless compact, a block
// whose first probeBytes do not shrink to a third is not encoded whole,
// which spares a snapshot of a Python heap most of its compression time
// (its blocks shrink to a half or a third, and are stored raw).
func encodeBlock(dst, raw []byte, compact bool) []byte {
	if !compact && len(raw) > 2*probeBytes {
		probe := s2.Encode(dst, raw[:probeBytes])
		if len(probe) > probeBytes/3 {
			return nil
		}
		dst = probe
	}
	return s2.Encode(dst, raw)
}

// writeMemory writes mem's memory section: with base, the chunks that
// differ from it (past its end, the chunks that are not all zeros);
// without, every chunk that is not all zeros. Blocks are compressed on
// every core, and written in order; compact says which are stored
// compressed (storeCompressed).
func writeMemory(w io.Writer, mem []byte, base *image, compact bool) error {
	nChunks := (len(mem) + imageChunk - 1) / imageChunk
	listing := make([]byte, (nChunks+7)/8)
	buf := make([]byte, imageChunk)
	for i := range nChunks {
		c := mem[i*imageChunk : min((i+1)*imageChunk, len(mem))]
		if base != nil {
			b, err := base.chunk(i, buf)
			if err != nil {
				return err
			}
			if b == nil && allZero(c) || b != nil && bytes.Equal(b, c) {
				continue // the image's (past it, zero unless written)
			}
		} else if allZero(c) {
			continue
		}
		listing[i/8] |= 1 << (i % 8)
	}
	var u32 [4]byte
	binary.BigEndian.PutUint32(u32[:], crc32c(listing))
	if _, err := w.Write(listing); err != nil {
		return err
	}
	if _, err := w.Write(u32[:]); err != nil {
		return err
	}
	blocks := memoryBlocks(listing, nChunks)
	bytesOf := func(b blockRange) []byte { return mem[b.lo*imageChunk : min(b.hi*imageChunk, len(mem))] }
	workers := restoreWorkers()
	type result struct {
		enc  []byte // nil: stored raw
		sum  uint32 // of what is stored
		done chan struct{}
	}
	results := make([]result, len(blocks))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	// Blocks in flight, encoded or being encoded and not yet written:
	// their buffers are what the save holds beyond the memory itself.
	inFlight := make(chan struct{}, 2*workers)
	free := make(chan []byte, 2*workers)
	stop := make(chan struct{})
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				select {
				case inFlight <- struct{}{}:
				case <-stop:
					return
				}
				i := int(next.Add(1) - 1)
				if i >= len(blocks) {
					<-inFlight
					return
				}
				// A buffer back from the writer, or none: Encode makes
				// one as large as the block needs.
				var dst []byte
				select {
				case dst = <-free:
				default:
				}
				raw := bytesOf(blocks[i])
				if enc := encodeBlock(dst, raw, compact); enc != nil && storeCompressed(raw, enc, compact) {
					results[i].enc, results[i].sum = enc, crc32c(enc)
				} else {
					results[i].sum = crc32c(raw)
					if enc == nil {
						enc = dst
					}
					select {
					case free <- enc[:cap(enc)]:
					default:
					}
				}
				close(results[i].done)
			}
		})
	}
	var err error
	var head [8]byte
	for i, b := range blocks {
		<-results[i].done
		enc := results[i].enc
		stored := enc
		if enc == nil {
			stored = bytesOf(b)
		}
		binary.BigEndian.PutUint32(head[:4], uint32(len(enc)))
		binary.BigEndian.PutUint32(head[4:], results[i].sum)
		if _, err = w.Write(head[:]); err == nil {
			_, err = w.Write(stored)
		}
		if enc != nil {
			results[i].enc = nil
			select {
			case free <- enc[:cap(enc)]:
			default:
			}
		}
		<-inFlight
		if err != nil {
			break
		}
	}
	close(stop)
	wg.Wait()
	return err
}

// memoryTarget is a restored instance's memory as a restore writes it.
type memoryTarget struct {
	view []byte
	// shared is how many bytes at the start of view hold the image, whose
	// pages are shared until written: a chunk equal to the image's is
	// left alone there. Past it, the memory was grown for this restore,
	// is zero and shared with nothing, and blocks are decoded straight
	// into it.
	shared int
}

// put writes b at off, chunk by chunk where the image is shared.
func (t *memoryTarget) put(off int, b []byte) {
	for len(b) > 0 {
		if off >= t.shared {
			copy(t.view[off:], b)
			return
		}
		n := min(len(b), imageChunk)
		if c := t.view[off : off+n]; !bytes.Equal(c, b[:n]) {
			copy(c, b[:n])
		}
		off, b = off+n, b[n:]
	}
}

// readMemory reads a format 2 memory section into t, whose view is the
// memory's whole size, on every core. Chunks it does not list are left as
// they are: the caller clears them, or keeps the image's. alloc, when the
// memory is a mapping of it, is asked for huge pages where the section
// fills most of an extent. With sealed, the blocks' checksums are not
// computed: the seal covers every byte and is checked before the memory
// is used (they are there for hibernated files, which have no seal), and
// a corrupt block is refused by the decoder or by the seal either way.
func readMemory(r io.Reader, t *memoryTarget, alloc *allocation, sealed bool) ([]byte, error) {
	malformed := func(what string) error {
		return fmt.Errorf("%w: its memory section is %s", port.ErrInvalidSnapshot, what)
	}
	nChunks := (len(t.view) + imageChunk - 1) / imageChunk
	listing, blocks, err := readListing(r, nChunks)
	if err != nil {
		return nil, err
	}
	alloc.adviseHuge(t.view, t.shared, listing)
	workers := restoreWorkers()
	type job struct {
		b   blockRange
		enc []byte
		sum uint32
	}
	jobs := make(chan job, workers)
	free := make(chan []byte, 2*workers)
	var failed atomic.Pointer[error]
	fail := func(err error) { failed.CompareAndSwap(nil, &err) }
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var scratch []byte
			for j := range jobs {
				lo, hi := j.b.lo*imageChunk, min(j.b.hi*imageChunk, len(t.view))
				n, err := s2.DecodedLen(j.enc)
				if !sealed && crc32c(j.enc) != j.sum {
					fail(malformed("corrupt (a block's checksum does not match)"))
				} else if err != nil || n != hi-lo {
					fail(malformed("corrupt"))
				} else if lo >= t.shared {
					if out, err := s2.Decode(t.view[lo:hi:hi], j.enc); err != nil || len(out) != hi-lo || &out[0] != &t.view[lo] {
						fail(malformed("corrupt"))
					}
				} else {
					if cap(scratch) < hi-lo {
						scratch = make([]byte, hi-lo)
					}
					if out, err := s2.Decode(scratch[:hi-lo:hi-lo], j.enc); err != nil || len(out) != hi-lo {
						fail(malformed("corrupt"))
					} else {
						t.put(lo, out)
					}
				}
				select {
				case free <- j.enc[:cap(j.enc)]:
				default:
				}
			}
		})
	}
	err = func() error {
		var head [8]byte
		var scratch []byte
		maxEnc := s2.MaxEncodedLen(blockChunks * imageChunk)
		badSum := malformed("corrupt (a block's checksum does not match)")
		for _, b := range blocks {
			if failed.Load() != nil {
				return nil
			}
			lo, hi := b.lo*imageChunk, min(b.hi*imageChunk, len(t.view))
			if _, err := io.ReadFull(r, head[:]); err != nil {
				return malformed("truncated")
			}
			n, sum := int(binary.BigEndian.Uint32(head[:4])), binary.BigEndian.Uint32(head[4:])
			switch {
			case n == 0 && lo >= t.shared:
				if _, err := io.ReadFull(r, t.view[lo:hi]); err != nil {
					return malformed("truncated")
				}
				if !sealed && crc32c(t.view[lo:hi]) != sum {
					return badSum
				}
			case n == 0:
				if cap(scratch) < hi-lo {
					scratch = make([]byte, hi-lo)
				}
				if _, err := io.ReadFull(r, scratch[:hi-lo]); err != nil {
					return malformed("truncated")
				}
				if !sealed && crc32c(scratch[:hi-lo]) != sum {
					return badSum
				}
				t.put(lo, scratch[:hi-lo])
			case n > maxEnc:
				return malformed("corrupt")
			default:
				// Buffers as large as the blocks need, reused: a small
				// session's blocks are a few KiB.
				var enc []byte
				select {
				case enc = <-free:
				default:
				}
				if cap(enc) < n {
					enc = make([]byte, n)
				}
				if _, err := io.ReadFull(r, enc[:n]); err != nil {
					return malformed("truncated")
				}
				jobs <- job{b, enc[:n], sum}
			}
		}
		return nil
	}()
	close(jobs)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if p := failed.Load(); p != nil {
		return nil, *p
	}
	return listing, nil
}

// readListing reads a memory section's listing for a memory of nChunks
// chunks, and the blocks it implies.
func readListing(r io.Reader, nChunks int) ([]byte, []blockRange, error) {
	listing := make([]byte, (nChunks+7)/8+4)
	if _, err := io.ReadFull(r, listing); err != nil {
		return nil, nil, fmt.Errorf("%w: its memory section is truncated", port.ErrInvalidSnapshot)
	}
	listing, sum := listing[:len(listing)-4], binary.BigEndian.Uint32(listing[len(listing)-4:])
	if crc32c(listing) != sum {
		return nil, nil, fmt.Errorf("%w: its memory section is corrupt (the listing's checksum does not match)", port.ErrInvalidSnapshot)
	}
	if nChunks%8 != 0 && listing[len(listing)-1]>>(nChunks%8) != 0 {
		return nil, nil, fmt.Errorf("%w: its memory section lists chunks past the memory's end", port.ErrInvalidSnapshot)
	}
	return listing, memoryBlocks(listing, nChunks), nil
}

// skipMemory reads past a format 2 memory section that is not restored.
func skipMemory(r io.Reader, memory uint32) error {
	malformed := fmt.Errorf("%w: its memory section is malformed", port.ErrInvalidSnapshot)
	nChunks := (int(memory) + imageChunk - 1) / imageChunk
	_, blocks, err := readListing(r, nChunks)
	if err != nil {
		return err
	}
	var head [8]byte
	maxEnc := int64(s2.MaxEncodedLen(blockChunks * imageChunk))
	for _, b := range blocks {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return malformed
		}
		n := int64(binary.BigEndian.Uint32(head[:4]))
		if n == 0 {
			n = int64(min(b.hi*imageChunk, int(memory)) - b.lo*imageChunk)
		}
		if n > maxEnc {
			return malformed
		}
		if _, err := io.CopyN(io.Discard, r, n); err != nil {
			return malformed
		}
	}
	return nil
}
