package shell

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"
)

// tarMember is one member of a test archive.
type tarMember struct {
	name, body, link string
	typ              byte
	mode             int64
	mtime            time.Time
}

// makeTar builds a tar archive (gzipped with gz).
func makeTar(t testing.TB, gz bool, members ...tarMember) string {
	t.Helper()
	var buf bytes.Buffer
	var out io.Writer = &buf
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		out = zw
	}
	tw := tar.NewWriter(out)
	for _, m := range members {
		typ := m.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := m.mode
		if mode == 0 {
			mode = 0o644
		}
		mt := m.mtime
		if mt.IsZero() {
			mt = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
		}
		hdr := &tar.Header{Name: m.name, Typeflag: typ, Mode: mode, Linkname: m.link, ModTime: mt, Uname: "user", Gname: "user"}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(m.body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(m.body))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		zw.Close()
	}
	return buf.String()
}

// makeZip builds a zip archive; a member whose name ends in "/" is a
// directory, one with link set a symbolic link.
func makeZip(t testing.TB, members ...tarMember) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, m := range members {
		fh := &zip.FileHeader{Name: m.name, Method: zip.Deflate, Modified: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)}
		mode := fs.FileMode(0o644)
		switch {
		case strings.HasSuffix(m.name, "/"):
			mode = fs.ModeDir | 0o755
		case m.link != "":
			mode = fs.ModeSymlink | 0o777
		}
		fh.SetMode(mode)
		w, err := zw.CreateHeader(fh)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(m.body + m.link))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func gzipped(s string) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(s))
	zw.Close()
	return buf.String()
}

