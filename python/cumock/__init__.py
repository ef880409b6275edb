"""cumock: a mock libcuda.so.1 that emulates the CUDA driver's virtual memory management
on the host, its conformance harness (the ``cumock`` command), and a pytest plugin.

The wheel installs the ``cumock`` command into the environment's scripts folder and the
mock's libraries into ``<prefix>/lib/cumock/``, where the command finds them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig

__all__ = ["command", "lib_path", "ENV_FOR"]


def command() -> str:
    """The ``cumock`` command: the one installed with this package, else the one on PATH."""
    here = os.path.join(sysconfig.get_path("scripts"), "cumock")
    if os.access(here, os.X_OK):
        return here
    found = shutil.which("cumock")
    if found is None:
        raise FileNotFoundError(
            "the cumock command is not installed: pip install cumock, or "
            "cargo install --path harness from cumock's repository"
        )
    return found


def lib_path() -> str:
    """The folder holding the mock's libcuda.so.1 (as ``cumock lib-path`` prints it)."""
    out = subprocess.run(
        [command(), "lib-path"], capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise RuntimeError(f"cumock lib-path failed: {out.stderr.strip()}")
    return out.stdout.strip()


# The mock's settings, as the pytest marker names them, and the variables that carry them.
ENV_FOR = {
    "devices": "CUMOCK_DEVICES",
    "profile": "CUMOCK_PROFILE",
    "fault": "CUMOCK_FAULT",
    "leaks": "CUMOCK_LEAKS",
    "misuse": "CUMOCK_MISUSE",
    "strict": "CUMOCK_STRICT",
    "trace": "CUMOCK_TRACE",
}


def _main() -> None:  # pragma: no cover - `python -m cumock` is the command itself
    os.execv(command(), ["cumock", *sys.argv[1:]])
