"""pytest plugin: a test marked ``@pytest.mark.cumock(...)`` runs on the mock driver.

    @pytest.mark.cumock(devices=2, fault="cuMemCreate:3:CUDA_ERROR_OUT_OF_MEMORY",
                        leaks=True, strict=True)
    def test_allocator_recovers_from_oom(): ...

A process picks its libcuda.so.1 when it starts, so the plugin runs each marked test in
a child Python of its own, with the mock first in LD_LIBRARY_PATH and the settings as
the mock's environment variables. The child's reports come back into this session, with
the mock's messages (misuse, leak report) attached; under ``strict=True`` a leak or a
misuse fails the test. Tests not marked run here, as they would without the plugin.

Settings: ``devices``, ``profile``, ``fault``, ``leaks``, ``misuse``, ``strict``,
``trace`` (see ``cumock exec --help``); True/False switch a setting on or off, others
are passed as text.

Isolation: ``isolate="test"`` (the default) gives each marked test a process of its own,
so that a sticky fault or a leak is charged to the test that made it; ``"module"`` runs
the marked tests of a module that share settings in one process (the leak report, made
at the process's exit, is then charged to the last of them); ``"none"`` runs the test in
pytest's own process (for a session already on the mock, under ``cumock exec``). The ini
option ``cumock_isolate = test|module|none`` sets the default; with ``test`` or
``module`` there, tests not marked run on the mock too, with the default settings.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile

import pytest

from . import ENV_FOR, lib_path

# Set in the child: the file its reports go to. Its presence also tells the plugin it is
# the child, where marked tests run as ordinary tests.
CHILD_REPORTS = "CUMOCK_PYTEST_REPORTS"
# The exit status the mock gives a strict run that found misuse or leaks.
STRICT_EXIT_STATUS = 86

_config = None

ISOLATION = ("test", "module", "none")


def pytest_addoption(parser):
    parser.addini(
        "cumock_isolate",
        "test|module|none: how marked tests share processes on the mock (default: "
        "test, each its own); with test or module, tests not marked run on the mock too",
        default="none",
    )


def _ini_isolation(config) -> str:
    value = str(config.getini("cumock_isolate") or "none").strip()
    if value not in ISOLATION:
        raise pytest.UsageError(
            f"cumock_isolate = {value!r}: one of {', '.join(ISOLATION)}"
        )
    return value


def _isolation(item):
    """(isolation, settings) of a test: None if it runs here untouched."""
    marker = item.get_closest_marker("cumock")
    ini = _ini_isolation(item.config)
    if marker is None:
        if ini == "none":
            return None
        return ini, {}
    settings = dict(marker.kwargs)
    isolate = settings.pop("isolate", "test" if ini == "none" else ini)
    if isolate not in ISOLATION:
        raise pytest.UsageError(
            f"@pytest.mark.cumock(isolate={isolate!r}): one of {', '.join(ISOLATION)}"
        )
    if marker.args:
        raise pytest.UsageError(
            f"@pytest.mark.cumock takes keywords only ({', '.join(ENV_FOR)}, isolate), "
            f"not {marker.args!r}"
        )
    return isolate, settings


def pytest_configure(config):
    global _config
    _config = config
    config.addinivalue_line(
        "markers",
        "cumock(devices=1, fault=None, leaks=False, misuse=False, strict=False, "
        "profile=None, trace=None, isolate='test'): run the test in its own process (or "
        "its module's, isolate='module') on cumock's mock CUDA driver, with these settings",
    )


@functools.lru_cache(maxsize=None)
def _mock_dir() -> str:
    return lib_path()


def _environment(settings: dict) -> dict:
    unknown = sorted(set(settings) - set(ENV_FOR))
    if unknown:
        raise pytest.UsageError(
            f"@pytest.mark.cumock: unknown setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(ENV_FOR)}"
        )
    env = dict(os.environ)
    # The parent's own options must not leak into the child's command line.
    env.pop("PYTEST_ADDOPTS", None)
    for key, value in settings.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "1" if value else "0"
        env[ENV_FOR[key]] = str(value)
    ld = env.get("LD_LIBRARY_PATH", "")
    env["LD_LIBRARY_PATH"] = _mock_dir() + (":" + ld if ld else "")
    return env


def _mock_lines(*texts: str) -> list:
    return [
        line
        for text in texts
        for line in text.splitlines()
        if line.startswith("cumock:")
    ]


# Reports of module groups already run, by node id, waiting for their test's turn.
_pending = {}


def _group_key(item, settings):
    return (item.nodeid.split("::")[0], tuple(sorted((k, repr(v)) for k, v in settings.items())))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    if os.environ.get(CHILD_REPORTS):
        return None
    how = _isolation(item)
    if how is None or how[0] == "none":
        return None
    isolate, settings = how
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    if isolate == "test":
        reports = _run_in_child([item], _environment(settings), settings)[item.nodeid]
    else:
        if item.nodeid not in _pending:
            key = _group_key(item, settings)
            group = [
                i
                for i in item.session.items
                if (h := _isolation(i)) is not None
                and h[0] == "module"
                and _group_key(i, h[1]) == key
                and i.nodeid not in _pending
            ]
            _pending.update(_run_in_child(group, _environment(settings), settings))
        reports = _pending.pop(item.nodeid)
    for report in reports:
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _run_in_child(items, env, settings) -> dict:
    """Runs `items` in one child process; their reports, by node id. What concerns the
    process as a whole (the mock's messages, its exit status) is charged to the last."""
    item = items[-1]
    config = item.config
    with tempfile.TemporaryDirectory(prefix="cumock-pytest-") as tmp:
        reports_file = os.path.join(tmp, "reports.jsonl")
        env[CHILD_REPORTS] = reports_file
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            *(i.nodeid for i in items),
            "-qq",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(config.rootpath),
        ]
        if config.pluginmanager.get_plugin("cumock") is None:
            # Loaded with -p rather than installed: the child needs it named too.
            cmd += ["-p", __name__]
        done = subprocess.run(
            cmd,
            cwd=str(config.rootpath),
            env=env,
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
        reports = []
        if os.path.exists(reports_file):
            with open(reports_file, encoding="utf-8") as f:
                for line in f:
                    reports.append(
                        config.hook.pytest_report_from_serializable(
                            config=config, data=json.loads(line)
                        )
                    )
    by_test = {i.nodeid: [r for r in reports if r.nodeid == i.nodeid] for i in items}
    for i in items[:-1]:
        if not any(r.when == "teardown" for r in by_test[i.nodeid]):
            # The shared child died in this test, or before it.
            by_test[i.nodeid].append(
                _report(
                    i,
                    "teardown",
                    "failed",
                    f"cumock: the child process running its module's tests did not finish "
                    f"this test (exit status {done.returncode})\n--- stderr\n{done.stderr}",
                    [],
                )
            )
    by_test[item.nodeid] = _charge_process(item, by_test[item.nodeid], reports, done, cmd, settings, len(items))
    return by_test


def _charge_process(item, reports, all_reports, done, cmd, marker_settings, count) -> list:
    """The last test's reports, with what the child process as a whole said."""
    captured = "".join(
        text for r in all_reports for (_, text) in r.sections if text
    )
    messages = _mock_lines(captured, done.stderr)
    settings = ", ".join(f"{k}={v!r}" for k, v in marker_settings.items())
    summary = (
        f"cumock: ran in {'its own process' if count == 1 else f'one process with {count - 1} other test(s) of its module'} "
        f"on the mock ({settings or 'defaults'}); exit status {done.returncode}"
    )
    if not any(r.when == "teardown" for r in reports):
        # The child never finished the test: it did not start, or it died in it.
        return reports + [
            _report(
                item,
                "teardown",
                "failed",
                f"{summary}: the child process did not finish the test\n"
                f"{' '.join(cmd)}\n--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}",
                [],
            )
        ]
    # The mock's messages, whatever the outcome: on the call's report for -rA and failures,
    # on the teardown's for JUnit's system-err (it writes what the last report holds).
    for r in reports:
        if r.when in ("call", "teardown"):
            if messages:
                r.sections.append(("Captured stderr cumock", "\n".join(messages) + "\n"))
            r.user_properties.append(("cumock", settings or "defaults"))
    failure = None
    if done.returncode == STRICT_EXIT_STATUS and marker_settings.get("strict"):
        failure = (
            f"{summary}: strict mode found misuse or leaks\n" + "\n".join(messages)
        )
    elif done.returncode < 0:
        failure = f"{summary}: the child was killed by signal {-done.returncode}\n{done.stderr}"
    elif done.returncode not in (0, 1, 5, STRICT_EXIT_STATUS):
        failure = f"{summary}\n{done.stderr}"
    if failure is not None:
        call = next((r for r in reports if r.when == "call"), None)
        if call is not None and call.passed:
            call.outcome = "failed"
            call.longrepr = failure
        elif call is None or not call.failed:
            reports.append(_report(item, "teardown", "failed", failure, []))
    return reports


def _report(item, when, outcome, longrepr, sections):
    return pytest.TestReport(
        nodeid=item.nodeid,
        location=item.location,
        keywords={k: 1 for k in item.keywords},
        outcome=outcome,
        longrepr=longrepr,
        when=when,
        sections=sections,
    )


def pytest_runtest_logreport(report):
    """In the child: every report goes to the parent, as pytest-xdist sends them."""
    path = os.environ.get(CHILD_REPORTS)
    if not path or _config is None:
        return
    data = _config.hook.pytest_report_to_serializable(config=_config, report=report)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(data) + "\n")
