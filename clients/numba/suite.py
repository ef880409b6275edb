"""Runs numba-cuda's own test suite, unchanged, one test module per process, and compares
the outcome with clients/numba/expected.txt.

Each module runs as `python -m numba.runtests -v -b MODULE` (numba's documented runner;
the wheel's tests need a repository conftest to run under pytest), in a process of its
own, so a sticky kernel fault or a crash is charged to its module, and a hang is ended
by a per-module timeout.

  suite.py run [--modules ci|all|M1,M2] [--jobs N] [--timeout S] [--json FILE]
  suite.py list            the modules the installed numba-cuda has

`run` prints one line per module (passed, failed, errors, skipped) and a total, writes
every test's outcome to --json, and, when the expected file lists tests for a module it
ran, exits 1 if any test listed as passing did not pass (a test that passes and is not
listed is reported as news, not as a failure).
"""

import argparse
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected.txt")
sys.path.insert(0, os.path.dirname(HERE))
from suite_common import (  # noqa: E402
    counts_of, modules_chosen, read_expected, report, run_arguments, run_captured,
    run_parallel, write_expected, write_json, write_log)
# The packages numba-cuda's own load_tests walks, in its order.
PACKAGES = ["nocuda", "cudasim", "cudadrv", "cudapy", "nrt", "doc_examples"]
# Modules that cannot be loaded by the unittest runner at all: they call
# pytest.importorskip at import, whose Skipped escapes unittest's loader.
UNLOADABLE = {
    "numba.cuda.tests.cudapy.test_cupy_bfloat16_interop": "needs CuPy >= 14",
    # Modules whose only tests are pytest-style functions, which the unittest runner does
    # not see (numba's runner then runs its default suite instead).
    "numba.cuda.tests.cudapy.test_matmul": "pytest functions only",
    "numba.cuda.tests.doc_examples.test_matmul": "pytest functions only",
}

# `test_x (numba.cuda.tests.m.Class.test_x) ... ok` (verbose unittest); a docstring's
# first line may stand before the dots, and lines written meanwhile to fd 2 past Python's
# buffering (the mock's messages, the warnings of the processes a test spawns) may stand
# between the dots and the outcome, which then begins a line.
RESULT = re.compile(
    r"^(?P<name>test\w*) \((?P<id>[\w.]+)\)(?:\n(?!test\w* \().*)?? \.\.\. "
    r"(?:.*\n(?!test\w* \())*?"
    r"(?P<outcome>ok|FAIL|ERROR|skipped|expected failure|unexpected success)(?=$| )",
    re.M,
)
# The report's headers: every failed test (and subtest) is named once there.
REPORTED = re.compile(r"^(?P<outcome>ERROR|FAIL): test\w* \((?P<id>[\w.]+)\)", re.M)
# The suite calls pytest.importorskip in some tests: under pytest a skip, under the
# unittest runner an error whose traceback ends in pytest's Skipped.
PYTEST_SKIP = re.compile(r"^Skipped: ", re.M)
SEPARATOR = "=" * 70 + "\n"
OUTCOME = {
    "ok": "pass",
    "FAIL": "fail",
    "ERROR": "error",
    "skipped": "skip",
    "expected failure": "skip",
    "unexpected success": "fail",
}


def parse(out):
    """Each test's outcome in a module's output: pass, fail, error or skip."""
    tests = {m.group("id"): OUTCOME[m.group("outcome")] for m in RESULT.finditer(out)}
    seen_failing = {}
    for block in out.split(SEPARATOR)[1:]:
        m = REPORTED.match(block)
        if not m:
            continue
        test = m.group("id")
        # Header, dashes, traceback (and, after the last one, dashes and the totals).
        parts = block.split("-" * 70 + "\n")
        tail = (parts[1] if len(parts) > 1 else "").rstrip().splitlines()[-1:] or [""]
        if PYTEST_SKIP.match(tail[0]):
            outcome = "skip"
        else:
            outcome = OUTCOME[m.group("outcome")]
        # A test with several failing subtests is charged once, with the worst.
        if seen_failing.get(test) not in ("fail", "error"):
            seen_failing[test] = outcome
    tests.update(seen_failing)
    return tests


def all_modules():
    import numba.cuda.tests as tests

    root = os.path.dirname(tests.__file__)
    found = []
    for pkg in PACKAGES:
        for f in sorted(os.listdir(os.path.join(root, pkg))):
            if f.startswith("test_") and f.endswith(".py"):
                found.append(f"numba.cuda.tests.{pkg}.{f[:-3]}")
    return [m for m in found if m not in UNLOADABLE]


