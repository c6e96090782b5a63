package subprocess

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cgroupRoot is where a cgroup v2 hierarchy is looked for.
const cgroupRoot = "/sys/fs/cgroup"

// cgroups places workers in cgroup v2 groups with a memory.max, where the
// host delegates a writable memory controller to this process's group. It
// is detected once, when the adapter starts; reason says why it is off.
type cgroups struct {
	parent string // the directory new groups are made in, "" when off
	reason string
}

// detectCgroups looks for a cgroup v2 memory controller this process may
// use: the unified hierarchy mounted at /sys/fs/cgroup, our group listed
// in /proc/self/cgroup as "0::/path", "memory" enabled for its children,
// and the group writable.
func detectCgroups() cgroups {
	controllers, err := os.ReadFile(filepath.Join(cgroupRoot, "cgroup.controllers"))
	if err != nil {
		return cgroups{reason: "no cgroup v2 hierarchy at " + cgroupRoot}
	}
	if !slices.Contains(strings.Fields(string(controllers)), "memory") {
		return cgroups{reason: "the cgroup v2 memory controller is not available"}
	}
	self, err := ownCgroup()
	if err != nil {
		return cgroups{reason: err.Error()}
	}
	dir := filepath.Join(cgroupRoot, self)
	sub, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil || !slices.Contains(strings.Fields(string(sub)), "memory") {
		return cgroups{reason: "the memory controller is not delegated to this process's cgroup (" + dir + ")"}
	}
	probe := filepath.Join(dir, "codeport-probe-"+strconv.Itoa(os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return cgroups{reason: "this process's cgroup is not writable: " + err.Error()}
	}
	_ = os.Remove(probe)
	return cgroups{parent: dir}
}

func ownCgroup() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "0::"); ok {
			return rest, nil
		}
	}
	return "", errors.New("this process is in no cgroup v2 group")
}

func (c cgroups) ok() bool { return c.parent != "" }

// place makes a group for the worker with pid, sets its memory.max (and
// memory.swap.max to 0 where present, so the limit is not dodged by swap)
// and moves the worker into it.
func (c cgroups) place(pid int, limit int64) (string, error) {
	dir := filepath.Join(c.parent, "codeport-worker-"+strconv.Itoa(pid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	write := func(name, value string) error {
		return os.WriteFile(filepath.Join(dir, name), []byte(value), 0o644)
	}
	if err := write("memory.max", strconv.FormatInt(limit, 10)); err != nil {
		_ = os.Remove(dir)
		return "", fmt.Errorf("memory.max: %w", err)
	}
	_ = write("memory.swap.max", "0")
	if err := write("cgroup.procs", strconv.Itoa(pid)); err != nil {
		_ = os.Remove(dir)
		return "", fmt.Errorf("cgroup.procs: %w", err)
	}
	return dir, nil
}
