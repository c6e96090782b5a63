package measure

import (
	"io/fs"
	"path/filepath"
	"syscall"
)

// DiskUse counts the regular files below root and the disk they use
// (allocated blocks, so a sparse file counts what it holds; the size
// where the platform does not say).
func DiskUse(root string) (files, bytes int64) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		files++
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			bytes += st.Blocks * 512
		} else {
			bytes += fi.Size()
		}
		return nil
	})
	return files, bytes
}
