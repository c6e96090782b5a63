//go:build unix

package shell

import "syscall"

// devSys is the Sys value of a device's FileInfo: the interpreter's -O and -G
// tests expect a *syscall.Stat_t.
func devSys() any { return &syscall.Stat_t{Mode: syscall.S_IFCHR | 0o666} }

// nlink is the number of hard links of a file, for ls -l.
func nlink(fi interface{ Sys() any }) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
