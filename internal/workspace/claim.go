package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// A sessions directory (an adapter's sessions-dir setting) outlives the
// processes that use it: a server killed with SIGKILL removes nothing, and
// its sessions' files (user data) would stay on the host for good. So each
// process keeps its sessions in a directory of its own under it, a claim,
// and removes at its start the claims of processes that are gone.
//
// A claim is a directory named codeport-<pid>-<16 hex digits> holding a
// lock file, ClaimLockFile, that starts with ClaimMarker and that its
// process holds locked with flock(2) for as long as it lives, and the
// directory the process keeps its sessions in, ClaimSessions (so that the
// lock file is not among them). The kernel
// drops the lock when the process dies, however it dies, so a claim whose
// lock can be taken is proven dead; one whose lock is held, by this process
// or any other sharing the directory, is alive. A claim is made under a
// temporary name (.codeport-claiming-*) and renamed into place only once
// its lock is held, so that no other process can ever see a live claim
// unlocked. Nothing that lacks the name, the lock file or the marker is
// ever removed: the sweep deletes only what codeport made.
const (
	// ClaimLockFile is the name of a claim's lock file.
	ClaimLockFile = ".codeport-lock"
	// ClaimMarker is the content of a claim's lock file.
	ClaimMarker = "codeport sessions directory: removed once the process holding this file locked is gone\n"
	// ClaimSessions is the name of the directory in a claim that Dir
	// returns.
	ClaimSessions = "sessions"

	claimPrefix  = "codeport-"
	claimStaging = ".codeport-claiming-"
)

// Claim is a directory this process owns under a sessions directory that
// other processes (or its own earlier runs) may share: see ClaimDir.
type Claim struct {
	root     string   // the claim: codeport-<pid>-<id>
	dir      string   // its ClaimSessions directory
	lock     *os.File // held locked while the claim lives; nil without flock
	swept    int
	sweepErr error
	once     sync.Once
	err      error
}

// ClaimDir makes parent (mode 0o700) if missing, removes the claims under
// it whose processes are gone (SweepClaims), and makes a claim of this
// process there. Its Swept and SweepErr report the sweep, which does not
// fail the claim.
func ClaimDir(parent string) (*Claim, error) {
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return nil, fmt.Errorf("sessions directory: %w", err)
	}
	swept, sweepErr := SweepClaims(parent)
	c, err := newClaim(parent)
	if err != nil {
		return nil, fmt.Errorf("sessions directory: claiming a directory of this process: %w", err)
	}
	c.swept, c.sweepErr = swept, sweepErr
	return c, nil
}

// Dir is where this process keeps its sessions: the claim's
// ClaimSessions directory.
func (c *Claim) Dir() string { return c.dir }

// Swept is the number of dead processes' claims ClaimDir removed.
func (c *Claim) Swept() int { return c.swept }

// SweepErr is what kept ClaimDir from removing some dead claims, nil if
// nothing did. It names claims, never the files in them.
func (c *Claim) SweepErr() error { return c.sweepErr }

// Release removes the claimed directory and everything in it, then drops
// the lock; a claim left behind by a failed removal is swept by the next
// process. Later calls return the first one's result.
func (c *Claim) Release() error {
	c.once.Do(func() {
		c.err = removeTree(c.root)
		if c.lock != nil {
			c.err = errors.Join(c.err, c.lock.Close())
		}
	})
	return c.err
}

// SweepClaims removes the claims under parent whose processes are gone,
// and reports how many it removed. A claim it cannot prove dead (its lock
// is held, its lock file or marker is missing, it is not this user's) is
// left alone; where there is no flock(2), every claim is. The error names
// the claims it failed to remove and why, never the files in them.
func SweepClaims(parent string) (int, error) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return 0, fmt.Errorf("sweeping the sessions directory: %w", stripPath(err))
	}
	removed := 0
	var errs []error
	for _, e := range entries {
		if !isClaimName(e.Name()) {
			continue
		}
		ok, err := sweepClaim(filepath.Join(parent, e.Name()))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), err))
		}
		if ok {
			removed++
		}
	}
	return removed, errors.Join(errs...)
}

// isClaimName reports whether name is codeport-<pid>-<16 hex digits>.
func isClaimName(name string) bool {
	rest, ok := strings.CutPrefix(name, claimPrefix)
	if !ok {
		return false
	}
	pid, id, ok := strings.Cut(rest, "-")
	if !ok || pid == "" || len(id) != 16 {
		return false
	}
	if _, err := strconv.ParseUint(pid, 10, 32); err != nil {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil && strings.ToLower(id) == id
}

// claimName is a fresh claim name for this process.
func claimName() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	return claimPrefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}

// removeTree removes dir and everything in it, without following links.
// Directories a program made unreadable or unwritable (chmod through the
// shell) would stop os.RemoveAll, so on failure their permissions are
// restored and the removal tried once more. Errors carry no path.
func removeTree(dir string) error {
	err := os.RemoveAll(dir)
	if err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700) // before WalkDir reads it
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return stripPath(err)
	}
	return nil
}

// DefaultDir is where a process given no sessions directory keeps its
// sessions: a claim under PrivateTempDir, which the next process sweeps
// if this one dies, or, where that directory cannot be used, a temporary
// directory of its own named prefix*, which the caller removes when done
// (claim is nil then).
func DefaultDir(prefix string) (dir string, claim *Claim, err error) {
	if parent, ok := PrivateTempDir(); ok {
		if c, err := ClaimDir(parent); err == nil {
			return c.Dir(), c, nil
		}
	}
	dir, err = os.MkdirTemp("", prefix)
	if err != nil {
		return "", nil, fmt.Errorf("sessions directory: %w", err)
	}
	return dir, nil, nil
}
