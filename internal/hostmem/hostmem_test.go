package hostmem

import (
	"io/fs"
	"os"
	"testing"
	"testing/fstest"
)

func TestReadTakesTheSmallerOfMachineAndCgroup(t *testing.T) {
	meminfo := &fstest.MapFile{Data: []byte("MemTotal:       24683784 kB\nMemFree:        1 kB\n")}
	for _, tc := range []struct {
		name  string
		files fstest.MapFS
		want  Budget
	}{
		{"machine only", fstest.MapFS{"proc/meminfo": meminfo}, Budget{24683784 * 1024, "/proc/meminfo MemTotal"}},
		{"cgroup v2 limit", fstest.MapFS{
			"proc/meminfo":                           meminfo,
			"proc/self/cgroup":                       {Data: []byte("0::/kubepods/pod1\n")},
			"sys/fs/cgroup/kubepods/pod1/memory.max": {Data: []byte("4294967296\n")},
		}, Budget{4 << 30, "/sys/fs/cgroup/kubepods/pod1/memory.max"}},
		{"cgroup v2 without a limit", fstest.MapFS{
			"proc/meminfo":             meminfo,
			"proc/self/cgroup":         {Data: []byte("0::/\n")},
			"sys/fs/cgroup/memory.max": {Data: []byte("max\n")},
		}, Budget{24683784 * 1024, "/proc/meminfo MemTotal"}},
		{"cgroup v1 limit", fstest.MapFS{
			"proc/meminfo":     meminfo,
			"proc/self/cgroup": {Data: []byte("5:devices:/\n4:cpu,memory:/box\n0::/\n")},
			"sys/fs/cgroup/memory/box/memory.limit_in_bytes": {Data: []byte("2147483648\n")},
		}, Budget{2 << 30, "/sys/fs/cgroup/memory/box/memory.limit_in_bytes"}},
		{"cgroup v1 without a limit", fstest.MapFS{
			"proc/meminfo":     meminfo,
			"proc/self/cgroup": {Data: []byte("4:memory:/box\n")},
			"sys/fs/cgroup/memory/box/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")},
		}, Budget{24683784 * 1024, "/proc/meminfo MemTotal"}},
		{"a limit above the machine", fstest.MapFS{
			"proc/meminfo":             meminfo,
			"proc/self/cgroup":         {Data: []byte("0::/\n")},
			"sys/fs/cgroup/memory.max": {Data: []byte("99999999999999\n")},
		}, Budget{24683784 * 1024, "/proc/meminfo MemTotal"}},
		{"a hostile cgroup path", fstest.MapFS{
			"proc/meminfo":     meminfo,
			"proc/self/cgroup": {Data: []byte("0::/../../proc\n")},
		}, Budget{24683784 * 1024, "/proc/meminfo MemTotal"}},
		{"nothing to read", fstest.MapFS{}, Budget{}},
		{"garbage", fstest.MapFS{
			"proc/meminfo":     {Data: []byte("MemTotal: lots\n")},
			"proc/self/cgroup": {Data: []byte("nonsense")},
		}, Budget{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := read(tc.files); got != tc.want {
				t.Fatalf("read = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		budget, each int64
		want         int
	}{
		{24 << 30, 256 << 20, 84}, // 21 GiB left after an eighth
		{4 << 30, 256 << 20, 14},  // 3.5 GiB after the 512 MiB floor
		{1 << 30, 256 << 20, 2},   // 512 MiB left
		{600 << 20, 256 << 20, 1}, // never below one
		{0, 256 << 20, 0},         // unknown: the caller's default
		{24 << 30, 0, 0},          // nonsense size
		{1 << 62, 1, 1<<31 - 1},   // clamped, no overflow
	} {
		if got := Fit(tc.budget, tc.each); got != tc.want {
			t.Errorf("Fit(%d, %d) = %d, want %d", tc.budget, tc.each, got, tc.want)
		}
	}
}

// On a machine with /proc/meminfo, Read finds a budget: a parse that
// broke against the real file would otherwise fall back to the fixed
// default unseen. It is never more than the machine has.
func TestReadOnThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo here (not Linux): the adapters fall back to their fixed default")
	}
	b := Read()
	total, ok := memTotal(osRoot())
	if !ok || b.Bytes <= 0 || b.Source == "" {
		t.Fatalf("Read = %+v, MemTotal %d (%v): the machine's memory was not read", b, total, ok)
	}
	if b.Bytes > total {
		t.Fatalf("budget %d above MemTotal %d", b.Bytes, total)
	}
	t.Logf("%d bytes from %s", b.Bytes, b.Source)
}

func osRoot() fs.FS { return os.DirFS("/") }
