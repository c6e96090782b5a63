package shell

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

func cmdUnzip(c *call) int {
	o, operands, ok := c.getopt(c.args, "lqopnjtvZ", "dx", map[string]byte{})
	if !ok {
		return 10
	}
	if len(operands) == 0 {
		fmt.Fprintln(c.stderr, "UnZip: no zipfile given (usage: unzip [-lqopnj] file[.zip] [list] [-x xlist] [-d exdir])")
		return 10
	}
	name, members := operands[0], operands[1:]
	t, err := c.target(name)
	var info fs.FileInfo
	if err == nil && t.dev != "" {
		err = errNotRegular
	}
	if err == nil {
		info, err = c.lstat(t)
	}
	if err != nil && errors.Is(err, fs.ErrNotExist) && !strings.HasSuffix(name, ".zip") {
		if t2, err2 := c.target(name + ".zip"); err2 == nil {
			if info2, err2 := c.lstat(t2); err2 == nil {
				t, info, err = t2, info2, nil
			}
		}
	}
	if err != nil || !info.Mode().IsRegular() {
		fmt.Fprintf(c.stderr, "unzip:  cannot find or open %s, %s.zip or %s.ZIP.\n", name, name, name)
		return 9
	}
	f, err := c.sh.fs.open(c.ctx, t.rel)
	if err != nil {
		fmt.Fprintf(c.stderr, "unzip:  cannot find or open %s, %s.zip or %s.ZIP.\n", name, name, name)
		return 9
	}
	defer f.Close()
	zr, err := zip.NewReader(f, info.Size())
	if err != nil {
		fmt.Fprintf(c.stderr, "  End-of-central-directory signature not found.  Either this file is not\n  a zipfile, or it constitutes one disk of a multi-part archive.  In the\n  latter case the central directory and zipfile comment will be found on\n  the last disk(s) of this archive.\nunzip:  cannot find zipfile directory in %s.\n", name)
		return 9
	}
	u := &unzipRun{c: c, o: o, zr: zr, name: name, dir: o.last('d', "")}
	return u.run(members)
}

type unzipRun struct {
	c      *call
	o      opts
	zr     *zip.Reader
	name   string
	dir    string
	w      *bufio.Writer
	status int
	none   bool // "[N]one": existing files are kept
}

func (u *unzipRun) selected(name string, members []string, found []bool) bool {
	for _, x := range u.o.vals['x'] {
		if ok, _ := path.Match(x, name); ok {
			return false
		}
	}
	if len(members) == 0 {
		return true
	}
	for i, m := range members {
		if ok, _ := path.Match(m, name); ok || m == name {
			found[i] = true
			return true
		}
	}
	return false
}

func (u *unzipRun) run(members []string) int {
	c := u.c
	u.w = c.out()
	quiet := u.o.has('q') || u.o.has('p')
	if !quiet {
		fmt.Fprintf(u.w, "Archive:  %s\n", u.name)
	}
	found := make([]bool, len(members))
	if u.o.has('l') {
		u.list(members, found)
	} else {
		if u.dir != "" && !u.o.has('p') {
			if err := c.mkdirAll(u.dir); err != nil {
				u.w.Flush()
				fmt.Fprintf(c.stderr, "checkdir error:  cannot create %s\n                 %s\n                 unable to process %s.\n", u.dir, errText(err), u.dir)
				return 3
			}
		}
		for _, f := range u.zr.File {
			if c.stopped() {
				break
			}
			if !u.selected(f.Name, members, found) {
				continue
			}
			if stop := u.extract(f); stop {
				break
			}
		}
	}
	for i, m := range members {
		if !found[i] && !c.stopped() {
			u.w.Flush()
			fmt.Fprintf(c.stderr, "caution: filename not matched:  %s\n", m)
			u.status = 11
		}
	}
	return c.flush(u.w, u.status)
}

func (u *unzipRun) warn(format string, args ...any) {
	u.w.Flush()
	fmt.Fprintf(u.c.stderr, format+"\n", args...)
	if u.status == 0 {
		u.status = 1
	}
}

