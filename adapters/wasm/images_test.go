package wasm

import (
	"bytes"
	"context"
	"image/png"
	"io"
	"strings"
	"testing"

	"github.com/codeport/codeport/port"
)

// pngSource defines png(w, h, seed): a real PNG written with zlib and
// struct, as a chart library would write one.
const pngSource = `import struct, zlib
def _chunk(t, d):
    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
def png(w, h, seed=0):
    rows = b''.join(b'\x00' + bytes((x * 7 + y * 3 + seed) % 256 for x in range(w * 3)) for y in range(h))
    return (b'\x89PNG\r\n\x1a\n' + _chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0))
            + _chunk(b'IDAT', zlib.compress(rows, 0)) + _chunk(b'IEND', b''))
`

// Images a call produces come back inline, as the bytes GetOutputFile
// gives, with the type their content shows; other files, and files whose
// name says image but whose bytes do not, are listed without bytes.
func TestImagesComeBackInline(t *testing.T) {
	a := newTestAdapter(t, nil)
	id := newSession(t, a)
	run(t, a, id, pngSource)
	res := run(t, a, id, `open('chart.png', 'wb').write(png(40, 30))
open('fake.png', 'w').write('not a png')
open('drawing.svg', 'w').write('<svg xmlns="http://www.w3.org/2000/svg"/>')
open('photo.jpeg', 'wb').write(b'\xff\xd8\xff\xe0' + bytes(100))
open('data.csv', 'w').write('a\n1\n')
class Chart:
    def _repr_png_(self): return png(8, 8, 1)
Chart()`)
	if res.ReturnCode != 0 || len(res.Files) != 6 {
		t.Fatalf("files %+v, stderr %s", res.Files, res.Stderr)
	}
	byName := map[string]port.OutputFile{}
	for _, f := range res.Files {
		byName[f.Filename] = f
		rc, info, err := a.GetOutputFile(context.Background(), id, f.FileID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if f.Size != int64(len(b)) || f.Size != info.Size {
			t.Errorf("%s: size %d, the file has %d", f.Filename, f.Size, len(b))
		}
		if f.Data != nil && !bytes.Equal(f.Data, b) {
			t.Errorf("%s: inline bytes differ from the file's", f.Filename)
		}
	}
	for name, want := range map[string]string{"chart.png": "image/png", "photo.jpeg": "image/jpeg"} {
		if f := byName[name]; f.Data == nil || f.MediaType != want {
			t.Errorf("%s: %s, %d inline bytes; want %s inline", name, f.MediaType, len(f.Data), want)
		}
	}
	if img, err := png.Decode(bytes.NewReader(byName["chart.png"].Data)); err != nil || img.Bounds().Dx() != 40 || img.Bounds().Dy() != 30 {
		t.Errorf("chart.png does not decode as the 40x30 image written: %v", err)
	}
	var display port.OutputFile
	for _, f := range res.Files {
		if strings.HasPrefix(f.Filename, ".display/") {
			display = f
		}
	}
	if display.MediaType != "image/png" || display.Data == nil {
		t.Errorf("the displayed value's PNG: %+v", display)
	}
	for name, typ := range map[string]string{"fake.png": "image/png", "drawing.svg": "image/svg+xml", "data.csv": "text/csv"} {
		if f := byName[name]; f.Data != nil || !strings.HasPrefix(f.MediaType, typ) {
			t.Errorf("%s: %s with %d inline bytes, want %s and none", name, f.MediaType, len(f.Data), typ)
		}
	}
	if strings.Contains(res.Stderr, "codeport") {
		t.Errorf("a note though every image fitted: %s", res.Stderr)
	}
}

// The inline bound holds per call, in images and in bytes: the images
// over it are produced files the stderr names, and the next call has the
// whole bound again.
func TestInlineImagesAreBounded(t *testing.T) {
	a := newTestAdapter(t, func(c Config) Config { return c.WithInlineImages(2, 40<<10) })
	id := newSession(t, a)
	run(t, a, id, pngSource)
	inline := func(res port.Result) (names []string) {
		for _, f := range res.Files {
			if f.Data != nil {
				names = append(names, f.Filename)
			}
		}
		return names
	}
	// Three small images: two inline, the third named.
	res := run(t, a, id, "for i in range(3):\n    open(f'{i}.png', 'wb').write(png(10, 10, i))")
	if got := inline(res); len(res.Files) != 3 || strings.Join(got, " ") != "0.png 1.png" {
		t.Fatalf("inline %v of %+v", got, res.Files)
	}
	if !strings.Contains(res.Stderr, `[codeport: 1 image is not in this result (it carries at most 2 images, 40KiB in all): ["2.png"]; fetch by file id]`) {
		t.Errorf("stderr: %q", res.Stderr)
	}
	// A large image (about 48 KiB) does not fit; a small one after it does.
	res = run(t, a, id, "open('big.png', 'wb').write(png(128, 128))\nopen('small.png', 'wb').write(png(4, 4))")
	if got := inline(res); strings.Join(got, " ") != "small.png" || !strings.Contains(res.Stderr, `["big.png"]`) {
		t.Errorf("inline %v, stderr %q", got, res.Stderr)
	}
	// None inline: no bytes, and no note (nothing was promised).
	b := newTestAdapter(t, func(c Config) Config { return c.WithInlineImages(0, 0) })
	id = newSession(t, b)
	run(t, b, id, pngSource)
	res = run(t, b, id, "open('c.png', 'wb').write(png(4, 4))")
	if len(res.Files) != 1 || res.Files[0].Data != nil || res.Files[0].MediaType != "image/png" || res.Stderr != "" {
		t.Errorf("inline images off: %+v %q", res.Files, res.Stderr)
	}
}
