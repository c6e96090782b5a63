"""Run codeport's own CPython module under Wasmtime; print JSON on stdout.

The ceiling, not a peer: the same WebAssembly module codeport embeds
(adapters/wasm/internal/cpython/runtime/python.wasm, and for S1 the
scientific profile's python-scientific.wasm), byte for byte, run by
Wasmtime (Cranelift) through the wasmtime package instead of by wazero. What
separates codeport in process from this column is wazero's code generation
and codeport's host; what separates this column from native CPython is the
build (WebAssembly, no SIMD, no BLAS) and what WebAssembly itself costs.
bench/cmd/sidebyside runs it in a virtual environment with a pinned
wasmtime and merges its numbers into the table as the "wasmtime" peer.

How the module is driven, as adapters/wasm/engine.go drives it (entry.c
documents the exports):

- WASI as codeport gives it: argv ["python3"]; HOME=/workspace,
  TMPDIR=/tmp, LANG=C.UTF-8; stdin at end of file; stdout and stderr
  captured; preopened, in codeport's order, /workspace and /tmp (empty
  scratch directories here), /usr/local/lib (read-only: the standard
  library's zip, and for the scientific profile site-scientific.zip, where
  entry.c puts them on sys.path) and / (read-only and empty: every other
  path is missing, as in codeport's guest root). Wall and monotonic clocks
  and random bytes are the host's.
- Exports, in entry.c's order: codeport_init_data (wasmpatch's: the data
  segments, made passive so that codeport can restore images), _initialize
  (wasi-libc), codeport_init (CPython), then adapters/wasm/driver.py,
  codeport's own in-guest driver, written into codeport_buffer and run by
  codeport_boot. Then codeport_run requests as codeport makes them: "W"
  (warm-up imports, here none), "S" (a session starts) and one "C" per
  cell, its source written into codeport_buffer first. Codeport starts a
  session from a memory image of an interpreter booted so far; here the
  session is booted in place, off the clock: W5 and S1 time calls in a live
  session, which are the same calls either way.
- codeport_interrupt, the global wasmpatch's safepoints test, is never set:
  no deadline, nothing stops a call. The safepoints themselves run (they are
  in the module), as they do in codeport.

Host functions beyond WASI, with minimal implementations (see each one):
codeport_fs.mode and chmod for both modules; for the scientific module
codeport_cxx.throw and env.invoke_<sig>, its C++ exceptions.

Each workload's timing is codeport's: W5 (bench/workloads_test.go) is
reps(5) calls of CPU_CODE in one session, each timed from writing the
request to reading its output; S1 (bench/scientific_test.go) runs its setup
and one call off the clock, then times reps(15) calls. Compiling a module
takes Cranelift tens of seconds, so the compiled code is saved next to this
environment's interpreter (sys.prefix/wasmtime-cache/) and loaded by later
runs; neither is on any clock.

Environment: CODEPORT_BENCH_SCALE scales the sample counts (default 1).
"""

import hashlib
import importlib.metadata
import json
import os
import platform
import shutil
import sys
import tempfile
import time

import wasmtime
from peerbench import CPU_CODE, CPU_OUT, SCI_MATMUL, report, reps

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPYTHON = os.path.join(ROOT, 'adapters', 'wasm', 'internal', 'cpython')
STDLIB_ZIP = os.path.join(CPYTHON, 'runtime', 'python313.zip')
DRIVER = os.path.join(ROOT, 'adapters', 'wasm', 'driver.py')
DEFAULT_MODULE = os.path.join(CPYTHON, 'runtime', 'python.wasm')
SCIENTIFIC_MODULE = os.path.join(CPYTHON, 'scientific', 'runtime', 'python-scientific.wasm')
SITE_ZIP = os.path.join(CPYTHON, 'scientific', 'runtime', 'site-scientific.zip')

# Request kinds (driver.py) and codeport_run's statuses (entry.c).
REQUEST_CELL, REQUEST_WARM, REQUEST_SESSION = ord('C'), ord('W'), ord('S')
STATUS_OK = 0

