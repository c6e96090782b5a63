package hostmem

import (
	"bufio"
	"bytes"
	"io/fs"
	"math"
	"os"
	"path"
	"strconv"
	"strings"
)

// Budget is memory this process may count on.
type Budget struct {
	// Bytes is the memory, 0 where it could not be learnt (not Linux,
	// no /proc).
	Bytes int64
	// Source says where Bytes came from, for the log: "/proc/meminfo
	// MemTotal" or the cgroup file that capped it.
	Source string
}

// Read learns the budget from the machine's memory (MemTotal) and the
// memory limit of this process's cgroup (v2 memory.max, or v1
// memory.limit_in_bytes), whichever is smaller.
func Read() Budget {
	return read(os.DirFS("/"))
}

// read is Read over a file system rooted where / is, for the tests.
func read(root fs.FS) Budget {
	var b Budget
	if total, ok := memTotal(root); ok {
		b = Budget{Bytes: total, Source: "/proc/meminfo MemTotal"}
	}
	if limit, src, ok := cgroupLimit(root); ok && (b.Bytes == 0 || limit < b.Bytes) {
		b = Budget{Bytes: limit, Source: src}
	}
	return b
}

// memTotal is /proc/meminfo's MemTotal in bytes.
func memTotal(root fs.FS) (int64, bool) {
	data, err := fs.ReadFile(root, "proc/meminfo")
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, ok := strings.CutSuffix(strings.TrimSpace(rest), " kB")
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(kb), 10, 64)
		if err != nil || n <= 0 || n > math.MaxInt64/1024 {
			return 0, false
		}
		return n * 1024, true
	}
	return 0, false
}

// cgroupLimit is the memory limit of this process's cgroup, if it has
// one: the v2 group's memory.max or the v1 memory controller's
// memory.limit_in_bytes ("max" and v1's near-2^63 value mean none).
func cgroupLimit(root fs.FS) (int64, string, bool) {
	data, err := fs.ReadFile(root, "proc/self/cgroup")
	if err != nil {
		return 0, "", false
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		// hierarchy-ID:controllers:path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			file = path.Join("sys/fs/cgroup", parts[2], "memory.max")
		case hasController(parts[1], "memory"):
			file = path.Join("sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes")
		default:
			continue
		}
		if !fs.ValidPath(file) {
			continue
		}
		raw, err := fs.ReadFile(root, file)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(raw))
		n, err := strconv.ParseInt(v, 10, 64)
		// v1 writes "no limit" as the largest page-aligned int64.
		if v == "max" || err != nil || n <= 0 || n >= math.MaxInt64-1<<20 {
			continue
		}
		return n, "/" + file, true
	}
	return 0, "", false
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// Reserve is what Fit keeps back for the process itself and the host:
// an eighth of the budget, at least 512 MiB (the compiled runtime, the
// interpreter image and the server's own heap live there).
func Reserve(budget int64) int64 {
	return max(budget/8, 512<<20)
}

// Fit is how many sessions of each bytes fit in budget after the
// Reserve, at least one; 0 when the budget is unknown (0), so that the
// caller falls back to a fixed default.
func Fit(budget, each int64) int {
	if budget <= 0 || each <= 0 {
		return 0
	}
	n := (budget - Reserve(budget)) / each
	return int(max(min(n, math.MaxInt32), 1))
}
