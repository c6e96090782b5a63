package guestroot

import (
	"errors"
	"io"
	"io/fs"
	pathpkg "path"
	"slices"
	"strings"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	wsys "github.com/tetratelabs/wazero/sys"
)

// NullDevice is the null device's path in the guest (Python's os.devnull).
const NullDevice = "/dev/null"

// dev is the device number every name of a root reports: its own, so that
// no name of it looks like a name of a mount (os.path.ismount, os.walk's
// device checks).
const dev = 0x6370 // "cp"

// FS is the root directory a guest sees around its mounts. It is
// read-only, and it is the same for every instance made with the same
// mount points, so an image or a snapshot taken over one is valid over
// another.
type FS struct {
	experimentalsys.UnimplementedFS
	// nodes are the names of the tree, "." for the root itself, each
	// with its inode and, for a directory, its entries in order.
	nodes map[string]*node
	// files opens them as wazero's files over the tree as an fs.FS.
	files experimentalsys.FS
}

type node struct {
	name    string // relative to the root; "." for the root
	ino     wsys.Inode
	dir     bool
	entries []string // base names, sorted
}

// New returns the root directory for a guest whose file systems are
// mounted at mountPoints (absolute guest paths such as "/workspace"):
// each mount point is a directory, as is each of its parents and /dev,
// which holds the null device; no other name exists. Nothing in it can be
// created, removed or changed: those calls fail with EACCES where the
// name's directory exists and ENOENT where it does not, as in a root
// directory owned by another user.
//
// Mount it at "/" after the mounts (wazero.FSConfig's WithSysFSMount): a
// path under a mount point goes to that mount (the guest's libc chooses
// the longest prefix), and only the rest comes here.
func New(mountPoints ...string) *FS {
	r := &FS{nodes: map[string]*node{".": {name: ".", dir: true}}}
	for _, p := range append(slices.Clone(mountPoints), "/dev") {
		r.add(strings.TrimPrefix(pathpkg.Clean("/"+p), "/"), true)
	}
	r.add(strings.TrimPrefix(NullDevice, "/"), false)
	// Inodes in name order, so that they do not depend on the order of
	// mountPoints.
	names := make([]string, 0, len(r.nodes))
	for name, n := range r.nodes {
		names = append(names, name)
		slices.Sort(n.entries)
	}
	slices.Sort(names)
	for i, name := range names {
		r.nodes[name].ino = wsys.Inode(i + 1)
	}
	r.files = &sysfs.AdaptFS{FS: tree{r}}
	return r
}

// add adds name (relative, cleaned) and its parents.
func (r *FS) add(name string, dir bool) {
	if name == "" || name == "." {
		return
	}
	if _, ok := r.nodes[name]; ok {
		return
	}
	parent, base := pathpkg.Split(name)
	parent = strings.TrimSuffix(parent, "/")
	if parent == "" {
		parent = "."
	}
	r.add(parent, true)
	r.nodes[name] = &node{name: name, dir: dir}
	r.nodes[parent].entries = append(r.nodes[parent].entries, base)
}

// String implements fmt.Stringer.
func (r *FS) String() string { return "guest root" }

// lookup finds path, relative to the root as wazero passes it. The
// errno is ENOENT for a missing name, ENOTDIR where a parent is not a
// directory.
func (r *FS) lookup(path string) (string, *node, experimentalsys.Errno) {
	name := strings.TrimPrefix(pathpkg.Clean("/"+path), "/")
	if name == "" {
		name = "."
	}
	if n, ok := r.nodes[name]; ok {
		return name, n, 0
	}
	// The nearest existing ancestor says which: a file in the way is
	// ENOTDIR, a missing directory ENOENT.
	for p := pathpkg.Dir(name); p != "." && p != "/"; p = pathpkg.Dir(p) {
		if n, ok := r.nodes[p]; ok {
			if !n.dir {
				return name, nil, experimentalsys.ENOTDIR
			}
			break
		}
	}
	return name, nil, experimentalsys.ENOENT
}

// refuse is the errno of a change to path: EACCES where its directory
// exists, the lookup's errno where it does not.
func (r *FS) refuse(path string) experimentalsys.Errno {
	name, _, errno := r.lookup(path)
	if errno == 0 {
		return experimentalsys.EACCES
	}
	if parent, _, perrno := r.lookup(pathpkg.Dir(name)); perrno == 0 && r.nodes[parent].dir {
		return experimentalsys.EACCES
	}
	return errno
}