# wasmpatch's export of the module's stack pointer (global 0), which a
# caught C++ exception restores.
STACK_POINTER = 'codeport_global.0'

# What cannot run under Wasmtime, by workload, with the reason (none so
# far).
OMITTED = {}

WASMTIME_VERSION = importlib.metadata.version('wasmtime')


class CxxThrow(Exception):
    """A C++ exception (or longjmp) under way: raised by codeport_cxx.throw
    and caught by the nearest env.invoke_ on the stack."""


class Interpreter:
    """One instance of the module, booted to a live session."""

    def __init__(self, engine, module, libs, scratch):
        self.stdout, self.stderr = bytearray(), bytearray()
        self.invokes = 0  # env.invoke_ calls made, for the metadata
        self.store = wasmtime.Store(engine)
        try:
            self._boot(engine, module, libs, scratch)
        except BaseException:
            self.close()
            raise

    def _boot(self, engine, module, libs, scratch):
        self.store.set_wasi(self._wasi(libs, scratch))
        linker = wasmtime.Linker(engine)
        linker.define_wasi()
        self._define_file_modes(linker)
        self._define_cxx(linker, module)
        self.instance = linker.instantiate(self.store, module)
        ex = self.instance.exports(self.store)
        self.memory = ex['memory']
        self.buffer, self.run_fn = ex['codeport_buffer'], ex['codeport_run']
        ex['codeport_init_data'](self.store)
        ex['_initialize'](self.store)
        if ex['codeport_init'](self.store) != 0:
            raise RuntimeError(f'codeport_init failed: {self.stderr.decode(errors="replace")}')
        with open(DRIVER, 'rb') as f:
            driver = f.read()
        self._write(driver)
        if ex['codeport_boot'](self.store, len(driver)) != 0:
            raise RuntimeError(f'codeport_boot failed: {self.stderr.decode(errors="replace")}')
        self.request(REQUEST_WARM, b'[]')
        self.request(REQUEST_SESSION, b'0 0')  # no workspace limit

    def _wasi(self, libs, scratch):
        cfg = wasmtime.WasiConfig()
        cfg.argv = ['python3']
        cfg.env = [('HOME', '/workspace'), ('TMPDIR', '/tmp'), ('LANG', 'C.UTF-8')]
        cfg.stdin_file = os.devnull
        cfg.stdout_custom = self.stdout.extend
        cfg.stderr_custom = self.stderr.extend
        for name in ('workspace', 'tmp', 'root'):
            os.makedirs(os.path.join(scratch, name), exist_ok=True)
        cfg.preopen_dir(os.path.join(scratch, 'workspace'), '/workspace')
        cfg.preopen_dir(os.path.join(scratch, 'tmp'), '/tmp')
        cfg.preopen_dir(libs, '/usr/local/lib', False)
        cfg.preopen_dir(os.path.join(scratch, 'root'), '/', False)
        return cfg

    def _define_file_modes(self, linker):
        """codeport_fs (runtime/filemode.c): the permission bits WASI's file
        status lacks, and chmod. Codeport answers for the files of
        /workspace and /tmp; here mode says "no bits to give" (-1) for every
        path, which the runtime takes as a read-only system file, and chmod
        refuses (EPERM) as codeport does outside its mounts. Neither is on
        W5's or S1's path once the session has started."""
        i32 = wasmtime.ValType.i32()
        linker.define_func('codeport_fs', 'mode', wasmtime.FuncType([i32, i32], [i32]), lambda path, size: -1)
        linker.define_func('codeport_fs', 'chmod', wasmtime.FuncType([i32, i32, i32], [i32]),
                           lambda path, size, mode: 63)  # WASI's EPERM

    def _define_cxx(self, linker, module):
        """C++ exceptions and setjmp/longjmp, for a module compiled with
        LLVM's Emscripten-style lowering (the scientific one; see
        adapters/wasm/cxxexceptions.go). The guest calls whatever may throw
        through env.invoke_<sig>(fp, args...): the host calls function fp of
        table 0 with args, through the dispatcher wasmpatch exports for it
        (codeport_invoke.<sig>), and if a throw happens inside, restores the
        stack pointer to its value at the invoke_'s start and returns zero.
        The guest sets and reads its own __THREW__ in memory. To throw, the
        guest calls codeport_cxx.throw, which never returns: here it raises
        CxxThrow, which wasmtime turns into a trap through every wasm frame
        up to the nearest invoke_'s call of its dispatcher, where the
        wasmtime package raises it again, in that invoke_, which catches it.
        Codeport does the same with a Go panic. A throw with no invoke_ on the
        stack ends the request with CxxThrow: the run fails, as codeport's
        call would crash."""
        for imp in module.imports:
            if imp.module == 'codeport_cxx' and imp.name == 'throw':
                linker.define_func('codeport_cxx', 'throw', imp.type, self._throw)
            elif imp.module == 'env' and imp.name.startswith('invoke_'):
                linker.define_func('env', imp.name, imp.type,
                                   self._invoke('codeport_invoke.' + imp.name[len('invoke_'):], imp.type.results),
                                   access_caller=True)
            elif imp.module not in ('wasi_snapshot_preview1', 'codeport_fs'):
                raise RuntimeError(f'the module imports {imp.module}.{imp.name}, which this driver does not provide')

    @staticmethod
    def _throw():
        raise CxxThrow()

    def _invoke(self, dispatcher, results):
        zero = None
        if results:
            kind = str(results[0])
            zero = 0.0 if kind in ('f32', 'f64') else 0

        def invoke(caller, *args):
            self.invokes += 1
            sp = caller[STACK_POINTER]
            saved = sp.value(caller)
            try:
                return caller[dispatcher](caller, *args)
            except CxxThrow:
                sp.set_value(caller, saved)
                return zero

        return invoke

    def _write(self, payload):
        ptr = self.buffer(self.store, len(payload))
        if ptr == 0:
            raise MemoryError('codeport_buffer: no memory for the request')
        self.memory.write(self.store, payload, ptr)

    def request(self, kind, payload):
        """One codeport_run; returns what it printed to stdout."""
        del self.stdout[:]
        del self.stderr[:]
        self._write(payload)
        r = self.run_fn(self.store, kind, len(payload))
        status, rc = (r >> 32) & 0xFFFFFFFF, r & 0xFFFFFFFF
        if status != STATUS_OK or rc != 0:
            raise RuntimeError(f'request {chr(kind)!r}: status {status}, return code {rc}: '
                               f'{self.stderr.decode(errors="replace")[-800:]}')
        return self.stdout.decode('utf-8', 'replace')

    def close(self):
        """Frees the store now: left to the end of the process, its WASI
        context (whose output callbacks are Python's) would be freed while
        the interpreter shuts down, which aborts the process."""
        self.store.close()

    def cell(self, code, want):
        out = self.request(REQUEST_CELL, code.encode())
        if want and out != want:
            raise RuntimeError(f'{code!r} printed {out!r}, want {want!r}')


