//go:build unix

package wasm

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// noFollow makes an open of the hibernation directory's files fail on a
// symbolic link instead of following it.
const noFollow = unix.O_NOFOLLOW

// nonBlock makes an open of a FIFO return at once instead of waiting for
// a writer; a regular file's reads are the same with it.
const nonBlock = unix.O_NONBLOCK

// lockDir takes an exclusive lock on dir (a lock file in it, flock(2)),
// held until the file is closed: one process uses a hibernation directory
// at a time.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, errors.New("in use by another codeport process")
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	return f, nil
}

// checkHibernateDir refuses a hibernation directory that its group or
// other users can write, and warns about one they can read or that
// another user owns. Hibernation files are not sealed (the directory is
// trusted): whoever can write the directory can delete or replace a
// session's saved state, or plant links, which no care in opening its
// files undoes, so that is refused. Reading it only shows them the ids
// of hibernated sessions (the files are 0600): a warning, since an
// existing deployment may rely on it.
func checkHibernateDir(dir string, log *slog.Logger) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	perm := fi.Mode().Perm()
	if perm&0o022 != 0 {
		return fmt.Errorf("writable by its group or by other users (mode %#o): they could replace a session's saved state; make it 0700 (chmod 700 %s)", perm, dir)
	}
	if perm&0o077 != 0 {
		log.Warn("hibernate-dir is readable by its group or by other users, who can see the ids of hibernated sessions; make it 0700", "dir", dir, "mode", fmt.Sprintf("%#o", perm))
	}
	if st, ok := fi.Sys().(*unix.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		log.Warn("hibernate-dir is owned by another user, who can change it", "dir", dir, "owner_uid", st.Uid)
	}
	return nil
}

// touchNoFollow sets path's times to now, not following a link.
func touchNoFollow(path string) {
	now := unix.NsecToTimespec(time.Now().UnixNano())
	_ = unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{now, now}, unix.AT_SYMLINK_NOFOLLOW)
}
