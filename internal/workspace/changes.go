package workspace

import "sync"

// Changes records which files of a workspace were written: made, written
// to, truncated, or renamed into place, through the workspace's own file
// system (SysFS) or its Write. A host resets it before a program runs and
// takes it after, to learn what that program produced without walking the
// tree: recording costs a map lookup per handle, not per byte.
//
// Paths are workspace-relative with forward slashes, in the order of their
// first change. A path is recorded even if the file was later removed or
// renamed away: whoever takes the list checks what is there now.
//
// At most MaxChanges paths, of MaxChangeBytes in all, are kept between
// resets; Take reports whether more changed, so that a caller can say so
// rather than drop them silently. A Changes is safe for concurrent use.
type Changes struct {
	mu       sync.Mutex
	seen     map[string]struct{}
	order    []string
	bytes    int
	overflow bool
}

// Bounds of what a Changes keeps between two Takes: a program that writes
// a million files, or thousands under 4 KiB paths, costs the host no more
// than this.
const (
	MaxChanges     = 1024
	MaxChangeBytes = 256 << 10
)

// record notes that the file at rel changed.
func (c *Changes) record(rel string) {
	if c == nil || rel == "" || rel == "." {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.seen[rel]; ok {
		return
	}
	if len(c.order) >= MaxChanges || c.bytes+len(rel) > MaxChangeBytes {
		c.overflow = true
		return
	}
	c.bytes += len(rel)
	if c.seen == nil {
		c.seen = make(map[string]struct{})
	}
	c.seen[rel] = struct{}{}
	c.order = append(c.order, rel)
}

// Take returns the paths recorded since the last Take (or Reset), and
// whether more paths changed than it kept, and starts a new record.
func (c *Changes) Take() (paths []string, overflow bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	paths, overflow = c.order, c.overflow
	c.seen, c.order, c.bytes, c.overflow = nil, nil, 0, false
	return paths, overflow
}

// Reset forgets what was recorded.
func (c *Changes) Reset() { c.Take() }
