"""Runs cudarc's own unit tests (the `#[test]`s of its src/, built by ci/cudarc-suite.sh
into one libtest binary, unchanged), one test per process, and compares the outcomes
with clients/cudarc/expected.txt.

Each test runs as `WRAP... BINARY --exact NAME --test-threads 1` in a process of its own:
a kernel fault is sticky for the process's context (CUDA_ERROR_LAUNCH_TIMEOUT, an
illegal address...), so tests sharing a process would fail after the first one faults,
and a hang is ended by the per-test timeout. libtest's machine-readable output
(`--format json`) needs a nightly toolchain; its plain line `test NAME ... ok` is read.

  suite.py run --binary B [--wrap 'cumock exec --'] [--tests ci|all|T1,T2] [--jobs N]
               [--timeout S] [--json FILE] [--logs DIR] [--expected FILE]
  suite.py bless JSON        rewrites expected.txt's outcomes from a whole run (reasons kept)
  suite.py compare GPU_JSON  the tests that pass on the GPU and not on the mock

`run` prints one line per test and a total, writes every test's outcome to --json, and
exits 1 if a test expected.txt lists as passing did not pass (a test that passes and is
not listed as passing is news, not a failure). Only the standard library: the GPU
machine runs this with its own python3.
"""

import argparse
import json
import os
import re
import shlex
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected.txt")
sys.path.insert(0, os.path.dirname(HERE))
from suite_common import run_captured, run_parallel, write_json  # noqa: E402

OUTCOMES = ("pass", "fail", "ignored", "timeout", "crash")
# cudarc's #[ignore] reason for the tests that need a process of their own, which each
# test has here: they run.
ALONE = "must be executed by itself"
# ... and for those that need two GPUs: they run with --multi-gpu (its settings added to
# their environment: CUMOCK_DEVICES=2 makes the mock two H200s, peers).
MULTI_GPU = "must be executed with multiple gpus"
HEADER = """\
# cudarc 0.19.10's own unit tests on the mock (clients/cudarc/suite.py, ci/cudarc-suite.sh),
# one line each:
#   pass TEST              passes on the mock; the run fails if it does not
#   fail|timeout|crash TEST WHY   does not pass on the mock, and why
#   ignored TEST WHY       cudarc marks it #[ignore] (libtest's reason)
#   slow TEST WHY          left out of the default (ci) run; `--tests all` runs it
#   timing TEST WHY        asserts how fast the host is: run and reported, never checked
# Outcome lines are written by `suite.py bless` from a whole run; the reasons (and the
# slow and timing lines) are kept from this file where it has them. A test cudarc ignores
# as one that "must be executed by itself" runs (--include-ignored): the runner gives every
# test a process of its own. docs/frameworks/cudarc.md.
"""


def read_expected(path):
    """{'outcome': {test: outcome}, 'why': {test: reason}, 'slow': {test: reason},
    'timing': {test: reason}}"""
    doc = {"outcome": {}, "why": {}, "slow": {}, "timing": {}}
    if not os.path.exists(path):
        return doc
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = "" if line.lstrip().startswith("#") else line.strip()
            if not line:
                continue
            kind, _, rest = line.partition(" ")
            test, _, why = rest.strip().partition(" ")
            if kind in ("slow", "timing"):
                doc[kind][test] = why.strip()
            elif kind in OUTCOMES:
                doc["outcome"][test] = kind
                if why.strip():
                    doc["why"][test] = why.strip()
            else:
                sys.exit(f"{path}:{n}: unknown line kind {kind!r}")
    return doc


def list_tests(wrap, binary):
    """The binary's tests, ignored ones among them (libtest's `--list`: `NAME: test`)."""
    out, rc = run_captured(wrap + [binary, "--list"], 300, os.environ.copy())
    if rc != 0:
        sys.exit(f"{binary} --list failed ({rc}):\n{out}")
    return [m.group(1) for m in re.finditer(r"^(\S+): test$", out, re.M)]


def outcome_of(test, out, rc):
    """(outcome, reason) from one test's output: libtest's `test NAME ... ok|FAILED|
    ignored[, why]` line; without one the process died (crash) or was ended (timeout)."""
    if rc == "timeout":
        return "timeout", "ended by the runner's timeout"
    m = re.search(rf"^test {re.escape(test)}(?: - should panic)? \.\.\. (ok|FAILED|ignored)"
                  r"(?:, (.*))?$", out, re.M)
    if not m:
        last = [ln for ln in out.splitlines() if ln.strip()][-1:] or [""]
        return "crash", f"exit status {rc}, no result line: {last[0][:200]}"
    if m.group(1) == "ok":
        return "pass", ""
    if m.group(1) == "ignored":
        return "ignored", (m.group(2) or "").strip()
    return "fail", failure_reason(out)


def failure_reason(out):
    """The first line that says why: a panic's message, or `Error: ...` (a test
    returning Err)."""
    lines = out.splitlines()
    for i, ln in enumerate(lines):
        if re.match(r"thread '.*' \(\d+\) panicked at |thread '.*' panicked at ", ln):
            why = []
            for x in lines[i + 1:i + 5]:
                if not x.strip() or x.startswith(("stack backtrace:", "note: ")):
                    break
                why.append(x.strip())
            return " ".join(why)[:300]
        if ln.startswith("Error: "):
            return ln[:300]
    return "no panic message found"


