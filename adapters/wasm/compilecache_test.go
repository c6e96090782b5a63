package wasm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
)

// TestCompiledModulesArePruned: compiled modules neither written nor
// loaded for imageKeepUnused, and compiles' temporary files older
// than imageKeepTemp, are removed from every wazero version's folder,
// with their marks; the rest, the folders themselves, the images' folder
// and what is not wazero's are kept.
func TestCompiledModulesArePruned(t *testing.T) {
	cacheDir := t.TempDir()
	now := time.Now()
	const v12, v11, loaded = "wazero-v1.12.0-amd64-linux/", "wazero-v1.11.0-amd64-linux/", loadedDirName + "/"
	files := agedFiles{
		v12 + "recent":            {imageKeepUnused - time.Hour, true},
		v12 + "stale":             {imageKeepUnused + time.Hour, false},
		v12 + "loaded":            {2 * imageKeepUnused, true},
		loaded + "loaded":         {imageKeepUnused - time.Hour, true},
		v12 + "loadedlong":        {2 * imageKeepUnused, false},
		loaded + "loadedlong":     {imageKeepUnused + time.Hour, false},
		v12 + "stale.123.tmp":     {imageKeepTemp + time.Hour, false},
		v12 + "new.456.tmp":       {time.Minute, true},
		v11 + "old":               {2 * imageKeepUnused, false},
		loaded + "gone":           {imageKeepUnused + time.Hour, false}, // its module is gone
		loaded + "gonerecently":   {time.Hour, true},
		imageDirName + "/old.img": {10 * imageKeepUnused, true}, // pruneImages's
		"notes/old":               {10 * imageKeepUnused, true}, // not wazero's
	}
	files.write(t, cacheDir, now)
	n, err := pruneCompiled(cacheDir, now)
	if err != nil || n != 4 {
		t.Fatalf("pruneCompiled: %d removed, %v; want 4", n, err)
	}
	files.check(t, cacheDir)
	if _, err := os.Stat(filepath.Join(cacheDir, v11)); err != nil {
		t.Error("an emptied version folder was removed")
	}
	if _, err := pruneCompiled(filepath.Join(cacheDir, "absent"), now); err == nil {
		t.Error("a cache directory that does not exist: no error")
	}
}

// TestLoadingMarksACompiledModuleUsed: a module loaded from the cache
// leaves its entry as it is and marks it used beside it, so that pruning
// keeps it; neither is taken for a compile (cacheEntries), and an entry
// left unused is pruned with its mark.
func TestLoadingMarksACompiledModuleUsed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	load := func() {
		t.Helper()
		cache, err := openCache(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer cache.Close(ctx)
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(cache))
		defer rt.Close(ctx)
		if _, err := rt.CompileModule(ctx, answerModule); err != nil {
			t.Fatal(err)
		}
	}
	load() // compiled and written
	entries := cacheEntries(dir)
	if len(entries) != 1 {
		t.Fatalf("the cache holds %d compiled modules, want 1: %v", len(entries), entries)
	}
	var path string
	for name := range entries {
		path = filepath.Join(dir, name)
	}
	old := time.Now().Add(-2 * imageKeepUnused)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	entries = cacheEntries(dir)
	load() // loaded
	if st, err := os.Stat(path); err != nil || !st.ModTime().Equal(old) {
		t.Fatalf("the loaded entry was changed: %v %v", st, err)
	}
	mark := filepath.Join(dir, loadedDirName, filepath.Base(path))
	if st, err := os.Stat(mark); err != nil || time.Since(st.ModTime()) > time.Hour {
		t.Fatalf("the loaded entry is not marked used: %v %v", st, err)
	}
	if n := written(entries, cacheEntries(dir)); n != 0 {
		t.Fatalf("a load counted as %d compiles", n)
	}
	if n, err := pruneCompiled(dir, time.Now()); n != 0 || err != nil {
		t.Fatalf("the entry just used was pruned (%d, %v)", n, err)
	}
	if n, err := pruneCompiled(dir, time.Now().Add(imageKeepUnused+time.Hour)); n != 1 || err != nil {
		t.Fatalf("the entry unused for longer than kept: %d removed, %v; want 1", n, err)
	}
	for _, p := range []string{path, mark} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is left", p)
		}
	}
}
