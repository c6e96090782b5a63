package shell

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The archive commands: tar, gzip/gunzip/zcat, zip and unzip, on the
// standard library's archive/tar, compress/gzip and archive/zip.
//
// What an archive holds is never trusted. Every member is written through
// c.writeFile and c.mkdirAll, so it lands inside the workspace, at most
// MaxFileBytes long and within the session quota, and is streamed from the
// archive to the file (a decompression bomb stops at the cap, never
// inflated in memory). A member name that is absolute loses its leading
// "/" (with GNU's message); one with a ".." component is refused (tar, as
// GNU tar does) or has it removed (unzip, as Info-ZIP does). Links,
// devices and FIFOs are never created: the workspace has none (its file
// system refuses them), so such members are reported and skipped, and the
// command fails at the end as GNU tar does for any error. Running out of
// quota or of workspace entries ends an extraction at once with a clear
// message, so that an archive of a million members costs one failure,
// not a million.

func init() {
	commands["tar"] = cmdTar
	commands["gzip"] = cmdGzip
	commands["gunzip"] = cmdGzip
	commands["zcat"] = cmdGzip
	commands["zip"] = cmdZip
	commands["unzip"] = cmdUnzip
}

// sandboxUser is the owner every file of the workspace shows (ls -l prints
// "user user"): archives record it rather than the gateway's account.
const (
	sandboxUser = "user"
	sandboxUID  = 1000
)

// errNoLinks explains the refusal of a link member.
const errNoLinks = "links are not supported in this sandbox's workspace"

// isSpaceError reports whether err is the workspace running out of bytes
// or entries: extraction stops there. (Under WASI the quota's refusal may
// come as EIO, wazero having no ENOSPC to give; an I/O error is reason
// enough to stop anyway.)
func isSpaceError(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, syscall.EIO)
}

// pipeToFile writes the file p with what produce writes into the writer it
// is given, streaming (the writer side runs here, c.writeFile in a
// goroutine that ends before pipeToFile returns). A refused write (quota,
// cap) makes produce's writes fail; a failed produce leaves no file.
func (c *call) pipeToFile(p string, produce func(w io.Writer) error) (werr, perr error) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := c.writeFile(p, pr)
		pr.CloseWithError(errWriteEnded)
		done <- err
	}()
	perr = produce(pw)
	if perr != nil {
		pw.CloseWithError(perr)
	} else {
		pw.Close()
	}
	werr = <-done
	if errors.Is(perr, errWriteEnded) && werr != nil {
		perr = nil // the write's own error says why
	}
	return werr, perr
}

var errWriteEnded = errors.New("write ended")

// setMeta gives the extracted file p the permission bits and time it had
// in the archive, within what chmod allows (nothing group- or
// world-writable, as a umask of 022 does). Failures are ignored, as GNU
// tar run by a user does for what it may not change.
func (c *call) setMeta(p string, perm fs.FileMode, mtime time.Time) {
	t, err := c.target(p)
	if err != nil || t.dev != "" || t.root {
		return
	}
	if perm != 0 {
		mode := perm.Perm() &^ hostForbidden
		if fi, err := c.sh.fs.lstat(c.ctx, t.rel); err == nil && fi.IsDir() {
			mode |= dirOwnerBits
		}
		c.sh.fs.chmod(c.ctx, t.rel, mode)
	}
	if !mtime.IsZero() {
		c.sh.fs.touch(c.ctx, t.rel, mtime)
	}
}

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

