package shell

import (
	"strings"
	"testing"
)

func TestFile(t *testing.T) {
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x03\x00\x00\x00\x02\x08\x06\x00\x00\x00"
	files := map[string]string{
		"a.txt": "one\n", "empty": "", "j.json": "{\"a\": 1}\n", "crlf.txt": "a\r\nb\r\n", "u.txt": "h\u00e9llo\n",
		"p.py": "#!/usr/bin/env python3\nprint(1)\n", "s.sh": "#!/bin/sh\necho\n", "bin.dat": "\x00\x01\x02",
		"i.png": png, "g.gif": "GIF89a\x05\x00\x07\x00" + strings.Repeat("\x00", 10), "x.pdf": "%PDF-1.4\n",
		"h.html": "<html>\n", "cr.txt": "a\rb", "nnl": "no newline", "d/": "",
		"long.txt": strings.Repeat("w", 400) + "\n",
	}
	runTable(t, []tc{
		{name: "kinds", files: files, cmd: "file a.txt d empty j.json crlf.txt u.txt p.py s.sh bin.dat i.png g.gif x.pdf h.html cr.txt nnl long.txt nope", stdout: "" +
			"a.txt:    ASCII text\n" +
			"d:        directory\n" +
			"empty:    empty\n" +
			"j.json:   JSON text data\n" +
			"crlf.txt: ASCII text, with CRLF line terminators\n" +
			"u.txt:    Unicode text, UTF-8 text\n" +
			"p.py:     Python script, ASCII text executable\n" +
			"s.sh:     POSIX shell script, ASCII text executable\n" +
			"bin.dat:  data\n" +
			"i.png:    PNG image data, 3 x 2, 8-bit/color RGBA, non-interlaced\n" +
			"g.gif:    GIF image data, version 89a, 5 x 7\n" +
			"x.pdf:    PDF document, version 1.4\n" +
			"h.html:   HTML document, ASCII text\n" +
			"cr.txt:   ASCII text, with CR line terminators\n" +
			"nnl:      ASCII text, with no line terminators\n" +
			"long.txt: ASCII text, with very long lines (400)\n" +
			"nope:     cannot open `nope' (No such file or directory)\n"},
		{name: "brief", files: files, cmd: "file -b a.txt", stdout: "ASCII text\n"},
		{name: "mime", files: files, cmd: "file -i a.txt j.json i.png empty d", stdout: "a.txt:  text/plain; charset=us-ascii\nj.json: application/json; charset=us-ascii\ni.png:  image/png; charset=binary\nempty:  inode/x-empty; charset=binary\nd:      inode/directory; charset=binary\n"},
		{name: "archives", files: files, cmd: "tar cf x.tar a.txt && gzip -k a.txt && file x.tar a.txt.gz", match: `^x\.tar:    POSIX tar archive\na\.txt\.gz: gzip compressed data, was "a\.txt", last modified: .*, original size modulo 2\^32 4\n$`},
		{name: "stdin", cmd: "echo hi | file -", stdout: "/dev/stdin: ASCII text\n"},
	})
}
