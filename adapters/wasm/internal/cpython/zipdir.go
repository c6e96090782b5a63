package cpython

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
)

// ZipDir returns a read-only file system that holds one directory of the
// zip archive data, keep (e.g. "matplotlib/mpl-data"), as dir/keep: the
// zip's files under keep, and dir and keep's parents as directories of one
// entry each.
//
// Python imports a package's code from a zip on sys.path, but a package's
// data files are opened by path by C code (FreeType opens fonts, with
// fseek and fread) or listed with os.listdir, which a zip cannot serve.
// ZipDir serves such a directory beside the zip from the same bytes, so
// that nothing is stored twice. A file opens as an in-memory copy, which,
// unlike a zip's own reader, can seek and read at an offset; it is
// decompressed when opened, not before.
func ZipDir(data []byte, dir, keep string) (fs.FS, error) {
	if !fs.ValidPath(dir) || !fs.ValidPath(keep) || dir == "." || keep == "." {
		return nil, fmt.Errorf("zipdir: %q and %q must be valid non-root paths", dir, keep)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("zipdir: %w", err)
	}
	if st, err := fs.Stat(zr, keep); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("zipdir: the archive has no directory %q", keep)
	}
	return &zipDir{zr: zr, root: path.Join(dir, keep), dir: dir}, nil
}

type zipDir struct {
	zr   *zip.Reader
	root string // dir/keep: where the zip's files start
	dir  string // what the zip's names are relative to
}

func (z *zipDir) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == z.root || strings.HasPrefix(name, z.root+"/") {
		inner := strings.TrimPrefix(name, z.dir+"/")
		f, err := z.zr.Open(inner)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		st, err := f.Stat()
		if err != nil || st.IsDir() {
			return f, err
		}
		defer f.Close()
		b, err := io.ReadAll(f)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &memFile{Reader: bytes.NewReader(b), info: st}, nil
	}
	// The parents of root: "." and each prefix, each listing the next name.
	if name == "." || strings.HasPrefix(z.root, name+"/") {
		rest := strings.TrimPrefix(z.root, name+"/")
		if name == "." {
			rest = z.root
		}
		child, _, _ := strings.Cut(rest, "/")
		return &parentDir{name: name, child: child}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// memFile is a file's contents in memory.
type memFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }

// parentDir is a directory above the kept one: one subdirectory.
type parentDir struct {
	name, child string
	read        bool
}

func (d *parentDir) Stat() (fs.FileInfo, error) { return dirInfo(path.Base(d.name)), nil }
func (d *parentDir) Close() error               { return nil }
func (d *parentDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: errors.New("is a directory")}
}

func (d *parentDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if d.read {
		if n > 0 {
			return nil, io.EOF
		}
		return nil, nil
	}
	d.read = true
	return []fs.DirEntry{fs.FileInfoToDirEntry(dirInfo(d.child))}, nil
}

// dirInfo describes a read-only directory.
type dirInfo string

func (d dirInfo) Name() string       { return string(d) }
func (d dirInfo) Size() int64        { return 0 }
func (d dirInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (d dirInfo) ModTime() time.Time { return time.Time{} }
func (d dirInfo) IsDir() bool        { return true }
func (d dirInfo) Sys() any           { return nil }