def run_module(module, timeout, env):
    t0 = time.time()
    out, rc = run_captured([sys.executable, "-m", "numba.runtests", "-v", "-b", module],
                           timeout, env)
    tests = parse(out)
    # A module that ran no test to its end (crashed at import, died, timed out) is one
    # error under its own name, so it is never silently absent.
    if rc not in (0, 1) or (rc == 1 and not tests):
        tests.setdefault(module, "crash" if rc != "timeout" else "timeout")
    return module, tests, out, rc, time.time() - t0


def line(module, counts, secs=None):
    t = f" {secs:6.1f}s" if secs is not None else ""
    return (
        f"{module:60} {counts['pass']:4} passed {counts['fail']:3} failed "
        f"{counts['error']:3} errors {counts['skip']:3} skipped{t}"
    )


def run(a):
    expected = read_expected(a.expected) if os.path.exists(a.expected) else None
    modules = modules_chosen(a.modules, expected, all_modules)
    results = {}
    if a.resume and os.path.exists(a.json):
        with open(a.json) as f:
            results = json.load(f)["modules"]
    todo = [m for m in modules if m not in results]
    env = dict(os.environ)
    t0 = time.time()

    def finished(module, tests, out, rc, secs):
        results[module] = tests
        write_log(a.logs, module, out)
        print(line(module, counts_of(tests), secs), flush=True)
        write_json(a.json, {"modules": results})

    run_parallel(todo, a.jobs, a.budget, lambda m: run_module(m, a.timeout, env), finished)
    secs = time.time() - t0
    left = [m for m in modules if m not in results]
    totals = counts_of({f"{m}:{t}": o for m in modules for t, o in results.get(m, {}).items()})

    ran = [m for m in modules if m not in left]
    regressions, checked = report(expected, ran, results, lambda test: test.rsplit(".", 2)[0])
    if left:
        print(f"{len(left)} modules not run (budget spent): run again with --resume")
    print(
        f"numba-cuda suite: {len(modules) - len(left)} modules in {secs:.0f}s: "
        f"{totals['pass']} passed, {totals['fail']} failed, {totals['error']} errors, "
        f"{totals['skip']} skipped; {len(regressions)} regressions"
    )
    # The tests expected to pass, as CI counts them (ci/test.sh's closing line).
    print(f"numba-cuda checked: {checked - len(regressions)} passed, {len(regressions)} failed")
    return 1 if regressions else 0


def mock_outcomes(path):
    """A run's outcomes by module: its --json file, or expected.txt (which `bless` wrote
    from a whole run: `pass` lines passed, `known` lines did not, skipped tests are not
    listed)."""
    if path.endswith(".json"):
        with open(path) as f:
            return json.load(f)["modules"]
    modules, module = {}, None
    for line in open(path):
        if line.startswith("# numba."):
            module = line[2:].strip()
        elif line.startswith(("pass ", "known ")) and module:
            kind, test = line.split()[:2]
            modules.setdefault(module, {})[test] = "pass" if kind == "pass" else "fail"
    return modules


def compare(a):
    """Of the tests that pass on the GPU, how many pass on the mock, and what the rest
    did on the mock, by module."""
    mock = mock_outcomes(a.mock)
    with open(a.gpu) as f:
        gpu = json.load(f)["modules"]
    passed_gpu = passed_both = 0
    for module in sorted(gpu):
        on_gpu = [t for t, o in gpu[module].items() if o == "pass"]
        on_mock = mock.get(module, {})
        both = [t for t in on_gpu if on_mock.get(t) == "pass"]
        passed_gpu += len(on_gpu)
        passed_both += len(both)
        if len(both) < len(on_gpu):
            print(f"{module:60} {len(both):4} of {len(on_gpu):4} pass on the mock")
            for t in sorted(set(on_gpu) - set(both)):
                print(f"    {t.rsplit('.', 2)[-2:]}: {on_mock.get(t, 'not run')} on the mock")
    pct = 100.0 * passed_both / max(passed_gpu, 1)
    print(f"{passed_both} of the {passed_gpu} tests that pass on the GPU pass on the mock ({pct:.1f}%)")
    # Tests the mock's run skipped (numba-cuda's own conditions, such as nvJitLink
    # missing, which the mock's installation lacks on purpose).
    # (A module whose process timed out or died has a line of its own, under its name:
    # the tests it did not get to count as not passing, not as skipped.)
    skipped = sum(
        1
        for m in gpu
        for t, o in gpu[m].items()
        if o == "pass" and t not in mock.get(m, {}) and m not in mock.get(m, {})
    )
    ran = passed_gpu - skipped
    pct = 100.0 * passed_both / max(ran, 1)
    print(f"{skipped} of them skipped on the mock; of the {ran} it ran, {pct:.1f}% pass")
    return 0