// ---- tar ----

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
				if rerr, werr := copyOut(out, treader); werr != nil {
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

// ---- gzip, gunzip, zcat ----

func cmdGzip(c *call) int {
	o, files, ok := c.getopt(c.args, "cdfklnNqrtvV123456789", "S", map[string]byte{
		"stdout": 'c', "to-stdout": 'c', "decompress": 'd', "uncompress": 'd', "force": 'f', "keep": 'k',
		"list": 'l', "no-name": 'n', "name": 'N', "quiet": 'q', "recursive": 'r', "test": 't',
		"verbose": 'v', "fast": '1', "best": '9', "suffix": 'S',
	})
	if !ok {
		fmt.Fprintf(c.stderr, "Try `%s --help' for more information.\n", c.name)
		return 1
	}
	g := &gzipRun{c: c, o: o, suffix: o.last('S', ".gz"), level: gzip.DefaultCompression}
	g.decompress = c.name != "gzip" || o.has('d') || o.has('t') || o.has('l')
	g.toStdout = c.name == "zcat" || o.has('c') || o.has('t') || o.has('l')
	c.name = "gzip" // gunzip and zcat are gzip, and say so
	for d := byte('1'); d <= '9'; d++ {
		if o.has(d) {
			g.level = int(d - '0')
		}
	}
	if g.suffix == "" {
		c.errorf("invalid suffix ''")
		return 1
	}
	if o.has('l') {
		fmt.Fprintln(c.stdout, "         compressed        uncompressed  ratio uncompressed_name")
	}
	if len(files) == 0 {
		files = []string{"-"}
	}
	for _, f := range files {
		if c.stopped() {
			break
		}
		g.one(f, true)
	}
	return g.status
}

type gzipRun struct {
	c          *call
	o          opts
	suffix     string
	level      int
	decompress bool
	toStdout   bool
	status     int
}

// warn records a warning (status 2 unless an error gave 1).
func (g *gzipRun) warn(format string, args ...any) {
	if !g.o.has('q') {
		g.c.errorf(format, args...)
	}
	if g.status == 0 {
		g.status = 2
	}
}

func (g *gzipRun) fail(format string, args ...any) {
	g.c.errorf(format, args...)
	g.status = 1
}

func (g *gzipRun) one(f string, top bool) {
	c := g.c
	if f == "-" {
		g.stream(f, c.stdin, c.stdout)
		return
	}
	t, err := c.target(f)
	var info fs.FileInfo
	if err == nil {
		info, err = c.lstat(t)
	}
	if err != nil {
		g.fail("%s: %s", f, errText(err))
		return
	}
	switch {
	case info.IsDir() && g.o.has('r'):
		infos, err := c.readDir(f)
		if err != nil {
			g.fail("%s: %s", f, errText(err))
			return
		}
		for _, sub := range infos {
			if c.stopped() {
				return
			}
			g.one(strings.TrimSuffix(f, "/")+"/"+sub.Name(), false)
		}
		return
	case info.IsDir():
		g.warn("%s is a directory -- ignored", f)
		return
	case t.dev != "":
		r, done, err := c.openInput(f)
		if err != nil {
			g.fail("%s: %s", f, errText(err))
			return
		}
		g.stream(f, r, c.stdout)
		done()
		return
	case !info.Mode().IsRegular():
		g.warn("%s is not a directory or a regular file - ignored", f)
		return
	}
	if g.toStdout {
		r, done, err := c.openInput(f)
		if err != nil {
			g.fail("%s: %s", f, errText(err))
			return
		}
		defer done()
		if g.o.has('l') {
			g.list(f, r, info.Size())
			return
		}
		g.stream(f, r, c.stdout)
		return
	}
	var dst string
	if g.decompress {
		base, ok := g.strip(f)
		if !ok {
			if top || !g.o.has('r') {
				g.warn("%s: unknown suffix -- ignored", f)
			}
			return
		}
		dst = base
	} else {
		if strings.HasSuffix(f, g.suffix) {
			if top && !g.o.has('q') {
				// A warning GNU gzip does not fail for.
				c.errorf("%s already has %s suffix -- unchanged", f, g.suffix)
			}
			return
		}
		dst = f + g.suffix
	}
	if !g.o.has('f') {
		if _, err := c.stat(dst); err == nil {
			g.warn("%s already exists;\tnot overwritten", dst)
			return
		}
	}
	r, done, err := c.openInput(f)
	if err != nil {
		g.fail("%s: %s", f, errText(err))
		return
	}
	var perr error
	werr, perr := c.pipeToFile(dst, func(w io.Writer) error {
		if g.decompress {
			return g.inflate(r, w)
		}
		return g.deflate(path.Base(f), info.ModTime(), r, w)
	})
	done()
	switch {
	case perr != nil:
		g.reportRead(f, perr)
		return
	case werr != nil:
		g.fail("%s: %s", dst, errText(werr))
		return
	}
	c.setMeta(dst, info.Mode().Perm(), info.ModTime())
	if g.o.has('v') {
		fmt.Fprintf(c.stderr, "%s:\t -- replaced with %s\n", f, dst)
	}
	if !g.o.has('k') {
		if err := c.sh.fs.remove(c.ctx, t.rel); err != nil {
			g.fail("%s: %s", f, errText(err))
		}
	}
}

// strip returns the name f decompresses to: without its suffix.
func (g *gzipRun) strip(f string) (string, bool) {
	base := path.Base(f)
	for _, s := range []string{g.suffix, ".gz", "-gz", ".z", "-z", "_z", ".Z"} {
		if strings.HasSuffix(base, s) && len(base) > len(s) {
			return strings.TrimSuffix(f, s), true
		}
	}
	if strings.HasSuffix(base, ".tgz") && len(base) > 4 {
		return strings.TrimSuffix(f, ".tgz") + ".tar", true
	}
	return "", false
}

func (g *gzipRun) reportRead(f string, err error) {
	switch {
	case g.c.stopped():
		g.status = 1
	case errors.Is(err, gzip.ErrHeader):
		g.fail("%s: not in gzip format", f)
	case errors.Is(err, io.ErrUnexpectedEOF):
		g.fail("%s: unexpected end of file", f)
	case errors.Is(err, gzip.ErrChecksum), errors.As(err, new(flate.CorruptInputError)):
		g.fail("%s: invalid compressed data--format violated", f)
	default:
		g.fail("%s: %s", f, errText(err))
	}
}

// stream compresses or decompresses r to w (stdout).
func (g *gzipRun) stream(name string, r io.Reader, w io.Writer) {
	if name == "-" {
		name = "stdin"
	}
	if g.o.has('l') {
		g.list(name, r, -1)
		return
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	var err error
	switch {
	case g.o.has('t'):
		err = g.inflate(r, io.Discard)
	case g.decompress:
		err = g.inflate(r, bw)
	default:
		err = g.deflate("", time.Time{}, r, bw)
	}
	if err == nil {
		if ferr := bw.Flush(); ferr != nil {
			err = writeErr{ferr}
		}
	}
	if err != nil {
		var we writeErr
		if errors.As(err, &we) {
			g.status = g.c.writeFailed(we.err)
			return
		}
		g.reportRead(name, err)
	}
}

// writeErr marks an error of the output, as opposed to the input.
type writeErr struct{ err error }

func (e writeErr) Error() string { return e.err.Error() }
func (e writeErr) Unwrap() error { return e.err }

type markWrites struct{ w io.Writer }

func (m markWrites) Write(p []byte) (int, error) {
	n, err := m.w.Write(p)
	if err != nil {
		err = writeErr{err}
	}
	return n, err
}

func (g *gzipRun) inflate(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return gzip.ErrHeader
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return gzip.ErrHeader
		}
		return err
	}
	defer zr.Close()
	_, err = io.Copy(markWrites{w}, &ctxReader{ctx: g.c.ctx, r: zr})
	return err
}

