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
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected.txt")
sys.path.insert(0, os.path.dirname(HERE))
from suite_common import against_expected, counts_of, read_expected  # noqa: E402
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


def parse_junit(path):
    """Each test's outcome (pass, fail, error, skip) and, for the failing ones, the first
    line of pytest's message."""
    tests, why = {}, {}
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return tests, why
    for case in root.iter("testcase"):
        # pytest writes classname as dotted path + class, name as the function's.
        file = case.get("file") or ""
        cls = case.get("classname", "")
        name = case.get("name", "")
        test = f"{cls}::{name}"
        outcome = "pass"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "fail", "error": "error", "skipped": "skip"}[child.tag]
                msg = (child.get("message") or child.text or "").strip().splitlines()
                why[test] = msg[0][:200] if msg else ""
                break
        del file
        tests[test] = outcome
    return tests, why


def run_module(module, tests_dir, timeout, env):
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "junit.xml")
        # -m "not slow", as CuPy's own CI runs it: its slow tests allocate GiBs, past the
        # host memory a CI machine lends the mock's device.
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-m", "not slow",
               "-o", "junit_family=xunit1", f"--junitxml={xml}", module]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                               env=env, cwd=tests_dir)
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(
                errors="replace")
            rc = "timeout"
        tests, why = parse_junit(xml)
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
    if a.modules == "ci":
        modules = expected["ci"]
    elif a.modules == "all":
        modules = all_modules(a.tests)
    else:
        modules = a.modules.split(",")
    results, reasons = {}, {}
    if a.resume and a.json and os.path.exists(a.json):
        with open(a.json) as f:
            saved = json.load(f)
            results, reasons = saved["modules"], saved.get("why", {})
    todo = [m for m in modules if m not in results]
    env = dict(os.environ)
    t0 = time.time()

    def save():
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"modules": results, "why": reasons}, f, indent=1, sort_keys=True)

    def start(m):
        if a.budget and time.time() - t0 > a.budget:
            return m, None, None, "", "budget", 0.0
        return run_module(m, a.tests, a.timeout, env)

    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        for fut in concurrent.futures.as_completed([pool.submit(start, m) for m in todo]):
            module, tests, why, out, rc, secs = fut.result()
            if tests is None:
                continue
            results[module] = tests
            reasons[module] = why
            if a.logs:
                os.makedirs(a.logs, exist_ok=True)
                with open(os.path.join(a.logs, module.replace("/", ".") + ".log"), "w") as f:
                    f.write(out)
            print(line(module, counts_of(tests), secs), flush=True)
            save()
    secs = time.time() - t0
    left = [m for m in modules if m not in results]
    totals = counts_of({f"{m}:{t}": o for m in modules for t, o in results.get(m, {}).items()})
    regressions, news, checked = [], [], 0
    if expected:
        ran = [m for m in modules if m not in left]
        regressions, news, checked = against_expected(expected, ran, results, test_module)
    for test in news[:20]:
        print(f"news: {test} passes and is not listed as passing in expected.txt")
    if len(news) > 20:
        print(f"news: {len(news) - 20} more tests pass and are not listed in expected.txt")
    for test, o in regressions:
        print(f"REGRESSION: {test}: {o}, listed as passing in expected.txt")
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


def bless(a):
    with open(a.json) as f:
        saved = json.load(f)
    results, reasons = saved["modules"], saved.get("why", {})
    old = read_expected(a.expected) if os.path.exists(a.expected) else {"ci": []}
    ci = a.ci.split(",") if a.ci else old["ci"]
    lines = [HEADER.rstrip("\n")] + [f"ci {m}" for m in ci]
    for module in sorted(results):
        lines.append(f"\n# {module}")
        for test, o in sorted(results[module].items()):
            if o == "pass":
                lines.append(f"pass {test}")
            elif o != "skip":
                why = " ".join(reasons.get(module, {}).get(test, "").split())
                lines.append(f"known {test} {o}: {why}"[:300])
    with open(a.expected, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--tests", required=True, help="the unpacked sdist's tests/ folder")
    r.add_argument("--modules", default="ci", help="ci (expected.txt's), all, or M1,M2")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--timeout", type=int, default=600, help="seconds a module may take")
    r.add_argument("--json", help="every test's outcome, written as modules finish")
    r.add_argument("--resume", action="store_true", help="skip the modules --json has")
    r.add_argument("--budget", type=int, help="start no module after this many seconds")
    r.add_argument("--logs", help="folder for each module's output")
    r.add_argument("--expected", default=EXPECTED)
    b = sub.add_parser("bless")
    b.add_argument("json")
    b.add_argument("--ci", help="M1,M2: CI's modules (default: those expected.txt has)")
    b.add_argument("--expected", default=EXPECTED)
    li = sub.add_parser("list")
    li.add_argument("--tests", required=True)
    a = ap.parse_args()
    if a.cmd == "run":
        return run(a)
    if a.cmd == "bless":
        return bless(a)
    print("\n".join(all_modules(a.tests)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
