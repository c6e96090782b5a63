"""What bench's Python drivers share: the workloads' programs (as in
bench/workloads_test.go and, for S1, bench/scientific_test.go), their
sample counts, the percentiles they report (as
internal/testkit/measure.Report computes them) and the helpers to measure a
process tree and run clients at once. bench/monty_driver.py,
bench/eryx_driver.py, bench/wasmtime_driver.py and bench/native_driver.py
import it from beside them; each runs in its own virtual environment (the
native one in none), so this module imports nothing but the standard
library.
"""

import os
import subprocess
import sys
import threading
import time

FIRST_CODE, FIRST_OUT = 'print(1 + 1)', '2\n'
LIVE_CODE, LIVE_OUT = 'print(1)', '1\n'
CPU_CODE = 'total = 0\nfor i in range(10**6):\n    total += i * i\nprint(total)'
CPU_OUT = '333332833333500000\n'
IDLE_CODE = 'x = 1'
TEN_CELLS = [
    'x = 1',
    'x += 1',
    'x *= 3',
    'def f(n):\n    return n * x + 1',
    'y = f(2)',
    'xs = [f(i) for i in range(5)]',
    's = sum(xs) + y',
    "d = {'x': x, 'y': y, 's': s}",
    "x = d['s'] - x",
    'print(x, y, s, xs)',
]
TEN_CELLS_OUT = '72 13 78 [1, 7, 13, 19, 25]\n'
DEFAULT_POOL = 2
# S1, as bench/scientific_test.go's sciMatmul: setup (off the clock), the
# timed code, what it prints, and its sample count before scaling.
SCI_MATMUL = (
    'import numpy as np\na = np.random.default_rng(1).random((200, 200))',
    'b = a @ a\nprint(b.shape, bool((b > 0).all()))',
    '(200, 200) True\n',
    15,
)
CURVE_CLIENTS = [1, 2, 4, 8, 16]
IDLE_SESSIONS = 16



def scale():
    try:
        v = float(os.environ.get('CODEPORT_BENCH_SCALE', '1'))
    except ValueError:
        return 1.0
    return v if v > 0 else 1.0


def reps(n):
    return max(3, round(n * scale()))


def env_int(name, default):
    try:
        v = int(os.environ.get(name, ''))
    except ValueError:
        return default
    return v if v > 0 else default


def report(prefix, samples):
    """p50 and p95 in ms, as internal/testkit/measure.Report computes them."""
    s = sorted(samples)
    q = lambda p: s[int(p * (len(s) - 1))] * 1e3  # noqa: E731
    return {prefix + '-p50-ms': q(0.50), prefix + '-p95-ms': q(0.95)}



def rss_tree(pid):
    """Resident bytes of pid and its descendants, from /proc."""
    children = {}
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open(f'/proc/{name}/status') as f:
                for line in f:
                    if line.startswith('PPid:'):
                        children.setdefault(int(line.split()[1]), []).append(int(name))
                        break
        except OSError:
            pass
    total, stack, seen = 0, [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            with open(f'/proc/{p}/status') as f:
                for line in f:
                    if line.startswith('VmRSS:'):
                        total += int(line.split()[1]) * 1024
                        break
        except OSError:
            pass
        stack.extend(children.get(p, []))
    return total



def in_threads(n, fn):
    """Runs fn in n threads at once, waits for all, and raises the first
    exception any of them raised."""
    errors = []

    def guarded():
        try:
            fn()
        except Exception as e:  # raised below, in the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=guarded) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]



def curve_on(pool, first_result):
    """BenchmarkCurve's loop: for each count of CURVE_CLIENTS, that many
    clients run first_result(pool) over and over for 3 s (scaled); the
    first results' p50 and p95 and the sessions completed per second."""
    span = 3.0 * scale()
    out = {}
    for clients in CURVE_CLIENTS:
        time.sleep(0.5)
        lat, lock = [], threading.Lock()
        start = time.perf_counter()
        stop = start + span

        def client():
            while time.perf_counter() < stop:
                d = first_result(pool)
                with lock:
                    lat.append(d)

        in_threads(clients, client)
        elapsed = time.perf_counter() - start
        out.update(report(f'c{clients}', lat))
        out[f'c{clients}-sessions/s'] = len(lat) / elapsed
    return out



def process_start(script):
    """BenchmarkW10ProcessStart's span for a Python peer: a fresh
    interpreter runs script (which must print LIVE_OUT from the peer's
    sandbox) and exits; one run off the clock first, as codeport's fills
    its compile cache."""

    def once():
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, check=False)
        d = time.perf_counter() - t0
        if done.returncode != 0 or done.stdout != LIVE_OUT:
            raise RuntimeError(f'process start: exit {done.returncode}, stdout {done.stdout!r}, stderr {done.stderr[-400:]!r}')
        return d

    once()
    return report('start', [once() for _ in range(reps(15))])



def time_session_ends(open_session, run_one):
    """BenchmarkW7Destroy's span for a Python peer: reps(30) times, a
    session is opened (open_session() returns a context manager whose
    __enter__ gives it), run_one(session) runs a call in it, and only the
    session's end (the manager's __exit__) is timed."""
    samples = []
    for _ in range(reps(30)):
        cm = open_session()
        s = cm.__enter__()
        run_one(s)
        t0 = time.perf_counter()
        cm.__exit__(None, None, None)
        samples.append(time.perf_counter() - t0)
    return report('destroy', samples)
