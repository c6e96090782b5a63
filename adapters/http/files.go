package httpadapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"sync"
	"time"

	"github.com/codeport/codeport/contract"
	"github.com/codeport/codeport/port"
)

// GetFile implements port.CodeExecutionPort: GET
// /sessions/{id}/files?path=p.
//
// The file is streamed: the returned reader reads the response body, which
// it closes when closed. A file whose Content-Length is over the
// configured cap is refused before any of it is read; one that turns out
// larger while streaming fails the Read that would pass the cap, with an
// error wrapping port.ErrFileTooLarge. A success other than 200 (a 206
// with a part of the file, a 204 with none) is not the file:
// port.ErrBackendUnreachable. The FileInfo holds the path as
// asked, the size from Content-Length (-1 when the backend sent none), the
// media type from Content-Type and the time from Last-Modified, if any.
//
// The wall clock bounds the wait for the response and, after it, every
// stall of the transfer; ctx bounds the whole transfer.
func (a *adapter) GetFile(ctx context.Context, id, p string) (io.ReadCloser, port.FileInfo, error) {
	return a.download(ctx, id, url.Values{"path": {p}}, p)
}

// GetOutputFile implements port.CodeExecutionPort: GET
// /sessions/{id}/files?file_id=f, codeport's extension of the file route
// (see contract/openapi.yaml), streamed as GetFile is. The FileInfo's
// path is the one the backend names in PathHeader, if any.
func (a *adapter) GetOutputFile(ctx context.Context, id, fileID string) (io.ReadCloser, port.FileInfo, error) {
	return a.download(ctx, id, url.Values{"file_id": {fileID}}, "")
}

// download is GetFile and GetOutputFile: query selects the file, p is
// the path the FileInfo reports: GetFile's path, or "" for GetOutputFile,
// whose path is the one the backend names.
func (a *adapter) download(ctx context.Context, id string, query url.Values, p string) (io.ReadCloser, port.FileInfo, error) {
	c := &call{op: opGet, method: http.MethodGet, path: sessionPath(id, "/files"),
		route: "GET /sessions/{id}/files", session: id, wall: a.cfg.settings.RequestTimeout}
	callCtx, cancel := context.WithCancelCause(ctx)
	clock := time.AfterFunc(c.wall, func() { cancel(errWallClock) })
	abandon := func() {
		clock.Stop()
		cancel(nil)
	}
	req, err := a.newRequest(callCtx, c, query.Encode(), nil)
	if err != nil {
		abandon()
		return nil, port.FileInfo{}, err
	}
	resp, err := a.do(ctx, callCtx, c, req)
	if err != nil {
		abandon()
		return nil, port.FileInfo{}, err
	}
	fail := func(err error) (io.ReadCloser, port.FileInfo, error) {
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			// Do not drain a refused file: dropping the connection is
			// cheaper.
			_ = resp.Body.Close()
		} else {
			a.finish(resp)
		}
		abandon()
		return nil, port.FileInfo{}, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fail(a.settleNotFound(ctx, c, statusError(c, resp.StatusCode, resp.Header, readErrorBody(resp.Body))))
	}
	if resp.StatusCode != http.StatusOK {
		// The file is answered 200. Another success is not the whole
		// file (206: a part of it, which the adapter never asks for; 204:
		// nothing) and must not be returned as if it were.
		return fail(violation(c, resp.StatusCode, "a success other than 200"))
	}
	if resp.ContentLength > a.cfg.settings.FileLimit {
		return fail(fmt.Errorf("httpadapter: %s: %w: the file is %d bytes; the cap is %d",
			c, port.ErrFileTooLarge, resp.ContentLength, a.cfg.settings.FileLimit))
	}
	if p == "" {
		// Only a download by file id asks the backend where the file is:
		// a download by path is of the path asked for, whatever a
		// backend's header says, or a caller would file the bytes under
		// a path of the backend's choosing.
		if named, err := url.PathUnescape(resp.Header.Get(contract.PathHeader)); err == nil && named != "" {
			p = named
		}
	}
	info := port.FileInfo{Path: p, Size: resp.ContentLength, MimeType: resp.Header.Get("Content-Type")}
	if lm := resp.Header.Get("Last-Modified"); lm != "" {
		if t, err := http.ParseTime(lm); err == nil {
			info.ModTime = t
		}
	}
	// From here on the clock measures stalls of the transfer.
	clock.Reset(c.wall)
	return &fileBody{
		a: a, c: c, ctx: ctx, callCtx: callCtx, resp: resp,
		clock: clock, cancel: cancel, limit: a.cfg.settings.FileLimit,
	}, info, nil
}

// fileBody is the reader GetFile and GetOutputFile return.
type fileBody struct {
	a            *adapter
	c            *call
	ctx, callCtx context.Context
	resp         *http.Response // the response being read
	clock        *time.Timer
	cancel       context.CancelCauseFunc
	limit        int64

	n    int64 // bytes delivered
	err  error // sticky
	once sync.Once
}

