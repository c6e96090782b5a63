//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// PrivateTempDir is this user's directory under the system's temporary
// directory (codeport-user-<uid>), made with mode 0o700 if missing: where
// a process given no sessions directory makes its claim, so that when it
// is killed the next process to start sweeps its sessions' files, as
// ClaimDir does in a configured one; a temporary directory of its own
// (os.MkdirTemp) would stay for good. It reports false when the directory
// is not safe to hold user data: not a directory (a link, say), not this
// user's, or open to others, as one another user of a shared /tmp made
// first would be. The temporary directory is sticky, so no other user can
// replace it once it is checked.
func PrivateTempDir() (string, bool) {
	uid := os.Geteuid()
	dir := filepath.Join(os.TempDir(), "codeport-user-"+strconv.Itoa(uid))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", false
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 {
		return "", false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) != uid {
		return "", false
	}
	return dir, true
}
