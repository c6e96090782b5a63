package wasm

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/codeport/codeport/port"
)

// incompressible fills a session with bytes no compression shrinks (so
// that its snapshot has blocks stored raw) besides the state it probes.
const (
	incompressible    = "import os\nnoise = os.urandom(3 << 20)\nx = 42\nopen('kept.txt', 'w').write('file kept')\nprint('set')"
	incompressibleOut = "set\n"
	incompressibleAsk = "print(x, len(noise), open('kept.txt').read())"
	incompressibleAns = "42 3145728 file kept\n"
)

// v2Block is where a block of a format 2 payload is: its header at head,
// its stored bytes at data, n of them, raw or an S2 block.
type v2Block struct {
	head, data, n int
	raw           bool
}

// parseV2 finds the parts of a format 2 payload: the listing's offset,
// its blocks, and the offset of the files' stream.
func parseV2(t *testing.T, b []byte) (listing int, blocks []v2Block, files int) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte(payloadMagic)) {
		t.Fatalf("the payload does not begin with format 2's magic: %q", b[:min(len(b), 32)])
	}
	off := len(payloadMagic)
	n := int(binary.BigEndian.Uint32(b[off:]))
	var meta snapshotMeta
	if err := json.Unmarshal(b[off+4:off+4+n], &meta); err != nil || meta.Format != snapshotFormat {
		t.Fatalf("meta %s: %v", b[off+4:off+4+n], err)
	}
	listing = off + 4 + n
	nChunks := (int(meta.Memory) + imageChunk - 1) / imageChunk
	off = listing + (nChunks+7)/8 + 4
	for _, r := range memoryBlocks(b[listing:listing+(nChunks+7)/8], nChunks) {
		blk := v2Block{head: off, data: off + 8, n: int(binary.BigEndian.Uint32(b[off:]))}
		if blk.n == 0 {
			blk.raw, blk.n = true, (r.hi-r.lo)*imageChunk
		}
		blocks = append(blocks, blk)
		off = blk.data + blk.n
	}
	return listing, blocks, off
}

