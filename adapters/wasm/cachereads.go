package wasm

import (
	"bufio"
	"crypto/sha256"
	"io"
	"os"
	"reflect"
	"unsafe"

	"github.com/tetratelabs/wazero"
)

// cacheReadBuffer is the buffer an entry of the compilation cache is read
// through: enough for the interpreter's header and function offsets in
// one read (8 bytes a function, about 10,700 functions).
const cacheReadBuffer = 128 << 10

// fileCache is the method set of wazero's internal filecache.Cache, whose
// Key is a [sha256.Size]byte.
type fileCache interface {
	Get(key [sha256.Size]byte) (content io.ReadCloser, ok bool, err error)
	Add(key [sha256.Size]byte, content io.Reader) error
	Delete(key [sha256.Size]byte) error
}

// bufferedFileCache is a fileCache whose entries are read through a
// buffer, and marked used when read.
type bufferedFileCache struct{ fileCache }

// Get implements fileCache.
func (c bufferedFileCache) Get(key [sha256.Size]byte) (io.ReadCloser, bool, error) {
	r, ok, err := c.fileCache.Get(key)
	if !ok || err != nil {
		return r, ok, err
	}
	if f, isFile := r.(*os.File); isFile {
		markUsed(f) // for pruneCompiled
	}
	return bufferedEntry{bufio.NewReaderSize(hugeReads{r}, cacheReadBuffer), r}, true, nil
}

// hugeReadMin is the shortest read of a cache entry that hugeReads
// advises huge pages for: a huge page is 2 MiB.
const hugeReadMin = 4 << 20

// hugeReads reads a cache entry, asking the kernel to back a long read's
// memory with huge pages first. The long read is the compiled code
// (26 MB for the interpreter), which wazero reads in one into memory it
// has just mapped: faulting that in 4 KiB pages was about 15 ms of a
// process start, on its critical path; in 2 MiB pages it is a few
// hundred faults instead of 6,400 (reading the 26 MB into fresh memory
// took 4.4 ms instead of 11.5 at best, measured on a busy machine). The
// code then runs from huge pages too.
type hugeReads struct{ r io.Reader }

// Read implements io.Reader.
func (h hugeReads) Read(p []byte) (int, error) {
	if len(p) >= hugeReadMin {
		adviseHugePages(p)
	}
	return h.r.Read(p)
}

// bufferedEntry is a cache entry read through a buffer, closed by closing
// the file under it. A read as long as the buffer or longer (the compiled
// code's) goes to the file directly.
type bufferedEntry struct {
	r *bufio.Reader
	io.Closer
}

// Read implements io.Reader, reading the whole of p unless the entry ends
// first, as a file's read does: wazero takes a read of a function's
// offset that returns fewer than its 8 bytes for the end of the entry,
// and one at the end of the buffer would.
func (e bufferedEntry) Read(p []byte) (int, error) {
	n, err := io.ReadFull(e.r, p)
	if err == io.ErrUnexpectedEOF {
		err = nil // the next read says io.EOF
	}
	return n, err
}

// bufferCacheReads has the compilation cache c (from
// wazero.NewCompilationCacheWithDir, before any runtime uses it) read its
// entries through a buffer, and reports whether it could. wazero v1.12
// reads a cached module's header and then the offset of each function 8
// bytes at a time, straight from the file: for the interpreter that is
// some 10,700 read system calls, about 6 ms of a `codeport exec` start on
// its critical path (the module is loaded before anything else can run).
// wazero has no option for it, nor a way to supply the file cache, so
// this wraps the file cache held in the unexported field of c; when the
// field is not what this expects (another wazero version), c is left as
// it is and reads as before (TestCacheReadsBuffered fails on that version).
func bufferCacheReads(c wazero.CompilationCache) bool {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	f := v.Elem().FieldByName("fileCache")
	if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() {
		return false
	}
	f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	inner, ok := f.Interface().(fileCache)
	if !ok {
		return false
	}
	if _, done := inner.(bufferedFileCache); done {
		return true
	}
	w := reflect.ValueOf(bufferedFileCache{inner})
	if !w.Type().Implements(f.Type()) {
		return false
	}
	f.Set(w)
	return true
}