# Why a test fails on the mock, from its traceback: the first pattern found names the
# reason written into expected.txt (one line each); otherwise the traceback's last line.
REASONS = [
    (r"recursive calls", "recursion is not emulated by the PTX executor"),
    (r"\.callprototype", "NRT: indirect calls (.callprototype) are not emulated by the PTX executor"),
    (r"has no body here", "device-side malloc/free (NRT) are not emulated"),
    (r"`cvt` needs two types", "FP8 conversions (cvt .e4m3x2/.e5m2x2/.ue8m0x2) are not emulated"),
    (r"libcudadevrt\.a", "links libcudadevrt.a (grid sync), whose device code is SASS only"),
    (r"unsupported instruction `([^`]*)`", "the PTX executor lacks `{0}`"),
    (
        r"takes \d+ values here, given \d+",
        "calls a C-ABI function with a return value its definition lacks; the mock's linker refuses the mismatch",
    ),
    (r"_graph_builder", "graph user objects (cuUserObjectCreate) are not emulated"),
    (
        r"cuMemAllocManaged results in CUDA_ERROR_OUT_OF_MEMORY",
        "managed memory past CUMOCK_DEVICE_MEMORY, which the host backs (a tenth of the H200's 150 GB asked for)",
    ),
    (r"CUDA_ERROR_OUT_OF_MEMORY", "device memory past CUMOCK_DEVICE_MEMORY"),
    (
        r"AssertionError: '[^\n]*nvjitlink is not available",
        "expects no warning; without nvJitLink numba-cuda warns",
    ),
    (r"assertEqual\(len\(w\), 0\)", "expects no warning; gets one (numba-cuda's, about nvJitLink)"),
    (r"check_hits|check_pycache", "the CPU target's cache half of the test (numba's, not the device's)"),
    (r"cuGetExportTable", "uses NVIDIA's static runtime (cuGetExportTable)"),
    (r"Call to (cu\w+) results in (CUDA_ERROR_\w+)", "{0} answers {1}"),
    (r"TimeoutError", "a spawned process misses the test's 4 s deadline on a busy host"),
]


def reason_of(traceback):
    for pattern, reason in REASONS:
        m = re.search(pattern, traceback)
        if m:
            return reason.format(*m.groups())
    lines = [l for l in traceback.strip().splitlines() if l.strip()]
    return (lines[-1] if lines else "no traceback").strip()[:160]


def tracebacks(out):
    """Each failed test's traceback in a module's output (the first, for subtests)."""
    found = {}
    for block in out.split(SEPARATOR)[1:]:
        m = REPORTED.match(block)
        if m:
            parts = block.split("-" * 70 + "\n")
            found.setdefault(m.group("id"), parts[1] if len(parts) > 1 else "")
    return found


def died_during(log):
    """The test a module's process was running when it died."""
    out = open(log, errors="replace").read() if os.path.exists(log) else ""
    started = re.findall(r"^(test\w*) \([\w.]+\)[^\n]* \.\.\. (?:cumock:.*)?$", out, re.M)
    return f"the process dies in {started[-1]}" if started else "the process dies"


def bless(a):
    """Writes expected.txt from a run's outcomes and logs: every passing test as `pass`,
    every failing one as `known` with its reason; `ci` lines are kept."""
    with open(a.json) as f:
        results = json.load(f)["modules"]
    # Each module's log read once, for the first of its failing tests.
    logs = {}

    def known(module, test, o):
        log = os.path.join(a.logs, module + ".log")
        if o == "timeout":
            return f"known {test} timeout: the module runs past {a.timeout} s on 2 cores"
        if o == "crash":
            return f"known {test} crash: {died_during(log)}"
        if module not in logs:
            logs[module] = (tracebacks(open(log, errors="replace").read())
                            if os.path.exists(log) else {})
        return f"known {test} {o}: {reason_of(logs[module].get(test, ''))}"

    write_expected(a.expected, a.ci, HEADER, results, known)
    return 0


HEADER = """\
# numba-cuda 0.30.4's own test suite on the mock (clients/numba/suite.py), one line each:
#   ci MODULE              a module CI runs (ci/numba-suite.sh): a few minutes on 2 cores
#   pass TEST              passes on the mock; CI fails if it does not
#   known TEST WHY         fails on the mock (fail, error, crash or timeout), and why
# Written by `suite.py bless` from a whole run (ci/numba-full.sh); skipped tests are not
# listed.
"""


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    run_arguments(r, EXPECTED, parallel=True)
    c = sub.add_parser("compare")
    c.add_argument("mock", help="the mock's run: its --json file, or expected.txt")
    c.add_argument("gpu")
    b = sub.add_parser("bless")
    b.add_argument("json")
    b.add_argument("logs")
    b.add_argument("--ci", help="M1,M2: CI's modules (default: those expected.txt has)")
    b.add_argument("--timeout", type=int, default=600, help="the run's per-module limit")
    b.add_argument("--expected", default=EXPECTED)
    sub.add_parser("list")
    a = ap.parse_args()
    if a.cmd == "list":
        print("\n".join(all_modules()))
        return 0
    return {"run": run, "compare": compare, "bless": bless}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
