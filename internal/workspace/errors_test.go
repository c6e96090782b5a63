package workspace

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
)

// TestRefusalReasons checks that each refusal port.ErrInvalidRequest
// covers says why through a typed error, and that its message is still the
// one callers have always been shown.
func TestRefusalReasons(t *testing.T) {
	w := newWS(t, 0)
	put(t, w, "f.txt", "x")
	long := strings.Repeat("x/", MaxPathBytes/2+1)

	cases := []struct {
		name   string
		err    error
		reason error
		msg    string
	}{
		{"write under a file", func() error { _, err := w.Write("f.txt/child", strings.NewReader("x"), 0); return err }(),
			ErrNotDirectory, "workspace: write f.txt/child: a parent is not a directory: invalid request"},
		{"path not UTF-8", func() error { _, _, err := w.Open("bad\xffname"); return err }(),
			ErrNotUTF8, `workspace: path "bad\xffname" is not valid UTF-8: invalid request`},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.reason) || !errors.Is(c.err, port.ErrInvalidRequest) {
			t.Errorf("%s: %v is not %v and ErrInvalidRequest", c.name, c.err, c.reason)
		}
		if c.err.Error() != c.msg {
			t.Errorf("%s: message %q, want %q", c.name, c.err, c.msg)
		}
		for _, other := range []error{ErrNotRegular, ErrNotDirectory, ErrNotUTF8} {
			if other != c.reason && errors.Is(c.err, other) {
				t.Errorf("%s: also %v", c.name, other)
			}
		}
	}

	_, err := CleanPath(long)
	var tl *PathTooLongError
	if !errors.As(err, &tl) || tl.Bytes != len(long) || tl.Limit != MaxPathBytes || !errors.Is(err, port.ErrInvalidRequest) {
		t.Fatalf("overlong path: %v", err)
	}
	if want := "workspace: path of 4098 bytes is over the limit of 4096: invalid request"; err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
}

// A listing that names a file is the contract's "is a directory" kind (400,
// a file where a directory was wanted), and still ErrNotDirectory.
func TestListingAFile(t *testing.T) {
	w, err := New(filepath.Join(t.TempDir(), "ws"), NewQuota(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("f.txt", []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	_, err = w.List("f.txt")
	if !errors.Is(err, ErrNotDirectory) || !errors.Is(err, port.ErrIsDirectory) || errors.Is(err, port.ErrInvalidRequest) {
		t.Fatalf("%v", err)
	}
	if err.Error() != "workspace: list f.txt: not a directory" {
		t.Fatalf("message %q", err)
	}
}
