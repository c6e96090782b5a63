//go:build unix

package workspace

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// diskBlocks sums the bytes the host allocates below dir (st_blocks),
// directories included: what the issue measured.
func diskBlocks(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			n += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Issue #13: 20,000 os.mkdir in a 5 MiB workspace took 79 MB of the host's
// disk, since directories cost the quota nothing. Each now costs DirBytes.
func TestSysFSDirectoriesAreChargedBytes(t *testing.T) {
	e := newSysEnv(t, 5<<20)
	e.q.WithEntryLimit(100_000)
	made := 0
	var errno experimentalsys.Errno
	for i := range 20_000 {
		if errno = e.fs.Mkdir(fmt.Sprintf("d%d", i), 0o755); errno != 0 {
			break
		}
		made++
	}
	if errno != QuotaErrno || made != (5<<20)/DirBytes {
		t.Fatalf("made %d directories, then %v; want %d, then %v", made, errno, (5<<20)/DirBytes, QuotaErrno)
	}
	if got := diskBlocks(t, e.dir); got > 5<<20 {
		t.Errorf("directories take %d bytes of disk, over the 5 MiB quota", got)
	}
	if e.q.Used() != 5<<20 || e.q.Refusals() != 1 || e.q.EntryRefusals() != 0 {
		t.Errorf("Used %d, refusals %d (%d for entries); want %d, 1, 0", e.q.Used(), e.q.Refusals(), e.q.EntryRefusals(), 5<<20)
	}
	e.checkEntries(int64(made))
	// Removing a directory gives its bytes and its entry back.
	if errno := e.fs.Rmdir("d0"); errno != 0 {
		t.Fatal(errno)
	}
	if errno := e.fs.Mkdir("again", 0o755); errno != 0 {
		t.Fatalf("Mkdir after Rmdir: %v", errno)
	}
	e.checkEntries(int64(made))
}
