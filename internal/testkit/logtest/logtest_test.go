package logtest

import (
	"regexp"
	"testing"
)

// Await returns what a write from another goroutine brought, and sees the
// last write of a writer that then ended.
func TestAwait(t *testing.T) {
	var b Buffer
	go func() {
		b.Write([]byte("starting\n"))
		b.Write([]byte(`serving addr=127.0.0.1:9` + "\n"))
	}()
	if got := b.Await(t, regexp.MustCompile(`addr=(\S+)`), nil); got != "127.0.0.1:9" {
		t.Fatalf("Await: %q", got)
	}
	ended := make(chan struct{})
	go func() {
		b.Write([]byte("last words\n"))
		close(ended)
	}()
	<-ended
	if got := b.Await(t, regexp.MustCompile(`last \w+`), ended); got != "last words" {
		t.Fatalf("Await after the end: %q", got)
	}
}
