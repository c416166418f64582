#!/usr/bin/env bash
# check_cpp_coverage.sh HEADER PROGRAM [CC]
# PROGRAM (the C++ API's tests) passes, and while it runs it calls every function HEADER
# (include/stepkit.h) declares: the dynamic loader's binding trace (LD_DEBUG=bindings, lazy
# binding) lists each library function the first time the program calls it. stepkit.hpp calls
# every C function directly (never through an address taken at load time, which the loader
# binds at start whether or not it is called), so a function listed was really called.
set -euo pipefail
header=$1
program=$2
cc=${3:-cc}

if readelf -d "$program" | grep -Eq '\(BIND_NOW\)|\(FLAGS(_1)?\).*\b(BIND_NOW|NOW)\b'; then
    echo "$program is linked with -z now: its bindings say nothing about calls" >&2
    exit 1
fi
declared=$("$cc" -E -P -x c "$header" | grep -oE '\bstepkit_[A-Za-z0-9_]+[[:space:]]*\(' \
           | sed -E 's/[[:space:]]*\($//' | sort -u)
[ -n "$declared" ] || { echo "no stepkit_* declarations found in $header" >&2; exit 1; }

trace=$(mktemp -d "${TMPDIR:-/tmp}/stepkit-cpp-coverage.XXXXXX")
trap 'rm -rf "$trace"' EXIT
env -u LD_BIND_NOW LD_DEBUG=bindings LD_DEBUG_OUTPUT="$trace/bindings" "$program"
name=$(basename "$program")
called=$(cat "$trace"/bindings.* | grep -F "binding file " | grep -F "/$name [0]" \
         | grep -oE "symbol \`stepkit_[A-Za-z0-9_]+'" | sed -E "s/symbol \`(.*)'/\1/" | sort -u)

missing=$(comm -23 <(printf '%s\n' "$declared") <(printf '%s\n' "$called"))
if [ -n "$missing" ]; then
    echo "declared in $(basename "$header") but never called by $name:" >&2
    printf '  %s\n' $missing >&2
    exit 1
fi
echo "$(printf '%s\n' "$declared" | wc -l) functions declared, all called through stepkit.hpp:"
printf '  %s\n' $declared
