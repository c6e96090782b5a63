package sse

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecoder: any stream, in any pieces, with any limit, reads without a
// panic, never holds more than the limit, reads the same events and
// error whatever the pieces, makes events of valid UTF-8 within the
// limit, and in canonical mode either refuses it or reads what the
// standard's reading does. What AppendEvent writes reads back.
func FuzzDecoder(f *testing.F) {
	for _, seed := range []string{
		"event: stdout\ndata: {\"text\":\"0\\n\"}\n\n: keep-alive\n\nevent: result\ndata: {}\n\n",
		"data:a\r\ndata: b\rdata\n\n",
		"\xEF\xBB\xBFid: 1\nretry: 100\nevent: x\ndata: y\n\n",
		"data: \xFF\xC0\xE2\x82\x00\n\n",
		": comment\r\n\r\nfoo: bar\nid: a\x00\n\n",
		"data: never ends",
		"\r\r\n\n\r",
	} {
		f.Add([]byte(seed), uint16(64), uint8(3))
		f.Add([]byte(seed), uint16(4), uint8(1))
	}
	f.Fuzz(func(t *testing.T, stream []byte, limit uint16, piece uint8) {
		opts := Options{MaxEventBytes: 1 + int(limit)%2048}
		whole, _, werr := decodeAll(t, string(stream), opts, 0)
		pieces, _, perr := decodeAll(t, string(stream), opts, 1+int(piece)%16)
		if !sameEvents(whole, pieces) || kind(werr) != kind(perr) {
			t.Fatalf("whole: %s %v\npieces: %s %v", show(whole), werr, show(pieces), perr)
		}
		for _, e := range whole {
			if !utf8.ValidString(e.Type) || !utf8.Valid(e.Data) || !utf8.ValidString(e.ID) {
				t.Fatalf("an event that is not UTF-8: %s", show([]Event{e}))
			}
		}
		opts.Canonical = true
		canon, _, cerr := decodeAll(t, string(stream), opts, 0)
		var fe *FormatError
		switch {
		case cerr == nil && (werr != nil || !sameEvents(canon, whole)):
			t.Fatalf("canonical: %s\nstandard: %s %v", show(canon), show(whole), werr)
		case cerr != nil && !errors.As(cerr, &fe) && kind(cerr) != kind(werr):
			t.Fatalf("canonical: %v, standard: %v", cerr, werr)
		}

		// The stream's bytes as an event's type and data.
		typ := []rune(string(stream))
		for i, r := range typ {
			if r == '\r' || r == '\n' {
				typ[i] = '_'
			}
		}
		name := "x" + string(typ)
		b := AppendEvent(nil, name, stream)
		got, _, err := decodeAll(t, string(b), Options{MaxEventBytes: 2*len(b) + 8}, 0)
		data := strings.ReplaceAll(strings.ReplaceAll(string(stream), "\r\n", "\n"), "\r", "\n")
		if err != nil || len(got) != 1 || got[0].Type != string(validUTF8([]byte(name))) || string(got[0].Data) != string(validUTF8([]byte(data))) {
			t.Fatalf("wrote %q, read %s %v", b, show(got), err)
		}
	})
}

// kind is the sort of error err is, for comparing two readings.
func kind(err error) string {
	var tl *TooLargeError
	var fe *FormatError
	switch {
	case err == nil:
		return "none"
	case errors.As(err, &tl):
		return "too large"
	case errors.As(err, &fe):
		return "format: " + fe.Reason
	}
	return err.Error()
}
