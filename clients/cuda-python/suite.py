"""Runs NVIDIA's cuda-python test suites (cuda_core/tests and cuda_bindings/tests of the
NVIDIA/cuda-python repository, unchanged), one test module per process under pytest, and
compares the outcome with clients/cuda-python/expected.txt.

The tests are not in any registry package (the wheels ship none and there is no sdist):
ci/fetch-cuda-python-tests.sh fetches them from GitHub into a tree laid out as the
repository is (TREE/cuda_core/tests, TREE/cuda_bindings/tests,
TREE/cuda_python_test_helpers). A module is named by its path in that tree
(cuda_core/tests/test_stream.py) and runs from its package's folder (TREE/cuda_core), as
the project's own CI runs it, so its conftest.py and helpers resolve as they do there.

  suite.py run --tree TREE [--modules ci|all|M1,M2] [--timeout S] [--json FILE]
  suite.py bless JSON      writes expected.txt from a whole run
  suite.py compare JSON    a GPU run's passing tests against expected.txt
  suite.py list --tree TREE

Failures the mock refuses by design are counted apart, from pytest's message:
  sass     a cubin (SASS) given to the mock, which runs PTX only
  static   NVIDIA's static CUDA runtime (cuda.bindings.runtime embeds it) asking the
           driver for its private export tables (README, "What cannot run on the mock")
and apart again the tests written for another cuda-core than the installed one:
  skew     an API the installed cuda-core lacks, or a later release's behaviour
`run` exits 1 if a test expected.txt lists as passing did not pass.
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
    run_arguments, run_pytest, write_json, write_log)

PACKAGES = ["cuda_core", "cuda_bindings"]


def all_modules(tree):
    found = []
    for pkg in PACKAGES:
        d = os.path.join(tree, pkg, "tests")
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if f.startswith("test_") and f.endswith(".py"):
                found.append(f"{pkg}/tests/{f}")
    return found


def cause(message):
    """Why a failure is out of the mock's reach by design, or None."""
    if "NO_BINARY_FOR_GPU" in message or "cubin (SASS)" in message:
        return "sass"
    if "cudaErrorNotSupported" in message or "Cudart Error: 801" in message:
        return "static"
    # Tests of another cuda-core than the one installed (docs/frameworks/cuda-python.md,
    # "Which tests"): an API they name that 1.2.2 lacks, or a 1.3 behaviour
    # (Program.close leaving no handle).
    if ("has no attribute" in message or "cannot import name" in message
            or "<nvrtcProgram 0x0> is None" in message):
        return "skew"
    return None


def parse_junit(cases, module):
    """Each test's outcome (pass, fail, error, skip) and, for the others, the first line
    of pytest's message. Test ids: MODULE::[Class::]name."""
    tests, why = {}, {}
    dotted = module.split("/", 1)[1].removesuffix(".py").replace("/", ".")
    for cls, name, outcome, first, text in cases:
        inner = cls.removeprefix(dotted).lstrip(".")
        test = f"{module}::{inner}::{name}" if inner else f"{module}::{name}"
        if outcome != "pass":
            c = cause(text)
            why[test] = (f"[{c}] " if c else "") + first[:200]
        tests[test] = outcome
    return tests, why


def run_module(module, tree, timeout, env):
    pkg, rel = module.split("/", 1)
    t0 = time.time()
    out, rc, cases = run_pytest(rel, os.path.join(tree, pkg), timeout, env)
    tests, why = parse_junit(cases, module)
    # A module that ran no test to its end (a collection error, a crash, a timeout) is one
    # error under its own name, so it is never silently absent. pytest: 0 all passed,
    # 1 some failed, 5 no test collected.
    if rc not in (0, 1, 5) or (rc == 1 and not tests):
        # A collection error is junit's one error case named after the module: dropped
        # for the module's own entry.
        tests = {t: o for t, o in tests.items() if o != "error"}
        # pytest's 2: interrupted, a module that did not import (an error, not a crash).
        tests[module] = {"timeout": "timeout", 2: "error"}.get(rc, "crash")
        errors = [ln for ln in out.splitlines() if ln.startswith("E  ")]
        last = errors[0] if errors else (out.strip().splitlines() or [""])[-1]
        c = cause(last)
        why[module] = (f"[{c}] " if c else "") + f"exit status {rc}: " + " ".join(last.split())[:200]
    return module, tests, why, out, rc, time.time() - t0


