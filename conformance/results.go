package conformance

import (
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/codeport/codeport/port"
)

// The result checks: what a call hands back besides its output.

func resultChecks() []Check {
	return []Check{
		{"results/output-files", check(outputFiles)},
		{"results/inline-images", check(inlineImages)},
		{"results/display", check(displayValues)},
		{"results/live-output", check(liveOutput)},
	}
}

// requireOutputFiles skips a check on a backend that does not say its
// results list produced files.
func (e *env) requireOutputFiles() {
	caps, err := e.describe()
	switch {
	case err != nil:
		e.t.Skipf("Describe failed (%v): whether results list produced files is unknown", err)
	case !caps.OutputFiles:
		e.t.Skipf("the backend does not report produced files (Capabilities.OutputFiles is false)")
	}
}

// outputFile fetches a produced file by id; ok is false when the backend
// says there is no such output.
func (e *env) outputFile(id, fileID string) (data string, info port.FileInfo, ok bool) {
	rc, info, err := e.p.GetOutputFile(e.ctx, id, fileID)
	switch {
	case errors.Is(err, port.ErrFileNotFound):
		return "", port.FileInfo{}, false
	case err != nil:
		e.t.Fatalf("GetOutputFile(%q): %v", fileID, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		e.t.Fatalf("GetOutputFile(%q): reading: %v", fileID, err)
	}
	return string(b), info, true
}

// produced checks that res lists exactly the files want, in that order,
// and returns their ids.
func (e *env) produced(what string, res port.Result, want ...string) []string {
	var names, ids []string
	for _, f := range res.Files {
		names = append(names, f.Filename)
		ids = append(ids, f.FileID)
		if f.FileID == "" {
			e.t.Fatalf("%s: the produced file %q has no file id", what, f.Filename)
		}
	}
	if !slices.Equal(names, want) {
		e.t.Fatalf("%s: the result lists the files %q, want %q", what, names, want)
	}
	return ids
}

// outputFiles: a result lists the files its call created or changed, and
// each id fetches that version of the file even after it changes again.
func outputFiles(e *env) {
	e.requireOutputFiles()
	id := e.session()
	var write, overwrite, readOnly, madeAndRemoved port.ExecuteRequest
	if e.python() {
		code := "open('out.csv','w').write('a\\n1\\n')\nprint(6*7)"
		if caps, _ := e.describe(); caps.DisplaysValues {
			code = "open('out.csv','w').write('a\\n1\\n'); 6*7" // 42 shown as in a notebook
		}
		write = port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code}
		overwrite = port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "open('out.csv','w').write('changed\\n')"}
		readOnly = port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "print(open('out.csv').read(), end='')"}
		madeAndRemoved = port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "import os\nopen('scratch','w').write('x')\nos.remove('scratch')"}
	} else {
		e.t.Logf("code_execution not offered: produced files are checked through the editor")
		e.requireTool(port.ToolTextEditorExecution)
		write = port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorCreate, Path: "out.csv", FileText: str("a\n1\n")}}
		overwrite = port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorStrReplace, Path: "out.csv", OldStr: str("a\n1\n"), NewStr: str("changed\n")}}
		readOnly = port.ExecuteRequest{Tool: port.ToolTextEditorExecution, Editor: &port.EditorInput{Command: port.EditorView, Path: "out.csv"}}
	}

	res := e.exec(id, write)
	if e.python() && !sameOutput(res.Stdout, "42\n") {
		e.t.Fatalf("the writing cell printed %q, want %q (stderr %q)", clip(res.Stdout), "42\n", clip(res.Stderr))
	}
	first := e.produced("a call that wrote out.csv", res, "out.csv")[0]
	if got, info, ok := e.outputFile(id, first); !ok || got != "a\n1\n" {
		e.t.Fatalf("GetOutputFile of the produced out.csv: %q (found %v), want %q", clip(got), ok, "a\n1\n")
	} else if info.Path != "" && info.Path != "out.csv" {
		e.t.Fatalf("GetOutputFile names the file %q, want out.csv", info.Path)
	}

	second := e.produced("a call that changed out.csv", e.exec(id, overwrite), "out.csv")[0]
	if second == first {
		e.t.Fatalf("the changed out.csv has the first version's id %q", first)
	}
	if got, _, ok := e.outputFile(id, first); !ok || got != "a\n1\n" {
		e.t.Fatalf("after out.csv changed, the first version's id fetches %q (found %v), want %q", clip(got), ok, "a\n1\n")
	}
	if got, _, _ := e.outputFile(id, second); got != "changed\n" {
		e.t.Fatalf("the second version's id fetches %q, want %q", clip(got), "changed\n")
	}
	if got := e.readText(id, "out.csv"); got != "changed\n" {
		e.t.Fatalf("out.csv holds %q after the second call, want %q", clip(got), "changed\n")
	}

	e.produced("a call that only read", e.exec(id, readOnly))
	if madeAndRemoved.Tool != "" {
		e.produced("a call that made a file and removed it", e.exec(id, madeAndRemoved))
	}
	if e.offers(port.ToolBashCodeExecution) {
		e.produced("a bash call that wrote sub/b.txt", e.bash(id, "mkdir -p sub && echo b > sub/b.txt"), "sub/b.txt")
	}

	// Ids are the session's: another session does not find them, nor does
	// a made-up one.
	other := e.session()
	if _, _, ok := e.outputFile(other, first); ok {
		e.t.Fatalf("another session fetched this session's output %q", first)
	}
	if _, _, ok := e.outputFile(id, "file_NOSUCHOUTPUT"); ok {
		e.t.Fatalf("a made-up file id fetched a file")
	}
}