def cmd_run(a):
    expected = read_expected(a.expected)
    wrap = shlex.split(a.wrap or "")
    tests = list_tests(wrap, a.binary)
    if a.tests == "ci":
        todo = [t for t in tests if t not in expected["slow"]]
    elif a.tests == "all":
        todo = tests
    else:
        todo = a.tests.split(",")
    results, t0 = {}, time.time()

    def run_one(test):
        start = time.time()
        cmd = wrap + [a.binary, "--exact", test, "--test-threads", "1"]
        out, rc = run_captured(cmd, a.timeout, os.environ.copy())
        if outcome_of(test, out, rc) == ("ignored", ALONE):
            out, rc = run_captured(cmd + ["--include-ignored"], a.timeout, os.environ.copy())
        elif outcome_of(test, out, rc) == ("ignored", MULTI_GPU) and a.multi_gpu is not None:
            env = dict(os.environ, **dict(kv.split("=", 1) for kv in a.multi_gpu.split()))
            out, rc = run_captured(cmd + ["--include-ignored"], a.timeout, env)
        return test, out, rc, time.time() - start

    def finished(test, out, rc, seconds):
        outcome, why = outcome_of(test, out, rc)
        results[test] = {"outcome": outcome, "why": why, "seconds": round(seconds, 1)}
        print(f"{outcome:8} {seconds:6.1f}s {test}" + (f"  ({why})" if why else ""),
              flush=True)
        if a.logs:
            os.makedirs(a.logs, exist_ok=True)
            with open(os.path.join(a.logs, test.replace("::", ".") + ".log"), "w") as f:
                f.write(out)
        write_json(a.json, {"binary": a.binary, "tests": results})

    run_parallel(todo, a.jobs, None, run_one, finished)
    counts = {o: sum(r["outcome"] == o for r in results.values()) for o in OUTCOMES}
    print(f"{len(results)} tests in {time.time() - t0:.0f} s: "
          + ", ".join(f"{n} {o}" for o, n in counts.items() if n))
    regressions = [(t, results.get(t, {}).get("outcome", "absent"))
                   for t in sorted(todo) if expected["outcome"].get(t) == "pass"
                   and results.get(t, {}).get("outcome") != "pass"]
    for t, r in sorted(results.items()):
        if r["outcome"] == "pass" and expected["outcome"].get(t) != "pass" \
                and t not in expected["timing"]:
            print(f"news: {t} passes and is not listed as passing in expected.txt")
    for t, o in regressions:
        print(f"REGRESSION: {t}: {o}, listed as passing in expected.txt")
    checked = sum(expected["outcome"].get(t) == "pass" for t in todo)
    # The line ci/test.sh's summary adds up.
    print(f"cudarc checked: {checked - len(regressions)} passed, {len(regressions)} failed "
          "(the tests expected.txt lists as passing)")
    return 1 if regressions else 0


def cmd_bless(a):
    with open(a.json) as f:
        results = json.load(f)["tests"]
    old = read_expected(a.expected)
    lines = [HEADER.rstrip("\n")]
    for test, r in sorted(results.items()):
        o = r["outcome"]
        if test in old["timing"]:
            continue
        if o == "pass":
            lines.append(f"pass {test}")
        else:
            # A reason written here by hand outlives the run's message when the outcome
            # is unchanged.
            why = old["why"][test] if old["outcome"].get(test) == o and test in old["why"] \
                else " ".join(r["why"].split())
            lines.append(f"{o} {test} {why}".rstrip())
    for kind in ("slow", "timing"):
        for test, why in sorted(old[kind].items()):
            lines.append(f"{kind} {test} {why}".rstrip())
    with open(a.expected, "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


def cmd_compare(a):
    with open(a.gpu_json) as f:
        gpu = json.load(f)["tests"]
    expected = read_expected(a.expected)
    passing = sorted(t for t, r in gpu.items() if r["outcome"] == "pass")
    both = [t for t in passing if expected["outcome"].get(t) == "pass"]
    print(f"{len(both)} of the {len(passing)} tests that pass on the GPU pass on the mock")
    for t in passing:
        if t in expected["timing"]:
            print(f"  {t}: timing, not checked on the mock: {expected['timing'][t]}")
        elif expected["outcome"].get(t) != "pass":
            o = expected["outcome"].get(t, "absent")
            print(f"  {t}: {o} on the mock: {expected['why'].get(t, '')}")
    for t, r in sorted(gpu.items()):
        if r["outcome"] != "pass" and expected["outcome"].get(t) == "pass":
            print(f"  {t}: passes on the mock, {r['outcome']} on the GPU: {r['why']}")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--binary", required=True, help="cudarc's libtest binary")
    r.add_argument("--wrap", help="what runs it, e.g. 'target/debug/cumock exec --'")
    r.add_argument("--tests", default="ci", help="ci (all but expected.txt's slow ones), "
                   "all, or T1,T2")
    r.add_argument("--multi-gpu", metavar="'K=V ...'", help="run the tests cudarc ignores "
                   "for want of several GPUs, with these settings ('' for none)")
    r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--timeout", type=int, default=600, help="seconds a test may take")
    r.add_argument("--json", help="every test's outcome, written as tests finish")
    r.add_argument("--logs", help="folder for each test's output")
    r.add_argument("--expected", default=EXPECTED)
    b = sub.add_parser("bless")
    b.add_argument("json")
    b.add_argument("--expected", default=EXPECTED)
    c = sub.add_parser("compare")
    c.add_argument("gpu_json")
    c.add_argument("--expected", default=EXPECTED)
    a = p.parse_args()
    return {"run": cmd_run, "bless": cmd_bless, "compare": cmd_compare}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
