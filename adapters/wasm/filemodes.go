package wasm

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/codeport/codeport/internal/workspace"
)

// The host module codeport_fs gives the interpreter the permission bits
// WASI's file status lacks, and chmod, which WASI lacks: the runtime's
// filemode.c calls them for os.stat, os.lstat, os.DirEntry.stat and
// os.chmod, by absolute guest path. Only the files of /workspace and /tmp
// have bits here; they are the host's files, set within the rules of the
// bash tool's chmod (workspace.AllowedMode).
const fileModesModule = "codeport_fs"

// WASI's errno numbers (wasi-libc's errno), for chmod's answers.
const (
	wasiEACCES       = 2
	wasiEIO          = 29
	wasiENAMETOOLONG = 37
	wasiENOENT       = 44
	wasiENOTDIR      = 54
	wasiEPERM        = 63
)

type mountsKey struct{}

// withMounts gives the host functions called during ctx the mounts of the
// instance calling them.
func withMounts(ctx context.Context, m mounts) context.Context {
	return context.WithValue(ctx, mountsKey{}, m)
}

// instantiateFileModes adds the host module to rt.
func instantiateFileModes(ctx context.Context, rt wazero.Runtime) error {
	i32 := api.ValueTypeI32
	b := rt.NewHostModuleBuilder(fileModesModule)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostFileMode), []api.ValueType{i32, i32}, []api.ValueType{i32}).Export("mode")
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(hostFileChmod), []api.ValueType{i32, i32, i32}, []api.ValueType{i32}).Export("chmod")
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("instantiate %s: %w", fileModesModule, err)
	}
	return nil
}

// mountOf finds the mount of the guest path at ptr (size bytes) and the
// path inside it ("." for its root); fsys is nil outside the mounts, for a
// call without mounts, or for a path out of range.
func mountOf(ctx context.Context, mod api.Module, ptr, size uint32) (fsys experimentalsys.FS, sub string) {
	m, ok := ctx.Value(mountsKey{}).(mounts)
	if !ok || size > workspace.MaxGuestPath {
		return nil, ""
	}
	raw, ok := mod.Memory().Read(ptr, size)
	if !ok {
		return nil, ""
	}
	return workspace.InMount(string(raw), m.work, m.tmp)
}

// mode(path, len) -> the permission bits of the file, or -1.
func hostFileMode(ctx context.Context, mod api.Module, stack []uint64) {
	fsys, sub := mountOf(ctx, mod, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	stack[0] = api.EncodeI32(-1)
	if fsys != nil {
		stack[0] = api.EncodeI32(workspace.GuestPerm(fsys, sub))
	}
}

// chmod(path, len, mode) -> 0 or a WASI errno.
func hostFileChmod(ctx context.Context, mod api.Module, stack []uint64) {
	size := api.DecodeU32(stack[1])
	fsys, sub := mountOf(ctx, mod, api.DecodeU32(stack[0]), size)
	switch {
	case size > workspace.MaxGuestPath:
		stack[0] = wasiENAMETOOLONG
	case fsys == nil:
		stack[0] = wasiEPERM // outside the mounts every file is the system's
	default:
		stack[0] = errnoOf(workspace.GuestChmod(fsys, sub, fs.FileMode(api.DecodeU32(stack[2]))))
	}
}

// errnoOf is WASI's number for a file system error.
func errnoOf(errno experimentalsys.Errno) uint64 {
	switch errno {
	case 0:
		return 0
	case experimentalsys.ENOENT:
		return wasiENOENT
	case experimentalsys.ENOTDIR:
		return wasiENOTDIR
	case experimentalsys.EPERM:
		return wasiEPERM
	case experimentalsys.EACCES:
		return wasiEACCES
	default:
		return wasiEIO
	}
}
