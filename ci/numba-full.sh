#!/usr/bin/env bash
# Every module of numba-cuda's test suite on the mock (about half an hour on 2 cores);
# ci/numba-suite.sh runs CI's subset. Fails when a test expected.txt lists as passing
# does not pass; `news:` lines name tests that pass and are not listed yet.
exec "$(dirname "$0")/numba-suite.sh" all