func (g *gzipRun) deflate(name string, mtime time.Time, r io.Reader, w io.Writer) error {
	zw, err := gzip.NewWriterLevel(markWrites{w}, g.level)
	if err != nil {
		return err
	}
	if !g.o.has('n') {
		zw.Name = name
		zw.ModTime = mtime
	}
	if _, err := io.Copy(zw, &ctxReader{ctx: g.c.ctx, r: r}); err != nil {
		return err
	}
	return zw.Close()
}

// list prints gzip -l's line for the compressed stream r of size csize
// (-1: count it). The uncompressed size is the trailer's (modulo 2^32),
// as gzip reads it.
func (g *gzipRun) list(name string, r io.Reader, csize int64) {
	var tail [8]byte
	var head []byte
	var n int64
	buf := make([]byte, 32<<10)
	for {
		k, err := r.Read(buf)
		if len(head) < 1024 {
			head = append(head, buf[:min(k, 1024-len(head))]...)
		}
		if k > 0 {
			n += int64(k)
			if k >= 8 {
				copy(tail[:], buf[k-8:k])
			} else {
				copy(tail[:], append(tail[k:], buf[:k]...))
			}
		}
		if err != nil {
			break
		}
	}
	if csize < 0 {
		csize = n
	}
	if n < 18 {
		g.fail("%s: not in gzip format", name)
		return
	}
	usize := int64(uint32(tail[4]) | uint32(tail[5])<<8 | uint32(tail[6])<<16 | uint32(tail[7])<<24)
	// gzip's ratio compares the deflated data alone, without the header
	// and the trailer.
	data := csize - gzipHeaderLen(head) - 8
	ratio := 0.0
	if usize > 0 {
		ratio = 100 * float64(usize-data) / float64(usize)
	}
	out := name
	if base, ok := g.strip(name); ok {
		out = base
	}
	fmt.Fprintf(g.c.stdout, "%19d %19d %5.1f%% %s\n", csize, usize, ratio, out)
}

