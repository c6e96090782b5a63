package wasm

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"reflect"
	"testing"

	"github.com/tetratelabs/wazero"
)

// answerModule exports f, which returns 42.
var answerModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7f, // type: () -> i32
	0x03, 0x02, 0x01, 0x00, // function 0 of type 0
	0x07, 0x05, 0x01, 0x01, 'f', 0x00, 0x00, // export "f"
	0x0a, 0x06, 0x01, 0x04, 0x00, 0x41, 0x2a, 0x0b, // i32.const 42
}

// TestCacheReadsBuffered: the pinned wazero's directory cache is read
// through a buffer (bufferCacheReads found its file cache), and a module
// loaded back from the directory by a fresh cache runs.
func TestCacheReadsBuffered(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	call := func() uint64 {
		t.Helper()
		cache, err := openCache(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer cache.Close(ctx)
		if got := reflect.ValueOf(cache).Elem().FieldByName("fileCache").Elem().Type(); got != reflect.TypeFor[bufferedFileCache]() {
			t.Fatalf("the cache's file cache is a %v, not read through a buffer: does bufferCacheReads know this wazero?", got)
		}
		if !bufferCacheReads(cache) {
			t.Fatal("a second bufferCacheReads refused the cache")
		}
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(cache))
		defer rt.Close(ctx)
		m, err := rt.Instantiate(ctx, answerModule)
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.ExportedFunction("f").Call(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return res[0]
	}
	if got := call(); got != 42 {
		t.Fatalf("compiled: f() = %d, want 42", got)
	}
	// The second cache has nothing in memory: the module comes from the
	// directory, through the buffer.
	if got := call(); got != 42 {
		t.Fatalf("loaded from the cache: f() = %d, want 42", got)
	}
	if bufferCacheReads(wazero.NewCompilationCache()) {
		t.Error("an in-memory cache has no file cache to buffer")
	}
}

// TestHugeReads: a long read through hugeReads (which advises huge pages
// for the memory it reads into) reads what a plain read does, into
// memory from the Go heap or mapped for it, aligned or not.
func TestHugeReads(t *testing.T) {
	want := make([]byte, hugeReadMin+3<<20+123)
	for i := range want {
		want[i] = byte(i * 7)
	}
	for _, off := range []int{0, 1, 4095} {
		got := make([]byte, len(want)+off)[off:]
		if _, err := io.ReadFull(hugeReads{bytes.NewReader(want)}, got); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("offset %d: a long read through hugeReads differs from the source", off)
		}
	}
}

// TestBufferedEntryReadsWhole: a read of a buffered cache entry gets all
// it asks for, across the buffer's ends, until the entry ends (wazero
// reads each function's offset as 8 bytes in one read, and takes fewer
// for the end of the entry: the scientific profile's 16,000 functions
// cross the buffer's end).
func TestBufferedEntryReadsWhole(t *testing.T) {
	want := make([]byte, 3*cacheReadBuffer+5)
	for i := range want {
		want[i] = byte(i * 13)
	}
	e := bufferedEntry{bufio.NewReaderSize(hugeReads{bytes.NewReader(want)}, cacheReadBuffer), io.NopCloser(nil)}
	// A header of 5 bytes first, as wazero's is of an odd length: the
	// offsets that follow do not end where the buffer does.
	got := make([]byte, 5)
	if n, err := e.Read(got); n != 5 || err != nil {
		t.Fatalf("the header: %d bytes, %v", n, err)
	}
	for {
		var b [8]byte
		n, err := e.Read(b[:])
		got = append(got, b[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n != len(b) && len(got) != len(want) {
			t.Fatalf("a read at %d got %d bytes of 8", len(got)-n, n)
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatal("the entry read 8 bytes at a time differs from its file")
	}
}
