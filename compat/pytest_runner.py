# codeport's compat runner for numpy's and pandas' own tests: runs one test
# file (uploaded under /workspace/t with the package's conftest and test
# package files) with pytest from the wheels in /workspace/wheels, in this
# session of the scientific profile, and writes what happened to RESULT as
# JSON, in the shape runner.py gives for CPython's modules. The host
# (package compat) substitutes FILE, RESULT and VERSIONS.
import glob
import json
import os
import sys
import time

FILE = None
RESULT = None
VERSIONS = None


def last_line(text):
    lines = [line for line in str(text).strip().splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""


class Collect:
    """A pytest plugin: each test's outcome, by node id."""

    def __init__(self):
        self.out = {"run": 0, "failures": [], "errors": [], "skipped": 0, "expected_failures": 0,
                    "unexpected_successes": [], "details": {}}
        self.collect_errors = []

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors.append(last_line(report.longreprtext) or report.nodeid)

    def pytest_runtest_logreport(self, report):
        out = self.out
        if report.when == "call" or (report.when == "setup" and not report.passed):
            out["run"] += 1
        if report.passed:
            return
        if report.skipped:
            if hasattr(report, "wasxfail"):
                out["expected_failures"] += 1
            elif report.when == "setup" or report.when == "call":
                out["skipped"] += 1
            return
        # Failed: in the test itself, or in its setup or teardown (an error).
        kind = "failures" if report.when == "call" else "errors"
        if report.nodeid not in out[kind]:
            out[kind].append(report.nodeid)
            out["details"][report.nodeid] = last_line(report.longreprtext)


def main():
    out = {"module": FILE}
    start = time.monotonic()
    sys.path[:0] = sorted(glob.glob("/workspace/wheels/*.whl"))
    try:
        import hypothesis
        import pytest

        for name, want in VERSIONS.items():
            got = __import__(name).__version__
            if got != want:
                raise RuntimeError(f"the tests are {name} {want}'s, the session has {got}")
        # Deterministic examples, and no deadline or health check that a
        # busy machine fails (numpy's conftest, left out, would set both).
        hypothesis.settings.register_profile(
            "codeport", deadline=None, derandomize=True, database=None,
            suppress_health_check=list(hypothesis.HealthCheck))
    except BaseException as e:
        out["import_error"] = f"{type(e).__name__}: {e}"[:300]
    else:
        plugin = Collect()
        os.chdir("/workspace/t")
        code = pytest.main(["-q", "-p", "no:cacheprovider", "--import-mode=importlib",
                            "--hypothesis-profile=codeport", FILE], plugins=[plugin])
        if plugin.collect_errors:
            out["import_error"] = plugin.collect_errors[0]
        elif int(code) not in (0, 1, 5):  # passed, some failed, none collected
            out["import_error"] = f"pytest exited with {int(code)}"
        else:
            out.update(plugin.out)
    out["seconds"] = round(time.monotonic() - start, 3)
    with open(RESULT, "w", encoding="utf-8") as f:
        json.dump(out, f)


main()
