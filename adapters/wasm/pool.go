package wasm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/codeport/codeport/internal/workspace"
	"github.com/codeport/codeport/port"
)

// sandbox is what a session runs in: a host directory holding the
// workspace and the temporary directory, their shared quota, and an
// interpreter that has run nobody's code yet.
type sandbox struct {
	eng       *engine     // recycles the interpreter
	spareDirs chan string // takes the emptied directories
	dir       string
	ws        *workspace.Workspace
	tmpDir    string
	quota     *workspace.Quota
	outputs   *workspace.Outputs // copies of the files calls produced
	interp    *interpreter
}

// mounts are the file systems of the sandbox's interpreters: the
// workspace (recording what they write) and the temporary directory.
func (sb *sandbox) mounts() mounts {
	return mounts{sb.ws.SysFS(), workspace.NewSysFS(sb.tmpDir, sb.quota)}
}

// discard recycles the interpreter (or stops it), and empties the
// directories for a next sandbox (or removes them).
//
// Making and removing a session's four directories cost more than the
// rest of a short session: every session of the process makes them in
// one parent, whose lock serialised the creations of concurrent sessions
// (measured in a churn of create, print, destroy from two clients: mkdir
// was a third of the CPU, and the node used 1.1 of its 2 cores).
func (sb *sandbox) discard() {
	switch {
	case sb.interp != nil && sb.eng != nil:
		sb.eng.recycle(sb.interp)
	case sb.interp != nil:
		sb.interp.kill()
	}
	if sb.spareDirs != nil && emptySandboxDirs(sb.dir) == nil {
		select {
		case sb.spareDirs <- sb.dir:
			return
		default:
		}
	}
	_ = os.RemoveAll(sb.dir)
}

// spareSandboxDirs bounds the emptied sandbox directories kept.
const spareSandboxDirs = 8

// sandboxSubdirs are the directories a sandbox's directory holds.
var sandboxSubdirs = [...]string{"workspace", "tmp", "outputs"}

