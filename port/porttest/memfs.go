package porttest

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codeport/codeport/internal/editor"
	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// memFS is one session's workspace, kept in memory. It follows the rules
// of workspace.Workspace, the real adapters' workspace, so that a gateway
// tested against the fake meets the same refusals in production: paths are
// cleaned by workspace.CleanPath (relative to the root, or absolute under
// workspace.GuestRoot; anything else escapes), a missing file is
// port.ErrFileNotFound, a directory port.ErrIsDirectory, a file over the
// cap port.ErrFileTooLarge, writes create parent directories and are
// charged to one quota per session. Error texts are workspace.Workspace's
// too, so the shared editor words its messages exactly as it does on disk.
//
// A memFS is safe for concurrent use: file operations run beside a call in
// progress, as they do on the real adapters.
type memFS struct {
	now   func() time.Time
	quota int64 // bytes; 0 means unlimited

	mu    sync.Mutex
	nodes map[string]*node // by cleaned workspace-relative path; "." is the root
	used  int64            // total size of the files
	// written lists the paths written since the last takeWritten, in
	// order, once each: what a call produced.
	written []string
}

// takeWritten returns the paths written since it was last called, and
// the nodes they hold now (nil for one removed since, or a directory).
func (m *memFS) takeWritten() ([]string, []*node) {
	m.mu.Lock()
	defer m.mu.Unlock()
	paths := m.written
	m.written = nil
	nodes := make([]*node, len(paths))
	for i, p := range paths {
		if n := m.nodes[p]; n != nil && !n.dir {
			nodes[i] = n
		}
	}
	return paths, nodes
}

// node is a file or a directory. A file's data is never changed in place:
// a write replaces the slice, so a reader handed the old one keeps it.
type node struct {
	dir  bool
	data []byte
	mod  time.Time
}

var _ editor.Files = (*memFS)(nil)

func newMemFS(quota int64, now func() time.Time) *memFS {
	return &memFS{now: now, quota: quota, nodes: map[string]*node{".": {dir: true, mod: now()}}}
}

// Resolve implements editor.Files. There is no host path.
func (m *memFS) Resolve(p string) (hostPath, rel string, err error) {
	rel, err = workspace.CleanPath(p)
	return "", rel, err
}

