package shell

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"path"
	"strings"
)

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
