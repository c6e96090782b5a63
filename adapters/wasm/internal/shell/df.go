package shell

import (
	"fmt"
	"strconv"
	"strings"
)

// df reports the workspace as one file system whose size is the session's
// quota. The host tells the shell the quota and what is used in
// CODEPORT_WORKSPACE_BYTES and CODEPORT_WORKSPACE_USED; without them the
// size is unknown ("-") and the use is what the files of the workspace
// add up to.
func cmdDf(c *call) int {
	o, files, ok := c.getopt(c.args, "hHkmPTalx", "Bt", map[string]byte{
		"human-readable": 'h', "si": 'H', "portability": 'P', "print-type": 'T', "all": 'a', "local": 'l',
		"block-size": 'B', "type": 't', "total": 0,
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Try 'df --help' for more information.")
		return 1
	}
	status := 0
	for _, f := range files {
		if _, err := c.stat(f); err != nil {
			c.errorf("%s: %s", f, errText(err))
			status = 1
		}
	}
	if len(files) > 0 && status != 0 && len(files) == 1 {
		return status
	}
	size, haveSize := envInt(c, "CODEPORT_WORKSPACE_BYTES")
	used, haveUsed := envInt(c, "CODEPORT_WORKSPACE_USED")
	if q := c.sh.opts.Quota; q != nil && !haveSize && !haveUsed {
		// The session's quota, which /workspace and /tmp share (a host
		// that did not say reports 0).
		if limit, inUse := q(); limit > 0 {
			size, used, haveSize, haveUsed = limit, inUse, true, true
		}
	}
	if !haveUsed {
		used = c.treeBytes(".")
	}
	unit := int64(1024)
	switch {
	case o.has('m'):
		unit = 1 << 20
	case o.has('k'):
		unit = 1024
	}
	if v := o.last('B', ""); v != "" {
		n, err := parseSizeSuffix(v)
		if err != nil || n <= 0 {
			c.errorf("invalid -B argument '%s'", v)
			return 1
		}
		unit = n
	}
	human := o.has('h') || o.has('H')
	num := func(n int64) string {
		if human {
			if n == 0 {
				return "0"
			}
			return humanSize(n)
		}
		return strconv.FormatInt((n+unit-1)/unit, 10)
	}
	sizeHeader := "1K-blocks"
	switch {
	case human:
		sizeHeader = "Size"
	case unit == 1<<20:
		sizeHeader = "1M-blocks"
	case unit != 1024:
		sizeHeader = fmt.Sprintf("%s-blocks", strconv.FormatInt(unit, 10)+"B")
	}
	if o.has('P') && !human {
		sizeHeader = fmt.Sprintf("%d-blocks", unit)
	}
	availHeader, pctHeader := "Available", "Use%"
	if human {
		availHeader = "Avail"
	}
	if o.has('P') {
		pctHeader = "Capacity"
	}
	sizeS, availS, pctS := "-", "-", "-"
	if haveSize && size > 0 {
		avail := max(size-used, 0)
		sizeS, availS = num(size), num(avail)
		if used+avail > 0 {
			pctS = strconv.FormatInt((used*100+used+avail-1)/(used+avail), 10) + "%"
		}
	}
	rows := [][]string{{"Filesystem"}, {"workspace"}}
	if o.has('T') {
		rows[0] = append(rows[0], "Type")
		rows[1] = append(rows[1], "quota")
	}
	rows[0] = append(rows[0], sizeHeader, "Used", availHeader, pctHeader, "Mounted on")
	rows[1] = append(rows[1], sizeS, num(used), availS, pctS, guestRoot)
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], len(cell))
		}
	}
	// GNU df gives the name column 14 characters at least.
	widths[0] = max(widths[0], 14)
	w := c.out()
	for _, r := range rows {
		for i, cell := range r {
			last := i == len(r)-1
			switch {
			case i == 0 || (o.has('T') && i == 1):
				w.WriteString(cell + strings.Repeat(" ", widths[i]-len(cell)))
			case last:
				w.WriteString(cell)
			default:
				w.WriteString(strings.Repeat(" ", widths[i]-len(cell)) + cell)
			}
			if !last {
				w.WriteByte(' ')
			}
		}
		w.WriteByte('\n')
	}
	return c.flush(w, status)
}

func envInt(c *call, name string) (int64, bool) {
	v := c.env.Get(name)
	if !v.IsSet() {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v.String()), 10, 64)
	return n, err == nil && n >= 0
}

// treeBytes adds up the sizes of the regular files below rel (directories
// cost nothing against the byte quota unless the host says otherwise).
func (c *call) treeBytes(rel string) int64 {
	fi, err := c.sh.fs.lstat(c.ctx, rel)
	if err != nil || c.stopped() {
		return 0
	}
	if !fi.IsDir() {
		if fi.Mode().IsRegular() {
			return fi.Size()
		}
		return 0
	}
	infos, _ := c.sh.fs.readDir(c.ctx, rel)
	var n int64
	for _, sub := range infos {
		if c.stopped() {
			break
		}
		n += c.treeBytes(joinRel(rel, sub.Name()))
	}
	return n
}