// gzipHeaderLen is the length of the gzip header at the start of b.
func gzipHeaderLen(b []byte) int64 {
	if len(b) < 10 {
		return int64(len(b))
	}
	flags, off := b[3], 10
	if flags&4 != 0 && len(b) >= off+2 {
		off += 2 + int(binary.LittleEndian.Uint16(b[off:]))
	}
	for _, bit := range []byte{8, 16} { // FNAME, FCOMMENT
		if flags&bit != 0 && off < len(b) {
			if end := bytes.IndexByte(b[off:], 0); end >= 0 {
				off += end + 1
			}
		}
	}
	if flags&2 != 0 {
		off += 2
	}
	return int64(min(off, len(b)))
}

// ---- zip ----

// zipSmall is the size up to which zip compresses a file in memory first,
// so that it can store it instead when deflating does not make it smaller
// (as Info-ZIP does); larger files are deflated as they stream.
const zipSmall = 1 << 20

func cmdZip(c *call) int {
	o, operands, ok := c.getopt(c.args, "rqjvDX0123456789", "x", map[string]byte{
		"recurse-paths": 'r', "quiet": 'q', "junk-paths": 'j', "exclude": 'x', "no-dir-entries": 'D',
	})
	if !ok {
		return 16
	}
	if len(operands) == 0 {
		fmt.Fprintln(c.stderr, "zip error: Nothing to do! (no archive name)")
		return 16
	}
	zipName, files := operands[0], operands[1:]
	if path.Ext(path.Base(zipName)) == "" {
		zipName += ".zip"
	}
	level := flate.DefaultCompression
	for d := byte('0'); d <= '9'; d++ {
		if o.has(d) {
			level = int(d - '0')
		}
	}
	z := &zipRun{c: c, o: o, level: level, seen: map[string]bool{}}
	zt, err := c.target(zipName)
	if err != nil {
		fmt.Fprintf(c.stderr, "zip error: %s (%s)\n", errText(err), zipName)
		return 15
	}
	z.self = zt.rel
	// Collect what to add first: zip reports names not found before
	// writing anything.
	var adds []zipAdd
	for _, f := range files {
		if c.stopped() {
			return 1
		}
		before := len(adds)
		adds = z.collect(adds, f)
		if len(adds) == before && z.missing[f] {
			fmt.Fprintf(c.stderr, "\tzip warning: name not matched: %s\n", f)
		}
	}
	if len(adds) == 0 {
		fmt.Fprintf(c.stderr, "\nzip error: Nothing to do! (%s)\n", zipName)
		return 12
	}
	// An existing archive is updated: its other entries are kept.
	var old *zip.Reader
	var oldFile interface{ Close() error }
	if info, err := c.stat(zipName); err == nil && info.Mode().IsRegular() {
		f, err := c.sh.fs.open(c.ctx, zt.rel)
		if err == nil {
			oldFile = f
			old, err = zip.NewReader(f, info.Size())
			if err != nil {
				f.Close()
				fmt.Fprintf(c.stderr, "zip error: Zip file structure invalid (%s)\n", zipName)
				return 3
			}
		}
	}
	if oldFile != nil {
		defer oldFile.Close()
	}
	out := c.out()
	werr, perr := c.pipeToFile(zipName, func(w io.Writer) error {
		zw := zip.NewWriter(w)
		zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, z.level) })
		// A streamed entry's compressed size is known once the next one
		// starts: each line is printed then.
		var pending func()
		report := func() {
			if pending != nil {
				pending()
				pending = nil
			}
		}
		add := func(a zipAdd, verb string) error {
			if c.stopped() {
				return c.ctx.Err()
			}
			desc, err := z.write(zw, a)
			report()
			if err != nil {
				return err
			}
			if !o.has('q') {
				pending = func() { fmt.Fprintf(out, "%s: %s (%s)\n", verb, a.name, desc()) }
			}
			return nil
		}
		// An entry being replaced keeps its place, as zip updates it.
		byName := map[string]int{}
		for i, a := range adds {
			byName[a.name] = i
		}
		done := make([]bool, len(adds))
		if old != nil {
			for _, f := range old.File {
				if c.stopped() {
					return c.ctx.Err()
				}
				if i, ok := byName[f.Name]; ok && !done[i] {
					done[i] = true
					if err := add(adds[i], "updating"); err != nil {
						return err
					}
					continue
				}
				report()
				if err := zw.Copy(f); err != nil {
					return err
				}
			}
		}
		for i, a := range adds {
			if !done[i] {
				if err := add(a, "  adding"); err != nil {
					return err
				}
			}
		}
		err := zw.Close()
		report()
		return err
	})
	status := z.status
	switch {
	case c.stopped():
		status = 1
	case werr != nil:
		out.Flush()
		fmt.Fprintf(c.stderr, "zip I/O error: %s\nzip error: Output file write failure (write error on zip file)\n", errText(werr))
		return 14
	case perr != nil:
		out.Flush()
		fmt.Fprintf(c.stderr, "zip error: %s\n", errText(perr))
		return 18
	}
	return c.flush(out, status)
}

