package wasm

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/codeport/codeport/internal/testkit/testcache"
	"github.com/codeport/codeport/port"
)

// An interpreter image is cached beside the compiled code; a process
// that finds it starts its sessions from it, and one that finds it damaged
// boots a new one and replaces it. Either way its sessions are what a
// booted image's are.
func TestImageCacheIsUsedOnlyWhole(t *testing.T) {
	// A cache dir of this test's own, so that no other test process
	// prunes the image it ages below, whose compiled code is the tests'
	// shared cache's (compiling anew takes long); and a warm list of its
	// own (a module that does not exist is skipped).
	dir := privateImageCache(t)
	warm := []string{"json", "codeport_image_cache_test"}
	open := func() *testAdapter {
		return newTestAdapter(t, func(c Config) Config { return c.WithCompilationCacheDir(dir).WithWarmPool(0, warm) })
	}
	fingerprintOf := func(a *testAdapter) string {
		id := newSession(t, a)
		defer destroy(t, a, id)
		res := run(t, a, id, fingerprint)
		expect(t, res, res.Stdout, 0, port.OutcomeCompleted)
		return res.Stdout
	}
	booted := open()
	if booted.d.eng.imageCached {
		t.Fatal("an empty cache gave an image")
	}
	want := fingerprintOf(booted)
	path := imagePath(dir, imageKey(booted.d.eng.rt, warm))
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the booted image was not cached: %v", err)
	}
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
		cached bool
	}{
		{"whole", func(b []byte) []byte { return b }, true},
		{"a byte changed", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }, false},
		{"truncated", func(b []byte) []byte { return b[:len(b)-1] }, false},
		{"a byte added", func(b []byte) []byte { return append(b, 0) }, false},
		{"empty", func([]byte) []byte { return nil }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(path, c.damage(append([]byte(nil), whole...)), 0o600); err != nil {
				t.Fatal(err)
			}
			a := open()
			if a.d.eng.imageCached != c.cached {
				t.Fatalf("image from the cache: %v, want %v", a.d.eng.imageCached, c.cached)
			}
			if got := fingerprintOf(a); got != want {
				t.Fatalf("a session differs from a booted image's:\n got %s\nwant %s", got, want)
			}
			// A damaged file was replaced by a whole one.
			b, err := os.ReadFile(path)
			if err != nil || len(b) != len(whole) {
				t.Fatalf("the cached image after: %d bytes (%v), want %d", len(b), err, len(whole))
			}
		})
	}
	// A process that starts from the image marks it used, even one
	// untouched for longer than an unused image is kept, which it keeps.
	old := time.Now().Add(-2 * imageKeepUnused)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if a := open(); !a.d.eng.imageCached {
		t.Fatal("the whole image was not used")
	}
	if st, err := os.Stat(path); err != nil || time.Since(st.ModTime()) > time.Hour {
		t.Fatalf("the image used is not marked used: %v %v", st, err)
	}
	// With image-cache off, nothing is read or written.
	off := newTestAdapter(t, func(c Config) Config {
		s := c.Settings()
		s.ImageCache = false
		return c.WithSettings(s).WithCompilationCacheDir(dir).WithWarmPool(0, warm)
	})
	if off.d.eng.imageCached {
		t.Fatal("image-cache off read the cached image")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	offToo := newTestAdapter(t, func(c Config) Config {
		s := c.Settings()
		s.ImageCache = false
		return c.WithSettings(s).WithCompilationCacheDir(dir).WithWarmPool(0, warm)
	})
	if _, err := os.Stat(path); err == nil || offToo.d.eng.imageCached {
		t.Fatal("image-cache off wrote an image")
	}
	// Another warm list is another image.
	if k := imageKey(booted.d.eng.rt, []string{"csv"}); imagePath(dir, k) == path {
		t.Fatal("two warm lists share an image")
	}
}

// privateImageCache is a compilation cache dir whose compiled code is the
// tests' shared cache's (linked, folder by folder) and whose interpreter
// images are its own: every process started with the shared dir prunes
// the images there that look unused, which a test that ages one races.
func privateImageCache(t *testing.T) string {
	shared := testcache.Dir()
	if shared == "" {
		t.Skip("no user cache directory: images are not cached")
	}
	entries, err := os.ReadDir(shared)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, e := range entries {
		if e.IsDir() && e.Name() != imageDirName {
			if err := os.Symlink(filepath.Join(shared, e.Name()), filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// Images no process has started from for imageKeepUnused, and saves'
// temporary files older than imageKeepTemp, are removed; the image in use,
// recent ones, and files that are not the cache's are kept.
func TestStaleImagesArePruned(t *testing.T) {
	cacheDir := t.TempDir()
	dir := filepath.Join(cacheDir, imageDirName)
	if err := os.MkdirAll(filepath.Join(dir, "sub.img"), 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	files := agedFiles{
		"inuse.img":      {2 * imageKeepUnused, true}, // the key kept
		"stale.img":      {imageKeepUnused + time.Hour, false},
		"recent.img":     {imageKeepUnused - time.Hour, true},
		"tmp-died":       {imageKeepTemp + time.Hour, false},
		"tmp-saving":     {time.Minute, true},
		"notes.txt":      {10 * imageKeepUnused, true}, // not the cache's
		"stale.img.keep": {10 * imageKeepUnused, true},
	}
	files.write(t, dir, now)
	n, err := pruneImages(cacheDir, "inuse", now)
	if err != nil || n != 2 {
		t.Fatalf("pruneImages: %d removed, %v; want 2", n, err)
	}
	files.check(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "sub.img")); err != nil {
		t.Error("a directory was removed")
	}
	if _, err := pruneImages(t.TempDir(), "k", now); err == nil {
		t.Error("a cache without an image directory: no error")
	}
}

// agedFiles are files of a cache, by path, for a test of its pruning:
// how long before now each was last modified, and whether it is to be
// kept.
type agedFiles map[string]struct {
	age  time.Duration
	kept bool
}

// write makes the files under root, with their ages before now.
func (files agedFiles) write(t *testing.T, root string, now time.Time) {
	t.Helper()
	for name, f := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-f.age), now.Add(-f.age)); err != nil {
			t.Fatal(err)
		}
	}
}

// check reports the files under root that are not kept or gone as they
// should be.
func (files agedFiles) check(t *testing.T, root string) {
	t.Helper()
	for name, f := range files {
		if _, err := os.Stat(filepath.Join(root, name)); (err == nil) != f.kept {
			t.Errorf("%s: kept %v, want %v", name, err == nil, f.kept)
		}
	}
}
