"""What clients/numba/suite.py and clients/cupy/suite.py share: the expected file's
format, the counts of a module's outcomes, and the comparison of a run with the expected
file."""

import sys


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
