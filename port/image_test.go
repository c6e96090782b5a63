package port_test

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"testing"

	"github.com/codeport/codeport/port"
)

// InlineImageType knows the images Go's own encoders write, agrees with
// net/http's content sniffing (an independent implementation of the same
// signatures) on them and on look-alikes, and needs no more than their
// first 14 bytes.
func TestInlineImageTypeIsTheContentsType(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	img.Set(1, 1, color.RGBA{R: 200, A: 255})
	encode := func(f func(*bytes.Buffer) error) []byte {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	// A lossless WebP holding one pixel (RIFF header, VP8L chunk).
	webp := []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"png", encode(func(b *bytes.Buffer) error { return png.Encode(b, img) }), "image/png"},
		{"jpeg", encode(func(b *bytes.Buffer) error { return jpeg.Encode(b, img, nil) }), "image/jpeg"},
		{"gif", encode(func(b *bytes.Buffer) error { return gif.Encode(b, img, nil) }), "image/gif"},
		{"webp", webp, "image/webp"},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>`), ""},
		{"wave", []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00"), ""},
		{"png, cut short", []byte("\x89PNG\r\n"), ""},
		{"text", []byte("x,y\n1,2\n"), ""},
		{"empty", nil, ""},
	} {
		got := port.InlineImageType(c.data)
		if got != c.want {
			t.Errorf("%s: InlineImageType = %q, want %q", c.name, got, c.want)
		}
		if sniffed := http.DetectContentType(c.data); (got != "") != (sniffed == c.want && c.want != "") {
			t.Errorf("%s: InlineImageType %q, net/http sniffs %q", c.name, got, sniffed)
		}
		if len(c.data) > 14 && port.InlineImageType(c.data[:14]) != got {
			t.Errorf("%s: the first 14 bytes do not decide", c.name)
		}
	}
}
