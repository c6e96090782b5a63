package shell

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"
	"unicode/utf8"
)

// fileHead is how much of a file file reads to classify it.
const fileHead = 64 << 10

func cmdFile(c *call) int {
	o, files, ok := c.getopt(c.args, "bihLzE", "", map[string]byte{
		"brief": 'b', "mime": 'i', "dereference": 'L', "no-dereference": 'h',
	})
	if !ok {
		fmt.Fprintln(c.stderr, "Usage: file [-bchikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]\n            [--mime-type] [-e testname] [-F separator]  [-f namefile]\n            [-m magicfiles] [-P name=value] file ...")
		return 1
	}
	if len(files) == 0 {
		fmt.Fprintln(c.stderr, "Usage: file [-bchikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]\n            [--mime-type] [-e testname] [-F separator]  [-f namefile]\n            [-m magicfiles] [-P name=value] file ...")
		return 1
	}
	width := 0
	for _, f := range files {
		if f == "-" {
			f = "/dev/stdin"
		}
		width = max(width, utf8.RuneCountInString(f)+1)
	}
	w := c.out()
	status := 0
	for _, f := range files {
		if c.stopped() {
			break
		}
		desc, mime, err := c.describe(f)
		if f == "-" {
			f = "/dev/stdin"
		}
		if err != nil {
			desc = fmt.Sprintf("cannot open `%s' (%s)", f, errText(err))
			mime = desc
			if o.has('E') {
				status = 1
			}
		}
		if o.has('i') {
			desc = mime
		}
		if !o.has('b') {
			label := f + ":"
			w.WriteString(label + strings.Repeat(" ", width-utf8.RuneCountInString(label)+1))
		}
		w.WriteString(desc + "\n")
	}
	return c.flush(w, status)
}

// describe classifies the file p as file(1) does, for the few kinds a
// sandbox meets: text (and its line terminators), scripts, JSON, HTML,
// images, PDF, archives, ELF and WebAssembly; "data" for the rest.
func (c *call) describe(p string) (desc, mime string, err error) {
	if p == "-" {
		head, err := io.ReadAll(io.LimitReader(c.stdin, fileHead))
		if err != nil {
			return "", "", err
		}
		if len(head) == 0 {
			return "empty", "inode/x-empty; charset=binary", nil
		}
		desc, mime = classify(head, nil, len(head) == fileHead)
		return desc, mime, nil
	}
	t, err := c.target(p)
	var fi fs.FileInfo
	if err == nil {
		fi, err = c.lstat(t)
	}
	if err != nil {
		return "", "", err
	}
	switch {
	case fi.IsDir():
		return "directory", "inode/directory; charset=binary", nil
	case t.dev != "":
		return "character special", "inode/chardevice; charset=binary", nil
	case !fi.Mode().IsRegular():
		return "special", "inode/x-special; charset=binary", nil
	case fi.Size() == 0:
		return "empty", "inode/x-empty; charset=binary", nil
	}
	f, err := c.sh.fs.open(c.ctx, t.rel)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	head := make([]byte, min(fi.Size(), fileHead))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", "", err
	}
	head = head[:n]
	var tail []byte
	if fi.Size() >= 4 {
		tail = make([]byte, 4)
		if _, err := f.ReadAt(tail, fi.Size()-4); err != nil {
			tail = nil
		}
	}
	desc, mime = classify(head, tail, fi.Size() > int64(len(head)))
	return desc, mime, nil
}

