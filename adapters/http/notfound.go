package httpadapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/codeport/codeport/port"
)

// settleNotFound resolves the one ambiguity a backend without error codes
// leaves: a 404 from a file route (a *sessionOrFile, see statusError),
// which may mean that the session is gone or that the file is missing. It
// asks the backend by listing the session's workspace root, which exists
// as long as the session does: a 404 there means the session is gone,
// any success that the session lives and so the file is what is missing.
// When the probe cannot tell (a transport failure, another error), err
// stands: a missing file, the reading that holds while the session lives,
// with the probe's failure in its message. Any other err is returned as
// is, without a request.
//
// It never reads an error's text. Its limit: a backend that has the file
// routes but not the listing answers the probe 404 too, and the session is
// then reported gone; the reference backend and codeport both list.
func (a *adapter) settleNotFound(ctx context.Context, c *call, err error) error {
	var amb *sessionOrFile
	if !errors.As(err, &amb) {
		return err
	}
	probe := &call{op: opProbe, method: http.MethodGet, path: sessionPath(c.session, "/files/list"),
		route: "GET /sessions/{id}/files/list", session: c.session, wall: a.cfg.settings.RequestTimeout}
	_, _, perr := a.roundTrip(ctx, probe, "path=.", nil)
	switch {
	case perr == nil:
		return fmt.Errorf("%s: %w (the session lives)", amb.msg, port.ErrFileNotFound)
	case errors.Is(perr, port.ErrSessionNotFound):
		return fmt.Errorf("%s: %w (its workspace cannot be listed either)", amb.msg, port.ErrSessionNotFound)
	}
	return fmt.Errorf("%w; whether the session lives is unknown: %v", err, perr)
}
