package shell

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
)

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
