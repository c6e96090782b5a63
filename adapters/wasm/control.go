package wasm

import (
	"encoding/binary"
	"io/fs"
	"sync"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// The control channel carries cells to the driver and completions back, out
// of band: it is a file only the driver opens, not stdout or stderr, so no
// byte sequence a program prints can end a call early or shift later calls'
// output (the reference backend's framing-marker defect).
const (
	controlMount = "/.codeport"
	controlName  = "ctl"
)

// Driver status bytes; see driver.py.
const (
	statusOK = iota
	statusException
	statusExit
	statusNoMemory
)

// completion is one cell's end as the driver reports it.
type completion struct {
	status     byte
	returnCode int32
}

// controlFS is a one-file file system. The file can be opened once: the
// driver opens it before any user code runs, so user code cannot open a
// second handle to it.
type controlFS struct {
	experimentalsys.UnimplementedFS
	mu     sync.Mutex
	opened bool
	file   *controlFile
}

func newControlFS(interrupt <-chan struct{}) *controlFS {
	return &controlFS{file: &controlFile{
		requests:  make(chan []byte, 1),
		ready:     make(chan struct{}),
		done:      make(chan completion, 1),
		interrupt: interrupt,
	}}
}

func (c *controlFS) OpenFile(path string, _ experimentalsys.Oflag, _ fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if path == "." || path == "" {
		return controlDir{}, 0 // the mount point itself
	}
	if path != controlName {
		return nil, experimentalsys.ENOENT
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.opened {
		return nil, experimentalsys.EACCES
	}
	c.opened = true
	return c.file, 0
}

func (c *controlFS) Stat(path string) (sys.Stat_t, experimentalsys.Errno) {
	if path == "." || path == "" {
		return sys.Stat_t{Mode: fs.ModeDir | 0o500, Nlink: 1}, 0
	}
	return sys.Stat_t{}, experimentalsys.ENOENT
}

func (c *controlFS) Lstat(path string) (sys.Stat_t, experimentalsys.Errno) { return c.Stat(path) }

// controlFile is the driver's end of the channel. Read blocks until the host
// sends a cell (or the instance is being stopped, which reads as end of
// file); Write parses the driver's messages.
type controlFile struct {
	experimentalsys.UnimplementedFile
	requests  chan []byte
	interrupt <-chan struct{}

	// pending is the unread rest of the current request; owned by the
	// instance goroutine, the only reader.
	pending []byte

	readyOnce sync.Once
	ready     chan struct{}
	done      chan completion
	// partial holds an incomplete completion message; instance goroutine
	// only.
	partial []byte
}

// Request kinds; see driver.py.
const (
	requestCell   = 'C' // source run in the session's __main__
	requestPython = 'P' // a `python ...` command line from the bash tool
	requestWarm   = 'W' // modules to import before a pooled instance is used
)

// send frames a request for the driver. The buffer of one cannot block:
// the host sends one request and then waits for its completion.
func (f *controlFile) send(kind byte, payload string) {
	msg := make([]byte, 5+len(payload))
	binary.BigEndian.PutUint32(msg, uint32(1+len(payload)))
	msg[4] = kind
	copy(msg[5:], payload)
	f.requests <- msg
}

func (f *controlFile) Read(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	if len(f.pending) == 0 {
		select {
		case f.pending = <-f.requests:
		case <-f.interrupt:
			return 0, 0 // end of file: the driver returns
		}
	}
	n := copy(buf, f.pending)
	f.pending = f.pending[n:]
	return n, 0
}

func (f *controlFile) Write(buf []byte) (int, experimentalsys.Errno) {
	n := len(buf)
	if len(f.partial) == 0 && len(buf) > 0 && buf[0] == 'R' {
		f.readyOnce.Do(func() { close(f.ready) })
		buf = buf[1:]
	}
	f.partial = append(f.partial, buf...)
	for len(f.partial) >= 5 {
		c := completion{status: f.partial[0], returnCode: int32(binary.BigEndian.Uint32(f.partial[1:5]))}
		f.partial = f.partial[5:]
		select {
		case f.done <- c:
		default:
			// A completion nobody asked for (user code writing to the
			// driver's descriptor). Dropped: the host only ever waits for
			// one completion per cell it sent.
		}
	}
	return n, 0
}

func (f *controlFile) IsDir() (bool, experimentalsys.Errno) { return false, 0 }
func (f *controlFile) IsAppend() bool                       { return false }
func (f *controlFile) IsNonblock() bool                     { return false }
func (f *controlFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	return sys.Stat_t{Mode: fs.ModeCharDevice | fs.ModeDevice | 0o600, Nlink: 1}, 0
}
func (f *controlFile) Close() experimentalsys.Errno { return 0 }

// controlDir is the mount point of the control file system. It lists as
// empty: the control file is nobody's business but the driver's.
type controlDir struct {
	experimentalsys.UnimplementedFile
}

func (controlDir) IsDir() (bool, experimentalsys.Errno) { return true, 0 }
func (controlDir) Stat() (sys.Stat_t, experimentalsys.Errno) {
	return sys.Stat_t{Mode: fs.ModeDir | 0o500, Nlink: 1}, 0
}
func (controlDir) Readdir(int) ([]experimentalsys.Dirent, experimentalsys.Errno) { return nil, 0 }
func (controlDir) Close() experimentalsys.Errno                                  { return 0 }