type zipRun struct {
	c       *call
	o       opts
	level   int
	self    string // the archive, never added to itself
	seen    map[string]bool
	missing map[string]bool
	status  int
}

type zipAdd struct {
	name string // the entry name
	rel  string // workspace-relative source
	info fs.FileInfo
}

// collect adds f (and, with -r, what is below it) to adds.
func (z *zipRun) collect(adds []zipAdd, f string) []zipAdd {
	c := z.c
	t, err := c.target(f)
	var info fs.FileInfo
	if err == nil && t.dev != "" {
		err = errNotRegular
	}
	if err == nil {
		info, err = c.lstat(t)
	}
	if err != nil {
		if z.missing == nil {
			z.missing = map[string]bool{}
		}
		z.missing[f] = true
		if !errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(c.stderr, "\tzip warning: %s: %s\n", f, errText(err))
			delete(z.missing, f)
			z.status = 18
		}
		return adds
	}
	name := strings.TrimLeft(path.Clean(f), "/")
	for strings.HasPrefix(name, "../") {
		name = name[3:]
	}
	return z.walk(adds, name, t.rel, info)
}

func (z *zipRun) walk(adds []zipAdd, name, rel string, info fs.FileInfo) []zipAdd {
	c := z.c
	if c.stopped() || rel == z.self {
		return adds
	}
	for _, pat := range z.o.vals['x'] {
		if ok, _ := path.Match(pat, name); ok {
			return adds
		}
	}
	switch {
	case info.IsDir():
		if name != "." && name != "" && !z.o.has('j') && !z.o.has('D') {
			adds = z.push(adds, zipAdd{name: name + "/", rel: rel, info: info})
		}
		if !z.o.has('r') {
			return adds
		}
		infos, err := c.sh.fs.readDir(c.ctx, rel)
		if err != nil {
			fmt.Fprintf(c.stderr, "\tzip warning: %s: %s\n", name, errText(err))
			z.status = 18
			return adds
		}
		for _, sub := range infos {
			subName := sub.Name()
			if name != "." && name != "" {
				subName = name + "/" + sub.Name()
			}
			adds = z.walk(adds, subName, joinRel(rel, sub.Name()), sub)
		}
	case info.Mode().IsRegular():
		if z.o.has('j') {
			name = path.Base(name)
		}
		adds = z.push(adds, zipAdd{name: name, rel: rel, info: info})
	default:
		fmt.Fprintf(c.stderr, "\tzip warning: %s: not added: not a regular file or directory (symbolic links are not followed)\n", name)
		z.status = 18
	}
	return adds
}

