package responses

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/codeport/codeport/port"
)

// destroyTimeout bounds the DestroySession that RunCall always makes.
const destroyTimeout = 10 * time.Second

// RunCall runs one planned call with fresh Python state: it creates a
// session for this call alone, executes the code (timeout is the
// execution timeout; zero means the backend's default), destroys the
// session and maps what happened with OutcomeOf. The session is destroyed
// with a context that outlives a cancelled or expired ctx.
//
// ctx is the gateway's own deadline: if it expires before the call ends,
// the outcome is OuterTimeout even when the port reports the call as
// cancelled; if it is cancelled, Cancelled. Partial output is kept.
func RunCall(ctx context.Context, p port.CodeExecutionPort, plan Plan, timeout time.Duration) Outcome {
	s, err := p.CreateSession(ctx, port.CreateSessionRequest{})
	if err != nil {
		return OutcomeOf(port.Result{}, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), destroyTimeout)
		defer cancel()
		_ = p.DestroySession(dctx, s.ID)
	}()
	res, err := p.Execute(ctx, s.ID, plan.request(timeout))
	o := outcomeIn(ctx, res, err)
	fetchFiles(ctx, p, s.ID, o.Files)
	return o
}

// MaxFetchedBytes bounds the bytes of produced files RunCall fetches for
// one call; files beyond it are listed without their bytes.
const MaxFetchedBytes = 32 << 20

// fetchFiles reads the produced files of a call's session, in order, while
// their bytes fit in MaxFetchedBytes; a file whose bytes came inline is
// not read again. A file that cannot be read, or does not fit, keeps a nil
// Data.
func fetchFiles(ctx context.Context, p port.CodeExecutionPort, sessionID string, files []ProducedFile) {
	budget := int64(MaxFetchedBytes)
	for i := range files {
		f := &files[i]
		if f.Data != nil {
			budget -= int64(len(f.Data)) // came inline: held already
			continue
		}
		rc, info, err := p.GetOutputFile(ctx, sessionID, f.FileID)
		if err != nil {
			continue
		}
		if info.Size > budget {
			rc.Close()
			continue
		}
		data, err := io.ReadAll(io.LimitReader(rc, budget+1))
		rc.Close()
		if err != nil || int64(len(data)) > budget {
			continue
		}
		budget -= int64(len(data))
		f.Data, f.MimeType = data, info.MimeType // non-nil even when empty
	}
}

// request is the port request that runs the plan.
func (plan Plan) request(timeout time.Duration) port.ExecuteRequest {
	return port.ExecuteRequest{Tool: port.ToolCodeExecution, Code: plan.Code, Timeout: timeout, ToolUseID: plan.CallID}
}

// outcomeIn is OutcomeOf for a call made in ctx: when ctx has ended and
// the port reported that (a cancelled call, or an error of its own), the
// outcome says which way ctx ended.
func outcomeIn(ctx context.Context, res port.Result, err error) Outcome {
	if cerr := ctx.Err(); cerr != nil && (err == nil && res.Outcome == port.OutcomeCancelled || err != nil && !errors.Is(err, cerr)) {
		err = cerr
	}
	return OutcomeOf(res, err)
}