func TestTar(t *testing.T) {
	tree := map[string]string{"a.txt": "one\ntwo\n", "d/b.txt": "bee\n", "d/e/empty": ""}
	list := "a.txt\nd/\nd/b.txt\nd/e/\nd/e/empty\n"
	old := makeTar(t, false,
		tarMember{name: "p/", typ: tar.TypeDir, mode: 0o755},
		tarMember{name: "p/x.sh", body: "echo x\n", mode: 0o755},
		tarMember{name: "p/q/r.txt", body: "r\n"})
	evil := makeTar(t, false,
		tarMember{name: "../up.txt", body: "up\n"},
		tarMember{name: "/abs.txt", body: "abs\n"},
		tarMember{name: "ok/../../x.txt", body: "x\n"},
		tarMember{name: "lnk", typ: tar.TypeSymlink, link: "/etc/passwd"},
		tarMember{name: "hard", typ: tar.TypeLink, link: "fine.txt"},
		tarMember{name: "fifo", typ: tar.TypeFifo},
		tarMember{name: "fine.txt", body: "fine\n"})
	runTable(t, []tc{
		{name: "create list", files: tree, cmd: "tar cf x.tar a.txt d && tar tf x.tar", stdout: list},
		{name: "create verbose", files: tree, cmd: "tar cvf x.tar a.txt d", stdout: list},
		{name: "old style gzip", files: tree, cmd: "tar czf x.tgz d && rm -r d && tar xzf x.tgz && cat d/b.txt && file x.tgz", match: `^bee\nx\.tgz: gzip compressed data`},
		{name: "dash style gzip", files: tree, cmd: "tar -czf x.tar.gz a.txt && tar -tzf x.tar.gz && tar -xf x.tar.gz -C out 2>&1; mkdir out && tar -xf x.tar.gz -C out && cat out/a.txt",
			stdout: "a.txt\ntar: out: Cannot open: No such file or directory\ntar: Error is not recoverable: exiting now\none\ntwo\n"},
		{name: "autodetect gzip", files: tree, cmd: "tar czf x.tgz a.txt && tar tf x.tgz", stdout: "a.txt\n"},
		{name: "list verbose", files: map[string]string{"o.tar": old}, cmd: "tar tvf o.tar",
			stdout: "drwxr-xr-x user/user         0 2024-01-02 03:04 p/\n-rwxr-xr-x user/user         7 2024-01-02 03:04 p/x.sh\n-rw-r--r-- user/user         2 2024-01-02 03:04 p/q/r.txt\n"},
		{name: "extract keeps mode and time", files: map[string]string{"o.tar": old}, cmd: "tar xf o.tar && ./p/x.sh && ls -l p/x.sh && find p -newer o.tar",
			match: `^x\n-rwxr-xr-x 1 user user 7 Jan  2  2024 p/x.sh\np/q\n$`}, // p/q was made now
		{name: "to stdout", files: map[string]string{"o.tar": old}, cmd: "tar xOf o.tar p/q/r.txt p/x.sh", stdout: "echo x\nr\n", gone: []string{"p"}},
		{name: "select members", files: map[string]string{"o.tar": old}, cmd: "tar xvf o.tar p/q && find p", stdout: "p/q/r.txt\np\np/q\np/q/r.txt\n"},
		{name: "strip components", files: map[string]string{"o.tar": old}, cmd: "mkdir s && tar xf o.tar --strip-components=1 -C s && find s | sort", stdout: "s\ns/q\ns/q/r.txt\ns/x.sh\n"},
		{name: "exclude", files: tree, cmd: "tar cf x.tar --exclude='*.txt' . && tar tf x.tar", stdout: "./\n./d/\n./d/e/\n./d/e/empty\n"},
		{name: "archive not in itself", files: tree, cmd: "tar cf x.tar a.txt && tar cf x.tar . && tar tf x.tar | grep -c x.tar", stdout: "0\n", code: 1, stderr: "tar: ./x.tar: file is the archive; not dumped\n"},
		{name: "stdin stdout", files: tree, cmd: "tar cf - d | tar tf -", stdout: "d/\nd/b.txt\nd/e/\nd/e/empty\n"},
		{name: "verbose to stderr with stdout archive", files: tree, cmd: "tar cvf - a.txt >/dev/null", stderr: "a.txt\n"},
		{name: "leading slash", files: tree, cmd: "tar cf x.tar /workspace/a.txt && tar tf x.tar", stdout: "workspace/a.txt\n", stderr: "tar: Removing leading `/' from member names\n"},
		{name: "evil members refused", files: map[string]string{"e.tar": evil}, cmd: "mkdir x && cd x && tar xf ../e.tar; echo $?; find . | sort",
			stdout: "2\n.\n./abs.txt\n./fine.txt\n", anyErr: true, gone: []string{"up.txt", "x.txt"}},
		{name: "evil messages", files: map[string]string{"e.tar": evil}, cmd: "tar xf e.tar 2>&1 >/dev/null | sort", stdout: strings.Join([]string{
			"tar: ../up.txt: Member name contains '..'",
			"tar: Exiting with failure status due to previous errors",
			"tar: Removing leading `/' from member names",
			"tar: fifo: Cannot mknod: Operation not permitted (no devices or FIFOs in this sandbox's workspace)",
			"tar: hard: Cannot hard link to 'fine.txt': links are not supported in this sandbox's workspace",
			"tar: lnk: Cannot create symlink to '/etc/passwd': links are not supported in this sandbox's workspace",
			"tar: ok/../../x.txt: Member name contains '..'", ""}, "\n")},
		{name: "no mode", cmd: "tar", stderr: "tar: You must specify one of the '-Acdtrux', '--delete' or '--test-label' options", code: 2},
		{name: "two modes", cmd: "tar -ctf x", stderr: "tar: You may not specify more than one", code: 2},
		{name: "empty create", cmd: "tar cf x.tar", stderr: "tar: Cowardly refusing to create an empty archive", code: 2, gone: []string{"x.tar"}},
		{name: "missing file", files: tree, cmd: "tar cf x.tar nope a.txt; tar tf x.tar", stdout: "a.txt\n",
			stderr: "tar: nope: Cannot stat: No such file or directory\ntar: Exiting with failure status due to previous errors\n"},
		{name: "not found in archive", files: map[string]string{"o.tar": old}, cmd: "tar tf o.tar nope", code: 2,
			stderr: "tar: nope: Not found in archive\ntar: Exiting with failure status due to previous errors\n"},
		{name: "not a tar", files: map[string]string{"bad": "this is not a tar archive\n"}, cmd: "tar tf bad", code: 2,
			stderr: "tar: This does not look like a tar archive\ntar: Exiting with failure status due to previous errors\n"},
		{name: "missing archive", cmd: "tar xf nope.tar", code: 2,
			stderr: "tar: nope.tar: Cannot open: No such file or directory\ntar: Error is not recoverable: exiting now\n"},
		{name: "truncated", files: map[string]string{"t.tar": old[:1028]}, cmd: "tar tf t.tar", stdout: "p/\np/x.sh\n", code: 2, stderr: "tar: Unexpected EOF in archive"},
		{name: "xz refused", files: tree, cmd: "tar cJf x.txz d", stderr: "xz compression (-J) is not available", code: 2},
		// GNU tar's "tar cjf - a.txt" (bzip2 is read, not written).
		{name: "bzip2 read", files: map[string]string{"a.tbz": "\x42\x5a\x68\x39\x31\x41\x59\x26\x53\x59\x6b\x8f\x3d\xa3\x00\x00\x74\x7b\x84\xca\x10\x00\x50\x40\x01\x6f\x80\x00\x08\x62\x01\x9e\xc0\x00\x00\x80\x08\x20\x00\x75\x0d\x4c\x51\xe9\x00\x0d\xa4\x68\xf2\x82\x4a\x9b\x48\xf5\x03\x4d\x01\xa0\x1c\x7d\xd6\x0c\xc8\x40\xf5\x80\x91\x39\xda\x41\xc8\x98\xd4\x92\x08\x2e\x68\xc4\x6f\x85\x1b\x47\x09\x56\xf0\x13\x7b\x93\x2d\x18\x19\xa9\x31\x29\x2d\x4e\x68\x1a\x9e\x58\x75\xf4\x30\xa3\xca\x27\x67\xd5\xe3\x60\x89\x20\xfc\x5d\xc9\x14\xe1\x42\x41\xae\x3c\xf6\x8c"}, cmd: "tar tvjf a.tbz && tar xf a.tbz && cat a.txt",
			stdout: "-rw-r--r-- user/user         8 2024-01-02 03:04 a.txt\none\ntwo\n"},
		{name: "xz refused on read", files: map[string]string{"x.txz": "\xfd7zXZ\x00rest"}, cmd: "tar xf x.txz", code: 2,
			stderr: "tar: xz compression is not available in this sandbox (gzip and bzip2 are)\ntar: Error is not recoverable: exiting now\n"},
		{name: "gzip flag on plain tar", files: map[string]string{"o.tar": old}, cmd: "tar tzf o.tar", stderr: "o.tar: not in gzip format", code: 2},
		{name: "keep old files", files: map[string]string{"o.tar": old, "p/x.sh": "mine\n"}, cmd: "tar xkf o.tar", code: 2,
			stderr: "tar: p/x.sh: Cannot open: File exists", after: map[string]string{"p/x.sh": "mine\n", "p/q/r.txt": "r\n"}},
	})
}