// emptySandboxDirs removes what a sandbox's directories hold, and checks
// that they are as newSandboxDirs makes them: the three directories, with
// their modes, and nothing else.
func emptySandboxDirs(dir string) error {
	names, err := readNames(dir)
	if err != nil {
		return err
	}
	if len(names) != len(sandboxSubdirs) {
		return fmt.Errorf("%d entries in a sandbox directory", len(names))
	}
	for _, sub := range sandboxSubdirs {
		p := filepath.Join(dir, sub)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			return fmt.Errorf("%s is %s", sub, fi.Mode())
		}
		inside, err := readNames(p)
		if err != nil {
			return err
		}
		for _, n := range inside {
			if err := os.RemoveAll(filepath.Join(p, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// removeSpareDirs removes the emptied sandbox directories kept.
func (a *adapter) removeSpareDirs() {
	for {
		select {
		case dir := <-a.spareDirs:
			_ = os.RemoveAll(dir)
		default:
			return
		}
	}
}

// claimSessionsDir takes this process's part of a configured sessions
// directory (see workspace.ClaimDir): the directories of sessions of
// processes that died without cleaning up (kill -9, a crash) are removed
// first, since nothing else would ever remove those users' files, and the
// parts of live processes sharing the directory are left alone.
func claimSessionsDir(dir string, log *slog.Logger) (*workspace.Claim, error) {
	c, err := workspace.ClaimDir(dir)
	if err != nil {
		return nil, err
	}
	logSweep(log, c)
	return c, nil
}

// logSweep logs what making claim c swept (nothing without a claim).
func logSweep(log *slog.Logger, c *workspace.Claim) {
	if c == nil {
		return
	}
	if c.Swept() > 0 {
		log.Info("removed the session directories of processes that are gone", "count", c.Swept())
	}
	if err := c.SweepErr(); err != nil {
		log.Warn("could not remove some session directories of processes that are gone", "error", err)
	}
}

// newSandbox makes the directories and an interpreter over them.
func (a *adapter) newSandbox(ctx context.Context) (*sandbox, error) {
	sb, err := a.newSandboxDirs()
	if err != nil {
		return nil, err
	}
	if sb.interp, err = a.startInterpreter(ctx, sb.mounts()); err != nil {
		sb.discard()
		return nil, err
	}
	return sb, nil
}

// newSandboxDirs makes a sandbox's directories, without an interpreter.
func (a *adapter) newSandboxDirs() (*sandbox, error) {
	var dir string
	select {
	case dir = <-a.spareDirs:
	default:
		dir = filepath.Join(a.sessionsDir, uuid.NewString())
	}
	quota := workspace.NewQuota(a.cfg.settings.WorkspaceLimit).WithEntryLimit(int64(a.cfg.settings.WorkspaceEntries))
	ws, err := workspace.New(filepath.Join(dir, "workspace"), quota)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("%w: create workspace: %v", port.ErrRuntimeFailure, err)
	}
	sb := &sandbox{eng: a.eng, spareDirs: a.spareDirs, dir: dir, ws: ws, tmpDir: filepath.Join(dir, "tmp"), quota: quota}
	if err := os.Mkdir(sb.tmpDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		sb.discard()
		return nil, fmt.Errorf("%w: create temporary directory: %v", port.ErrRuntimeFailure, err)
	}
	if sb.outputs, err = workspace.NewOutputs(filepath.Join(dir, "outputs"), quota, maxKeptOutputs); err != nil {
		sb.discard()
		return nil, fmt.Errorf("%w: create outputs directory: %v", port.ErrRuntimeFailure, err)
	}
	return sb, nil
}

// takeSandbox hands out a pooled sandbox if one is ready, else boots one;
// either way it asks the pool to refill.
func (a *adapter) takeSandbox(ctx context.Context) (*sandbox, error) {
	if a.cfg.settings.WarmPool > 0 {
		defer a.askRefill()
		select {
		case sb := <-a.pool:
			a.metrics.PoolTaken(true)
			return sb, nil
		default:
			a.metrics.PoolTaken(false)
		}
	}
	return a.newSandbox(ctx)
}

func (a *adapter) askRefill() {
	select {
	case a.refill <- struct{}{}:
	default: // a refill is already asked for
	}
}

// fillPool keeps the pool at its size until ctx ends, booting up to
// poolRefill sandboxes at a time, and empties it at the end. With a refill
// of 0 it fills the pool once, one sandbox at a time, and never again. It
// closes a.warm once the pool first holds its size.
func (a *adapter) fillPool(ctx context.Context) {
	conc, once := a.cfg.settings.WarmPoolRefill, a.cfg.settings.WarmPoolRefill == 0
	if once {
		conc = 1
	}
	defer func() {
		for {
			select {
			case sb := <-a.pool:
				sb.discard()
			default:
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.refill:
		}
		for missing := a.cfg.settings.WarmPool - len(a.pool); missing > 0 && ctx.Err() == nil; missing = a.cfg.settings.WarmPool - len(a.pool) {
			n := min(missing, conc)
			var wg sync.WaitGroup
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sb, err := a.newSandbox(ctx)
					if err != nil {
						if ctx.Err() == nil {
							a.cfg.logger.Warn("warm pool: could not start an interpreter", "error", err)
						}
						return
					}
					select {
					case a.pool <- sb:
					default:
						sb.discard() // the pool filled meanwhile
					}
				}()
			}
			wg.Wait()
			if ctx.Err() == nil && len(a.pool) < a.cfg.settings.WarmPool && n > 0 {
				// Starting failed: do not spin; try again on the next take
				// or after a pause.
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}
		if len(a.pool) >= a.cfg.settings.WarmPool {
			a.warmOnce.Do(func() { close(a.warm) })
		}
		if once && ctx.Err() == nil {
			<-ctx.Done()
			return
		}
	}
}

// WaitWarm waits until the warm pool of p, a port New returned, has first
// held its size (at once when the pool is off), so that the next
// CreateSession is a pool hit. It fails when ctx ends first, the runtime
// failed to compile, or p is not this package's.
func WaitWarm(ctx context.Context, p *port.Port) error {
	a, ok := p.Driver().(*adapter)
	if !ok {
		return fmt.Errorf("wasm.WaitWarm: a %s port, not a wasm one", p.Name())
	}
	return a.waitWarm(ctx)
}

func (a *adapter) waitWarm(ctx context.Context) error {
	if err := a.WaitReady(ctx); err != nil || a.cfg.settings.WarmPool == 0 {
		return err
	}
	select {
	case <-a.warm:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
