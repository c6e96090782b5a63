package wasm

import (
	"archive/zip"
	"io"
	"io/fs"
	"strings"
	"sync"

	"github.com/codeport/codeport/adapters/wasm/internal/cpython"
)

// maxZoneFile bounds a TZif file read (the largest in tzdata is under
// 4 KiB).
const maxZoneFile = 256 << 10

// zones reads IANA time zones' TZif data from the tzdata package in the
// runtime's standard library zip: the bytes Python's zoneinfo reads, and
// the interpreter's libc for TZ, so that the bash tool's date agrees with
// Python. The zip's directory is read once, at the first lookup.
type zones struct {
	lib  fs.FS
	once sync.Once
	zr   *zip.Reader // nil if the zip cannot be read
}

func newZones(lib fs.FS) *zones { return &zones{lib: lib} }

// data returns the TZif data of the zone name ("Europe/Paris"), or false
// if there is no such zone or name is not a zone's name.
func (z *zones) data(name string) ([]byte, bool) {
	if !validZoneName(name) {
		return nil, false
	}
	z.once.Do(z.open)
	if z.zr == nil {
		return nil, false
	}
	f, err := z.zr.Open("tzdata/zoneinfo/" + name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxZoneFile+1))
	if err != nil || len(b) > maxZoneFile || !strings.HasPrefix(string(b), "TZif") {
		return nil, false
	}
	return b, true
}

func (z *zones) open() {
	f, err := z.lib.Open(cpython.StdlibZip)
	if err != nil {
		return
	}
	// The zip is embedded in the binary: read in place, not copied.
	ra, ok := f.(io.ReaderAt)
	st, err := f.Stat()
	if !ok || err != nil {
		f.Close()
		return
	}
	if zr, err := zip.NewReader(ra, st.Size()); err == nil {
		z.zr = zr
	}
}

// validZoneName reports whether name is a zone's name as zoneinfo accepts
// it: relative, no "." or ".." component, only the characters IANA names
// use.
func validZoneName(name string) bool {
	if name == "" || len(name) > 255 || name[0] == '/' || name[len(name)-1] == '/' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '/', c == '_', c == '-', c == '+':
		case c == '.' && i > 0 && name[i-1] != '/':
		default:
			return false
		}
	}
	return true
}
