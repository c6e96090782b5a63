package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/codeport/codeport/port"
)

// Ids of any bytes make URIs of unreserved characters (what a URI
// template's simple variable matches), and come back from them.
func TestOutputURIRoundTrip(t *testing.T) {
	for _, ids := range [][2]string{
		{"4f0c2a9e-1b2c-4d5e-8f90-0123456789ab", "file_ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
		{"a/b c%", "x?y#z"},
		{"ünï", "../.."},
	} {
		uri := outputURI(ids[0], ids[1])
		rest := strings.TrimPrefix(uri, outputURIPrefix)
		if strings.ContainsFunc(strings.ReplaceAll(rest, "/outputs/", ""), func(r rune) bool {
			return !(r == '%' || r == '-' || r == '.' || r == '_' || r == '~' || r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'))
		}) {
			t.Errorf("%q has reserved characters", uri)
		}
		s, f, ok := parseOutputURI(uri)
		if !ok || s != ids[0] || f != ids[1] {
			t.Errorf("%q parses to %q %q %v", uri, s, f, ok)
		}
	}
	for _, bad := range []string{"", "codeport://sessions/", "codeport://sessions/a/outputs/", "codeport://sessions//outputs/b",
		"codeport://sessions/a/files/b", "codeport://sessions/a/outputs/b/c", "file:///etc/passwd", "codeport://sessions/%zz/outputs/b"} {
		if s, f, ok := parseOutputURI(bad); ok {
			t.Errorf("%q parses to %q %q", bad, s, f)
		}
	}
}

// What the streamer sends adds up to what was pushed, in order, each
// message whole UTF-8 and within the bound, however the chunks split the
// text; progress grows with every message.
func TestStreamerMessages(t *testing.T) {
	type msg struct {
		stream   port.Stream
		text     string
		progress float64
	}
	var got []msg
	s := startStreamer(context.Background(), func(st port.Stream, text string, progress float64) error {
		got = append(got, msg{st, text, progress})
		return nil
	}, slog.New(slog.DiscardHandler))
	want := map[port.Stream]*strings.Builder{port.Stdout: {}, port.Stderr: {}}
	// Words go to either stream; a word is pushed in chunks of 1 to 7
	// bytes, which split its runes.
	for w, word := range strings.SplitAfter(strings.Repeat("héllo wörld ✓ 𝄞 ", 9000), " ") {
		st := port.Stdout
		if w%5 == 0 {
			st = port.Stderr
		}
		for i := 0; i < len(word); {
			n := min(1+(w+i)%7, len(word)-i)
			s.push(st, []byte(word[i:i+n]))
			want[st].WriteString(word[i : i+n])
			i += n
		}
	}
	s.push(port.Stdout, []byte("\xe2\x9c")) // ends inside a rune: sent as it is at the end
	want[port.Stdout].WriteString("\xe2\x9c")
	s.finish()
	s.push(port.Stdout, []byte("late")) // after finish: dropped

	all := map[port.Stream]*strings.Builder{port.Stdout: {}, port.Stderr: {}}
	last := 0.0
	for i, m := range got {
		if m.progress <= last || len(m.text) > maxMessageBytes+utf8.UTFMax {
			t.Fatalf("message %d: %d bytes at progress %v after %v", i, len(m.text), m.progress, last)
		}
		if !utf8.ValidString(m.text) && i != len(got)-1 {
			t.Fatalf("message %d is not UTF-8: %q", i, m.text)
		}
		last = m.progress
		all[m.stream].WriteString(m.text)
	}
	for st := range want {
		if all[st].String() != want[st].String() {
			t.Errorf("%s: the messages do not add up to what was written", st)
		}
	}
	if int(last) != want[port.Stdout].Len()+want[port.Stderr].Len() {
		t.Errorf("progress ends at %v", last)
	}
}

// A client that cannot be reached stops the sending, never the call.
func TestStreamerStopsOnFailure(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	s := startStreamer(context.Background(), func(port.Stream, string, float64) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		return errors.New("connection closed")
	}, slog.New(slog.DiscardHandler))
	for range 100 {
		s.push(port.Stdout, []byte("x"))
		s.push(port.Stderr, []byte("y"))
	}
	s.finish()
	if calls != 1 {
		t.Errorf("%d sends after a failure", calls)
	}
}

func TestSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
		err  bool
	}{{0, "0s", false}, {1.5, "1.5s", false}, {-1, "", true}, {1e300, "2562047h47m16.854775807s", false}} {
		d, err := seconds("x", tc.in)
		if (err != nil) != tc.err || err == nil && d.String() != tc.want {
			t.Errorf("seconds(%v) = %v, %v", tc.in, d, err)
		}
	}
}
