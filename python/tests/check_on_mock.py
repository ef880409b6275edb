"""Run as `cumock exec -- pytest python/tests/check_on_mock.py` (not collected by a plain
pytest run): the whole pytest process is on the mock."""

import ctypes
import os

from cumock import lib_path


def test_the_whole_session_is_on_the_mock():
    assert os.environ["LD_LIBRARY_PATH"].split(":")[0] == lib_path()
    c = ctypes.CDLL("libcuda.so.1")
    assert c.cuInit(0) == 0
    name = ctypes.create_string_buffer(64)
    assert c.cuDeviceGetName(name, 64, 0) == 0 and name.value == b"NVIDIA H200"
