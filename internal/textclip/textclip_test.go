package textclip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 4, ""},
		{"abcd", 4, "abcd"},
		{"abcde", 4, "abcd..."},
		{"abé", 3, "ab..."}, // é is 2 bytes: its first byte alone is dropped
		{"abé", 4, "abé"},
		{"日本語", 4, "日..."},
		{"abc", 0, "..."},
		{"abc", -1, "..."},
	} {
		if got := Clip(c.s, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
	long := strings.Repeat("é", 1000)
	for n := range 50 {
		got := Clip(long, n)
		if !utf8.ValidString(got) || len(got) > n+len("...") {
			t.Fatalf("Clip(long, %d) = %q", n, got)
		}
	}
}
