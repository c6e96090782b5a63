//go:build unix

package workspace

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// The default sessions directory: a claim under this user's private
// directory in the temporary directory, swept after a kill as a
// configured one is; a directory there that is not safe (open to others,
// a link, another user's) is not used, and DefaultDir falls back to a
// temporary directory of the caller's own.
func TestDefaultDirIsAClaimUnderAPrivateTempDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	private := filepath.Join(tmp, "codeport-user-"+strconv.Itoa(os.Geteuid()))

	dead := killedClaimant(t, private) // a server killed with kill -9
	dir, claim, err := DefaultDir("codeport-sessions-")
	if err != nil || claim == nil {
		t.Fatalf("DefaultDir: %q, claim %v, %v", dir, claim, err)
	}
	if filepath.Dir(filepath.Dir(dir)) != private || claim.Swept() != 1 || exists(t, dead) {
		t.Fatalf("the claim %q (swept %d; the dead one left: %v) is not under %q", dir, claim.Swept(), exists(t, dead), private)
	}
	if fi, err := os.Stat(private); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v %v", private, fi.Mode(), err)
	}
	if err := claim.Release(); err != nil || exists(t, filepath.Dir(dir)) {
		t.Fatalf("release: %v; left: %v", err, exists(t, filepath.Dir(dir)))
	}

	for _, c := range []struct {
		name string
		make func() error
	}{
		{"open to others", func() error { return os.Chmod(private, 0o755) }},
		{"a link", func() error {
			if err := os.RemoveAll(private); err != nil {
				return err
			}
			return os.Symlink(t.TempDir(), private)
		}},
		{"another user's", func() error {
			if os.Geteuid() != 0 {
				t.Skip("only root can give a directory to another user")
			}
			if err := os.Remove(private); err != nil {
				return err
			}
			if err := os.Mkdir(private, 0o700); err != nil {
				return err
			}
			return os.Chown(private, 12345, 12345)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.make(); err != nil {
				t.Fatal(err)
			}
			if _, ok := PrivateTempDir(); ok {
				t.Fatal("PrivateTempDir took it")
			}
			dir, claim, err := DefaultDir("codeport-sessions-")
			if err != nil || claim != nil || filepath.Dir(dir) != tmp || !exists(t, dir) {
				t.Fatalf("DefaultDir: %q, claim %v, %v; want a temporary directory of its own in %s", dir, claim, err, tmp)
			}
		})
	}
}
