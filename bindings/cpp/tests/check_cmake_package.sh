#!/usr/bin/env bash
# check_cmake_package.sh CMAKE BUILD_DIR SOURCE_DIR
# `cmake --install` into a temporary prefix, then a separate CMake project finds it with
# find_package(StepKit 0.1 REQUIRED), links StepKit::stepkit from C and from C++ (stepkit.hpp),
# and both programs run against the installed library. A version the package cannot satisfy
# (find_package(StepKit 0.2), 1.0) is refused.
set -euo pipefail
cmake=$1
build=$2
source=$3

work=$(mktemp -d "${TMPDIR:-/tmp}/stepkit-cmake-package.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

"$cmake" --install "$build" --prefix "$prefix" >/dev/null
config=$(find "$prefix" -name StepKitConfig.cmake -print -quit)
[ -n "$config" ] || { echo "StepKitConfig.cmake was not installed" >&2; exit 1; }
for file in StepKitConfigVersion.cmake StepKitTargets.cmake; do
    [ -f "$(dirname "$config")/$file" ] || { echo "missing: $file next to $config" >&2; exit 1; }
done
echo "--- $config"

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
"$cmake" -S "$source/bindings/cpp/tests/consumer" -B "$work/consumer" "${generator[@]}" \
    -DCMAKE_PREFIX_PATH="$prefix" -DSTEPKIT_SOURCE_DIR="$source" -DCMAKE_BUILD_TYPE=Release
"$cmake" --build "$work/consumer"

libdir=$(dirname "$(find "$prefix" -name 'libstepkit.so.0' -print -quit)")
for program in c_consumer cpp_consumer; do
    echo "--- $program"
    "$work/consumer/$program"
    # It really used the installed copy (the imported target's path, no LD_LIBRARY_PATH).
    ldd "$work/consumer/$program" | grep -F "$libdir/libstepkit.so.0"
done

# The version file: 0.1 is compatible, 0.2 and 1.0 are not.
for wanted in 0.2 1.0; do
    mkdir -p "$work/refuse-$wanted"
    cat >"$work/refuse-$wanted/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(Refuse LANGUAGES C)   # a language: find_package then searches lib/<multiarch>/
find_package(StepKit $wanted REQUIRED)
CMAKE
    if "$cmake" -S "$work/refuse-$wanted" -B "$work/refuse-$wanted/build" \
            -DCMAKE_PREFIX_PATH="$prefix" >"$work/refuse.log" 2>&1; then
        echo "find_package(StepKit $wanted) accepted StepKit $(cat "$source/VERSION")" >&2
        exit 1
    fi
    grep -q "compatible with requested version" "$work/refuse.log" || {
        cat "$work/refuse.log" >&2
        exit 1
    }
    echo "find_package(StepKit $wanted): refused, as it should be"
done