// A format 2 payload that is damaged (as a hibernated session's file
// damaged on disk is: it has no seal) is refused with ErrInvalidSnapshot
// wherever the damage is, in a block stored raw or compressed, in the
// listing, in a block's header, or cut short anywhere; a later format is
// refused as such; and no refusal leaves a session behind.
func TestSnapshotFormat2RefusesDamage(t *testing.T) {
	ctx := context.Background()
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	expect(t, run(t, a, id, incompressible), incompressibleOut, 0, port.OutcomeCompleted)
	var buf bytes.Buffer
	if err := a.d.SnapshotSession(ctx, id, &buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	listing, blocks, files := parseV2(t, good)
	var raw, packed *v2Block
	for i := range blocks {
		if blocks[i].raw && raw == nil {
			raw = &blocks[i]
		}
		if !blocks[i].raw && packed == nil {
			packed = &blocks[i]
		}
	}
	if raw == nil || packed == nil {
		t.Fatalf("want blocks stored both raw and compressed; got %+v", blocks)
	}
	flip := func(at int) []byte {
		b := bytes.Clone(good)
		b[at] ^= 0x20
		return b
	}
	metaOff := len(payloadMagic) + 4
	later := bytes.Clone(good)
	if i := bytes.Index(later, []byte(`"format":2`)); i < 0 {
		t.Fatal("no format in the meta")
	} else {
		later[i+len(`"format":`)] = '3'
	}
	cases := []struct {
		name string
		b    []byte
		why  string
	}{
		{"a byte of a raw block", flip(raw.data + raw.n/2), "checksum"},
		{"a byte of a compressed block", flip(packed.data + packed.n/2), "checksum"},
		{"a bit of the listing", flip(listing), "checksum"},
		{"a compressed block's length", func() []byte {
			b := bytes.Clone(good)
			binary.BigEndian.PutUint32(b[packed.head:], 1<<30)
			return b
		}(), "corrupt"},
		{"a later format", later, "another snapshot format"},
		{"cut in the meta", good[:metaOff+3], ""},
		{"cut in the listing", good[:listing+1], "truncated"},
		{"cut in a raw block", good[:raw.data+raw.n/2], "truncated"},
		{"cut in a compressed block", good[:packed.data+packed.n/2], "truncated"},
		{"cut in the files", good[:files+(len(good)-files)/2], ""},
		{"empty", nil, ""},
	}
	for _, c := range cases {
		_, err := a.d.RestoreSession(ctx, bytes.NewReader(c.b), int64(len(c.b)))
		if !errors.Is(err, port.ErrInvalidSnapshot) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v; want ErrInvalidSnapshot saying %q", c.name, err, c.why)
		}
	}
	if ids := a.d.SessionIDs(); len(ids) != 1 || ids[0] != id {
		t.Errorf("sessions after the refusals: %v; want only %s", ids, id)
	}
	r, err := a.d.RestoreSession(ctx, bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	expect(t, run(t, a, r.ID, incompressibleAsk), incompressibleAns, 0, port.OutcomeCompleted)
}

// writeFormat1 writes the snapshot of session id that builds before
// format 2 wrote: one S2 stream of the meta, every non-zero chunk as
// (u32 index, bytes), the end marker, and the files' tar archive.
func writeFormat1(t *testing.T, a *testAdapter, id string) []byte {
	t.Helper()
	s, err := a.d.lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := a.d.prepareLocked(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	mem := s.interp.mod.Memory()
	view, _ := mem.Read(0, mem.Size())
	globals, err := snapshotGlobals(s.interp.mod, a.d.eng.rt.Module)
	if err != nil {
		t.Fatal(err)
	}
	meta := snapshotMeta{Format: snapshotFormatStream, Build: a.d.eng.buildID(), Profile: a.d.eng.rt.Profile, Idle: s.idle, Lifetime: s.lifetime, Memory: uint32(len(view))}
	for _, g := range globals {
		meta.Globals = append(meta.Globals, savedGlobal{g.name, g.value})
	}
	var out bytes.Buffer
	w := s2.NewWriter(&out)
	mb, _ := json.Marshal(meta)
	u32 := func(v uint32) { _ = binary.Write(w, binary.BigEndian, v) }
	u32(uint32(len(mb)))
	w.Write(mb)
	for i := 0; i*imageChunk < len(view); i++ {
		if c := view[i*imageChunk : (i+1)*imageChunk]; !allZero(c) {
			u32(uint32(i))
			w.Write(c)
		}
	}
	u32(chunkEnd)
	tw := tar.NewWriter(w)
	if err := tarTree(tw, "workspace", s.sandbox.ws.Root()); err != nil {
		t.Fatal(err)
	}
	if err := tarTree(tw, "tmp", s.sandbox.tmpDir); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// A session hibernated by a build that wrote format 1 wakes in this one,
// whole, from the hibernation directory kept across the upgrade; and a
// format 1 snapshot restores.
func TestSnapshotFormat1StillRestores(t *testing.T) {
	ctx := context.Background()
	old := newTestAdapter(t, nil)
	id := newSession(t, old)
	expect(t, run(t, old, id, incompressible), incompressibleOut, 0, port.OutcomeCompleted)
	v1 := writeFormat1(t, old, id)
	if bytes.HasPrefix(v1, []byte(payloadMagic)) {
		t.Fatal("format 1 begins with format 2's magic")
	}
	r, err := old.d.RestoreSession(ctx, bytes.NewReader(v1), int64(len(v1)))
	if err != nil {
		t.Fatalf("format 1 snapshot: %v", err)
	}
	expect(t, run(t, old, r.ID, incompressibleAsk), incompressibleAns, 0, port.OutcomeCompleted)

	dir := t.TempDir()
	hdr, _ := json.Marshal(hibernatedHeader{ID: id, Created: time.Now(), LastActive: time.Now(), Idle: "10m0s", Lifetime: "1h0m0s"})
	file := append(append(hdr, '\n'), v1...)
	if err := os.WriteFile(filepath.Join(dir, id+hibernatedSuffix), file, 0o600); err != nil {
		t.Fatal(err)
	}
	upgraded := newTestAdapter(t, func(c Config) Config { return c.WithHibernation(0, dir) })
	res := run(t, upgraded, id, incompressibleAsk)
	expect(t, res, incompressibleAns, 0, port.OutcomeCompleted)
	if res.StateLost {
		t.Error("a format 1 hibernated session woke with state_lost")
	}
}

// A sealed snapshot restored as it is read: one altered anywhere (a block
// stored raw included), truncated, or altered after its memory (so that
// the whole memory is staged before the seal is found wrong) is refused
// with ErrInvalidSnapshot, leaves no session and gives back the slot it
// took; the intact snapshot restores.
func TestStreamedRestoreLeavesNothingBeforeItsSeal(t *testing.T) {
	ctx := context.Background()
	p, err := New(NewConfig().WithSessionsDir(t.TempDir()).WithMaxSessions(1).WithWarmPool(0, nil), port.WithSnapshotKey(bytes.Repeat([]byte{9}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	a := &testAdapter{Port: p, d: p.Driver().(*adapter)}
	id := newSession(t, a)
	expect(t, run(t, a, id, incompressible), incompressibleOut, 0, port.OutcomeCompleted)
	var buf bytes.Buffer
	if err := p.SnapshotSession(ctx, id, &buf, port.SnapshotOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := p.DestroySession(ctx, id); err != nil {
		t.Fatal(err)
	}
	sealed := buf.Bytes()
	// The sealed snapshot: its magic, a u32 length and the header, the
	// payload, the payload's length and the seal.
	const magic = "codeport-snapshot-v2\n"
	start := len(magic) + 4 + int(binary.BigEndian.Uint32(sealed[len(magic):]))
	payload := sealed[start : len(sealed)-8-32]
	_, blocks, files := parseV2(t, payload)
	i := slices.IndexFunc(blocks, func(b v2Block) bool { return b.raw })
	if i < 0 {
		t.Fatal("no block stored raw")
	}
	flip := func(at int) []byte {
		b := bytes.Clone(sealed)
		b[at] ^= 0x01
		return b
	}
	cases := []struct {
		name string
		b    []byte
		why  string
	}{
		{"a byte of a raw block", flip(start + blocks[i].data + 7), "seal"},
		{"a byte of the files", flip(start + files + 10), "seal"},
		{"the payload's length", flip(len(sealed) - 33), "seal"},
		{"the seal", flip(len(sealed) - 1), "seal"},
		{"cut before the seal", sealed[:len(sealed)-32], ""},
		{"cut in a raw block", sealed[:start+blocks[i].data+100], ""},
		{"one byte more", append(bytes.Clone(sealed), 0), "seal"},
	}
	for _, c := range cases {
		_, err := p.RestoreSession(ctx, bytes.NewReader(c.b), port.SnapshotOptions{})
		if !errors.Is(err, port.ErrInvalidSnapshot) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: %v; want ErrInvalidSnapshot saying %q", c.name, err, c.why)
		}
		if ids := a.d.SessionIDs(); len(ids) != 0 {
			t.Fatalf("%s: sessions left: %v", c.name, ids)
		}
		// The one slot is free again.
		s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
		if err != nil {
			t.Fatalf("%s: the restore kept its slot: %v", c.name, err)
		}
		if err := p.DestroySession(ctx, s.ID); err != nil {
			t.Fatal(err)
		}
	}
	r, err := p.RestoreSession(ctx, bytes.NewReader(sealed), port.SnapshotOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, run(t, a, r.ID, incompressibleAsk), incompressibleAns, 0, port.OutcomeCompleted)
}

// withFiles is the format 2 payload good with its files section replaced
// by a tar archive of entries, each regular file holding body.
func withFiles(t *testing.T, good []byte, entries []tar.Header, body []byte) []byte {
	t.Helper()
	_, _, files := parseV2(t, good)
	var out bytes.Buffer
	out.Write(good[:files])
	w := s2.NewWriter(&out)
	tw := tar.NewWriter(w)
	for _, h := range entries {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// A payload whose files name a directory and then a file at the same path
// (no session's files can: a hibernated session's file tampered with) was
// refused as a runtime failure, which a wake takes for a host error: the
// session was refused as at capacity for ever. It is an invalid snapshot.
func TestSnapshotNamingAPathTwiceIsInvalid(t *testing.T) {
	ctx := context.Background()
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	var buf bytes.Buffer
	if err := a.d.SnapshotSession(ctx, id, &buf); err != nil {
		t.Fatal(err)
	}
	b := withFiles(t, buf.Bytes(), []tar.Header{
		{Typeflag: tar.TypeDir, Name: "workspace/a/", Mode: 0o755},
		{Typeflag: tar.TypeReg, Name: "workspace/a", Mode: 0o644},
	}, []byte("x"))
	_, err := a.d.RestoreSession(ctx, bytes.NewReader(b), int64(len(b)))
	if !errors.Is(err, port.ErrInvalidSnapshot) || !unrestorable(err) {
		t.Errorf("a directory and a file at one path: %v; want ErrInvalidSnapshot", err)
	}
	if ids := a.d.SessionIDs(); len(ids) != 1 || ids[0] != id {
		t.Errorf("sessions after the refusal: %v; want only %s", ids, id)
	}
}

// A payload cut where its files section begins, or between two of its
// files at a boundary of its compression, restored as a session with none
// or only some of its files, and no error: the archive's reader takes an
// end of its input between entries for the archive's end. The archive's
// own end (its trailer) is required now: such a cut is an invalid
// snapshot.
func TestSnapshotCutBetweenItsFilesIsInvalid(t *testing.T) {
	ctx := context.Background()
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	if _, err := a.d.PutFile(ctx, id, "kept.txt", strings.NewReader("kept")); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := a.d.SnapshotSession(ctx, id, &buf); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	_, _, files := parseV2(t, good)
	// The same files, written as an archive without its trailer (a cut
	// at an entry's end that falls on a block of the compression).
	var open bytes.Buffer
	w := s2.NewWriter(&open)
	tw := tar.NewWriter(w)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "workspace/kept.txt", Mode: 0o644, Size: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte("kept")); err != nil {
		t.Fatal(err)
	}
	if err := tw.Flush(); err != nil { // the entry's padding, not the trailer
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"cut where its files begin": good[:files],
		"without its trailer":       append(bytes.Clone(good[:files]), open.Bytes()...),
	} {
		r, err := a.d.RestoreSession(ctx, bytes.NewReader(b), int64(len(b)))
		if !errors.Is(err, port.ErrInvalidSnapshot) {
			t.Errorf("%s: session %q, %v; want ErrInvalidSnapshot", name, r.ID, err)
		}
	}
	r, err := a.d.RestoreSession(ctx, bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	if rc, _, err := a.d.GetFile(ctx, r.ID, "kept.txt"); err != nil {
		t.Errorf("the whole snapshot restored without its file: %v", err)
	} else {
		rc.Close()
	}
}
