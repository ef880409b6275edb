"""What the suite runners (clients/numba, clients/cupy and clients/cuda-python's
suite.py) share: the expected file's format, reading and writing it, running a module in
a process of its own (pytest's junit file read back), the counts of a module's outcomes,
and the comparison of a run with the expected file."""

import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET


def read_expected(path):
    """{'ci': [modules], 'pass': {test ids}, 'known': {test id: reason}}"""
    ci, passing, known = [], set(), {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = "" if line.lstrip().startswith("#") else line.strip()
            if not line:
                continue
            kind, _, rest = line.partition(" ")
            rest = rest.strip()
            if kind == "ci":
                ci.append(rest)
            elif kind == "pass":
                passing.add(rest)
            elif kind == "known":
                test, _, reason = rest.partition(" ")
                known[test] = reason.strip()
            else:
                sys.exit(f"{path}:{n}: unknown line kind {kind!r}")
    return {"ci": ci, "pass": passing, "known": known}


def counts_of(tests):
    """Passed, failed, errors (a module's crash or timeout among them) and skipped."""
    counts = {"pass": 0, "fail": 0, "error": 0, "skip": 0}
    for o in tests.values():
        counts["error" if o in ("crash", "timeout") else o] += 1
    return counts


def against_expected(expected, ran, results, module_of):
    """(regressions: [(test, outcome)], news: [test], checked) of the modules `ran`: the
    tests expected.txt lists as passing that did not pass, and those that passed and are
    not listed."""
    regressions, news, checked = [], [], 0
    for test in sorted(expected["pass"]):
        module = module_of(test)
        if module not in ran:
            continue
        checked += 1
        if results.get(module, {}).get(test) != "pass":
            regressions.append((test, results.get(module, {}).get(test, "absent")))
    for module in ran:
        news += [t for t, o in sorted(results.get(module, {}).items())
                 if o == "pass" and t not in expected["pass"]]
    return regressions, news, checked


def modules_chosen(choice, expected, all_modules):
    """The modules `run --modules` names: expected.txt's `ci` ones, `all` (all_modules()),
    or M1,M2."""
    if choice == "ci":
        return expected["ci"]
    if choice == "all":
        return all_modules()
    return choice.split(",")


def run_captured(cmd, timeout, env, cwd=None):
    """`cmd` in a process of its own: (its stdout and stderr, its exit status, or "timeout"
    when it ran past `timeout` seconds and was ended)."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                           cwd=cwd)
        return p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        # The output so far comes as bytes, text=True or not.
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(
            errors="replace")
        return out, "timeout"


def run_pytest(target, cwd, timeout, env, options=()):
    """pytest on `target` from `cwd`, in a process of its own: (its output, its exit status
    or "timeout", its test cases: junit_cases)."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "junit.xml")
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *options,
               "-o", "junit_family=xunit1", f"--junitxml={xml}", target]
        out, rc = run_captured(cmd, timeout, env, cwd)
        return out, rc, junit_cases(xml)


def junit_cases(path):
    """Each test case pytest's junit file (xunit1) names: (classname, name, outcome: pass,
    fail, error or skip, the first line of its message, its message and text together);
    none when the file is missing or unreadable."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return []
    cases = []
    for case in root.iter("testcase"):
        outcome, first, text = "pass", "", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "fail", "error": "error", "skipped": "skip"}[child.tag]
                lines = (child.get("message") or child.text or "").strip().splitlines()
                first = lines[0] if lines else ""
                text = " ".join([child.get("message") or "", child.text or ""])
                break
        cases.append((case.get("classname", ""), case.get("name", ""), outcome, first, text))
    return cases


def run_parallel(todo, jobs, budget, run_one, finished):
    """run_one(module) for each module of `todo`, `jobs` at a time, and finished(*its
    result) as each ends. Past `budget` seconds no module starts: a later --resume run
    takes the rest."""
    t0 = time.time()

    def start(m):
        if budget and time.time() - t0 > budget:
            return None
        return run_one(m)

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        for fut in concurrent.futures.as_completed([pool.submit(start, m) for m in todo]):
            result = fut.result()
            if result is not None:
                finished(*result)


def write_log(folder, module, out):
    """A module's output, into `folder` (when one is given) under the module's name."""
    if folder:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, module.replace("/", ".") + ".log"), "w") as f:
            f.write(out)


def write_json(path, doc):
    """A run's outcomes (--json), when a path is given."""
    if path:
        with open(path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)


def report(expected, ran, results, module_of, most_news=None):
    """The modules `ran` against expected.txt (against_expected), its news (the first
    `most_news` of them) and regressions printed: (regressions, checked)."""
    if not expected:
        return [], 0
    regressions, news, checked = against_expected(expected, ran, results, module_of)
    for test in news[:most_news]:
        print(f"news: {test} passes and is not listed as passing in expected.txt")
    if most_news is not None and len(news) > most_news:
        print(f"news: {len(news) - most_news} more tests pass and are not listed in "
              "expected.txt")
    for test, o in regressions:
        print(f"REGRESSION: {test}: {o}, listed as passing in expected.txt")
    return regressions, checked


def write_expected(path, ci, header, results, known):
    """expected.txt from a whole run's outcomes: `header`, the `ci` modules (M1,M2, or those
    the file has now when None), then each module's tests: the passing ones as `pass`
    lines, the failing ones as known(module, test, outcome) writes them; skipped tests are
    not listed."""
    old = read_expected(path) if os.path.exists(path) else {"ci": []}
    ci = ci.split(",") if ci else old["ci"]
    lines = [header.rstrip("\n")] + [f"ci {m}" for m in ci]
    for module in sorted(results):
        lines.append(f"\n# {module}")
        for test, o in sorted(results[module].items()):
            if o == "pass":
                lines.append(f"pass {test}")
            elif o != "skip":
                lines.append(known(module, test, o))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def bless_with_reasons(a, header):
    """`suite.py bless JSON` where the run's JSON holds each failing test's reason (`why`):
    expected.txt's `known` lines give it, on one line."""
    with open(a.json) as f:
        saved = json.load(f)
    results, reasons = saved["modules"], saved.get("why", {})

    def known(module, test, o):
        why = " ".join(reasons.get(module, {}).get(test, "").split())
        return f"known {test} {o}: {why}"[:300]

    write_expected(a.expected, a.ci, header, results, known)
    return 0


def run_arguments(r, expected, parallel):
    """`run`'s options (with --jobs, --resume and --budget where modules run in
    parallel)."""
    r.add_argument("--modules", default="ci", help="ci (expected.txt's), all, or M1,M2")
    if parallel:
        r.add_argument("--jobs", type=int, default=2)
    r.add_argument("--timeout", type=int, default=600, help="seconds a module may take")
    r.add_argument("--json", help="every test's outcome, written as modules finish")
    if parallel:
        r.add_argument("--resume", action="store_true", help="skip the modules --json has")
        r.add_argument("--budget", type=int, help="start no module after this many seconds")
    r.add_argument("--logs", help="folder for each module's output")
    r.add_argument("--expected", default=expected)


def bless_arguments(b, expected):
    """`bless`'s JSON and options."""
    b.add_argument("json")
    b.add_argument("--ci", help="M1,M2: CI's modules (default: those expected.txt has)")
    b.add_argument("--expected", default=expected)
