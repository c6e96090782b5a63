package testwait

import (
	"io"
	"sync"
)

// Body is an upload's body whose bytes come when the test says: its
// first Read closes Started (the upload is under way) and waits for
// Release; then the bytes of the reader it was made with follow, or its
// error. Release may be called more than once, as from a t.Cleanup that
// unblocks an upload a failed test left waiting.
type Body struct {
	r       io.Reader
	started chan struct{}
	gate    chan struct{}
	begin   sync.Once
	release sync.Once
}

// NewBody returns a Body that holds r back.
func NewBody(r io.Reader) *Body {
	return &Body{r: r, started: make(chan struct{}), gate: make(chan struct{})}
}

// Started is closed at the body's first Read.
func (b *Body) Started() <-chan struct{} { return b.started }

// Release lets the bytes come.
func (b *Body) Release() { b.release.Do(func() { close(b.gate) }) }

func (b *Body) Read(p []byte) (int, error) {
	b.begin.Do(func() {
		close(b.started)
		<-b.gate
	})
	return b.r.Read(p)
}