// displayValues: where the backend displays a cell's last expression, it
// does so as Jupyter does, and a call can turn it off.
func displayValues(e *env) {
	if !e.python() {
		e.t.Skipf("code_execution not offered")
	}
	if caps, err := e.describe(); err != nil || !caps.DisplaysValues {
		e.t.Skipf("the backend does not say it displays values (Describe: %v)", err)
	}
	id := e.session()
	for _, c := range []struct{ code, want string }{
		{"conformance_v = 41\nconformance_v + 1", "42\n"},
		{"None", ""},
		{"6*7;", ""},
		{"print('p')", "p\n"},
	} {
		if got := e.codeOK(id, c.code); got != c.want {
			e.t.Fatalf("display on, cell %q: stdout %q, want %q", c.code, clip(got), c.want)
		}
	}
	off := false
	res := e.exec(id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: "6*7", DisplayValues: &off})
	if res.Stdout != "" || res.ReturnCode != 0 {
		e.t.Fatalf("display off for the call: stdout %q rc %d", clip(res.Stdout), res.ReturnCode)
	}
}

// liveOutput: the chunks a call's OnOutput receives add up to its result,
// none comes after Execute returns, and on a backend that says it streams
// they come while the program runs: the cell waits for a file that the
// check puts only once the first chunk has arrived, so the call ends
// before its timeout only if that chunk came first.
func liveOutput(e *env) {
	if !e.python() {
		e.t.Skipf("code_execution not offered")
	}
	caps, _ := e.describe()
	id := e.session()
	var mu sync.Mutex
	var out, errs strings.Builder
	returned := false
	var late []string
	first := make(chan struct{})
	record := func(s port.Stream, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if returned {
			late = append(late, string(b))
		}
		if out.Len()+errs.Len() == 0 {
			close(first)
		}
		if s == port.Stdout {
			out.Write(b)
		} else {
			errs.Write(b)
		}
	}
	code := "import sys\nprint('out', flush=True)\nprint('err', file=sys.stderr, flush=True)\nprint('done')"
	timeout := 30 * time.Second
	if caps.StreamsOutput {
		code = "import os, sys, time\nprint('out', flush=True)\nwhile not os.path.exists('conformance-go'):\n    time.sleep(0.01)\nprint('err', file=sys.stderr, flush=True)\nprint('done')"
		go func() {
			select {
			case <-first:
				_, _ = e.p.PutFile(e.ctx, id, "conformance-go", strings.NewReader("go"))
			case <-time.After(timeout):
			case <-e.ctx.Done():
			}
		}()
	}
	res := e.exec(id, port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: code, Timeout: timeout, OnOutput: record})
	mu.Lock()
	returned = true
	o, se := out.String(), errs.String()
	mu.Unlock()
	if caps.StreamsOutput && res.Outcome == port.OutcomeTimedOut {
		e.t.Fatalf("the backend says it streams, but the cell's first line did not reach OnOutput while it ran (it timed out waiting)")
	}
	if res.ReturnCode != 0 || !sameOutput(res.Stdout, "out\ndone\n") {
		e.t.Fatalf("the cell: rc %d stdout %q stderr %q", res.ReturnCode, clip(res.Stdout), clip(res.Stderr))
	}
	if o != res.Stdout || se != res.Stderr {
		e.t.Fatalf("the chunks add up to %q / %q; the result holds %q / %q", clip(o), clip(se), clip(res.Stdout), clip(res.Stderr))
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(late) > 0 {
		e.t.Fatalf("OnOutput was called after Execute returned: %q", late)
	}
}

