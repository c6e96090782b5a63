"""Time W5 in native CPython, no sandbox; print JSON on stdout.

The native reference of the table's "W5 against native CPython":
bench/cmd/sidebyside runs this file with the interpreter of the runtime's
own version (python3.13 for codeport's CPython 3.13), or with the host's
python3 when there is none, and says which; the version it ran is in the
metadata. It imports nothing but the standard library (and peerbench,
beside it), so it needs no virtual environment.

The loop is timed inside the interpreter: reps(5) runs of CPU_CODE, each
exec'd in a fresh namespace with its print replaced (the sandboxes' samples
include a print of one line, which costs microseconds).

Environment: CODEPORT_BENCH_SCALE scales the sample count (default 1).
"""

import json
import platform
import sys
import time

from peerbench import CPU_CODE, report, reps


def w5():
    src = CPU_CODE.replace('print(total)', 'pass')
    samples = []
    for _ in range(reps(5)):
        g = {}
        t0 = time.perf_counter()
        exec(src, g)
        samples.append(time.perf_counter() - t0)
        if g['total'] != 333332833333500000:
            raise RuntimeError(f'W5 summed {g["total"]}')
    return report('loop', samples)


def main():
    json.dump(
        {
            'native': {'W5CPULoop': w5()},
            'meta': {'python': platform.python_version(), 'executable': sys.executable},
        },
        sys.stdout,
    )
    print()


if __name__ == '__main__':
    main()
