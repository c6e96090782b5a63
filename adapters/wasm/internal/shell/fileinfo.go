package shell

import (
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// How the commands describe a file (ls, stat, find, du, df, tree, tar):
// its size in blocks, the owner and the mode bits the sandbox shows, its
// kind, and sizes for people (1.5K).

// Block accounting. The sandbox's file systems report no block counts
// that mean anything to a script, so stat, du (and ls's total) count
// what a typical ext4 file system would: every file takes whole 4 KiB
// blocks, ceil(size/4096) of them, and a directory one block (its size is
// shown as 4096 too, whatever the host's file system says).
const (
	fsBlock  = 4096
	dirBytes = 4096
)

// diskBytes is what a file occupies on disk under that model.
func diskBytes(fi fs.FileInfo) int64 {
	if fi.IsDir() {
		return dirBytes
	}
	if !fi.Mode().IsRegular() {
		return 0
	}
	return (fi.Size() + fsBlock - 1) / fsBlock * fsBlock
}

// apparentBytes is a file's size as du --apparent-size counts it.
func apparentBytes(fi fs.FileInfo) int64 {
	if fi.IsDir() {
		return dirBytes
	}
	return fi.Size()
}

// sysInfo is what stat shows beyond fs.FileInfo, read from its Sys value
// (a *syscall.Stat_t whose fields differ between Linux and wasip1) by
// field name; zero where unknown.
type sysInfo struct {
	dev, ino, nlink uint64
	atime, ctime    time.Time
}

func sysOf(fi fs.FileInfo) sysInfo {
	s := sysInfo{nlink: 1, atime: fi.ModTime(), ctime: fi.ModTime()}
	v := reflect.ValueOf(fi.Sys())
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return s
	}
	num := func(name string) (uint64, bool) {
		f := v.FieldByName(name)
		switch {
		case !f.IsValid():
		case f.CanUint():
			return f.Uint(), true
		case f.CanInt():
			return uint64(f.Int()), true
		}
		return 0, false
	}
	ts := func(name, nsName string) (time.Time, bool) {
		if f := v.FieldByName(name); f.IsValid() && f.Kind() == reflect.Struct {
			sec, nsec := f.FieldByName("Sec"), f.FieldByName("Nsec")
			if sec.IsValid() && nsec.IsValid() && sec.CanInt() && nsec.CanInt() {
				return time.Unix(sec.Int(), nsec.Int()), true
			}
		}
		if n, ok := num(nsName); ok {
			return time.Unix(0, int64(n)), true
		}
		return time.Time{}, false
	}
	s.dev, _ = num("Dev")
	s.ino, _ = num("Ino")
	if n, ok := num("Nlink"); ok && n > 0 {
		s.nlink = n
	}
	if t, ok := ts("Atim", "Atime"); ok {
		s.atime = t
	}
	if t, ok := ts("Ctim", "Ctime"); ok {
		s.ctime = t
	}
	return s
}

// rawMode is the st_mode value of fi (type and permission bits).
func rawMode(fi fs.FileInfo) uint32 {
	m := fi.Mode()
	r := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		r |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		r |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		r |= 0o1000
	}
	switch {
	case m.IsDir():
		r |= 0o040000
	case m&fs.ModeSymlink != 0:
		r |= 0o120000
	case m&fs.ModeCharDevice != 0:
		r |= 0o020000
	case m&fs.ModeDevice != 0:
		r |= 0o060000
	case m&fs.ModeNamedPipe != 0:
		r |= 0o010000
	case m&fs.ModeSocket != 0:
		r |= 0o140000
	default:
		r |= 0o100000
	}
	return r
}

// modeString formats a mode as ls -l does ("drwxr-xr-x").
func modeString(m fs.FileMode) string {
	var b strings.Builder
	b.WriteByte(kindOf(m).letter)
	const rwx = "rwxrwxrwx"
	for i := range 9 {
		if m&(1<<uint(8-i)) != 0 {
			b.WriteByte(rwx[i])
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

// fileKind is the kind of file a mode names: ls's letter for it (find's
// too, but for a regular file, which find calls f) and stat's name (%F).
type fileKind struct {
	letter byte
	name   string
}

func kindOf(m fs.FileMode) fileKind {
	switch {
	case m.IsDir():
		return fileKind{'d', "directory"}
	case m&fs.ModeSymlink != 0:
		return fileKind{'l', "symbolic link"}
	case m&fs.ModeCharDevice != 0:
		return fileKind{'c', "character special file"}
	case m&fs.ModeDevice != 0:
		return fileKind{'b', "block special file"}
	case m&fs.ModeNamedPipe != 0:
		return fileKind{'p', "fifo"}
	case m&fs.ModeSocket != 0:
		return fileKind{'s', "socket"}
	}
	return fileKind{'-', "regular file"}
}

// humanSize formats a size as ls -h does (1.5K, 23M).
func humanSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10)
	}
	f := float64(n)
	for _, unit := range "KMGTPE" {
		f /= 1024
		if f < 1024 || unit == 'E' {
			if f < 10 {
				return fmt.Sprintf("%.1f%c", ceilTenth(f), unit)
			}
			return fmt.Sprintf("%.0f%c", ceil(f), unit)
		}
	}
	return strconv.FormatInt(n, 10)
}

func ceil(f float64) float64 {
	i := float64(int64(f))
	if f > i {
		return i + 1
	}
	return i
}

func ceilTenth(f float64) float64 { return ceil(f*10) / 10 }

// sandboxUser is the owner every file of the workspace shows (ls -l prints
// "user user"): archives record it rather than the gateway's account.
const (
	sandboxUser = "user"
	sandboxUID  = 1000
)