func (z *zipRun) push(adds []zipAdd, a zipAdd) []zipAdd {
	if z.seen[a.name] {
		return adds
	}
	z.seen[a.name] = true
	return append(adds, a)
}

// write adds one entry; desc describes it as zip does ("deflated 53%")
// once the entry is complete.
func (z *zipRun) write(zw *zip.Writer, a zipAdd) (desc func() string, err error) {
	c := z.c
	stored := func() string { return "stored 0%" }
	fh := &zip.FileHeader{Name: a.name, Modified: a.info.ModTime()}
	fh.SetMode(a.info.Mode())
	// CreateRaw writes the MS-DOS time fields as they are, and only they
	// carry the time to older readers.
	mt := a.info.ModTime()
	//lint:ignore SA1019 the fields CreateRaw writes
	fh.ModifiedDate = uint16(mt.Day() + int(mt.Month())<<5 + max(mt.Year()-1980, 0)<<9)
	//lint:ignore SA1019 the fields CreateRaw writes
	fh.ModifiedTime = uint16(mt.Second()/2 + mt.Minute()<<5 + mt.Hour()<<11)
	if a.info.IsDir() {
		fh.Method = zip.Store
		_, err := zw.CreateHeader(fh)
		return stored, err
	}
	f, err := c.sh.fs.open(c.ctx, a.rel)
	if err != nil {
		return stored, err
	}
	defer f.Close()
	r := &ctxReader{ctx: c.ctx, r: f}
	if z.level == 0 {
		fh.Method = zip.Store
		w, err := zw.CreateHeader(fh)
		if err != nil {
			return stored, err
		}
		_, err = io.Copy(w, r)
		return stored, err
	}
	if a.info.Size() <= zipSmall {
		data, err := io.ReadAll(io.LimitReader(r, zipSmall+1))
		if err != nil {
			return stored, err
		}
		var comp bytes.Buffer
		fw, _ := flate.NewWriter(&comp, z.level)
		fw.Write(data)
		fw.Close()
		fh.UncompressedSize64 = uint64(len(data))
		fh.CRC32 = crc32.ChecksumIEEE(data)
		if len(data) == 0 || comp.Len() >= len(data) {
			fh.Method = zip.Store
			fh.ReaderVersion = 10
			fh.CompressedSize64 = uint64(len(data))
			w, err := zw.CreateRaw(fh)
			if err == nil {
				_, err = w.Write(data)
			}
			return stored, err
		}
		fh.Method = zip.Deflate
		fh.ReaderVersion = 20
		fh.CompressedSize64 = uint64(comp.Len())
		w, err := zw.CreateRaw(fh)
		if err == nil {
			_, err = w.Write(comp.Bytes())
		}
		pct := zipPercent(int64(len(data)), int64(comp.Len()))
		return func() string { return fmt.Sprintf("deflated %d%%", pct) }, err
	}
	fh.Method = zip.Deflate
	w, err := zw.CreateHeader(fh)
	if err != nil {
		return stored, err
	}
	_, err = io.Copy(w, r)
	// zip.Writer fills in fh's sizes when the entry is closed.
	return func() string {
		return fmt.Sprintf("deflated %d%%", zipPercent(int64(fh.UncompressedSize64), int64(fh.CompressedSize64)))
	}, err
}

// zipPercent is the saving zip reports, rounded to the nearest percent.
func zipPercent(size, compressed int64) int64 {
	if size <= 0 || compressed >= size {
		return 0
	}
	return ((size-compressed)*200/size + 1) / 2
}

// ---- unzip ----

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
		rerr, werr := copyOut(u.w, &ctxReader{ctx: c.ctx, r: rc})
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

// typeRegA is the type flag of a regular file in pre-POSIX archives (a NUL
// byte), which readers still meet.
const typeRegA = '\x00'
