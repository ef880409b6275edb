"""Runs CuPy's own test suite (tests/ of its 14.2.0 sdist, unchanged), one test module per
process under pytest, and compares the outcome with clients/cupy/expected.txt.

Each module runs as `python -m pytest -p no:cacheprovider --junitxml=... MODULE` from the
folder ci/install-cupy.sh unpacked the sdist's tests into (its conftest.py and
pyproject.toml's pytest settings with them), in a process of its own, so a sticky kernel
fault or a crash is charged to its module, and a hang is ended by a per-module timeout.

  suite.py run [--modules ci|all|M1,M2] [--jobs N] [--timeout S] [--json FILE]
  suite.py bless JSON      writes expected.txt from a whole run
  suite.py list            the modules of the test tree

Modules are named by their path under tests/ (cupy_tests/core_tests/test_raw.py); tests
by pytest's node id. `run` prints one line per module and a total, writes every test's
outcome to --json, and exits 1 if a test expected.txt lists as passing did not pass (a
test that passes and is not listed is reported as news, not as a failure).
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected.txt")
sys.path.insert(0, os.path.dirname(HERE))
from suite_common import (  # noqa: E402
    bless_arguments, bless_with_reasons, counts_of, modules_chosen, read_expected, report,
    run_arguments, run_parallel, run_pytest, write_json, write_log)

# The packages of tests/cupy_tests this runner walks: CuPy's core, array creation and
# manipulation, math, and its CUDA layer. The rest (linalg, fft, random, sparse...) call
# NVIDIA's math libraries, whose kernels are SASS only (docs/frameworks/cupy.md).
PACKAGES = [
    "core_tests",
    "creation_tests",
    "manipulation_tests",
    "math_tests",
    "cuda_tests",
    "logic_tests",
    "binary_tests",
    "indexing_tests",
    "sorting_tests",
    "statistics_tests",
]


def all_modules(tests):
    found = []
    for pkg in PACKAGES:
        d = os.path.join(tests, "cupy_tests", pkg)
        for f in sorted(os.listdir(d)):
            if f.startswith("test_") and f.endswith(".py"):
                found.append(f"cupy_tests/{pkg}/{f}")
    return found


def parse_junit(cases):
    """Each test's outcome (pass, fail, error, skip) and, for the failing ones, the first
    line of pytest's message."""
    tests, why = {}, {}
    for cls, name, outcome, first, _ in cases:
        # pytest writes classname as dotted path + class, name as the function's.
        test = f"{cls}::{name}"
        if outcome != "pass":
            why[test] = first[:200]
        tests[test] = outcome
    return tests, why


def run_module(module, tests_dir, timeout, env):
    t0 = time.time()
    # -m "not slow", as CuPy's own CI runs it: its slow tests allocate GiBs, past the host
    # memory a CI machine lends the mock's device.
    out, rc, cases = run_pytest(module, tests_dir, timeout, env, ["-m", "not slow"])
    tests, why = parse_junit(cases)
    # A module that ran no test to its end (crashed, died, timed out) is one error under
    # its own name, so it is never silently absent. pytest: 0 all passed, 1 some failed,
    # 5 no test collected.
    if rc not in (0, 1, 5) or (rc == 1 and not tests):
        tests[module] = "timeout" if rc == "timeout" else "crash"
        why[module] = f"exit status {rc}: " + (out.strip().splitlines() or [""])[-1][:200]
    return module, tests, why, out, rc, time.time() - t0


def line(module, counts, secs=None):
    t = f" {secs:6.1f}s" if secs is not None else ""
    return (f"{module:62} {counts['pass']:5} passed {counts['fail']:4} failed "
            f"{counts['error']:4} errors {counts['skip']:4} skipped{t}")


def run(a):
    expected = read_expected(a.expected) if os.path.exists(a.expected) else None
    modules = modules_chosen(a.modules, expected, lambda: all_modules(a.tests))
    results, reasons = {}, {}
    if a.resume and a.json and os.path.exists(a.json):
        with open(a.json) as f:
            saved = json.load(f)
            results, reasons = saved["modules"], saved.get("why", {})
    todo = [m for m in modules if m not in results]
    env = dict(os.environ)
    t0 = time.time()

    def finished(module, tests, why, out, rc, secs):
        results[module] = tests
        reasons[module] = why
        write_log(a.logs, module, out)
        print(line(module, counts_of(tests), secs), flush=True)
        write_json(a.json, {"modules": results, "why": reasons})

    run_parallel(todo, a.jobs, a.budget, lambda m: run_module(m, a.tests, a.timeout, env),
                 finished)
    secs = time.time() - t0
    left = [m for m in modules if m not in results]
    totals = counts_of({f"{m}:{t}": o for m in modules for t, o in results.get(m, {}).items()})
    ran = [m for m in modules if m not in left]
    regressions, checked = report(expected, ran, results, test_module, most_news=20)
    if left:
        print(f"{len(left)} modules not run (budget spent): run again with --resume")
    print(f"CuPy suite: {len(modules) - len(left)} modules in {secs:.0f}s: "
          f"{totals['pass']} passed, {totals['fail']} failed, {totals['error']} errors, "
          f"{totals['skip']} skipped; {len(regressions)} regressions")
    print(f"cupy checked: {checked - len(regressions)} passed, {len(regressions)} failed")
    return 1 if regressions else 0


def test_module(test):
    """The module of a test id as junit names it (cupy_tests.core_tests.test_raw.TestX::f)."""
    dotted = test.split("::")[0]
    # Node ids are relative to the rootdir (the folder above tests/, with pyproject.toml).
    parts = dotted.removeprefix("tests.").split(".")
    # The module is the dotted path up to the part that starts with "test_".
    for i, p in enumerate(parts):
        if p.startswith("test_"):
            return "/".join(parts[: i + 1]) + ".py"
    return dotted


HEADER = """\
# CuPy 14.2.0's own test suite on the mock (clients/cupy/suite.py), one line each:
#   ci MODULE              a module CI's subset runs (ci/cupy-suite.sh)
#   pass TEST              passes on the mock; the run fails if it does not
#   known TEST WHY         fails on the mock (fail, error, crash or timeout), and why
# Written by `suite.py bless` from a whole run (ci/cupy-suite.sh all); skipped tests are
# not listed.
"""


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--tests", required=True, help="the unpacked sdist's tests/ folder")
    run_arguments(r, EXPECTED, parallel=True)
    bless_arguments(sub.add_parser("bless"), EXPECTED)
    li = sub.add_parser("list")
    li.add_argument("--tests", required=True)
    a = ap.parse_args()
    if a.cmd == "run":
        return run(a)
    if a.cmd == "bless":
        return bless_with_reasons(a, HEADER)
    print("\n".join(all_modules(a.tests)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