// A member that inflates beyond MaxFileBytes is refused, streamed: the
// rest of the archive still extracts.
func TestTarBombStopsAtTheCap(t *testing.T) {
	e := newEnv(t, 0, 1<<20, nil)
	bomb := makeTar(t, true,
		tarMember{name: "big", body: strings.Repeat("\x00", 8<<20)},
		tarMember{name: "small.txt", body: "small\n"})
	if len(bomb) > 100<<10 {
		t.Fatalf("the bomb is %d bytes compressed", len(bomb))
	}
	e.put(map[string]string{"b.tgz": bomb})
	_, stderr, code := e.run("tar xzf b.tgz")
	if code != 2 || !strings.Contains(stderr, "tar: big: Cannot open: File too large") {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
	if _, ok := e.file("big"); ok {
		t.Error("the oversized member was written")
	}
	if got, _ := e.file("small.txt"); got != "small\n" {
		t.Errorf("small.txt = %q", got)
	}
	if _, stderr, code := e.run("gunzip -c b.tgz | wc -c; zcat b.tgz > out.tar"); code == 0 || !strings.Contains(stderr, "File too large") {
		t.Errorf("zcat > file over the cap: code %d, stderr %q", code, stderr)
	}
}

// Running out of quota ends an extraction at once, with a clear message,
// however many members are left.
func TestExtractionStopsAtTheQuota(t *testing.T) {
	e := newEnv(t, 64<<10, 0, nil)
	if _, _, code := e.run("seq 1 20000 > probe"); code == 0 {
		t.Skip("this harness does not enforce the workspace quota")
	}
	e.run("rm -f probe")
	var members []tarMember
	for i := range 5 {
		members = append(members, tarMember{name: "big" + string(rune('0'+i)), body: strings.Repeat("z", 20<<10)})
	}
	members = append(members, tarMember{name: "small", body: "s"})
	e.put(map[string]string{"q.tgz": makeTar(t, true, members...)})
	_, stderr, code := e.run("tar xzf q.tgz")
	if code != 2 || !strings.Contains(stderr, "Cannot open") || !strings.HasSuffix(stderr, "tar: Error is not recoverable: exiting now\n") {
		t.Errorf("tar: code %d, stderr %q", code, stderr)
	}
	if _, ok := e.file("small"); ok {
		t.Error("extraction went on after the quota refused a member")
	}
	e.run("rm -f big*")
	e.put(map[string]string{"q.zip": makeZip(t, members...)})
	_, stderr, code = e.run("unzip -q q.zip")
	if code != 50 || !strings.Contains(stderr, "unzip:  extraction stopped: no room left in the workspace") {
		t.Errorf("unzip: code %d, stderr %q", code, stderr)
	}
	if _, ok := e.file("small"); ok {
		t.Error("unzip went on after the quota refused a member")
	}
}

func TestGzip(t *testing.T) {
	f := map[string]string{"a.txt": "one\ntwo\n", "d/b.txt": "bee\n"}
	runTable(t, []tc{
		{name: "replace", files: f, cmd: "gzip a.txt && ls && gunzip a.txt.gz && ls && cat a.txt", stdout: "a.txt.gz\nd\na.txt\nd\none\ntwo\n"},
		{name: "keep", files: f, cmd: "gzip -k a.txt && ls", stdout: "a.txt\na.txt.gz\nd\n"},
		{name: "stdout", files: f, cmd: "gzip -c a.txt | gunzip", stdout: "one\ntwo\n", after: map[string]string{"a.txt": "one\ntwo\n"}},
		{name: "pipe", cmd: "echo hi | gzip | zcat", stdout: "hi\n"},
		{name: "levels", files: f, cmd: "gzip -9c a.txt | gzip -dc; gzip -1 -c a.txt | zcat", stdout: "one\ntwo\none\ntwo\n"},
		{name: "zcat several", files: f, cmd: "gzip -k a.txt d/b.txt && zcat a.txt.gz d/b.txt.gz", stdout: "one\ntwo\nbee\n"},
		{name: "recursive", files: f, cmd: "gzip -r d && find d -type f", stdout: "d/b.txt.gz\n"},
		{name: "exists", files: map[string]string{"a.txt": "x", "a.txt.gz": "y"}, cmd: "gzip a.txt", code: 2,
			stderr: "gzip: a.txt.gz already exists;\tnot overwritten\n", after: map[string]string{"a.txt": "x"}},
		{name: "force", files: map[string]string{"a.txt": "x\n", "a.txt.gz": "y"}, cmd: "gzip -f a.txt && zcat a.txt.gz", stdout: "x\n", gone: []string{"a.txt"}},
		{name: "has suffix", files: map[string]string{"a.gz": "x"}, cmd: "gzip a.gz", stderr: "gzip: a.gz already has .gz suffix -- unchanged\n"},
		{name: "directory", files: f, cmd: "gzip d", code: 2, stderr: "gzip: d is a directory -- ignored\n"},
		{name: "missing", cmd: "gzip nope", code: 1, stderr: "gzip: nope: No such file or directory\n"},
		{name: "unknown suffix", files: f, cmd: "gunzip a.txt", code: 2, stderr: "gzip: a.txt: unknown suffix -- ignored\n"},
		{name: "not gzip", files: map[string]string{"bad.gz": "notgz\n"}, cmd: "gunzip bad.gz", code: 1, stderr: "gzip: bad.gz: not in gzip format\n", after: map[string]string{"bad.gz": "notgz\n"}},
		{name: "truncated", files: map[string]string{"t.gz": gzipped(strings.Repeat("abc", 100))[:20]}, cmd: "zcat t.gz >/dev/null", code: 1, stderr: "gzip: t.gz: unexpected end of file\n"},
		{name: "test", files: map[string]string{"g.gz": gzipped("x\n")}, cmd: "gzip -t g.gz", stdout: ""},
		{name: "list", files: map[string]string{"s.gz": gzipped("hello\n")}, cmd: "gzip -l s.gz",
			match: `^         compressed        uncompressed  ratio uncompressed_name\n +\d+ +6 +-?\d+\.\d% s\n$`},
		{name: "tgz suffix", files: map[string]string{"x.tgz": gzipped("tar")}, cmd: "gunzip x.tgz && cat x.tar", stdout: "tar"},
	})
}

func TestZipUnzip(t *testing.T) {
	tree := map[string]string{"a.txt": "one\ntwo\n", "d/b.txt": "bee\n", "d/e/empty": "", "big.txt": strings.Repeat("line of text\n", 500)}
	evil := makeZip(t,
		tarMember{name: "../up.txt", body: "up\n"},
		tarMember{name: "/abs.txt", body: "abs\n"},
		tarMember{name: "lnk", link: "/etc/passwd"},
		tarMember{name: "fine.txt", body: "fine\n"})
	runTable(t, []tc{
		{name: "zip -r", files: tree, cmd: "zip -r z.zip a.txt d", stdout: "  adding: a.txt (stored 0%)\n  adding: d/ (stored 0%)\n  adding: d/b.txt (stored 0%)\n  adding: d/e/ (stored 0%)\n  adding: d/e/empty (stored 0%)\n"},
		{name: "zip deflates", files: tree, cmd: "zip z big.txt && ls z.zip", match: `^  adding: big\.txt \(deflated 9\d%\)\nz\.zip\n$`},
		{name: "zip update", files: tree, cmd: "zip -q z.zip a.txt d/b.txt && zip z.zip a.txt && unzip -l z.zip | awk '{print $4}'", stdout: "updating: a.txt (stored 0%)\n\nName\n----\na.txt\nd/b.txt\n\n\n"},
		{name: "zip -j", files: tree, cmd: "zip -qjr z.zip d && unzip -l z.zip | grep -c txt", stdout: "1\n"},
		{name: "zip missing", files: tree, cmd: "zip z.zip nope", code: 12, stderr: "\tzip warning: name not matched: nope\n\nzip error: Nothing to do! (z.zip)\n", gone: []string{"z.zip"}},
		{name: "unzip", files: tree, cmd: "zip -qr z.zip a.txt d big.txt && mkdir o && cd o && unzip ../z.zip && cat d/b.txt && cmp big.txt ../big.txt",
			stdout: "Archive:  ../z.zip\n extracting: a.txt                   \n   creating: d/\n extracting: d/b.txt                 \n   creating: d/e/\n extracting: d/e/empty               \n  inflating: big.txt                 \nbee\n"},
		{name: "unzip -l", files: map[string]string{"z.zip": makeZip(t, tarMember{name: "d/"}, tarMember{name: "d/x", body: "12345"})}, cmd: "unzip -l z.zip",
			stdout: "Archive:  z.zip\n  Length      Date    Time    Name\n---------  ---------- -----   ----\n        0  2024-01-02 03:04   d/\n        5  2024-01-02 03:04   d/x\n---------                     -------\n        5                     2 files\n"},
		{name: "unzip -d -q", files: map[string]string{"z.zip": makeZip(t, tarMember{name: "x", body: "X"})}, cmd: "unzip -q z.zip -d out/sub && cat out/sub/x", stdout: "X"},
		{name: "unzip -d verbose", files: map[string]string{"z.zip": makeZip(t, tarMember{name: "averyveryverylongfilenamethatislong.txt", body: "X"})}, cmd: "unzip z.zip -d o",
			stdout: "Archive:  z.zip\n  inflating: o/averyveryverylongfilenamethatislong.txt  \n"},
		{name: "unzip -p", files: map[string]string{"z.zip": makeZip(t, tarMember{name: "x", body: "X\n"}, tarMember{name: "y", body: "Y\n"})}, cmd: "unzip -p z.zip y x", stdout: "X\nY\n"},
		{name: "unzip existing", files: map[string]string{"z.zip": makeZip(t, tarMember{name: "x", body: "new"}), "x": "old"}, cmd: "unzip z.zip", code: 1,
			stdout: "Archive:  z.zip\n", stderr: "replace x? [y]es, [n]o, [A]ll, [N]one, [r]ename:  NULL\n(EOF or read error, treating as \"[N]one\" ...)\n", after: map[string]string{"x": "old"}},
		{name: "unzip -o", files: map[string]string{"z.zip": makeZip(t, tarMember{name: "x", body: "new"}), "x": "old"}, cmd: "unzip -oq z.zip", after: map[string]string{"x": "new"}},
		{name: "unzip evil", files: map[string]string{"e.zip": evil}, cmd: "mkdir x && cd x && unzip -q ../e.zip; echo $?; find . | sort", stdout: "1\n.\n./abs.txt\n./fine.txt\n./up.txt\n",
			stderr: "warning:  skipped \"../\" path component(s) in ../up.txt\nwarning:  stripped absolute path spec from /abs.txt\nwarning:  lnk: symbolic link not created: links are not supported in this sandbox's workspace\n"},
		{name: "unzip not a zip", files: tree, cmd: "unzip a.txt", code: 9, anyErr: true, stdout: ""},
		{name: "unzip missing", cmd: "unzip nope", code: 9, stderr: "unzip:  cannot find or open nope, nope.zip or nope.ZIP.\n"},
		{name: "unzip member not matched", files: map[string]string{"z.zip": makeZip(t, tarMember{name: "x", body: "X"})}, cmd: "unzip -q z.zip nope", code: 11, stderr: "caution: filename not matched:  nope\n"},
		{name: "file on zip", files: tree, cmd: "zip -q z.zip a.txt && file z.zip", stdout: "z.zip: Zip archive data, at least v1.0 to extract, compression method=store\n"},
	})
}

// fuzzSeeds are archives the fuzz targets start from.
func fuzzSeeds(f *testing.F) {
	f.Add([]byte(makeTar(f, false, tarMember{name: "a/", typ: tar.TypeDir}, tarMember{name: "a/b", body: "b"})))
	f.Add([]byte(makeTar(f, true, tarMember{name: "../x", body: "x"}, tarMember{name: "/y", body: "y"})))
	f.Add([]byte(makeTar(f, false, tarMember{name: "l", typ: tar.TypeSymlink, link: "../../etc"}, tarMember{name: "l/z", body: "z"})))
	f.Add([]byte(makeZip(f, tarMember{name: "d/"}, tarMember{name: "d/f", body: "f"})))
	f.Add([]byte(makeZip(f, tarMember{name: "../../e", body: "e"}, tarMember{name: "s", link: "/"})))
	f.Add([]byte{})
}

// fuzzArchive runs script over data as the file in.bin of a fresh
// workspace: whatever the bytes, no panic, and nothing lands outside x/.
func fuzzArchive(t *testing.T, data []byte, script string) {
	e := newEnv(t, 4<<20, 1<<20, nil)
	e.put(map[string]string{"in.bin": string(data), "x/": ""})
	_, stderr, _ := e.run(script)
	if strings.Contains(stderr, "internal error") {
		t.Fatalf("panic: %s", stderr)
	}
	out, _, _ := e.run("ls -A /workspace")
	if out != "in.bin\nx\n" {
		t.Fatalf("the workspace root holds %q", out)
	}
	e.checkOutside()
}

func FuzzTarExtract(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzArchive(t, data, "cd x && tar xf ../in.bin; tar tvf ../in.bin >/dev/null; tar xOf ../in.bin >/dev/null; gunzip -c ../in.bin >/dev/null; file ../in.bin")
	})
}

func FuzzUnzip(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzArchive(t, data, "cd x && unzip -o ../in.bin; unzip -l ../in.bin; unzip -p ../in.bin >/dev/null")
	})
}
