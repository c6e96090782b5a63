package shell

import (
	"archive/tar"
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// safeMember turns an archive member name into a path relative to the
// extraction directory: leading slashes are dropped (stripped reports
// what was removed), then strip leading components go; ok is false for a
// name with a ".." component. An empty rel means nothing is left to
// extract.
func safeMember(name string, strip int) (rel, stripped string, ok bool) {
	trimmed := strings.TrimLeft(name, "/")
	if trimmed != name {
		stripped = name[:len(name)-len(trimmed)]
		if len(stripped) > 1 {
			stripped = "/"
		}
	}
	var parts []string
	for _, p := range strings.Split(trimmed, "/") {
		switch p {
		case "..":
			return "", stripped, false
		case "", ".":
			continue
		}
		parts = append(parts, p)
	}
	if strip >= len(parts) {
		return "", stripped, true
	}
	return strings.Join(parts[strip:], "/"), stripped, true
}

type tarOpts struct {
	mode     byte // 'c', 'x' or 't'
	file     string
	dir      string
	gzip     bool
	bzip2    bool
	verbose  bool
	toStdout bool
	keepOld  bool
	strip    int
	excludes []string
}

// tarFlagsWithValue are the letters of an old-style first argument ("tar
// czf a.tgz dir") that take the next argument as their value.
const tarFlagsWithValue = "fCX"

func cmdTar(c *call) int {
	args := c.args
	if len(args) > 0 && args[0] != "" && !strings.HasPrefix(args[0], "-") {
		// Old style: the letters of the first word are options; those
		// taking a value take the next words in turn.
		first, rest := args[0], args[1:]
		var conv []string
		for i := 0; i < len(first); i++ {
			conv = append(conv, "-"+first[i:i+1])
			if strings.IndexByte(tarFlagsWithValue, first[i]) >= 0 {
				if len(rest) == 0 {
					c.errorf("option requires an argument -- '%c'", first[i])
					fmt.Fprintln(c.stderr, "Try 'tar --help' or 'tar --usage' for more information.")
					return 2
				}
				conv = append(conv, rest[0])
				rest = rest[1:]
			}
		}
		args = append(conv, rest...)
	}
	const (
		optStrip   = 1
		optExclude = 2
		optIgnored = 3
	)
	o, operands, ok := c.getopt(args, "cxtzjJvOkpmPaho", "fCX\x01\x02\x03", map[string]byte{
		"create": 'c', "extract": 'x', "get": 'x', "list": 't', "file": 'f', "directory": 'C',
		"gzip": 'z', "gunzip": 'z', "ungzip": 'z', "bzip2": 'j', "xz": 'J', "verbose": 'v',
		"to-stdout": 'O', "keep-old-files": 'k', "preserve-permissions": 'p', "same-permissions": 'p',
		"touch": 'm', "absolute-names": 'P', "auto-compress": 'a', "exclude-from": 'X',
		"strip-components": optStrip, "exclude": optExclude,
		"sort": optIgnored, "owner": optIgnored, "group": optIgnored, "mode": optIgnored, "format": optIgnored,
		"no-same-owner": 0, "no-same-permissions": 0, "same-owner": 0, "numeric-owner": 0,
		"overwrite": 0, "recursion": 0, "wildcards": 0, "no-overwrite-dir": 0, "warning": 0,
	})
	usage := func(msg string) int {
		c.errorf("%s", msg)
		fmt.Fprintln(c.stderr, "Try 'tar --help' or 'tar --usage' for more information.")
		return 2
	}
	if !ok {
		fmt.Fprintln(c.stderr, "Try 'tar --help' or 'tar --usage' for more information.")
		return 2
	}
	var t tarOpts
	for _, m := range "cxt" {
		if o.has(byte(m)) {
			if t.mode != 0 || o.flags[byte(m)] > 1 {
				return usage("You may not specify more than one '-Acdtrux', '--delete' or  '--test-label' option")
			}
			t.mode = byte(m)
		}
	}
	if t.mode == 0 {
		return usage("You must specify one of the '-Acdtrux', '--delete' or '--test-label' options")
	}
	t.file = o.last('f', "-")
	t.dir = o.last('C', ".")
	t.gzip, t.bzip2 = o.has('z'), o.has('j')
	t.verbose, t.toStdout, t.keepOld = o.has('v'), o.has('O'), o.has('k')
	if o.has('J') {
		c.errorf("xz compression (-J) is not available in this sandbox; use -z (gzip)")
		return 2
	}
	if t.mode == 'c' && t.bzip2 {
		c.errorf("bzip2 compression (-j) can be read but not written in this sandbox; use -z (gzip)")
		return 2
	}
	if t.mode == 'c' && o.has('a') {
		switch {
		case strings.HasSuffix(t.file, ".gz") || strings.HasSuffix(t.file, ".tgz"):
			t.gzip = true
		case strings.HasSuffix(t.file, ".bz2") || strings.HasSuffix(t.file, ".xz") || strings.HasSuffix(t.file, ".tbz2") || strings.HasSuffix(t.file, ".txz"):
			c.errorf("%s: only gzip compression can be written in this sandbox", t.file)
			return 2
		}
	}
	if v := o.last(optStrip, ""); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return usage(fmt.Sprintf("Invalid number of elements: '%s'", v))
		}
		t.strip = n
	}
	t.excludes = o.vals[optExclude]
	for _, f := range o.vals['X'] {
		r, done, err := c.openInput(f)
		if err != nil {
			c.errorf("%s: Cannot open: %s", f, errText(err))
			c.errorf("Error is not recoverable: exiting now")
			return 2
		}
		lr := c.lines(r)
		for {
			line, _, err := lr.next()
			if err != nil {
				break
			}
			if len(line) > 0 {
				t.excludes = append(t.excludes, string(line))
			}
		}
		done()
	}
	tr := &tarRun{c: c, o: t}
	switch t.mode {
	case 'c':
		if len(operands) == 0 {
			return usage("Cowardly refusing to create an empty archive")
		}
		tr.create(operands)
	default:
		tr.read(operands)
	}
	if tr.status != 0 && !c.stopped() && !tr.fatal {
		c.errorf("Exiting with failure status due to previous errors")
	}
	return tr.status
}

