package wasmpatch

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrHostInterface reports a module that Check finds well formed but not
// runnable by the codeport host: it imports something the host does not
// provide, or lacks an entry point the host calls.
var ErrHostInterface = errors.New("module does not fit the host")

// RequiredExports are the exports every codeport runtime module has, linked
// or patched: its memory, wasi-libc's reactor _initialize, and entry.c's
// entry points.
var RequiredExports = []string{"memory", "_initialize", "codeport_buffer", "codeport_init",
	"codeport_boot", "codeport_run"}

// hostImports are the functions the host provides besides WASI preview 1's
// (adapters/wasm): filemode.c's permission bits (codeport_fs) and, in the
// scientific module, exceptions.cpp's unwinding (codeport_cxx.throw; the
// lowering's InvokeImportModule.InvokeImportPrefix* trampolines are allowed
// by prefix).
var hostImports = map[[2]string]bool{
	{"codeport_fs", "mode"}:   true,
	{"codeport_fs", "chmod"}:  true,
	{"codeport_cxx", "throw"}: true,
}

// CheckResult is what Check read of a module.
type CheckResult struct {
	Imports int      // imports of any kind
	Exports []string // export names, sorted
}

// Check reads module's import and export sections and fails, with an error
// wrapping ErrHostInterface, unless it imports nothing but functions of
// wasi_snapshot_preview1 and the host's own (codeport_fs.mode,
// codeport_fs.chmod, codeport_cxx.throw, env.invoke_*), and exports
// RequiredExports and every name in extraExports. The runtime's build
// runs it on the linked module and again on the patched one (which must
// also export InitDataFunc). A module that is not a WebAssembly binary, or
// whose import or export section is malformed, is an error wrapping
// ErrMalformed; other sections are only skipped.
func Check(module []byte, extraExports ...string) (CheckResult, error) {
	var res CheckResult
	r, err := newModuleReader(module)
	if err != nil {
		return res, err
	}
	var bad []string
	exports := map[string]bool{}
	for r.remaining() > 0 {
		r.where = "section list"
		id, err := r.byte("section id")
		if err != nil {
			return res, err
		}
		size, err := r.u32("section size")
		if err != nil {
			return res, err
		}
		body, err := r.sub(size, "section")
		if err != nil {
			return res, err
		}
		var skipped vecSection
		switch id {
		case secImport:
			body.where = "import section"
			err = parseVec(body, &skipped, "import", func(uint32) error {
				mod, name, kind, err := readImport(body)
				if err != nil {
					return err
				}
				res.Imports++
				if kind != externFunc || !(mod == "wasi_snapshot_preview1" || hostImports[[2]string{mod, name}] ||
					(mod == InvokeImportModule && strings.HasPrefix(name, InvokeImportPrefix))) {
					bad = append(bad, mod+"."+name)
				}
				return nil
			})
		case secExport:
			body.where = "export section"
			err = parseVec(body, &skipped, "export", func(uint32) error {
				name, err := body.name("export name")
				if err != nil {
					return err
				}
				if _, err := body.byte("export kind"); err != nil {
					return err
				}
				exports[name] = true
				return body.skipU32("export index")
			})
		}
		if err != nil {
			return res, err
		}
	}
	for name := range exports {
		res.Exports = append(res.Exports, name)
	}
	slices.Sort(res.Exports)
	var missing []string
	for _, name := range append(slices.Clone(RequiredExports), extraExports...) {
		if !exports[name] && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if len(bad) > 0 || len(missing) > 0 {
		return res, fmt.Errorf("wasmpatch: %w: imports outside WASI preview 1 and the host's (codeport_fs, codeport_cxx, env.invoke_*): [%s]; missing exports: [%s]",
			ErrHostInterface, strings.Join(bad, " "), strings.Join(missing, " "))
	}
	return res, nil
}

// readImport decodes one import entry, skipping its type.
func readImport(r *reader) (mod, name string, kind byte, err error) {
	if mod, err = r.name("import module name"); err != nil {
		return
	}
	if name, err = r.name("import name"); err != nil {
		return
	}
	at := r.pos
	if kind, err = r.byte("import kind"); err != nil {
		return
	}
	switch kind {
	case externFunc:
		err = r.skipU32("type index")
	case externTable:
		if err = readRefType(r, "table element type"); err == nil {
			err = readLimits(r)
		}
	case externMemory:
		err = readLimits(r)
	case externGlobal:
		if err = readValType(r, "global type"); err == nil {
			_, err = readMutability(r)
		}
	case externTag:
		// An exception-handling tag: attribute 0, then a type index.
		if _, err = r.byte("tag attribute"); err == nil {
			err = r.skipU32("tag type index")
		}
	default:
		r.pos = at
		err = r.malformed("unknown import kind %#x", kind)
	}
	return
}
