"""The pytest plugin's own tests: each writes a small test file and runs pytest on it in
a process of its own (pytester), as a user's project would."""

import os
import textwrap

import pytest

CUDA = '''
import ctypes, os, pytest

def cuda():
    c = ctypes.CDLL("libcuda.so.1")
    assert c.cuInit(0) == 0
    return c

def reserve(c, size=2 << 20):
    va = ctypes.c_uint64()
    r = c.cuMemAddressReserve(ctypes.byref(va), ctypes.c_size_t(size), ctypes.c_size_t(0),
                              ctypes.c_uint64(0), ctypes.c_uint64(0))
    return r, va.value

def free(c, va, size=2 << 20):
    assert c.cuMemAddressFree(ctypes.c_uint64(va), ctypes.c_size_t(size)) == 0
'''


def run(pytester, body, *args):
    pytester.makepyfile(test_it=CUDA + textwrap.dedent(body))
    return pytester.runpytest_subprocess("-rA", *args)


def test_a_marked_test_runs_on_the_mock_with_its_devices(pytester):
    r = run(pytester, '''
        @pytest.mark.cumock(devices=2)
        def test_two_devices():
            c = cuda()
            n = ctypes.c_int()
            assert c.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value == 2
            name = ctypes.create_string_buffer(64)
            assert c.cuDeviceGetName(name, 64, 1) == 0
            assert name.value == b"NVIDIA H200"
            r, va = reserve(c)
            assert r == 0
            free(c, va)
    ''')
    r.assert_outcomes(passed=1)


def test_a_failing_marked_test_fails_with_its_own_message(pytester):
    r = run(pytester, '''
        @pytest.mark.cumock()
        def test_wrong():
            c = cuda()
            n = ctypes.c_int()
            c.cuDeviceGetCount(ctypes.byref(n))
            assert n.value == 3, "expected three devices"
    ''')
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines(["*expected three devices*"])


def test_a_planted_leak_fails_under_strict_with_the_leak_report(pytester):
    r = run(pytester, '''
        @pytest.mark.cumock(leaks=True, strict=True)
        def test_leaks_a_reservation():
            r, va = reserve(cuda())
            assert r == 0
    ''')
    r.assert_outcomes(failed=1)
    r.stdout.fnmatch_lines([
        "*strict mode found misuse or leaks*",
        "*cumock:   reservation 0x* never freed (cuMemAddressFree)*",
        "*cumock:       at *",
    ])


def test_a_leak_without_strict_passes_and_is_reported(pytester):
    r = run(pytester, '''
        @pytest.mark.cumock(leaks=True)
        def test_leaks_a_reservation():
            r, va = reserve(cuda())
            assert r == 0
    ''')
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["*cumock: leak report: 1 leak(s)*", "*never freed*"])


def test_the_same_test_freeing_everything_passes_under_strict(pytester):
    r = run(pytester, '''
        @pytest.mark.cumock(leaks=True, strict=True)
        def test_frees():
            c = cuda()
            r, va = reserve(c)
            assert r == 0
            free(c, va)
    ''')
    r.assert_outcomes(passed=1)


def test_misuse_messages_come_back_into_the_report(pytester):
    r = run(pytester, '''
        @pytest.mark.cumock(misuse=True)
        def test_misaligned():
            r, va = reserve(cuda(), size=4096 + 1)
            assert r == 1  # CUDA_ERROR_INVALID_VALUE
    ''')
    r.assert_outcomes(passed=1)
    r.stdout.fnmatch_lines(["*cumock: cuMemAddressReserve: CUDA_ERROR_INVALID_VALUE*"])


