//go:build unix

package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// newClaim makes a claim under parent: a staging directory holding the
// lock file, locked and marked, and the sessions directory, then renamed
// to its claim name, so that it appears under that name already locked.
func newClaim(parent string) (*Claim, error) {
	staging, err := os.MkdirTemp(parent, claimStaging)
	if err != nil {
		return nil, stripPath(err)
	}
	lock, err := os.OpenFile(filepath.Join(staging, ClaimLockFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		if err = flock(lock, syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			_, err = lock.WriteString(ClaimMarker)
		}
	}
	if err == nil {
		err = os.Mkdir(filepath.Join(staging, ClaimSessions), 0o700)
	}
	dir := filepath.Join(parent, claimName())
	if err == nil {
		err = os.Rename(staging, dir)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		_ = os.RemoveAll(staging)
		return nil, stripPath(err)
	}
	return &Claim{root: dir, dir: filepath.Join(dir, ClaimSessions), lock: lock}, nil
}

// sweepClaim removes the claim dir if it can prove its process gone: it is
// a directory of this user's (not a link), its lock file is a regular file
// starting with ClaimMarker, and the lock can be taken. It holds the lock
// while it removes the claim, so that another sweeping process leaves the
// claim to it.
func sweepClaim(dir string) (removed bool, err error) {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false, nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return false, nil
	}
	lock, err := os.OpenFile(filepath.Join(dir, ClaimLockFile), os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false, nil // no lock file: not provably codeport's, or being removed
	}
	defer lock.Close()
	if lfi, err := lock.Stat(); err != nil || !lfi.Mode().IsRegular() {
		return false, nil
	}
	if err := flock(lock, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil // alive
		}
		return false, fmt.Errorf("locking: %w", err)
	}
	marker := make([]byte, len(ClaimMarker))
	if n, _ := io.ReadFull(lock, marker); !bytes.Equal(marker[:n], []byte(ClaimMarker)) {
		return false, nil
	}
	if err := removeTree(dir); err != nil {
		return false, fmt.Errorf("removing: %w", err)
	}
	return true, nil
}

// flock applies how to f's lock, retrying when a signal interrupts it.
func flock(f *os.File, how int) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := conn.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
