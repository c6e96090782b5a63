package wasmshell

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/codeport/codeport/adapters/wasm/internal/shell/wasmshell/protocol"
	"github.com/codeport/codeport/internal/workspace"
)

// The functions the guest imports from the protocol.Module module (see
// ../guest/main_wasip1.go). They are the only channel between a guest and
// the host besides the mounts and the standard streams, and only the
// guest's own Go code calls them: a script cannot, so it cannot end a call
// or choose its status. Each finds its instance through the context of the
// guest's call (setup, run) they are called from.

// maxPythonRequest bounds what the guest may hand over for one python
// command: its stdin is capped at MaxFileBytes in the guest already, and
// the guest's memory bounds the rest.
const maxPythonRequest = 1 << 30

func instantiateHost(ctx context.Context, rt wazero.Runtime) error {
	i32 := api.ValueTypeI32
	b := rt.NewHostModuleBuilder(protocol.Module)
	fn := func(name string, f api.GoModuleFunc, params, results []api.ValueType) {
		b.NewFunctionBuilder().WithGoModuleFunction(f, params, results).Export(name)
	}
	fn("take", hostTake, []api.ValueType{i32, i32}, nil)
	fn("stop_reason", hostStopReason, nil, []api.ValueType{i32})
	fn("python", hostPython, []api.ValueType{i32, i32}, []api.ValueType{i32})
	fn("chmod", hostChmod, []api.ValueType{i32, i32, i32}, []api.ValueType{i32})
	fn("mode", hostMode, []api.ValueType{i32, i32}, []api.ValueType{i32})
	fn("quota_limit", hostQuotaLimit, nil, []api.ValueType{api.ValueTypeI64})
	fn("quota_used", hostQuotaUsed, nil, []api.ValueType{api.ValueTypeI64})
	fn("zone", hostZone, []api.ValueType{i32, i32}, []api.ValueType{i32})
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("wasmshell: instantiate the host module: %w", err)
	}
	return nil
}

func instanceOf(ctx context.Context, m api.Module) *instance {
	inst, _ := ctx.Value(instanceKey{}).(*instance)
	if inst == nil {
		// Only guests started by Shell.start can run; anything else
		// calling these is a bug, and ends that guest.
		panic("wasmshell: host function called outside a shell instance")
	}
	if inst.mod.Load() == nil {
		inst.mod.Store(&m)
	}
	return inst
}

// take(ptr, size): copies into the guest what the request of the call in
// progress or python announced.
func hostTake(ctx context.Context, m api.Module, stack []uint64) {
	inst := instanceOf(ctx, m)
	ptr, size := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	if int(size) != len(inst.pending) || !m.Memory().Write(ptr, inst.pending) {
		panic("wasmshell: take out of range")
	}
	inst.pending = nil
}

// stop_reason() -> Stop: whether the call in progress is to stop.
func hostStopReason(ctx context.Context, m api.Module, stack []uint64) {
	stack[0] = uint64(instanceOf(ctx, m).stop.Load())
}

// python(ptr, size) -> size: runs the python command line in the JSON
// request at ptr and returns the size of its JSON result, which take
// copies.
func hostPython(ctx context.Context, m api.Module, stack []uint64) {
	inst := instanceOf(ctx, m)
	ptr, size := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	inst.callMu.Lock()
	callCtx := inst.callCtx
	inst.callMu.Unlock()
	var res PythonResult
	raw, ok := m.Memory().Read(ptr, size)
	var call PythonCall
	switch {
	case !ok || size > maxPythonRequest:
		res.Error = "bad request"
	case inst.python == nil:
		res.Error, res.Code = "not available", 127
	case callCtx == nil:
		res.Error = "no call in progress"
	case json.Unmarshal(raw, &call) != nil || len(call.Argv) == 0:
		res.Error = "bad request"
	default:
		res = inst.python(callCtx, call)
	}
	out, err := json.Marshal(res)
	if err != nil {
		panic(err)
	}
	inst.pending = out
	stack[0] = uint64(len(out))
}

// zone(ptr, size) -> size: the TZif data of the time zone named at ptr
// (size bytes), announced for take, or protocol.NoZone.
func hostZone(ctx context.Context, m api.Module, stack []uint64) {
	inst := instanceOf(ctx, m)
	ptr, size := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
	stack[0] = protocol.NoZone
	if inst.zone == nil || size > protocol.MaxZoneName {
		return
	}
	name, ok := m.Memory().Read(ptr, size)
	if !ok {
		return
	}
	data, ok := inst.zone(string(name))
	if !ok || len(data) >= protocol.NoZone {
		return
	}
	inst.pending = data
	stack[0] = uint64(len(data))
}

// mounted finds the mount of the guest path at ptr (size bytes) and the
// path inside it; fsys is nil for a path outside the mounts or out of
// range.
func (inst *instance) mounted(m api.Module, ptr, size uint32) (fsys experimentalsys.FS, sub string) {
	raw, ok := m.Memory().Read(ptr, size)
	if !ok || size > workspace.MaxGuestPath {
		return nil, ""
	}
	return workspace.InMount(string(raw), inst.workspace, inst.tmp)
}

// chmod(ptr, size, mode) -> answer: sets the permission bits of the file
// at the guest path, through the mount's file system (which confines it as
// it confines every other call). WASI has no call for it. The guest
// applies the rules already; they hold here whatever it asks (the same
// rules as Python's os.chmod).
func hostChmod(ctx context.Context, m api.Module, stack []uint64) {
	fsys, sub := instanceOf(ctx, m).mounted(m, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	if fsys == nil {
		stack[0] = protocol.ChmodNotFound
		return
	}
	switch workspace.GuestChmod(fsys, sub, fs.FileMode(api.DecodeU32(stack[2]))) {
	case 0:
		stack[0] = protocol.ChmodOK
	case experimentalsys.ENOENT, experimentalsys.ENOTDIR:
		stack[0] = protocol.ChmodNotFound
	case experimentalsys.EPERM, experimentalsys.EACCES:
		stack[0] = protocol.ChmodRefused
	default:
		stack[0] = protocol.ChmodFailed
	}
}

// mode(ptr, size) -> perm or -1: the permission bits of the file at the
// guest path (without following a link), which WASI does not report.
func hostMode(ctx context.Context, m api.Module, stack []uint64) {
	fsys, sub := instanceOf(ctx, m).mounted(m, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	stack[0] = api.EncodeI32(-1)
	if fsys != nil {
		stack[0] = api.EncodeI32(workspace.GuestPerm(fsys, sub))
	}
}

// quota_limit() -> bytes, quota_used() -> bytes: the session's quota for
// df; 0 and 0 when the host did not say.
func hostQuotaLimit(ctx context.Context, m api.Module, stack []uint64) {
	limit, _ := instanceOf(ctx, m).quota()
	stack[0] = api.EncodeI64(limit)
}

func hostQuotaUsed(ctx context.Context, m api.Module, stack []uint64) {
	_, used := instanceOf(ctx, m).quota()
	stack[0] = api.EncodeI64(used)
}