type tarRun struct {
	c        *call
	o        tarOpts
	status   int
	fatal    bool // an error that ended the run, already reported
	stripMsg map[string]bool
	self     string // the archive being written, never put in itself
}

// excluded reports whether the member name matches an --exclude pattern:
// as GNU tar does by default, a pattern matches the whole name or any
// trailing run of its components.
func (tr *tarRun) excluded(name string) bool {
	name = strings.TrimSuffix(name, "/")
	for _, pat := range tr.o.excludes {
		pat = strings.TrimSuffix(pat, "/")
		s := name
		for {
			if ok, _ := path.Match(pat, s); ok {
				return true
			}
			i := strings.IndexByte(s, '/')
			if i < 0 {
				break
			}
			s = s[i+1:]
		}
	}
	return false
}

func (tr *tarRun) failf(format string, args ...any) {
	tr.c.errorf(format, args...)
	tr.status = 2
}

// verboseOut is where -v lists names: stdout, unless the archive itself
// goes there.
func (tr *tarRun) verboseOut() io.Writer {
	if tr.o.mode == 'c' && tr.o.file == "-" || tr.o.toStdout {
		return tr.c.stderr
	}
	return tr.c.stdout
}

func (tr *tarRun) noteStrip(prefix string) {
	if prefix == "" || tr.stripMsg[prefix] {
		return
	}
	if tr.stripMsg == nil {
		tr.stripMsg = map[string]bool{}
	}
	tr.stripMsg[prefix] = true
	tr.c.errorf("Removing leading `%s' from member names", prefix)
}

// create writes the archive of operands (relative to -C).
func (tr *tarRun) create(operands []string) {
	c := tr.c
	if tr.o.file != "-" {
		if t, err := c.target(tr.o.file); err == nil && t.dev == "" {
			tr.self = t.rel
		}
	}
	produce := func(w io.Writer) error {
		var gz *gzip.Writer
		if tr.o.gzip {
			gz = gzip.NewWriter(w)
			w = gz
		}
		tw := tar.NewWriter(w)
		for _, op := range operands {
			if c.stopped() {
				return c.ctx.Err()
			}
			if err := tr.add(tw, op); err != nil {
				return err
			}
		}
		if err := tw.Close(); err != nil {
			return err
		}
		if gz != nil {
			return gz.Close()
		}
		return nil
	}
	if tr.o.file == "-" {
		bw := c.out()
		err := produce(bw)
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			if !tr.fatal {
				tr.status = c.writeFailed(err)
				tr.fatal = true
			}
		}
		return
	}
	werr, perr := c.pipeToFile(tr.o.file, produce)
	switch {
	case tr.fatal:
	case werr != nil:
		tr.failf("%s: Cannot write: %s", tr.o.file, errText(werr))
		c.errorf("Error is not recoverable: exiting now")
		tr.fatal = true
	case perr != nil:
		tr.failf("%s: %s", tr.o.file, errText(perr))
		tr.fatal = true
	}
}