def compiled(engine, path, notes):
    """The module at path, compiled by Cranelift or loaded from the
    environment's cache of compiled code (keyed by the module's sha256 and
    wasmtime's version)."""
    with open(path, 'rb') as f:
        wasm = f.read()
    key = hashlib.sha256(wasm).hexdigest()[:16]
    cache = os.path.join(sys.prefix, 'wasmtime-cache')
    cached = os.path.join(cache, f'{os.path.basename(path)}-{key}-wasmtime{WASMTIME_VERSION}.cwasm')
    name = os.path.basename(path)
    t0 = time.perf_counter()
    if os.path.exists(cached):
        try:
            module = wasmtime.Module.deserialize_file(engine, cached)
            notes[name] = f'loaded from the environment in {(time.perf_counter() - t0) * 1e3:.0f} ms'
            return module
        except wasmtime.WasmtimeError as e:
            print(f'wasmtime: cached {name} unusable, compiling: {e}', file=sys.stderr)
    module = wasmtime.Module(engine, wasm)
    notes[name] = f'compiled in {time.perf_counter() - t0:.1f} s'
    tmp = f'{cached}.{os.getpid()}.tmp'
    try:
        os.makedirs(cache, exist_ok=True)
        with open(tmp, 'wb') as f:
            f.write(module.serialize())
        os.replace(tmp, cached)
        notes[name] += ' and saved in the environment'
    except OSError as e:
        print(f'wasmtime: {name} not saved: {e}', file=sys.stderr)
        try:
            os.remove(tmp)
        except OSError:
            pass
    return module