func (d *fileBody) Read(p []byte) (int, error) {
	if d.err != nil {
		return 0, d.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if d.n >= d.limit {
		// At the cap: the file may end here, or go on past the cap.
		var probe [1]byte
		for {
			n, err := d.resp.Body.Read(probe[:])
			if n > 0 {
				d.err = fmt.Errorf("httpadapter: %s: %w: the file is over the cap of %d bytes", d.c, port.ErrFileTooLarge, d.limit)
				return 0, d.err
			}
			if err != nil {
				return 0, d.fail(err)
			}
		}
	}
	if rest := d.limit - d.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := d.resp.Body.Read(p)
	d.n += int64(n)
	if n > 0 {
		d.clock.Reset(d.c.wall)
	}
	if err != nil {
		err = d.fail(err)
	}
	return n, err
}

// fail classifies a read error and makes it sticky.
func (d *fileBody) fail(err error) error {
	switch {
	case errors.Is(err, io.EOF):
		d.err = io.EOF
	case errors.Is(err, http.ErrBodyReadAfterClose):
		d.err = fmt.Errorf("httpadapter: %s: read after Close: %w", d.c, err)
	default:
		d.err = transportError(d.ctx, d.callCtx, d.c, err)
	}
	return d.err
}

// Close ends the transfer; it is safe to call more than once, and from
// another goroutine than a blocked Read.
func (d *fileBody) Close() error {
	d.once.Do(func() {
		// Cancel first: nothing is drained from a backend that may be
		// stalled, and a blocked Read returns.
		d.clock.Stop()
		d.cancel(nil)
		_ = d.resp.Body.Close()
		if d.a.closed() {
			d.a.client.CloseIdleConnections()
		}
	})
	return nil
}

// PutFile implements port.CodeExecutionPort: POST /sessions/{id}/files,
// a multipart body with the path field first and then the file part, named
// after the path's last element.
//
// The reader is streamed into the request through a pipe: the file is
// never held in memory. One goroutine feeds the pipe; every way out of the
// call closes the pipe and awaits it, so PutFile returns only once a Read
// of r in progress has returned. The wall clock bounds the backend's
// stalls (time spent in r's Read does not count) and the wait for the
// answer; ctx bounds the whole upload. The size cap is the backend's: a
// file over it is refused with port.ErrFileTooLarge. A success answered
// before the whole file was sent is port.ErrBackendUnreachable: the
// backend cannot hold the file it says it stored.
func (a *adapter) PutFile(ctx context.Context, id, p string, r io.Reader) (port.FileInfo, error) {
	c := &call{op: opPut, method: http.MethodPost, path: sessionPath(id, "/files"),
		route: "POST /sessions/{id}/files", session: id, wall: a.cfg.settings.RequestTimeout}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	clock := time.AfterFunc(c.wall, func() { cancel(errWallClock) })
	defer clock.Stop()

	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	contentType := mw.FormDataContentType()
	done := make(chan error, 1)
	var sample []byte // the file's first bytes, which a detail must not quote
	go func() {
		err := writeUpload(mw, p, r, clock, c.wall, &sample)
		_ = pw.CloseWithError(err) // nil: the body ends
		done <- err
	}()
	// await ends the upload goroutine: a writer blocked on the pipe fails
	// at once, a Read of r in progress is waited for.
	var upErr error
	awaited := false
	await := func() error {
		if !awaited {
			awaited = true
			_ = pr.CloseWithError(errUploadEnded)
			upErr = <-done
		}
		return upErr
	}
	defer await()

	req, err := a.newRequest(callCtx, c, "", pr)
	if err != nil {
		return port.FileInfo{}, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := a.do(ctx, callCtx, c, req)
	var rerr *readError
	if errors.As(await(), &rerr) {
		if resp != nil {
			a.finish(resp)
		}
		return port.FileInfo{}, fmt.Errorf("httpadapter: %s: reading the file to upload: %w", c, rerr.err)
	}
	if err != nil {
		return port.FileInfo{}, err
	}
	c.secrets = []string{string(sample)}
	status, b, err := a.readAnswer(ctx, callCtx, c, resp)
	if err != nil {
		return port.FileInfo{}, err
	}
	if upErr != nil {
		// The body did not end: the answer came while the file was still
		// being sent, so the backend cannot hold the file it says it
		// stored. (A refusal may come early; a success may not.)
		return port.FileInfo{}, violation(c, status, "a success answered before the whole file was sent")
	}
	var res contract.FileUploadResult
	if err := decode(c, status, b, &res); err != nil {
		return port.FileInfo{}, err
	}
	info := contract.FileUploadResultToPort(res)
	if info.Path == "" {
		info.Path = p
	}
	return info, nil
}

// readError is a failure of the caller's reader, told apart from the pipe's
// failures, which only mean the request is over.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

// sampleBytes is how much of an upload is kept to check error details
// against.
const sampleBytes = 4 << 10

// writeUpload writes the multipart body, keeping the file's first bytes in
// sample. The clock is paused while r is read and restarted whenever the
// transport has taken a chunk, so it measures the backend's stalls only.
func writeUpload(mw *multipart.Writer, dest string, r io.Reader, clock *time.Timer, wall time.Duration, sample *[]byte) error {
	if err := mw.WriteField("path", dest); err != nil {
		return err
	}
	part, err := mw.CreateFormFile("file", path.Base(dest))
	if err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for {
		clock.Stop()
		n, rerr := r.Read(buf)
		clock.Reset(wall)
		if n > 0 {
			if room := sampleBytes - len(*sample); room > 0 {
				*sample = append(*sample, buf[:min(n, room)]...)
			}
			if _, err := part.Write(buf[:n]); err != nil {
				return err
			}
			clock.Reset(wall)
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return &readError{rerr}
		}
	}
	return mw.Close()
}
