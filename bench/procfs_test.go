package bench

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// treeRSS is the resident memory, in bytes, of process pid and all its
// descendants, from /proc (0 where that is not available).
func treeRSS(pid int) int64 {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp := statusField(p, "PPid:"); pp > 0 {
			children[int(pp)] = append(children[int(pp)], p)
		}
	}
	var total int64
	seen := map[int]bool{}
	var walk func(int)
	walk = func(p int) {
		if seen[p] {
			return
		}
		seen[p] = true
		total += statusField(p, "VmRSS:") << 10 // kB
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return total
}

// statusField reads one numeric field of /proc/pid/status (-1 when it is
// missing).
func statusField(pid int, field string) int64 {
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				return -1
			}
			v, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				return -1
			}
			return v
		}
	}
	return -1
}
