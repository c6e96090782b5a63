"""Drive eryx (pyeryx) through bench's workloads; print JSON on stdout.

A cross-check against a real peer, not product code: bench/cmd/sidebyside
runs it in a virtual environment with a pinned pyeryx (on a Python >= 3.12:
its only wheel is cp312-abi3) and merges its numbers into the table. The
workloads and metric names mirror bench/workloads_test.go, as
bench/monty_driver.py does; what eryx cannot express is left out (the
table shows it as n/a) and named in the metadata's "omitted".

Eryx's model: CPython 3.14 compiled to WebAssembly, run by Wasmtime inside
this process (no worker processes). It has two ways to run code:

- `eryx.Session()`: a stateful interpreter (variables persist across
  `execute` calls); there is no pool of sessions, so making one is always a
  cold start from eryx's pre-initialized runtime, and dropping it destroys it.
- `SandboxFactory().create_pool(min_idle=...)`: a pool of warm sandboxes; an
  `acquire()` leases one and leaving the `with` block returns it. A sandbox
  is stateless (each `execute` starts from a fresh interpreter), and the pool
  does not refill in the background: a lease with no idle sandbox creates one
  on demand, which its stats count.

So: a warm pool hit (W1Warm), create + call + destroy (W3), the curve and the
burst lease from a pool, as monty's checkouts do; the cold start (W1Cold) and
everything that needs a live session's state (W2, W4, W5, W6) use a fresh
Session. Concurrent clients are threads: `execute` and `acquire` release the
GIL.

The process's first Session compiles eryx's runtime (most of a second, once
per process); it is made before any workload, off every clock, like codeport's
interpreter image. Building a SandboxFactory takes tens of seconds, so the
factory is saved next to this environment's interpreter
(sys.prefix/eryx-factory-<version>.bin) and loaded from there by later runs.

Environment: CODEPORT_BENCH_SCALE scales the sample counts (default 1);
CODEPORT_BENCH_BURST_POOL and CODEPORT_BENCH_BURST shape the burst.
"""

import json
import os
import platform
import sys
import threading
import time

import eryx
from peerbench import (CPU_CODE, CPU_OUT, CURVE_CLIENTS, DEFAULT_POOL, FIRST_CODE, FIRST_OUT, IDLE_CODE,
                       IDLE_SESSIONS, LIVE_CODE, LIVE_OUT, TEN_CELLS, TEN_CELLS_OUT, curve_on, env_int,
                       in_threads, process_start, report, reps, rss_tree, time_session_ends)

# What eryx cannot run, by workload, with the reason (none so far: every
# workload of monty_driver.py has an eryx counterpart).
OMITTED = {}


def run(target, code, want):
    """Executes code in a Session or a leased sandbox and checks its output.
    A Python exception in the sandbox raises eryx.ExecutionError."""
    res = target.execute(code)
    if want and res.stdout_text != want:
        raise RuntimeError(f'{code!r} printed {res.stdout_text!r}, want {want!r}')


_factory = None
_factory_note = ''


def factory():
    """The process's SandboxFactory, loaded from the environment's saved copy
    or built (and saved) on first use."""
    global _factory, _factory_note
    if _factory is not None:
        return _factory
    path = os.path.join(sys.prefix, f'eryx-factory-{eryx.__version__}.bin')
    t0 = time.perf_counter()
    if os.path.exists(path):
        try:
            _factory = eryx.SandboxFactory.load(path)
            _factory_note = f'loaded from the environment in {(time.perf_counter() - t0) * 1e3:.0f} ms'
            return _factory
        except eryx.EryxError as e:
            print(f'eryx: saved factory unusable, rebuilding: {e}', file=sys.stderr)
    _factory = eryx.SandboxFactory()
    _factory_note = f'built in {time.perf_counter() - t0:.1f} s'
    tmp = f'{path}.{os.getpid()}.tmp'
    try:
        _factory.save(tmp)
        os.replace(tmp, path)
        _factory_note += ' and saved in the environment'
    except (OSError, eryx.EryxError) as e:
        print(f'eryx: factory not saved: {e}', file=sys.stderr)
        remove_quietly(tmp)
    return _factory