def by_design(module, tests, why):
    """How many of a module's failures are SASS or the static runtime (counted apart)."""
    n = {"sass": 0, "static": 0, "skew": 0}
    for t, o in tests.items():
        r = why.get(t, "")
        if o in ("fail", "error") and r.startswith("["):
            n[r[1:].split("]")[0]] += 1
    return n


def line(module, counts, design, secs=None):
    t = f" {secs:6.1f}s" if secs is not None else ""
    return (f"{module:44} {counts['pass']:4} passed {counts['fail']:4} failed "
            f"{counts['error']:3} errors {counts['skip']:3} skipped "
            f"(of which {design['sass']} SASS, {design['static']} static runtime, "
            f"{design['skew']} version skew){t}")


def run(a):
    expected = read_expected(a.expected) if os.path.exists(a.expected) else None
    modules = modules_chosen(a.modules, expected, lambda: all_modules(a.tree))
    modules = [m for m in modules if os.path.exists(os.path.join(a.tree, m))]
    results, reasons = {}, {}
    env = dict(os.environ)
    t0 = time.time()
    design_total = {"sass": 0, "static": 0, "skew": 0}
    for m in modules:
        module, tests, why, out, rc, secs = run_module(m, a.tree, a.timeout, env)
        results[module], reasons[module] = tests, why
        write_log(a.logs, module, out)
        design = by_design(module, tests, why)
        for k in design:
            design_total[k] += design[k]
        print(line(module, counts_of(tests), design, secs), flush=True)
        write_json(a.json, {"modules": results, "why": reasons})
    totals = counts_of({f"{t}": o for m in modules for t, o in results.get(m, {}).items()})
    # An empty expected file (a GPU baseline's run) has nothing to compare with.
    compared = expected if expected and expected["pass"] else None
    regressions, checked = report(compared, modules, results, lambda t: t.split("::")[0])
    print(f"cuda-python suites: {len(modules)} modules in {time.time() - t0:.0f}s: "
          f"{totals['pass']} passed, {totals['fail']} failed, {totals['error']} errors, "
          f"{totals['skip']} skipped (of the failures and errors: {design_total['sass']} SASS "
          f"and {design_total['static']} static runtime, refused by design; "
          f"{design_total['skew']} version skew); "
          f"{len(regressions)} regressions")
    print(f"cuda-python checked: {checked - len(regressions)} passed, {len(regressions)} failed")
    return 1 if regressions else 0


HEADER = """\
# NVIDIA's cuda-python test suites on the mock (clients/cuda-python/suite.py), one line each:
#   ci MODULE              a module of the subset ci/cuda-python-suite.sh runs by default
#   pass TEST              passes on the mock; the run fails if it does not
#   known TEST WHY         fails on the mock (fail, error, crash or timeout), and why;
#                          [sass] and [static] mark what the mock refuses by design,
#                          [skew] a test of another cuda-core than the installed one
# Written by `suite.py bless` from a whole run; skipped tests are not listed. Which
# version of each module ran: docs/frameworks/cuda-python.md.
"""


def compare(a):
    """Of the tests that pass on the GPU (its run's JSON), those expected.txt does not
    list as passing on the mock, with the mock's reason."""
    expected = read_expected(a.expected)
    with open(a.json) as f:
        gpu = json.load(f)["modules"]
    on_gpu = sorted(t for tests in gpu.values() for t, o in tests.items() if o == "pass")
    missing = [t for t in on_gpu if t not in expected["pass"]]
    for t in missing:
        print(f"{t}: {expected['known'].get(t, 'skipped or absent on the mock')}")
    print(f"{len(on_gpu) - len(missing)} of the {len(on_gpu)} tests passing on the GPU "
          f"pass on the mock")
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--tree", required=True, help="the fetched tests, laid out as the repo is")
    run_arguments(r, EXPECTED, parallel=False)
    bless_arguments(sub.add_parser("bless"), EXPECTED)
    c = sub.add_parser("compare")
    c.add_argument("json", help="a GPU run's outcomes (ci/gpu-cuda-python.sh's h200.json)")
    c.add_argument("--expected", default=EXPECTED)
    li = sub.add_parser("list")
    li.add_argument("--tree", required=True)
    a = ap.parse_args()
    if a.cmd == "run":
        return run(a)
    if a.cmd == "bless":
        return bless_with_reasons(a, HEADER)
    if a.cmd == "compare":
        return compare(a)
    print("\n".join(all_modules(a.tree)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