// extract writes one entry; stop ends the run (no room left, or the
// output failed).
func (u *unzipRun) extract(f *zip.File) (stop bool) {
	c := u.c
	name := f.Name
	mode := f.Mode()
	if u.o.has('p') {
		if mode.IsDir() || mode&(fs.ModeSymlink|fs.ModeDevice|fs.ModeNamedPipe) != 0 {
			return false
		}
		rc, err := f.Open()
		if err != nil {
			u.warn("error:  %s: %s", name, err)
			return false
		}
		rerr, werr := c.copyOut(u.w, &ctxReader{ctx: c.ctx, r: rc})
		rc.Close()
		if werr != nil {
			u.status = c.writeFailed(werr)
			return true
		}
		if rerr != nil {
			u.warn("error:  %s: %s", name, unzipErr(rerr))
		}
		return false
	}
	// Info-ZIP removes an absolute prefix and any ".." components, with
	// a warning, and extracts what is left.
	clean := strings.ReplaceAll(name, "\\", "/")
	if strings.HasPrefix(clean, "/") {
		u.warn("warning:  stripped absolute path spec from %s", name)
	}
	var parts []string
	dotdot := false
	for _, p := range strings.Split(clean, "/") {
		switch p {
		case "..":
			dotdot = true
		case "", ".":
		default:
			parts = append(parts, p)
		}
	}
	if dotdot {
		u.warn("warning:  skipped \"../\" path component(s) in %s", name)
	}
	if len(parts) == 0 {
		return false
	}
	isDir := mode.IsDir() || strings.HasSuffix(clean, "/")
	if u.o.has('j') {
		if isDir {
			return false
		}
		parts = parts[len(parts)-1:]
	}
	rel := strings.Join(parts, "/")
	shown := rel
	dst := rel
	if u.dir != "" {
		dst = path.Join(u.dir, rel)
		shown = strings.TrimSuffix(u.dir, "/") + "/" + rel
	}
	quiet := u.o.has('q')
	switch {
	case isDir:
		if fi, err := c.stat(dst); err == nil && fi.IsDir() {
			return false
		}
		if err := c.mkdirAll(dst); err != nil {
			u.warn("checkdir error:  cannot create %s\n                 %s", shown, errText(err))
			return isSpaceError(err)
		}
		if !quiet {
			fmt.Fprintf(u.w, "   creating: %s/\n", shown)
		}
		return false
	case mode&fs.ModeSymlink != 0:
		u.warn("warning:  %s: symbolic link not created: %s", shown, errNoLinks)
		return false
	case !mode.IsRegular():
		u.warn("warning:  %s: not a regular file: not extracted", shown)
		return false
	}
	if fi, err := c.stat(dst); err == nil {
		switch {
		case fi.IsDir():
			u.warn("error:  cannot create %s\n        Is a directory", shown)
			return false
		case u.o.has('n') || u.none:
			return false
		case !u.o.has('o'):
			// No terminal to ask: Info-ZIP reads EOF and keeps this
			// file and every later one.
			u.w.Flush()
			fmt.Fprintf(c.stderr, "replace %s? [y]es, [n]o, [A]ll, [N]one, [r]ename:  NULL\n(EOF or read error, treating as \"[N]one\" ...)\n", shown)
			u.none = true
			u.status = 1
			return false
		}
	}
	verb := " extracting"
	if f.Method == zip.Deflate {
		verb = "  inflating"
	}
	if !quiet {
		fmt.Fprintf(u.w, "%s: %-22s  \n", verb, shown)
	}
	if err := c.mkdirAll(path.Dir(dst)); err != nil {
		u.warn("checkdir error:  cannot create %s\n                 %s", path.Dir(shown), errText(err))
		return isSpaceError(err)
	}
	rc, err := f.Open()
	if err != nil {
		u.warn("   skipping: %-22s  %s", shown, unzipErr(err))
		return false
	}
	err = c.writeFile(dst, rc)
	rc.Close()
	if err != nil {
		if c.stopped() {
			return true
		}
		u.warn("error:  cannot create %s\n        %s", shown, unzipErr(err))
		if isSpaceError(err) {
			u.w.Flush()
			fmt.Fprintf(c.stderr, "unzip:  extraction stopped: no room left in the workspace\n")
			u.status = 50
			return true
		}
		u.status = 2
		return false
	}
	perm := mode.Perm()
	if f.CreatorVersion>>8 != 3 { // not from Unix: no mode recorded
		perm = 0
	}
	c.setMeta(dst, perm, f.Modified)
	return false
}

func unzipErr(err error) string {
	switch {
	case errors.Is(err, zip.ErrChecksum):
		return "bad CRC"
	case errors.Is(err, zip.ErrAlgorithm):
		return "unsupported compression method"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, new(flate.CorruptInputError)):
		return "invalid compressed data to inflate"
	}
	return errText(err)
}

func (u *unzipRun) list(members []string, found []bool) {
	w := u.w
	w.WriteString("  Length      Date    Time    Name\n---------  ---------- -----   ----\n")
	var total uint64
	n := 0
	for _, f := range u.zr.File {
		if u.c.stopped() {
			return
		}
		if !u.selected(f.Name, members, found) {
			continue
		}
		fmt.Fprintf(w, "%9d  %s   %s\n", f.UncompressedSize64, f.Modified.Format("2006-01-02 15:04"), f.Name)
		total += f.UncompressedSize64
		n++
	}
	files := "files"
	if n == 1 {
		files = "file"
	}
	fmt.Fprintf(w, "---------                     -------\n%9d                     %d %s\n", total, n, files)
}
