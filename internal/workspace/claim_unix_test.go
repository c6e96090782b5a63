//go:build unix

package workspace

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// claimHelperEnv makes the test binary, run again by startDeadClaimant, a
// process that claims a directory under the named parent, puts a user's
// file in it, prints the claim and waits to be killed.
const claimHelperEnv = "CODEPORT_TEST_CLAIM_PARENT"

func TestClaimHelperProcess(t *testing.T) {
	parent := os.Getenv(claimHelperEnv)
	if parent == "" {
		t.Skip("run by the claim tests as a process to kill")
	}
	c, err := ClaimDir(parent)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(2)
	}
	if err := os.MkdirAll(filepath.Join(c.Dir(), "session", "workspace"), 0o700); err != nil {
		os.Exit(2)
	}
	if err := os.WriteFile(filepath.Join(c.Dir(), "session", "workspace", "user-data.txt"), []byte("private"), 0o600); err != nil {
		os.Exit(2)
	}
	os.Stdout.WriteString(c.Dir() + "\n")
	time.Sleep(time.Hour) // until SIGKILL
}

// killedClaimant runs a process that claims a directory under parent, kills
// it with SIGKILL once it has, and returns its claim's sessions directory:
// what a server killed with kill -9 leaves.
func killedClaimant(t *testing.T, parent string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestClaimHelperProcess$")
	cmd.Env = append(os.Environ(), claimHelperEnv+"="+parent)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	if err != nil {
		t.Fatalf("the claimant said nothing: %v", err)
	}
	return strings.TrimSpace(line)
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// Issue #13: kill -9 of the server left its sessions' files for good.
// ClaimDir removes exactly the claims of dead processes.
func TestClaimDirSweepsOnlyDeadClaims(t *testing.T) {
	parent := t.TempDir()
	dead := killedClaimant(t, parent)
	if !exists(t, filepath.Join(dead, "session", "workspace", "user-data.txt")) {
		t.Fatal("the killed process left nothing to sweep")
	}
	live, err := ClaimDir(parent) // held by this process, as another server's would be
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	if live.Swept() != 1 || exists(t, filepath.Dir(dead)) {
		t.Fatalf("the first claim after the kill swept %d; dead claim still there: %v", live.Swept(), exists(t, filepath.Dir(dead)))
	}
	dead = killedClaimant(t, parent)

	// Things that are not provably a dead codeport claim.
	mk := func(name string, lock, marker string) string {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if lock != "" {
			if err := os.WriteFile(filepath.Join(dir, lock), []byte(marker), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	foreign := []string{
		mk("codeport-1-0123456789abcdef", "", ""),                          // no lock file
		mk("codeport-2-0123456789abcdef", ClaimLockFile, "something else"), // not our marker
		mk("codeport-3-0123456789ABCDEF", ClaimLockFile, ClaimMarker),      // not our name
		mk("codeport-sessions-12345", ClaimLockFile, ClaimMarker),          // a private temp dir
		mk("user-files", ClaimLockFile, ClaimMarker),
		mk(".codeport-claiming-123", ClaimLockFile, ClaimMarker), // being made
	}
	target := mk("elsewhere", ClaimLockFile, ClaimMarker)
	link := filepath.Join(parent, "codeport-4-0123456789abcdef")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	foreign = append(foreign, target, link)
	lockLink := mk("codeport-5-0123456789abcdef", "", "")
	if err := os.Symlink(filepath.Join(target, ClaimLockFile), filepath.Join(lockLink, ClaimLockFile)); err != nil {
		t.Fatal(err)
	}
	foreign = append(foreign, lockLink)

	c, err := ClaimDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if c.Swept() != 1 || c.SweepErr() != nil {
		t.Errorf("swept %d (%v), want 1", c.Swept(), c.SweepErr())
	}
	if exists(t, filepath.Dir(dead)) {
		t.Error("the dead claim is still there")
	}
	if !exists(t, live.Dir()) || !exists(t, filepath.Join(filepath.Dir(live.Dir()), ClaimLockFile)) {
		t.Error("the live claim was removed")
	}
	for _, p := range foreign {
		if !exists(t, p) {
			t.Errorf("%s, not provably codeport's, was removed", filepath.Base(p))
		}
	}
	if claim := filepath.Dir(c.Dir()); !isClaimName(filepath.Base(claim)) || filepath.Dir(claim) != parent || filepath.Base(c.Dir()) != ClaimSessions {
		t.Errorf("claim %s", c.Dir())
	}
	if es, err := os.ReadDir(c.Dir()); err != nil || len(es) != 0 {
		t.Errorf("a new claim's sessions directory holds %d entries (%v)", len(es), err)
	}

	// Released, a claim is gone; releasing again is harmless.
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if exists(t, filepath.Dir(c.Dir())) {
		t.Error("a released claim is still there")
	}
}

// Two processes starting at once over one directory never remove each
// other's claim: a claim appears under its name only once locked.
func TestClaimsStartingTogether(t *testing.T) {
	parent := t.TempDir()
	const n = 8
	claims := make(chan *Claim, n)
	errs := make(chan error, n)
	for range n {
		go func() {
			c, err := ClaimDir(parent)
			if err != nil {
				errs <- err
				return
			}
			claims <- c
		}()
	}
	var got []*Claim
	for range n {
		select {
		case err := <-errs:
			t.Fatal(err)
		case c := <-claims:
			got = append(got, c)
		}
	}
	for _, c := range got {
		if c.Swept() != 0 || !exists(t, c.Dir()) {
			t.Errorf("claim %s: swept %d", c.Dir(), c.Swept())
		}
		if err := c.Release(); err != nil {
			t.Error(err)
		}
	}
	if es, _ := os.ReadDir(parent); len(es) != 0 {
		t.Errorf("%d entries left", len(es))
	}
}

func TestIsClaimName(t *testing.T) {
	for name, want := range map[string]bool{
		"codeport-12-0123456789abcdef":    true,
		"codeport-12-0123456789abcde":     false,
		"codeport--0123456789abcdef":      false,
		"codeport-x-0123456789abcdef":     false,
		"codeport-12-0123456789abcdeg":    false,
		"codeport-12-0123456789abcdef-1":  false,
		"codeport-sessions-0123456789abc": false,
		"codeport-workers-123":            false,
		"xcodeport-12-0123456789abcdef":   false,
		claimName():                       true,
	} {
		if got := isClaimName(name); got != want {
			t.Errorf("isClaimName(%q) = %v", name, got)
		}
	}
}