def remove_quietly(path):
    try:
        os.remove(path)
    except OSError:
        pass


def new_pool(min_idle, max_size=None):
    kwargs = {'min_idle': min_idle}
    if max_size is not None:
        kwargs['max_size'] = max_size
    return factory().create_pool(**kwargs)


def first_result(pool):
    """W1's span on a pool: lease to the first result; then the lease ends."""
    t0 = time.perf_counter()
    with pool.acquire() as s:
        run(s, FIRST_CODE, FIRST_OUT)
        d = time.perf_counter() - t0
    return d


def w1_warm():
    n = reps(20)
    with new_pool(DEFAULT_POOL) as pool:
        time.sleep(0.5)
        samples = []
        for _ in range(n):
            samples.append(first_result(pool))
            time.sleep(0.02)
    return report('first', samples)


def w1_cold():
    """A fresh Session each sample: eryx keeps no pool of sessions."""
    n = reps(20)
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        s = eryx.Session()
        run(s, FIRST_CODE, FIRST_OUT)
        samples.append(time.perf_counter() - t0)
        del s
        time.sleep(0.02)
    return report('first', samples)


def w2():
    n = reps(300)
    s = eryx.Session()
    run(s, LIVE_CODE, LIVE_OUT)  # the first call's one-off costs
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        run(s, LIVE_CODE, LIVE_OUT)
        samples.append(time.perf_counter() - t0)
    return report('call', samples)


def w3():
    n = reps(15)
    with new_pool(DEFAULT_POOL) as pool:
        time.sleep(0.5)
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            with pool.acquire() as s:
                run(s, LIVE_CODE, LIVE_OUT)
            samples.append(time.perf_counter() - t0)
            time.sleep(0.02)
    return report('ccd', samples)


def w4():
    """Ten cells in a fresh Session made off the clock (leased sandboxes keep
    no state between calls)."""
    n = reps(15)
    samples = []
    for _ in range(n):
        s = eryx.Session()
        t0 = time.perf_counter()
        for i, code in enumerate(TEN_CELLS):
            run(s, code, TEN_CELLS_OUT if i == len(TEN_CELLS) - 1 else '')
        samples.append(time.perf_counter() - t0)
        del s
    return report('cells', samples)


def w5():
    n = reps(5)
    s = eryx.Session()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        run(s, CPU_CODE, CPU_OUT)
        samples.append(time.perf_counter() - t0)
    return report('loop', samples)


def w6_memory():
    """Idle Sessions that have run x = 1 (a session, not a stateless lease,
    is what stays idle holding state)."""
    warm = eryx.Session()
    run(warm, IDLE_CODE, '')
    time.sleep(0.2)
    before = rss_tree(os.getpid())
    sessions = []
    for _ in range(IDLE_SESSIONS):
        s = eryx.Session()
        run(s, IDLE_CODE, '')
        sessions.append(s)
    time.sleep(0.2)
    after = rss_tree(os.getpid())
    del sessions, warm
    return {'MiB/session': (after - before) / IDLE_SESSIONS / (1 << 20)}


def curve():
    with new_pool(DEFAULT_POOL, max(CURVE_CLIENTS)) as pool:
        return curve_on(pool, first_result)