// Stat describes the file or directory p.
func (m *memFS) Stat(p string) (port.FileInfo, error) {
	rel, err := workspace.CleanPath(p)
	if err != nil {
		return port.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nodes[rel]
	if n == nil {
		return port.FileInfo{}, fmt.Errorf("workspace: stat %s: %w", rel, port.ErrFileNotFound)
	}
	return n.info(rel), nil
}

// List returns the entries of directory dir, sorted by path, with paths
// relative to the root; subdirectories are not descended into. A file is
// port.ErrInvalidRequest, as workspace.Workspace.List has it.
func (m *memFS) List(dir string) ([]port.FileInfo, error) {
	rel, err := workspace.CleanPath(dir)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nodes[rel]
	switch {
	case n == nil:
		return nil, fmt.Errorf("workspace: list %s: %w", rel, port.ErrFileNotFound)
	case !n.dir:
		return nil, fmt.Errorf("workspace: list %s: not a directory: %w", rel, port.ErrIsDirectory)
	}
	out := []port.FileInfo{}
	for p, c := range m.nodes {
		if p != "." && path.Dir(p) == rel {
			out = append(out, c.info(p))
		}
	}
	slices.SortFunc(out, func(a, b port.FileInfo) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// open returns the contents of the file p, which the caller must not
// change, and its description.
func (m *memFS) open(p string) ([]byte, port.FileInfo, error) {
	rel, err := workspace.CleanPath(p)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nodes[rel]
	switch {
	case n == nil:
		return nil, port.FileInfo{}, fmt.Errorf("workspace: open %s: %w", rel, port.ErrFileNotFound)
	case n.dir:
		return nil, port.FileInfo{}, fmt.Errorf("workspace: open %s: %w", rel, port.ErrIsDirectory)
	}
	return n.data, n.info(rel), nil
}

// Open opens the file p for reading.
func (m *memFS) Open(p string) (io.ReadCloser, port.FileInfo, error) {
	data, info, err := m.open(p)
	if err != nil {
		return nil, port.FileInfo{}, err
	}
	return io.NopCloser(bytes.NewReader(data)), info, nil
}

// ReadFile returns a copy of the contents of the file p. A file over
// maxBytes (when maxBytes > 0) is port.ErrFileTooLarge.
func (m *memFS) ReadFile(p string, maxBytes int64) ([]byte, error) {
	data, info, err := m.open(p)
	if err != nil {
		return nil, err
	}
	if maxBytes > 0 && info.Size > maxBytes {
		return nil, tooLarge(info.Path, info.Size, maxBytes)
	}
	return bytes.Clone(data), nil
}

// WriteFile writes data to p as Write does.
func (m *memFS) WriteFile(p string, data []byte, maxBytes int64) error {
	_, err := m.Write(p, bytes.NewReader(data), maxBytes)
	return err
}

// Write writes everything r yields to the file p, creating parent
// directories and replacing an existing file; a refused write leaves p as
// it was. More than maxBytes (when maxBytes > 0) is port.ErrFileTooLarge;
// a write that would put the workspace over its quota is a
// *workspace.QuotaError (port.ErrFileTooLarge too), counting the bytes of
// a file being replaced as free for its replacement.
func (m *memFS) Write(p string, r io.Reader, maxBytes int64) (port.FileInfo, error) {
	rel, err := workspace.CleanPath(p)
	if err != nil {
		return port.FileInfo{}, err
	}
	// Refuse what cannot be written before reading the upload.
	m.mu.Lock()
	err = m.writable(rel)
	m.mu.Unlock()
	if err != nil {
		return port.FileInfo{}, err
	}
	// Read no more than could ever be accepted, so that an endless
	// reader is refused rather than buffered.
	limit := int64(-1)
	if maxBytes > 0 {
		limit = maxBytes + 1
	}
	if m.quota > 0 && (limit < 0 || m.quota+1 < limit) {
		limit = m.quota + 1
	}
	if limit > 0 {
		r = io.LimitReader(r, limit)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return port.FileInfo{}, fmt.Errorf("workspace: write %s: reading input: %w", rel, err)
	}
	if maxBytes > 0 && int64(len(data)) > maxBytes {
		return port.FileInfo{}, tooLarge(rel, int64(len(data)), maxBytes)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.writable(rel); err != nil { // the tree may have changed meanwhile
		return port.FileInfo{}, err
	}
	var credit int64
	if old := m.nodes[rel]; old != nil {
		credit = int64(len(old.data))
	}
	if need := int64(len(data)) - credit; m.quota > 0 && need > m.quota-m.used {
		return port.FileInfo{}, fmt.Errorf("workspace: write %s: %w", rel, &workspace.QuotaError{Limit: m.quota, Used: m.used, Requested: need})
	}
	now := m.now()
	m.mkdirAll(path.Dir(rel), now)
	n := &node{data: data, mod: now}
	m.nodes[rel] = n
	m.used += int64(len(data)) - credit
	if !slices.Contains(m.written, rel) {
		m.written = append(m.written, rel)
	}
	return n.info(rel), nil
}

// writable reports why rel cannot be written as a file, if it cannot. The
// caller holds m.mu.
func (m *memFS) writable(rel string) error {
	if n := m.nodes[rel]; rel == "." || (n != nil && n.dir) {
		return fmt.Errorf("workspace: write %s: %w", rel, port.ErrIsDirectory)
	}
	if !m.dirPossible(path.Dir(rel)) {
		return fmt.Errorf("workspace: write %s: a parent is not a directory: %w", rel, port.ErrInvalidRequest)
	}
	return nil
}

// dirPossible reports whether dir is, or could be made, a directory: no
// prefix of it is a file. The caller holds m.mu.
func (m *memFS) dirPossible(dir string) bool {
	for d := dir; d != "."; d = path.Dir(d) {
		if n := m.nodes[d]; n != nil {
			return n.dir // a directory's own parents are directories
		}
	}
	return true
}

// mkdirAll makes dir and its missing parents, which dirPossible allowed.
// The caller holds m.mu.
func (m *memFS) mkdirAll(dir string, now time.Time) {
	for d := dir; d != "." && m.nodes[d] == nil; d = path.Dir(d) {
		m.nodes[d] = &node{dir: true, mod: now}
	}
}

// MkdirAll makes the directory dir and any missing parents.
func (m *memFS) MkdirAll(dir string) error {
	rel, err := workspace.CleanPath(dir)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirPossible(rel) {
		return fmt.Errorf("workspace: mkdir %s: a parent is not a directory: %w", rel, port.ErrInvalidRequest)
	}
	m.mkdirAll(rel, m.now())
	return nil
}

// Remove removes the file p and releases its bytes.
func (m *memFS) Remove(p string) error {
	rel, err := workspace.CleanPath(p)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.nodes[rel]
	switch {
	case n == nil:
		return fmt.Errorf("workspace: remove %s: %w", rel, port.ErrFileNotFound)
	case n.dir:
		return fmt.Errorf("workspace: remove %s: %w", rel, port.ErrIsDirectory)
	}
	delete(m.nodes, rel)
	m.used -= int64(len(n.data))
	return nil
}

func (n *node) info(rel string) port.FileInfo {
	info := port.FileInfo{Path: rel, IsDir: n.dir, ModTime: n.mod}
	if !n.dir {
		info.Size = int64(len(n.data))
		info.MimeType = workspace.MimeType(rel)
	}
	return info
}

func tooLarge(rel string, size, limit int64) error {
	return fmt.Errorf("workspace: %s: %d bytes is over the limit of %d bytes: %w", rel, size, limit, port.ErrFileTooLarge)
}
