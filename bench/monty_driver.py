"""Drive pydantic-monty through bench's workloads; print JSON on stdout.

A cross-check against a real peer, not product code: bench/cmd/sidebyside
runs it in a virtual environment with a pinned pydantic-monty and merges its
numbers into the table. The workloads and metric names mirror
bench/workloads_test.go; what Monty cannot express is left out (the table
shows it as n/a).

Monty's model: a `Monty` pool owns `monty` worker subprocesses; a session
is a `checkout()` of one worker, stateful across `feed_run` calls; leaving
the `with` block returns the worker, reset, to the pool. So a warm pool hit
is a checkout of an idle worker, and a cold start is a pool that keeps none
(`min_processes=0`) and recycles each worker after one session.

Environment: CODEPORT_BENCH_SCALE scales the sample counts (default 1);
CODEPORT_BENCH_BURST_POOL and CODEPORT_BENCH_BURST shape the burst.
"""

import contextlib
import json
import os
import platform
import sys
import threading
import time

import pydantic_monty as pm
from peerbench import (CPU_CODE, CPU_OUT, CURVE_CLIENTS, DEFAULT_POOL, FIRST_CODE, FIRST_OUT, IDLE_CODE,
                       IDLE_SESSIONS, LIVE_CODE, LIVE_OUT, TEN_CELLS, TEN_CELLS_OUT, curve_on, env_int,
                       in_threads, process_start, report, reps, rss_tree, time_session_ends)


def run(session, code, want):
    out = pm.CollectString()
    session.feed_run(code, print_callback=out)
    if want and out.output != want:
        raise RuntimeError(f'{code!r} printed {out.output!r}, want {want!r}')


def first_result(pool):
    """W1's span: checkout to the first result; then the session ends."""
    t0 = time.perf_counter()
    with pool.checkout() as s:
        run(s, FIRST_CODE, FIRST_OUT)
        d = time.perf_counter() - t0
    return d


def w1(pool_kwargs):
    n = reps(20)
    with pm.Monty(**pool_kwargs) as pool:
        time.sleep(0.5)  # let the pool start its workers
        samples = []
        for _ in range(n):
            samples.append(first_result(pool))
            time.sleep(0.02)
    return report('first', samples)


def w2():
    n = reps(300)
    with pm.Monty(min_processes=1) as pool, pool.checkout() as s:
        run(s, LIVE_CODE, LIVE_OUT)
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            run(s, LIVE_CODE, LIVE_OUT)
            samples.append(time.perf_counter() - t0)
    return report('call', samples)


def w3():
    n = reps(15)
    with pm.Monty(min_processes=DEFAULT_POOL) as pool:
        time.sleep(0.5)
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            with pool.checkout() as s:
                run(s, LIVE_CODE, LIVE_OUT)
            samples.append(time.perf_counter() - t0)
            time.sleep(0.02)
    return report('ccd', samples)


def w4():
    n = reps(15)
    with pm.Monty(min_processes=1) as pool:
        samples = []
        for _ in range(n):
            with pool.checkout() as s:
                t0 = time.perf_counter()
                for i, code in enumerate(TEN_CELLS):
                    run(s, code, TEN_CELLS_OUT if i == len(TEN_CELLS) - 1 else '')
                samples.append(time.perf_counter() - t0)
    return report('cells', samples)


def w5():
    n = reps(5)
    with pm.Monty(min_processes=1) as pool, pool.checkout() as s:
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            run(s, CPU_CODE, CPU_OUT)
            samples.append(time.perf_counter() - t0)
    return report('loop', samples)


def w6_memory():
    with pm.Monty(min_processes=1, max_processes=IDLE_SESSIONS + 2) as pool:
        with pool.checkout() as warm:
            run(warm, IDLE_CODE, '')
            time.sleep(0.2)
            before = rss_tree(os.getpid())
            with contextlib.ExitStack() as stack:
                for _ in range(IDLE_SESSIONS):
                    s = stack.enter_context(pool.checkout())
                    run(s, IDLE_CODE, '')
                time.sleep(0.2)
                after = rss_tree(os.getpid())
    return {'MiB/session': (after - before) / IDLE_SESSIONS / (1 << 20)}


def curve():
    with pm.Monty(min_processes=DEFAULT_POOL, max_processes=max(CURVE_CLIENTS)) as pool:
        return curve_on(pool, first_result)


def burst():
    pool_size = env_int('CODEPORT_BENCH_BURST_POOL', DEFAULT_POOL)
    size = env_int('CODEPORT_BENCH_BURST', 8)
    lat = []
    for _ in range(reps(5)):
        # A fresh pool each round, so that exactly pool_size workers wait.
        with pm.Monty(min_processes=pool_size, max_processes=size) as pool:
            time.sleep(0.5)
            barrier = threading.Barrier(size)
            got, lock = [], threading.Lock()

            def one():
                barrier.wait()
                d = first_result(pool)
                with lock:
                    got.append(d)

            in_threads(size, one)
            lat.extend(got)
    out = report('burst', lat)
    out['burst-max-ms'] = max(lat) * 1e3
    out['requests'] = float(len(lat))
    out['pool'] = float(pool_size)
    return out


def w7_destroy():
    """Ending a session that ran a call: leaving the checkout, which resets
    the worker and returns it to the pool."""
    with pm.Monty(min_processes=DEFAULT_POOL) as pool:
        time.sleep(0.5)
        return time_session_ends(pool.checkout, lambda s: run(s, LIVE_CODE, LIVE_OUT))


def w10_start():
    return process_start(
        'import pydantic_monty as pm\n'
        'out = pm.CollectString()\n'
        'with pm.Monty(min_processes=0) as pool, pool.checkout() as s:\n'
        f'    s.feed_run({LIVE_CODE!r}, print_callback=out)\n'
        "print(out.output, end='')\n")


def main():
    results = {}
    steps = [
        ('W1Warm', lambda: w1({'min_processes': DEFAULT_POOL})),
        ('W1Cold', lambda: w1({'min_processes': 0, 'max_checkouts_per_worker': 1})),
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
        t0 = time.perf_counter()
        try:
            results[name] = fn()
        except Exception as e:  # one workload's failure is that cell's n/a
            results[name] = {'na': 1.0}
            print(f'monty {name}: {type(e).__name__}: {e}', file=sys.stderr)
        print(f'monty {name}: {time.perf_counter() - t0:.1f}s', file=sys.stderr)
    json.dump(
        {
            'monty': results,
            'meta': {
                'monty_version': pm.__version__,
                'python': platform.python_version(),
            },
        },
        sys.stdout,
    )
    print()


if __name__ == '__main__':
    main()