def test_fault_injection_reaches_the_marked_test_only(pytester):
    r = run(pytester, '''
        @pytest.mark.cumock(fault="cuMemAddressReserve:1:CUDA_ERROR_OUT_OF_MEMORY")
        def test_faulted():
            c = cuda()
            assert reserve(c)[0] == 2  # CUDA_ERROR_OUT_OF_MEMORY, the 1st call
            r, va = reserve(c)
            assert r == 0              # the 2nd is not
            free(c, va)

        @pytest.mark.cumock()
        def test_marked_without_fault():
            c = cuda()
            r, va = reserve(c)
            assert r == 0
            free(c, va)

        def test_not_marked():
            # Runs in pytest's own process, untouched: no mock settings, no mock library.
            # Only the mock's settings and the plugin's report file must be absent: CI may
            # set variables of its own (CUMOCK_NVCC_ROOT, CUMOCK_CUDA_INCLUDE).
            from cumock import ENV_FOR
            assert not any(k in os.environ for k in [*ENV_FOR.values(), "CUMOCK_PYTEST_REPORTS"])
            from cumock import lib_path
            assert lib_path() not in os.environ.get("LD_LIBRARY_PATH", "")
    ''')
    r.assert_outcomes(passed=3)


def test_a_bad_marker_is_a_usage_error(pytester):
    r = run(pytester, '''
        @pytest.mark.cumock(device=2)
        def test_typo():
            pass
    ''')
    assert r.ret != 0
    r.stderr.fnmatch_lines(["*unknown setting(s) device*"])


def test_isolation_per_module_shares_one_process_and_per_test_does_not(pytester):
    # Each test writes its process id; module isolation puts the marked tests of the
    # module in one process, test isolation each in its own.
    pytester.makepyfile(test_it=CUDA + textwrap.dedent('''
        import os
        PIDS = os.environ["PIDS"]

        def note():
            with open(PIDS, "a") as f:
                f.write(f"{os.getpid()}\\n")

        @pytest.mark.cumock(isolate="module")
        def test_a():
            cuda(); note()

        @pytest.mark.cumock(isolate="module")
        def test_b():
            cuda(); note()

        @pytest.mark.cumock()
        def test_c():
            cuda(); note()

        @pytest.mark.cumock()
        def test_d():
            cuda(); note()
    '''))
    pids = pytester.path / "pids.txt"
    os.environ["PIDS"] = str(pids)
    try:
        r = pytester.runpytest_subprocess("-rA")
    finally:
        del os.environ["PIDS"]
    r.assert_outcomes(passed=4)
    a, b, c, d = pids.read_text().split()
    assert a == b and len({a, c, d}) == 3, (a, b, c, d)


def test_the_ini_option_puts_unmarked_tests_on_the_mock_each_in_its_own_process(pytester):
    pytester.makeini("[pytest]\ncumock_isolate = test\n")
    r = run(pytester, '''
        def test_unmarked_is_on_the_mock():
            name = ctypes.create_string_buffer(64)
            c = cuda()
            assert c.cuDeviceGetName(name, 64, 0) == 0 and name.value == b"NVIDIA H200"

        @pytest.mark.cumock(leaks=True, strict=True)
        def test_leaks_a_reservation():
            r, va = reserve(cuda())
            assert r == 0

        def test_after_the_leak_is_clean():
            c = cuda()
            r, va = reserve(c)
            free(c, va)
    ''')
    # The leak is charged to its own test only.
    r.assert_outcomes(passed=2, failed=1)
    r.stdout.fnmatch_lines(["*FAILED*test_leaks_a_reservation*"])


def test_a_sticky_fault_under_module_isolation_stays_in_its_module(pytester):
    # A test that kills its process: with module isolation the tests after it in the
    # module fail as unfinished, a test of its own process is untouched.
    r = run(pytester, '''
        @pytest.mark.cumock(isolate="module")
        def test_dies():
            cuda()
            os._exit(3)

        @pytest.mark.cumock(isolate="module")
        def test_same_process_after_it():
            cuda()

        @pytest.mark.cumock()
        def test_own_process():
            cuda()
    ''')
    r.assert_outcomes(passed=1, errors=2)
    r.stdout.fnmatch_lines(["*did not finish*"])


def test_a_bad_isolation_is_a_usage_error(pytester):
    r = run(pytester, '''
        @pytest.mark.cumock(isolate="thread")
        def test_x():
            pass
    ''')
    assert r.ret != 0
    r.stderr.fnmatch_lines(["*isolate='thread'*one of test, module, none*"])
