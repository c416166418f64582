#!/bin/bash
# check_choice_scaling.sh CHOICE_SCALING [N]
#
# A long choice list compiles in time linear in its length (issue 26, item 10): counted, not
# timed. Runs the choice_scaling driver under callgrind for N and 4N choices, as a textChoice
# list (stepkit_task_compile) and as FHIR answerOptions (stepkit_task_compile_fhir), and checks
# that 4N costs less than 5 times the instructions of N. A compile linear in the choices costs
# about 4 times as much; the quadratic duplicate-value checks it replaced cost 15.3 times as much
# for text choices and 14.6 for FHIR options at 1,000 / 4,000 (release library of 7a72cd5: they
# compared each value with every earlier one); the fixed library gives 3.80 and 3.96.
# Instruction counts repeat from run to run on a loaded machine where times do not; the ratio
# leaves room for what varies (Swift seeds its hashing per process, so dictionary probes differ
# by about 1 %).
set -euo pipefail

driver=${1:?usage: check_choice_scaling.sh CHOICE_SCALING [N]}
n=${2:-1000}
valgrind=$(command -v valgrind || true)
if [ -z "$valgrind" ]; then
    echo "valgrind is not installed: the scaling check needs callgrind" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# instructions KIND N: the compile's instruction count (callgrind counts only between the
# driver's CALLGRIND_START_INSTRUMENTATION and _STOP, around the one compile).
instructions() {
    local out="$work/callgrind.$1.$2"
    "$valgrind" --tool=callgrind --instr-atstart=no --callgrind-out-file="$out" "$driver" "$1" "$2" >"$work/stdout" 2>"$work/stderr" || {
        echo "choice_scaling $1 $2 failed under callgrind:" >&2
        tail -20 "$work/stderr" >&2
        exit 1
    }
    awk '/^totals:/ { print $2 }' "$out"
}

status=0
for kind in task fhir; do
    small=$(instructions "$kind" "$n")
    large=$(instructions "$kind" $((4 * n)))
    if [ -z "$small" ] || [ "$small" -eq 0 ]; then
        echo "FAIL: no instructions counted (was choice_scaling built without <valgrind/callgrind.h>?)" >&2
        exit 1
    fi
    ratio=$(awk -v a="$small" -v b="$large" 'BEGIN { printf "%.2f", b / a }')
    echo "$kind: $n choices $small Ir, $((4 * n)) choices $large Ir, ratio $ratio (linear: about 4; limit 5)"
    if ! awk -v r="$ratio" 'BEGIN { exit !(r < 5) }'; then
        echo "FAIL: compiling $kind choices grows faster than their number" >&2
        status=1
    fi
done
exit $status