// add writes the operand op (a path relative to the -C directory) and,
// for a directory, everything below it.
func (tr *tarRun) add(tw *tar.Writer, op string) error {
	c := tr.c
	name := op
	trimmed := strings.TrimLeft(name, "/")
	if trimmed != name {
		tr.noteStrip("/")
		name = trimmed
	}
	full := op
	if !path.IsAbs(op) {
		full = path.Join(tr.o.dir, op)
	}
	t, err := c.target(full)
	var info fs.FileInfo
	if err == nil && t.dev != "" {
		err = errNotRegular
	}
	if err == nil {
		info, err = c.lstat(t)
	}
	if err != nil {
		tr.failf("%s: Cannot stat: %s", op, errText(err))
		return nil
	}
	if name == "" {
		name = "."
	}
	return tr.addEntry(tw, name, t.rel, info)
}

func (tr *tarRun) addEntry(tw *tar.Writer, name, rel string, info fs.FileInfo) error {
	c := tr.c
	if c.stopped() {
		return c.ctx.Err()
	}
	if tr.excluded(name) {
		return nil
	}
	if rel == tr.self && !info.IsDir() {
		c.errorf("%s: file is the archive; not dumped", name)
		return nil
	}
	hdr := &tar.Header{
		Name:    name,
		Mode:    int64(info.Mode().Perm()),
		ModTime: info.ModTime().Truncate(time.Second),
		Uname:   sandboxUser, Gname: sandboxUser,
		Uid: sandboxUID, Gid: sandboxUID,
	}
	switch {
	case info.IsDir():
		hdr.Typeflag = tar.TypeDir
		hdr.Name = strings.TrimSuffix(name, "/") + "/"
	case info.Mode().IsRegular():
		hdr.Typeflag = tar.TypeReg
		hdr.Size = info.Size()
	default:
		tr.failf("%s: not archived: not a regular file or directory (symbolic links are not followed)", name)
		return nil
	}
	if tr.o.verbose {
		fmt.Fprintln(tr.verboseOut(), hdr.Name)
	}
	if info.Mode().IsRegular() {
		f, err := c.sh.fs.open(c.ctx, rel)
		if err != nil {
			tr.failf("%s: Cannot open: %s", name, errText(err))
			return nil
		}
		defer f.Close()
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		// The file's size was recorded: copy exactly that much, padding
		// with zeros if it shrank since, as GNU tar does.
		n, err := io.Copy(tw, io.LimitReader(&ctxReader{ctx: c.ctx, r: f}, hdr.Size))
		if err != nil {
			if errors.Is(err, tar.ErrWriteTooLong) {
				return err
			}
			if c.stopped() {
				return c.ctx.Err()
			}
		}
		if n < hdr.Size {
			tr.failf("%s: File shrank by %d bytes; padding with zeros", name, hdr.Size-n)
			if _, err := io.CopyN(tw, zeroReader{}, hdr.Size-n); err != nil {
				return err
			}
		}
		return nil
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	infos, err := c.sh.fs.readDir(c.ctx, rel)
	if err != nil {
		tr.failf("%s: Cannot open: %s", name, errText(err))
		return nil
	}
	for _, sub := range infos {
		if err := tr.addEntry(tw, strings.TrimSuffix(hdr.Name, "/")+"/"+sub.Name(), joinRel(rel, sub.Name()), sub); err != nil {
			return err
		}
	}
	return nil
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	return n, err
}

// decompressed returns r decompressed as the magic bytes at its start (or
// the options) say: gzip and bzip2 are read whatever the options, as GNU
// tar does.
func decompressed(br *bufio.Reader) (io.Reader, error) {
	magic, _ := br.Peek(6)
	switch {
	case string(magic) == "\xfd7zXZ\x00":
		return nil, errors.New("xz compression is not available in this sandbox (gzip and bzip2 are)")
	case len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b:
		return gzip.NewReader(br)
	case len(magic) >= 3 && string(magic[:3]) == "BZh":
		return bzip2.NewReader(br), nil
	}
	return br, nil
}

// read lists (-t) or extracts (-x) the archive; operands select members.
func (tr *tarRun) read(operands []string) {
	c := tr.c
	in, done, err := c.openInput(tr.o.file)
	if err != nil {
		tr.failf("%s: Cannot open: %s", tr.o.file, errText(err))
		c.errorf("Error is not recoverable: exiting now")
		tr.fatal = true
		return
	}
	defer done()
	counted := &countingReader{r: in}
	br := bufio.NewReaderSize(counted, 64<<10)
	r, err := decompressed(br)
	if err != nil {
		tr.notRecoverable(err)
		return
	}
	// -z and -j insist on their compression (without them it is
	// detected).
	_, isGz := r.(*gzip.Reader)
	_, plain := r.(*bufio.Reader)
	isBz := !isGz && !plain
	if tr.o.gzip && !isGz || tr.o.bzip2 && !isBz {
		kind := "gzip"
		if !tr.o.gzip {
			kind = "bzip2"
		}
		c.errorf("%s: not in %s format", tr.o.file, kind)
		c.errorf("Error is not recoverable: exiting now")
		tr.status, tr.fatal = 2, true
		return
	}
	if tr.o.mode == 'x' && !tr.o.toStdout {
		if fi, err := c.stat(tr.o.dir); err != nil || !fi.IsDir() {
			if err == nil {
				err = syscall.ENOTDIR
			}
			tr.failf("%s: Cannot open: %s", tr.o.dir, errText(err))
			c.errorf("Error is not recoverable: exiting now")
			tr.fatal = true
			return
		}
	}
	found := make([]bool, len(operands))
	selected := func(name string) bool {
		if len(operands) == 0 {
			return true
		}
		n := strings.TrimSuffix(name, "/")
		for i, op := range operands {
			op = strings.TrimSuffix(op, "/")
			if n == op || strings.HasPrefix(n, op+"/") {
				found[i] = true
				return true
			}
		}
		return false
	}
	treader := tar.NewReader(r)
	out := c.out()
	defer func() {
		if err := out.Flush(); err != nil && tr.status == 0 {
			tr.status = c.writeFailed(err)
		}
	}()
	type dirTime struct {
		p    string
		perm fs.FileMode
		t    time.Time
	}
	var dirs []dirTime
	members := 0
	for !c.stopped() {
		hdr, err := treader.Next()
		if errors.Is(err, io.EOF) {
			if members == 0 && counted.n == 0 {
				tr.failf("This does not look like a tar archive")
			}
			break
		}
		if err != nil {
			if members == 0 {
				tr.failf("This does not look like a tar archive")
				c.errorf("Exiting with failure status due to previous errors")
				tr.fatal = true
			} else {
				tr.notRecoverable(err)
			}
			break
		}
		members++
		if !selected(hdr.Name) || tr.excluded(hdr.Name) {
			continue
		}
		if tr.o.mode == 't' {
			tr.list(out, hdr)
			continue
		}
		if tr.o.verbose {
			fmt.Fprintln(tr.verboseOut(), hdr.Name)
		}
		rel, stripped, ok := safeMember(hdr.Name, tr.o.strip)
		if stripped != "" {
			tr.noteStrip(stripped)
		}
		if !ok {
			tr.failf("%s: Member name contains '..'", hdr.Name)
			continue
		}
		if rel == "" {
			continue
		}
		if tr.o.toStdout {
			if hdr.Typeflag == tar.TypeReg || hdr.Typeflag == typeRegA {
				if rerr, werr := tr.c.copyOut(out, treader); werr != nil {
					tr.status, tr.fatal = c.writeFailed(werr), true
					return
				} else if rerr != nil {
					tr.notRecoverable(rerr)
					return
				}
			}
			continue
		}
		dst := path.Join(tr.o.dir, rel)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := c.mkdirAll(dst); err != nil {
				if tr.stopOn(hdr.Name, "Cannot mkdir", err) {
					return
				}
				continue
			}
			if len(dirs) < 1<<16 {
				dirs = append(dirs, dirTime{dst, fs.FileMode(hdr.Mode), hdr.ModTime})
			}
		case tar.TypeSymlink:
			tr.failf("%s: Cannot create symlink to '%s': %s", hdr.Name, hdr.Linkname, errNoLinks)
		case tar.TypeLink:
			tr.failf("%s: Cannot hard link to '%s': %s", hdr.Name, hdr.Linkname, errNoLinks)
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			tr.failf("%s: Cannot mknod: Operation not permitted (no devices or FIFOs in this sandbox's workspace)", hdr.Name)
		case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
			// Consumed by archive/tar.
		default:
			// Regular files, and types GNU tar extracts as regular files.
			if hdr.Typeflag != tar.TypeReg && hdr.Typeflag != typeRegA && hdr.Typeflag != tar.TypeCont {
				c.errorf("%s: Unknown file type '%c', extracted as normal file", hdr.Name, hdr.Typeflag)
				tr.status = 2
			}
			if tr.o.keepOld {
				if _, err := c.stat(dst); err == nil {
					tr.failf("%s: Cannot open: File exists", hdr.Name)
					continue
				}
			}
			err := c.mkdirAll(path.Dir(dst))
			if err == nil {
				err = c.writeFile(dst, treader)
			}
			if err != nil {
				if tr.stopOn(hdr.Name, "Cannot open", err) {
					return
				}
				continue
			}
			c.setMeta(dst, fs.FileMode(hdr.Mode), hdr.ModTime)
		}
	}
	// Directories get their times last: writing into them changed them.
	for i := len(dirs) - 1; i >= 0 && !c.stopped(); i-- {
		c.setMeta(dirs[i].p, dirs[i].perm, dirs[i].t)
	}
	for i, op := range operands {
		if !found[i] && !c.stopped() {
			tr.failf("%s: Not found in archive", op)
		}
	}
}

