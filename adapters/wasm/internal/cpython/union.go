package cpython

import (
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
)

// Union returns a read-only file system of the files of every layer, the
// first layer that has a name winning: a profile's library is the default
// runtime's zip plus its own. Directories list the entries of every layer
// that has them, without duplicates, sorted.
func Union(layers ...fs.FS) fs.FS { return union(slices.Clone(layers)) }

type union []fs.FS

func (u union) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	var firstErr error
	for _, l := range u {
		f, err := l.Open(name)
		if err == nil {
			if st, err := f.Stat(); err == nil && st.IsDir() {
				// A directory lists every layer's entries.
				entries, err := u.ReadDir(name)
				if err != nil {
					f.Close()
					return nil, err
				}
				return &unionDir{File: f, entries: entries}, nil
			}
			return f, nil
		}
		if firstErr == nil || !errors.Is(err, fs.ErrNotExist) {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return nil, firstErr
}

// ReadDir merges the layers' listings of a directory.
func (u union) ReadDir(name string) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	found := false
	var lastErr error
	for _, l := range u {
		entries, err := fs.ReadDir(l, name)
		if err != nil {
			lastErr = err
			continue
		}
		found = true
		for _, e := range entries {
			if !slices.ContainsFunc(out, func(o fs.DirEntry) bool { return o.Name() == e.Name() }) {
				out = append(out, e)
			}
		}
	}
	if !found {
		return nil, lastErr
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// unionDir is an open directory of a union: its own Stat, the merged
// listing.
type unionDir struct {
	fs.File
	entries []fs.DirEntry
}

func (d *unionDir) ReadDir(n int) ([]fs.DirEntry, error) {
	if n <= 0 {
		out := d.entries
		d.entries = nil
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n:n]
	d.entries = d.entries[n:]
	return out, nil
}
