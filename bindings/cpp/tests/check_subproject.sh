#!/usr/bin/env bash
# check_subproject.sh CMAKE CTEST SOURCE_DIR [BUILD_TYPE]
# StepKit as a subproject (bindings/cpp/tests/subproject: add_subdirectory): the project
# configures with StepKit::stepkit an alias, C++17 asked for by the target, and none of StepKit's
# tests or packaging; then it builds (the library too: a full build of the Swift sources, in a
# directory of its own) and its C and C++ programs run. The project's ctest lists its own two
# tests only.
set -euo pipefail
cmake=$1
ctest=$2
source=$(cd "$3" && pwd)
build_type=${4:-Release}

work=$(mktemp -d "${TMPDIR:-/tmp}/stepkit-subproject.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$cmake" -S "$source/bindings/cpp/tests/subproject" -B "$work/build" -G Ninja \
    -DCMAKE_BUILD_TYPE="$build_type" -DSTEPKIT_SOURCE_DIR="$source" >"$work/configure.log" 2>&1 \
    || { cat "$work/configure.log" >&2; exit 1; }
if [ -e "$work/build/stepkit/CPackConfig.cmake" ] || [ -e "$work/build/CPackConfig.cmake" ]; then
    echo "StepKit set up its Debian packages inside another project" >&2
    exit 1
fi
tests=$("$ctest" --test-dir "$work/build" -N | sed -nE 's/^ *Test +#[0-9]+: +//p' | sort | tr '\n' ' ')
echo "--- the project's tests: $tests"
[ "$tests" = "consumer.c consumer.cpp " ] || { echo "expected only consumer.c and consumer.cpp" >&2; exit 1; }

echo "--- cmake --build (the library included)"
"$cmake" --build "$work/build" >"$work/build.log" 2>&1 || { tail -n 50 "$work/build.log" >&2; exit 1; }
# The C++ program was compiled as C++17 although the project asks for C++11 for its own code.
command=$(cd "$work/build" && ninja -t commands cpp_consumer | grep -F 'checkin.cpp' | grep -vF ' -o stepkit' | head -n 1)
grep -qE -- '-std=(c|gnu)\+\+17( |$)' <<<"$command" || { echo "checkin.cpp not compiled as C++17: $command" >&2; exit 1; }
echo "--- checkin.cpp: $(grep -oE -- '-std=[^ ]+' <<<"$command")"
"$ctest" --test-dir "$work/build" --output-on-failure