// stopOn reports a failed member; running out of room ends the run
// (stop is then true).
func (tr *tarRun) stopOn(name, what string, err error) (stop bool) {
	if tr.c.stopped() {
		tr.status = 2
		return true
	}
	tr.failf("%s: %s: %s", name, what, errText(err))
	if isSpaceError(err) {
		tr.c.errorf("Error is not recoverable: exiting now")
		tr.fatal = true
		return true
	}
	return false
}

func (tr *tarRun) notRecoverable(err error) {
	switch {
	case tr.c.stopped():
	case errors.Is(err, io.ErrUnexpectedEOF):
		tr.c.errorf("Unexpected EOF in archive")
	default:
		tr.c.errorf("%s", errText(err))
	}
	tr.c.errorf("Error is not recoverable: exiting now")
	tr.status, tr.fatal = 2, true
}

// list prints a member as tar -t does; with -v as
// "-rw-r--r-- user/user         4 2024-01-02 03:04 name".
func (tr *tarRun) list(w *bufio.Writer, hdr *tar.Header) {
	if !tr.o.verbose {
		w.WriteString(hdr.Name + "\n")
		return
	}
	mode := fs.FileMode(hdr.Mode).Perm()
	switch hdr.Typeflag {
	case tar.TypeDir:
		mode |= fs.ModeDir
	case tar.TypeSymlink:
		mode |= fs.ModeSymlink
	case tar.TypeChar:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case tar.TypeBlock:
		mode |= fs.ModeDevice
	case tar.TypeFifo:
		mode |= fs.ModeNamedPipe
	}
	owner := hdr.Uname
	if owner == "" {
		owner = strconv.Itoa(hdr.Uid)
	}
	group := hdr.Gname
	if group == "" {
		group = strconv.Itoa(hdr.Gid)
	}
	ug := owner + "/" + group
	size := strconv.FormatInt(hdr.Size, 10)
	// GNU tar right-aligns the size so that owner/group and size take 19
	// columns at least.
	pad := max(19-len(ug)-len(size), 1)
	name := hdr.Name
	switch hdr.Typeflag {
	case tar.TypeSymlink:
		name += " -> " + hdr.Linkname
	case tar.TypeLink:
		name += " link to " + hdr.Linkname
	}
	fmt.Fprintf(w, "%s %s%s%s %s %s\n", modeString(mode), ug, strings.Repeat(" ", pad), size,
		hdr.ModTime.Local().Format("2006-01-02 15:04"), name)
}

// typeRegA is the type flag of a regular file in pre-POSIX archives (a NUL
// byte), which readers still meet.
const typeRegA = '\x00'
