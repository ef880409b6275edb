#!/usr/bin/env bash
# The long fuzzing run (issue 19): ci/fuzz.sh [SECONDS] [TARGET]
#
# Each target (ptx fatbin case jit engines api, or the one named) for SECONDS (default 300),
# coverage-guided by libFuzzer on stable Rust: cumock-fuzz's `libfuzzer` feature, built
# with LLVM's sanitizer coverage. It starts from the committed corpus
# (fuzz/corpus/TARGET/) and the regression inputs (fuzz/regressions/TARGET/); at the end
# the inputs that add coverage are merged into fuzz/corpus/TARGET/ (commit them), and
# crashes, hangs and large allocations are in fuzz/crashes/ (reproduce one with
# `target/debug/cumock-fuzz TARGET --replay FILE`).
#
# CUMOCK_FUZZ_ENGINE=deterministic, or a libFuzzer that does not build, runs the stable
# engine instead (seeded mutations, seed from the clock) for the same time.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
targets=${2:-ptx fatbin case jit engines api}
mkdir -p fuzz/crashes

deterministic() {
    cargo build -p cumock-fuzz --bin cumock-fuzz
    local status=0
    for t in $targets; do
        target/debug/cumock-fuzz "$t" "$seconds" || status=1
    done
    return $status
}

if [ "${CUMOCK_FUZZ_ENGINE:-libfuzzer}" = deterministic ]; then
    deterministic
    exit $?
fi

# Sanitizer coverage on stable: what cargo-fuzz passes on nightly, less what needs it.
# --target keeps the flags off build scripts and proc-macros; its own target folder keeps
# the instrumented build apart from the ordinary one.
host=$(rustc -vV | sed -n 's/^host: //p')
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions -Coverflow-checks --cfg fuzzing"
if ! CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    cargo build --release -p cumock-fuzz --features libfuzzer --bin cumock-libfuzzer \
        --target "$host" --target-dir target/fuzz; then
    echo "ci/fuzz.sh: libFuzzer did not build; running the deterministic engine instead" >&2
    unset RUSTFLAGS
    deterministic
    exit $?
fi
bin=target/fuzz/$host/release/cumock-libfuzzer
status=0
for t in $targets; do
    work=target/fuzz/corpus/$t
    mkdir -p "$work" "fuzz/corpus/$t"
    dict=()
    [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
    # The engines target mutates PTX text too.
    [ "$t" = engines ] && dict=(-dict="fuzz/dict/ptx.dict")
    case $t in
        jit) max_len=512 ;;
        api) max_len=1024 ;;
        case) max_len=8192 ;;
        engines) max_len=16384 ;;
        ptx) max_len=32768 ;;
        *) max_len=65536 ;;
    esac
    echo "== $t: $seconds s"
    # -timeout: a hang; -rss_limit_mb: a process grown past it; large single allocations
    # panic in the target (cumock_fuzz::guard).
    CUMOCK_FUZZ_TARGET=$t "$bin" "$work" "fuzz/corpus/$t" $( [ -d "fuzz/regressions/$t" ] && echo "fuzz/regressions/$t" ) \
        "${dict[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=6144 \
        -max_len=$max_len -artifact_prefix="fuzz/crashes/$t-" -print_final_stats=1 || status=1
    # Keep what adds coverage to the committed corpus, nothing else.
    CUMOCK_FUZZ_TARGET=$t "$bin" -merge=1 "fuzz/corpus/$t" "$work" -max_len=$max_len \
        -timeout=20 -rss_limit_mb=6144 2>&1 | tail -1 || true
done
exit $status