func classify(b, tail []byte, truncated bool) (string, string) {
	has := func(off int, magic string) bool {
		return len(b) >= off+len(magic) && string(b[off:off+len(magic)]) == magic
	}
	switch {
	case has(0, "\x89PNG\r\n\x1a\n"):
		return pngDesc(b), "image/png; charset=binary"
	case has(0, "\xff\xd8\xff"):
		return "JPEG image data", "image/jpeg; charset=binary"
	case has(0, "GIF87a") || has(0, "GIF89a"):
		s := "GIF image data, version " + string(b[3:6])
		if len(b) >= 10 {
			s += fmt.Sprintf(", %d x %d", binary.LittleEndian.Uint16(b[6:]), binary.LittleEndian.Uint16(b[8:]))
		}
		return s, "image/gif; charset=binary"
	case has(0, "%PDF-"):
		v := string(b[5:min(len(b), 8)])
		return "PDF document, version " + v, "application/pdf; charset=binary"
	case has(0, "\x1f\x8b"):
		return gzipDesc(b, tail), "application/gzip; charset=binary"
	case has(0, "BZh"):
		s := "bzip2 compressed data"
		if len(b) > 3 && b[3] >= '1' && b[3] <= '9' {
			s += fmt.Sprintf(", block size = %c00k", b[3])
		}
		return s, "application/x-bzip2; charset=binary"
	case has(0, "\xfd7zXZ\x00"):
		return "XZ compressed data", "application/x-xz; charset=binary"
	case has(0, "PK\x05\x06"):
		return "Zip archive data (empty)", "application/zip; charset=binary"
	case has(0, "PK\x03\x04"):
		s := "Zip archive data"
		if len(b) >= 10 {
			v := binary.LittleEndian.Uint16(b[4:])
			s += fmt.Sprintf(", at least v%d.%d to extract", v/10, v%10)
			switch binary.LittleEndian.Uint16(b[8:]) {
			case 0:
				s += ", compression method=store"
			case 8:
				s += ", compression method=deflate"
			}
		}
		return s, "application/zip; charset=binary"
	case has(257, "ustar  \x00"):
		return "POSIX tar archive (GNU)", "application/x-tar; charset=binary"
	case has(257, "ustar\x00"):
		return "POSIX tar archive", "application/x-tar; charset=binary"
	case has(0, "\x7fELF"):
		return elfDesc(b)
	case has(0, "\x00asm"):
		s := "WebAssembly (wasm) binary module"
		if len(b) >= 8 {
			s += fmt.Sprintf(" version 0x%x", binary.LittleEndian.Uint32(b[4:]))
			if binary.LittleEndian.Uint32(b[4:]) == 1 {
				s += " (MVP)"
			}
		}
		return s, "application/wasm; charset=binary"
	}
	return textDesc(b, truncated)
}

func pngDesc(b []byte) string {
	s := "PNG image data"
	if len(b) < 29 || string(b[12:16]) != "IHDR" {
		return s
	}
	wd, ht := binary.BigEndian.Uint32(b[16:]), binary.BigEndian.Uint32(b[20:])
	depth, color, interlace := b[24], b[25], b[28]
	colors := map[byte]string{0: "grayscale", 2: "RGB", 3: "colormap", 4: "gray+alpha", 6: "RGBA"}
	s += fmt.Sprintf(", %d x %d, %d-bit", wd, ht, depth)
	if name, ok := colors[color]; ok {
		if color == 0 {
			s += " " + name
		} else {
			s += "/color " + name
		}
	}
	if interlace == 1 {
		s += ", interlaced"
	} else {
		s += ", non-interlaced"
	}
	return s
}

func gzipDesc(b, tail []byte) string {
	s := "gzip compressed data"
	if len(b) < 10 {
		return s
	}
	flags := b[3]
	mtime := binary.LittleEndian.Uint32(b[4:])
	off := 10
	if flags&4 != 0 && len(b) >= off+2 { // FEXTRA
		off += 2 + int(binary.LittleEndian.Uint16(b[off:]))
	}
	if flags&8 != 0 && off < len(b) { // FNAME
		if end := bytes.IndexByte(b[off:], 0); end >= 0 {
			s += fmt.Sprintf(", was \"%s\"", b[off:off+end])
		}
	}
	if mtime != 0 {
		s += ", last modified: " + time.Unix(int64(mtime), 0).UTC().Format("Mon Jan _2 15:04:05 2006")
	}
	switch b[8] {
	case 2:
		s += ", max compression"
	case 4:
		s += ", max speed"
	}
	oses := map[byte]string{0: "FAT filesystem (MS-DOS, OS/2, NT)", 3: "Unix", 7: "Macintosh", 11: "NTFS filesystem (NT)"}
	if name, ok := oses[b[9]]; ok {
		s += ", from " + name
	}
	if len(tail) == 4 {
		s += fmt.Sprintf(", original size modulo 2^32 %d", binary.LittleEndian.Uint32(tail))
	}
	return s
}

func elfDesc(b []byte) (string, string) {
	if len(b) < 20 {
		return "ELF", "application/octet-stream; charset=binary"
	}
	class := map[byte]string{1: "32-bit", 2: "64-bit"}[b[4]]
	var order binary.ByteOrder = binary.LittleEndian
	endian := "LSB"
	if b[5] == 2 {
		order, endian = binary.BigEndian, "MSB"
	}
	typ, mime := "", "application/octet-stream"
	switch order.Uint16(b[16:]) {
	case 1:
		typ, mime = "relocatable", "application/x-object"
	case 2:
		typ, mime = "executable", "application/x-executable"
	case 3:
		typ, mime = "shared object", "application/x-sharedlib"
	case 4:
		typ, mime = "core file", "application/x-coredump"
	}
	machines := map[uint16]string{3: "Intel 80386", 40: "ARM", 62: "x86-64", 183: "ARM aarch64", 243: "UCB RISC-V", 8: "MIPS"}
	s := fmt.Sprintf("ELF %s %s %s", class, endian, typ)
	if m, ok := machines[order.Uint16(b[18:])]; ok {
		s += ", " + m
	}
	s += fmt.Sprintf(", version %d (SYSV)", b[6])
	return s, mime + "; charset=binary"
}