func (r *FS) stat(n *node) wsys.Stat_t {
	st := wsys.Stat_t{Dev: dev, Ino: n.ino, Nlink: 1, Mode: fs.ModeDevice | fs.ModeCharDevice | 0o666}
	if n.dir {
		st.Mode = fs.ModeDir | 0o755
		st.Nlink = 2
	}
	return st
}

// OpenFile implements experimentalsys.FS. Open files are wazero's over
// the tree as an fs.FS (which reads directories and rewinds them), with
// this root's inodes and, for the null device, its writes.
func (r *FS) OpenFile(path string, flag experimentalsys.Oflag, _ fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	name, n, errno := r.lookup(path)
	if errno != 0 {
		if errno == experimentalsys.ENOENT && flag&experimentalsys.O_CREAT != 0 {
			return nil, r.refuse(path)
		}
		return nil, errno
	}
	switch {
	case flag&(experimentalsys.O_CREAT|experimentalsys.O_EXCL) == experimentalsys.O_CREAT|experimentalsys.O_EXCL:
		return nil, experimentalsys.EEXIST
	case n.dir && flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR) != 0:
		return nil, experimentalsys.EISDIR
	case !n.dir && flag&experimentalsys.O_DIRECTORY != 0:
		return nil, experimentalsys.ENOTDIR
	}
	f, errno := r.files.OpenFile(name, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		return nil, errno
	}
	if n.dir {
		return &dirFile{File: f, r: r, n: n, st: r.stat(n)}, 0
	}
	return &nullFile{File: f, st: r.stat(n), append: flag&experimentalsys.O_APPEND != 0}, 0
}

// Stat implements experimentalsys.FS.
func (r *FS) Stat(path string) (wsys.Stat_t, experimentalsys.Errno) {
	_, n, errno := r.lookup(path)
	if errno != 0 {
		return wsys.Stat_t{}, errno
	}
	return r.stat(n), 0
}

// Lstat implements experimentalsys.FS: the root has no links.
func (r *FS) Lstat(path string) (wsys.Stat_t, experimentalsys.Errno) { return r.Stat(path) }

// Readlink implements experimentalsys.FS: nothing is a link.
func (r *FS) Readlink(path string) (string, experimentalsys.Errno) {
	if _, _, errno := r.lookup(path); errno != 0 {
		return "", errno
	}
	return "", experimentalsys.EINVAL
}

// Mkdir implements experimentalsys.FS.
func (r *FS) Mkdir(path string, _ fs.FileMode) experimentalsys.Errno {
	if _, _, errno := r.lookup(path); errno == 0 {
		return experimentalsys.EEXIST
	}
	return r.refuse(path)
}

// Chmod implements experimentalsys.FS.
func (r *FS) Chmod(path string, _ fs.FileMode) experimentalsys.Errno { return r.change(path) }

// Rename implements experimentalsys.FS.
func (r *FS) Rename(from, _ string) experimentalsys.Errno { return r.change(from) }

// Rmdir implements experimentalsys.FS.
func (r *FS) Rmdir(path string) experimentalsys.Errno { return r.change(path) }

// Unlink implements experimentalsys.FS.
func (r *FS) Unlink(path string) experimentalsys.Errno { return r.change(path) }

// Link implements experimentalsys.FS.
func (r *FS) Link(oldPath, _ string) experimentalsys.Errno { return r.change(oldPath) }

// Symlink implements experimentalsys.FS.
func (r *FS) Symlink(_, linkName string) experimentalsys.Errno {
	if _, _, errno := r.lookup(linkName); errno == 0 {
		return experimentalsys.EEXIST
	}
	return r.refuse(linkName)
}

// Utimens implements experimentalsys.FS. The null device's times are
// not kept (as on Linux, where its owner changes nothing a reader sees).
func (r *FS) Utimens(path string, _, _ int64) experimentalsys.Errno {
	if _, n, errno := r.lookup(path); errno == 0 && !n.dir {
		return 0
	}
	return r.change(path)
}

// change is the errno of changing an existing name.
func (r *FS) change(path string) experimentalsys.Errno {
	if _, _, errno := r.lookup(path); errno != 0 {
		return errno
	}
	return experimentalsys.EACCES
}

// dirFile is an open directory of the root, with its inodes.
type dirFile struct {
	experimentalsys.File
	r  *FS
	n  *node
	st wsys.Stat_t
}

// Readdir implements experimentalsys.File.
func (d *dirFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	ents, errno := d.File.Readdir(n)
	for i := range ents {
		if c, ok := d.r.nodes[pathpkg.Join(d.n.name, ents[i].Name)]; ok {
			ents[i].Ino = c.ino
		}
	}
	return ents, errno
}