// conformancePNG writes the 6x4 PNG a chart library would write (zlib and
// struct only) as chart.png, a file named like a PNG that is not one, and
// a CSV table.
const conformancePNG = `import struct, zlib
def _chunk(t, d):
    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
rows = b''.join(b'\x00' + bytes((x + y) % 256 for x in range(18)) for y in range(4))
open('chart.png', 'wb').write(b'\x89PNG\r\n\x1a\n' + _chunk(b'IHDR', struct.pack('>IIBBBBB', 6, 4, 8, 2, 0, 0, 0))
    + _chunk(b'IDAT', zlib.compress(rows)) + _chunk(b'IEND', b''))
open('not-a.png', 'w').write('text')
open('table.csv', 'w').write('a\n1\n')
`

// inlineImages: on a backend whose results carry images inline, a PNG a
// call writes comes back in its entry, the bytes GetOutputFile gives, with
// its type and size; a file that only has an image's name, and any other
// file, come back without bytes.
func inlineImages(e *env) {
	e.requireTool(port.ToolCodeExecution)
	e.requireOutputFiles()
	if caps, _ := e.describe(); caps.InlineImages == 0 {
		e.t.Skipf("the backend's results carry no images inline (Capabilities.InlineImages is 0)")
	}
	id := e.session()
	res := e.code(id, conformancePNG)
	e.produced("a PNG, a fake one and a table", res, "chart.png", "not-a.png", "table.csv")
	for _, f := range res.Files {
		data, info, ok := e.outputFile(id, f.FileID)
		if !ok {
			e.t.Fatalf("%s: GetOutputFile of its id finds nothing", f.Filename)
		}
		switch {
		case f.Filename == "chart.png":
			if f.MediaType != "image/png" || f.Size != int64(len(data)) || string(f.Data) != data {
				e.t.Errorf("chart.png: type %q, size %d, %d inline bytes; want image/png with the file's %d bytes", f.MediaType, f.Size, len(f.Data), len(data))
			}
			if port.InlineImageType(f.Data) != "image/png" || info.Size != int64(len(data)) {
				e.t.Errorf("chart.png: the inline bytes are no PNG, or GetOutputFile's size %d is not the file's", info.Size)
			}
		case f.Data != nil:
			e.t.Errorf("%s comes back inline (%d bytes, type %q): only images do", f.Filename, len(f.Data), f.MediaType)
		}
	}
}
