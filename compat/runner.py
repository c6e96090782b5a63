# codeport's compat runner: runs one module of CPython's own test suite
# (Lib/test, uploaded to /workspace/test) in this session with unittest,
# as regrtest runs a module without -u (tests that need a resource such as
# the network skip), and writes what happened to RESULT as JSON. The host
# (package compat) substitutes MODULE and RESULT.
import importlib
import json
import sys
import time
import traceback
import unittest

MODULE = None
RESULT = None


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""


def main():
    out = {"module": MODULE}
    start = time.monotonic()
    try:
        from test import support

        support.use_resources = []
        support.verbose = 0
        mod = importlib.import_module("test." + MODULE)
        suite = unittest.defaultTestLoader.loadTestsFromModule(mod)
    except unittest.SkipTest as e:
        out["skipped_module"] = str(e)[:300]
    except BaseException as e:
        out["import_error"] = last_line("".join(traceback.format_exception_only(type(e), e)))
    else:
        result = unittest.TestResult()
        suite.run(result)
        bad = result.failures + result.errors
        out.update(
            run=result.testsRun,
            failures=[t.id() for t, _ in result.failures],
            errors=[t.id() for t, _ in result.errors],
            skipped=len(result.skipped),
            expected_failures=len(result.expectedFailures),
            unexpected_successes=[t.id() for t in result.unexpectedSuccesses],
            details={t.id(): last_line(tb) for t, tb in bad},
        )
    out["seconds"] = round(time.monotonic() - start, 3)
    with open(RESULT, "w", encoding="utf-8") as f:
        json.dump(out, f)


main()
