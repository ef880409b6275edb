#!/usr/bin/env bash
# The run step of the composite action (action.yml), apart so it can be tested off GitHub:
# runs COMMAND (a bash command line) on the mock with the diagnostics asked for, keeps the
# mock's messages (misuse, leak report with call sites) in OUTDIR/cumock-report.txt, and
# writes a Markdown summary to $GITHUB_STEP_SUMMARY and `exit-code` to $GITHUB_OUTPUT.
#   ci/cumock-action.sh OUTDIR COMMAND
# Settings from the environment, as the action's inputs give them: CUMOCK_ACTION_LEAKS,
# _MISUSE, _STRICT (true/false), _DEVICES, _FAULT, _JUNIT (a JUnit file COMMAND writes).
set -uo pipefail
out=$1
command=$2
mkdir -p "$out"
args=(exec)
[ "${CUMOCK_ACTION_LEAKS:-true}" = true ] && args+=(--leaks)
[ "${CUMOCK_ACTION_MISUSE:-true}" = true ] && args+=(--misuse)
[ "${CUMOCK_ACTION_STRICT:-false}" = true ] && args+=(--strict)
[ -n "${CUMOCK_ACTION_DEVICES:-}" ] && args+=(--devices "$CUMOCK_ACTION_DEVICES")
[ -n "${CUMOCK_ACTION_FAULT:-}" ] && args+=(--fault "$CUMOCK_ACTION_FAULT")
stderr="$out/stderr.txt"
# stderr goes to the log as it comes, and to a file for the report.
{
    cumock "${args[@]}" -- bash -c "$command" 2>&1 1>&3 3>&- | tee "$stderr" >&2 3>&-
    code=${PIPESTATUS[0]}
} 3>&1
grep '^cumock:' "$stderr" > "$out/cumock-report.txt" || true
leaks=$(sed -n 's/^cumock: leak report: \([0-9]*\) leak(s)$/\1/p' "$stderr" | awk '{ s += $1 } END { print s + 0 }')
# Misuse: each message the mock prints for a call, not the lines of call stacks under it.
misuse=$(grep -cE '^cumock: cu[A-Za-z0-9_]+: (CUDA_ERROR_|warning:)' "$stderr" || true)
junit=${CUMOCK_ACTION_JUNIT:-}
tests=""
if [ -n "$junit" ] && [ -f "$junit" ]; then
    tests=$(python3 - "$junit" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
n = {k: sum(int(s.get(k, 0)) for s in suites) for k in ("tests", "failures", "errors", "skipped")}
print(f"{n['tests']} tests: {n['tests'] - n['failures'] - n['errors'] - n['skipped']} passed, "
      f"{n['failures']} failed, {n['errors']} errors, {n['skipped']} skipped")
PY
    )
    cp "$junit" "$out/"
fi
{
    echo "### cumock: \`$command\` on the mock driver"
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| exit status | $code |"
    [ -n "$tests" ] && echo "| tests | $tests |"
    echo "| leaks | $leaks |"
    echo "| misuse messages | $misuse |"
    if [ -s "$out/cumock-report.txt" ]; then
        echo
        echo "<details><summary>the mock's messages (first 200 lines)</summary>"
        echo
        echo '```'
        head -n 200 "$out/cumock-report.txt"
        echo '```'
        echo "</details>"
    fi
} >> "${GITHUB_STEP_SUMMARY:-/dev/stdout}"
echo "exit-code=$code" >> "${GITHUB_OUTPUT:-/dev/null}"
exit "$code"