def burst():
    """As bench's BenchmarkBurst: each request holds its lease until the
    round ends, so none is served by another's returned sandbox. The pool
    does not refill in the background, so the sandboxes it created during a
    round are the cold starts and the rest of the leases its hits."""
    pool_size = env_int('CODEPORT_BENCH_BURST_POOL', DEFAULT_POOL)
    size = env_int('CODEPORT_BENCH_BURST', 8)
    lat, hits, misses = [], 0, 0
    for _ in range(reps(5)):
        # A fresh pool each round, so that exactly pool_size sandboxes wait.
        with new_pool(pool_size, size) as pool:
            time.sleep(0.5)
            before = pool.stats()
            barrier = threading.Barrier(size)
            got, leases, lock = [], [], threading.Lock()

            def one():
                barrier.wait()
                t0 = time.perf_counter()
                lease = pool.acquire()
                with lock:
                    leases.append(lease)
                run(lease, FIRST_CODE, FIRST_OUT)
                d = time.perf_counter() - t0
                with lock:
                    got.append(d)

            try:
                in_threads(size, one)
            finally:
                after = pool.stats()
                for lease in leases:
                    lease.release()
            created = after.total_creations - before.total_creations
            misses += created
            hits += (after.total_acquisitions - before.total_acquisitions) - created
            lat.extend(got)
    out = report('burst', lat)
    out['burst-max-ms'] = max(lat) * 1e3
    out['requests'] = float(len(lat))
    out['pool'] = float(pool_size)
    out['hits'] = float(hits)
    out['misses'] = float(misses)
    return out


def w7_destroy():
    """Ending a session that ran a call: the end of a pool lease (as W3's
    sessions end)."""
    with new_pool(DEFAULT_POOL) as pool:
        time.sleep(0.5)
        return time_session_ends(pool.acquire, lambda s: run(s, LIVE_CODE, LIVE_OUT))


def w10_start():
    """A fresh interpreter imports eryx, runs print(1) in a new Session
    (eryx's own runtime, precompiled in its wheel) and exits."""
    return process_start(
        'import eryx\n'
        f"print(eryx.Session().execute({LIVE_CODE!r}).stdout_text, end='')\n")


def main():
    # The process's one-off costs (compiling eryx's runtime), off every
    # clock; and the sandbox's own Python version.
    t0 = time.perf_counter()
    s = eryx.Session()
    run(s, FIRST_CODE, FIRST_OUT)
    first_session_ms = (time.perf_counter() - t0) * 1e3
    sandbox_python = s.execute('import sys; print(sys.version.split()[0])').stdout_text.strip()
    del s

    results = {}
    steps = [
        ('W1Warm', w1_warm),
        ('W1Cold', w1_cold),
        ('W2LiveCall', w2),
        ('W3CreateCallDestroy', w3),
        ('W4TenCells', w4),
        ('W5CPULoop', w5),
        ('W6IdleMemory', w6_memory),
        ('Curve', curve),
        ('Burst', burst),
        ('W7Destroy', w7_destroy),
        ('W10ProcessStart', w10_start),
    ]
    for name, fn in steps:
        if name in OMITTED:
            continue
        t0 = time.perf_counter()
        try:
            results[name] = fn()
        except Exception as e:  # one workload's failure is that cell's n/a
            results[name] = {'na': 1.0}
            print(f'eryx {name}: {type(e).__name__}: {e}', file=sys.stderr)
        print(f'eryx {name}: {time.perf_counter() - t0:.1f}s', file=sys.stderr)
    json.dump(
        {
            'eryx': results,
            'meta': {
                'eryx_version': eryx.__version__,
                'python': platform.python_version(),
                'sandbox_python': sandbox_python,
                'first_session_ms': f'{first_session_ms:.0f}',
                'factory': _factory_note,
                'clients': 'threads (execute and acquire release the GIL)',
                'model': 'W1Warm, W3, Curve, Burst: leases of a SandboxFactory pool (stateless sandboxes); '
                'W1Cold, W2, W4, W5, W6: a fresh eryx.Session (state kept across calls)',
                'omitted': '; '.join(f'{k}: {v}' for k, v in OMITTED.items()),
            },
        },
        sys.stdout,
    )
    print()


if __name__ == '__main__':
    main()