def library(scratch, zips):
    """The directory mounted at /usr/local/lib: the zips, linked (or
    copied) into it, since a preopened directory may not reach outside
    itself through a symbolic link."""
    lib = os.path.join(scratch, 'lib')
    os.makedirs(lib, exist_ok=True)
    for z in zips:
        dst = os.path.join(lib, os.path.basename(z))
        try:
            os.link(z, dst)
        except OSError:
            shutil.copyfile(z, dst)
    return lib


def timed(it, code, want, n):
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        it.cell(code, want)
        samples.append(time.perf_counter() - t0)
    return samples


def w5(engine, notes, meta):
    module = compiled(engine, DEFAULT_MODULE, notes)
    with tempfile.TemporaryDirectory(prefix='codeport-wasmtime-') as scratch:
        it = Interpreter(engine, module, library(scratch, [STDLIB_ZIP]), scratch)
        try:
            meta['sandbox_python'] = it.request(REQUEST_CELL, b'import sys; print(sys.version.split()[0])').strip()
            return report('loop', timed(it, CPU_CODE, CPU_OUT, reps(5)))
        finally:
            it.close()


def s1(engine, notes, meta):
    module = compiled(engine, SCIENTIFIC_MODULE, notes)
    setup, code, want, n = SCI_MATMUL
    with tempfile.TemporaryDirectory(prefix='codeport-wasmtime-') as scratch:
        it = Interpreter(engine, module, library(scratch, [STDLIB_ZIP, SITE_ZIP]), scratch)
        try:
            it.cell(setup, '')
            it.cell(code, want)  # the first call's one-off costs
            before = it.invokes
            n = reps(n)
            out = report('matmul', timed(it, code, want, n))
            meta['s1_invokes_per_call'] = f'{(it.invokes - before) / n:.0f}'
            meta['s1_setup_invokes'] = f'{before}'
            return out
        finally:
            it.close()


def main():
    # Cranelift at its default ("speed"), the instance's memory unbounded
    # by the store (codeport's memory limit only caps memory.grow), no fuel
    # and no epochs: nothing costs a call what a deadline would.
    engine = wasmtime.Engine(wasmtime.Config())
    notes, meta = {}, {}
    results = {}
    for name, fn in [('W5CPULoop', w5), ('S1Matmul', s1)]:
        if name in OMITTED:
            continue
        t0 = time.perf_counter()
        try:
            results[name] = fn(engine, notes, meta)
        except Exception as e:  # one workload's failure is that cell's n/a
            results[name] = {'na': 1.0}
            print(f'wasmtime {name}: {type(e).__name__}: {e}', file=sys.stderr)
        print(f'wasmtime {name}: {time.perf_counter() - t0:.1f}s', file=sys.stderr)
    meta.update({
        'wasmtime_version': WASMTIME_VERSION,
        'python': platform.python_version(),
        'modules': '; '.join(f'{k} {v}' for k, v in notes.items()),
        'omitted': '; '.join(f'{k}: {v}' for k, v in OMITTED.items()),
    })
    json.dump({'wasmtime': results, 'meta': meta}, sys.stdout)
    print()


if __name__ == '__main__':
    main()
