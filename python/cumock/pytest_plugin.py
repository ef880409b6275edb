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


def pytest_configure(config):
    global _config
    _config = config
    config.addinivalue_line(
        "markers",
        "cumock(devices=1, fault=None, leaks=False, misuse=False, strict=False, "
        "profile=None, trace=None): run the test in its own process on cumock's mock "
        "CUDA driver, with these settings",
    )


@functools.lru_cache(maxsize=None)
def _mock_dir() -> str:
    return lib_path()


def _environment(marker) -> dict:
    if marker.args:
        raise pytest.UsageError(
            f"@pytest.mark.cumock takes keywords only ({', '.join(ENV_FOR)}), "
            f"not {marker.args!r}"
        )
    unknown = sorted(set(marker.kwargs) - set(ENV_FOR))
    if unknown:
        raise pytest.UsageError(
            f"@pytest.mark.cumock: unknown setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(ENV_FOR)}"
        )
    env = dict(os.environ)
    # The parent's own options must not leak into the child's command line.
    env.pop("PYTEST_ADDOPTS", None)
    for key, value in marker.kwargs.items():
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


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    marker = item.get_closest_marker("cumock")
    if marker is None or os.environ.get(CHILD_REPORTS):
        return None
    env = _environment(marker)
    ihook = item.ihook
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for report in _run_in_child(item, env, marker):
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _run_in_child(item, env, marker) -> list:
    config = item.config
    with tempfile.TemporaryDirectory(prefix="cumock-pytest-") as tmp:
        reports_file = os.path.join(tmp, "reports.jsonl")
        env[CHILD_REPORTS] = reports_file
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            item.nodeid,
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
    captured = "".join(
        text for r in reports for (_, text) in r.sections if text
    )
    messages = _mock_lines(captured, done.stderr)
    settings = ", ".join(f"{k}={v!r}" for k, v in marker.kwargs.items())
    summary = (
        f"cumock: ran in its own process on the mock ({settings or 'defaults'}); "
        f"exit status {done.returncode}"
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
    if done.returncode == STRICT_EXIT_STATUS and marker.kwargs.get("strict"):
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