func (d *dirFile) Ino() (wsys.Inode, experimentalsys.Errno)   { return d.st.Ino, 0 }
func (d *dirFile) Dev() (uint64, experimentalsys.Errno)       { return dev, 0 }
func (d *dirFile) Stat() (wsys.Stat_t, experimentalsys.Errno) { return d.st, 0 }
func (d *dirFile) Utimens(int64, int64) experimentalsys.Errno { return experimentalsys.EACCES }
func (d *dirFile) Write([]byte) (int, experimentalsys.Errno)  { return 0, experimentalsys.EBADF }
func (d *dirFile) Truncate(int64) experimentalsys.Errno       { return experimentalsys.EISDIR }
func (d *dirFile) SetAppend(bool) experimentalsys.Errno       { return experimentalsys.EISDIR }
func (d *dirFile) Pwrite([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.EBADF
}

// nullFile is an open null device: reads find the end, writes are
// discarded whole. Its offset is always 0 (the tree's file, which it
// wraps, seeks).
type nullFile struct {
	experimentalsys.File
	st     wsys.Stat_t
	append bool
}

func (f *nullFile) Ino() (wsys.Inode, experimentalsys.Errno)    { return f.st.Ino, 0 }
func (f *nullFile) Dev() (uint64, experimentalsys.Errno)        { return dev, 0 }
func (f *nullFile) IsDir() (bool, experimentalsys.Errno)        { return false, 0 }
func (f *nullFile) IsAppend() bool                              { return f.append }
func (f *nullFile) SetAppend(enable bool) experimentalsys.Errno { f.append = enable; return 0 }
func (f *nullFile) Stat() (wsys.Stat_t, experimentalsys.Errno)  { return f.st, 0 }
func (f *nullFile) Read([]byte) (int, experimentalsys.Errno)    { return 0, 0 }
func (f *nullFile) Pread([]byte, int64) (int, experimentalsys.Errno) {
	return 0, 0
}
func (f *nullFile) Write(b []byte) (int, experimentalsys.Errno) { return len(b), 0 }
func (f *nullFile) Pwrite(b []byte, _ int64) (int, experimentalsys.Errno) {
	return len(b), 0
}
func (f *nullFile) Truncate(int64) experimentalsys.Errno       { return 0 }
func (f *nullFile) Sync() experimentalsys.Errno                { return 0 }
func (f *nullFile) Datasync() experimentalsys.Errno            { return 0 }
func (f *nullFile) Utimens(int64, int64) experimentalsys.Errno { return 0 }

// tree is the root's names as an fs.FS, for wazero's AdaptFS.
type tree struct{ r *FS }

func (t tree) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	n, ok := t.r.nodes[name]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &treeFile{r: t.r, n: n}, nil
}

// treeFile is an open name of tree: a directory, or the null device,
// which is empty.
type treeFile struct {
	r    *FS
	n    *node
	next int // the next entry ReadDir returns
}

func (f *treeFile) Stat() (fs.FileInfo, error) { return treeInfo{f.n}, nil }
func (f *treeFile) Close() error               { return nil }

func (f *treeFile) Read([]byte) (int, error) {
	if f.n.dir {
		return 0, &fs.PathError{Op: "read", Path: f.n.name, Err: errors.New("is a directory")}
	}
	return 0, io.EOF
}

// Seek implements io.Seeker: the null device's offset is always 0.
func (f *treeFile) Seek(int64, int) (int64, error) { return 0, nil }

// ReadDir implements fs.ReadDirFile.
func (f *treeFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if !f.n.dir {
		return nil, &fs.PathError{Op: "readdir", Path: f.n.name, Err: errors.New("not a directory")}
	}
	left := f.n.entries[f.next:]
	if n > 0 {
		if len(left) == 0 {
			return nil, io.EOF
		}
		left = left[:min(n, len(left))]
	}
	out := make([]fs.DirEntry, 0, len(left))
	for _, base := range left {
		out = append(out, fs.FileInfoToDirEntry(treeInfo{f.r.nodes[pathpkg.Join(f.n.name, base)]}))
	}
	f.next += len(left)
	return out, nil
}

// treeInfo is a name's fs.FileInfo.
type treeInfo struct{ n *node }

func (i treeInfo) Name() string       { return pathpkg.Base(i.n.name) }
func (i treeInfo) Size() int64        { return 0 }
func (i treeInfo) ModTime() time.Time { return time.Time{} }
func (i treeInfo) IsDir() bool        { return i.n.dir }
func (i treeInfo) Sys() any           { return nil }
func (i treeInfo) Mode() fs.FileMode {
	if i.n.dir {
		return fs.ModeDir | 0o755
	}
	return fs.ModeDevice | fs.ModeCharDevice | 0o666
}