// scriptKinds names the interpreters of #! lines as file does.
var scriptKinds = map[string][2]string{
	"sh":      {"POSIX shell script", "text/x-shellscript"},
	"dash":    {"POSIX shell script", "text/x-shellscript"},
	"bash":    {"Bourne-Again shell script", "text/x-shellscript"},
	"zsh":     {"Paul Falstad's zsh script", "text/x-shellscript"},
	"python":  {"Python script", "text/x-script.python"},
	"python2": {"Python script", "text/x-script.python"},
	"python3": {"Python script", "text/x-script.python"},
	"perl":    {"Perl script text", "text/x-perl"},
	"ruby":    {"Ruby script", "text/x-ruby"},
	"node":    {"Node.js script", "application/javascript"},
	"awk":     {"awk or perl script", "text/x-awk"},
}

// textDesc describes text, or "data".
func textDesc(b []byte, truncated bool) (string, string) {
	if truncated {
		// Do not judge a multi-byte character the read cut in two.
		for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.Valid(b); i++ {
			b = b[:len(b)-1]
		}
	}
	bom := bytes.HasPrefix(b, []byte("\xef\xbb\xbf"))
	ascii, utf, latin := true, utf8.Valid(b), true
	for _, ch := range b {
		switch {
		case ch == 0 || ch < 7 || ch > 13 && ch < 32 && ch != 27 || ch == 127:
			return "data", "application/octet-stream; charset=binary"
		case ch >= 0x80:
			ascii = false
			if ch < 0xa0 {
				latin = false
			}
		}
	}
	var kind, charset string
	switch {
	case ascii:
		kind, charset = "ASCII text", "us-ascii"
	case utf && bom:
		kind, charset = "Unicode text, UTF-8 (with BOM) text", "utf-8"
	case utf:
		kind, charset = "Unicode text, UTF-8 text", "utf-8"
	case latin:
		kind, charset = "ISO-8859 text", "iso-8859-1"
	default:
		kind, charset = "Non-ISO extended-ASCII text", "unknown-8bit"
	}
	mime := "text/plain"
	body := bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	lower := strings.ToLower(string(trimmed[:min(len(trimmed), 64)]))
	switch {
	case bytes.HasPrefix(body, []byte("#!")):
		line, _, _ := bytes.Cut(body[2:], []byte("\n"))
		words := strings.Fields(string(line))
		prog := ""
		if len(words) > 0 {
			prog = path.Base(words[0])
			if prog == "env" && len(words) > 1 {
				prog = words[1]
			}
		}
		if k, ok := scriptKinds[strings.TrimRight(prog, "0123456789.")]; ok || scriptKinds[prog] != [2]string{} {
			if !ok {
				k = scriptKinds[prog]
			}
			kind, mime = k[0]+", "+kind+" executable", k[1]
		} else if len(words) > 0 {
			kind = "a " + strings.TrimSpace(string(line)) + " script, " + kind + " executable"
			mime = "text/plain"
		}
	case !truncated && (len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')) && json.Valid(body):
		return "JSON text data", "application/json; charset=" + charset
	case strings.HasPrefix(lower, "<!doctype html") || strings.HasPrefix(lower, "<html") || strings.HasPrefix(lower, "<head") || strings.HasPrefix(lower, "<body"):
		kind, mime = "HTML document, "+kind, "text/html"
	case strings.HasPrefix(lower, "<?xml"):
		kind, mime = "XML 1.0 document, "+kind, "text/xml"
	}
	return kind + lineNotes(b), mime + "; charset=" + charset
}

// lineNotes is file's remark on long lines and line terminators.
func lineNotes(b []byte) string {
	var crlf, cr, lf bool
	longest, cur := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\r':
			if i+1 < len(b) && b[i+1] == '\n' {
				crlf = true
				i++
			} else {
				cr = true
			}
			cur = 0
		case '\n':
			lf = true
			cur = 0
		default:
			cur++
			longest = max(longest, cur)
		}
	}
	var notes []string
	if longest > 300 {
		notes = append(notes, fmt.Sprintf("with very long lines (%d)", longest))
	}
	var term []string
	if crlf {
		term = append(term, "CRLF")
	}
	if cr {
		term = append(term, "CR")
	}
	if lf && (crlf || cr) {
		term = append(term, "LF")
	}
	switch {
	case len(term) > 0:
		notes = append(notes, "with "+strings.Join(term, ", ")+" line terminators")
	case !lf:
		notes = append(notes, "with no line terminators")
	}
	if len(notes) == 0 {
		return ""
	}
	return ", " + strings.Join(notes, ", ")
}
