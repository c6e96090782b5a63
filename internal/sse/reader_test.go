package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReaderReadsEventsThenEOF(t *testing.T) {
	r := NewReader(strings.NewReader("event: a\r\ndata: 1\r\n\r\n: c\n\nid: 9\ndata: 2\n\ndata: 3"), Options{})
	for _, want := range []Event{ev("a", "1", ""), ev("message", "2", "9")} {
		got, err := r.Next()
		if err != nil || !sameEvents([]Event{got}, []Event{want}) {
			t.Fatalf("%s %v, want %s", show([]Event{got}), err, show([]Event{want}))
		}
	}
	for range 2 {
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("at the end: %v", err)
		}
	}
	if r.LastEventID() != "9" {
		t.Fatalf("last event id %q", r.LastEventID())
	}
}

// An event is returned as soon as its empty line arrives, with the
// writer still blocked on what comes next: live output is live.
func TestReaderDoesNotWaitForMore(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	r := NewReader(pr, Options{})
	go func() {
		for _, s := range []string{"event: stdout\ndata: a\n", "\n", "data: b\r", "\r"} {
			if _, err := pw.Write([]byte(s)); err != nil {
				return
			}
		}
		// Blocks until the reader is closed.
		_, _ = pw.Write([]byte("data: never read\n\n"))
	}()
	for _, want := range []string{"a", "b"} {
		got := make(chan Event, 1)
		go func() {
			e, err := r.Next()
			if err != nil {
				t.Error(err)
			}
			got <- e
		}()
		select {
		case e := <-got:
			if string(e.Data) != want {
				t.Fatalf("got %q, want %q", e.Data, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the event %q never came", want)
		}
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

type emptyReader struct{ reads int }

func (e *emptyReader) Read([]byte) (int, error) { e.reads++; return 0, nil }

func TestReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\n"), failingReader{boom}), Options{})
	if e, err := r.Next(); err != nil || string(e.Data) != "a" {
		t.Fatalf("%v %v", e, err)
	}
	if _, err := r.Next(); err != boom {
		t.Fatalf("a read error: %v", err)
	}
	if _, err := r.Next(); err != boom {
		t.Fatalf("again: %v", err)
	}
	er := &emptyReader{}
	if _, err := NewReader(er, Options{}).Next(); err != io.ErrNoProgress || er.reads != maxEmptyReads {
		t.Fatalf("empty reads: %v after %d reads", err, er.reads)
	}
	var fe *FormatError
	if _, err := NewReader(strings.NewReader("event: a\ndata: 1\n"), Options{Canonical: true}).Next(); !errors.As(err, &fe) {
		t.Fatalf("canonical, the end inside an event: %v", err)
	}
}
