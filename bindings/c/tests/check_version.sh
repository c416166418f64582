#!/usr/bin/env bash
# check_version.sh CMAKE BUILD_DIR SOURCE_DIR LIBRARY [CC] [PYTHON]
# One version, one place: VERSION. Every other spelling of it agrees: the header's
# STEPKIT_VERSION / STEPKIT_VERSION_NUMBER / STEPKIT_ABI_VERSION, stepkit_version() and
# stepkit_version_number() of the built library (which the Swift code takes from the header, not
# from literals of its own), its soname and file name, stepkit.pc and StepKitConfigVersion.cmake
# as installed, the Debian packages' version and changelog, and the Python package (its build metadata comes
# from VERSION; its __version__ from a source checkout, and the library it loads).
set -euo pipefail
cmake=$1
build=$2
source=$(cd "$3" && pwd)
library=$(readlink -f "$4")
cc=${5:-cc}
python=${6:-python3}

status=0
disagree() { echo "DISAGREES: $*" >&2; status=1; }
same() { # NAME VALUE EXPECTED
    if [ "$2" = "$3" ]; then echo "  $1: $2"; else disagree "$1 is '$2', expected '$3'"; fi
}

version=$(head -n 1 "$source/VERSION")
[[ $version =~ ^([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || { echo "VERSION: '$version' is not MAJOR.MINOR.PATCH" >&2; exit 1; }
major=${BASH_REMATCH[1]}; minor=${BASH_REMATCH[2]}; patch=${BASH_REMATCH[3]}
number=$((10#$major * 1000000 + 10#$minor * 1000 + 10#$patch))
abi=$major
echo "VERSION: $version (number $number, ABI $abi)"

header=$source/include/stepkit.h
same "stepkit.h STEPKIT_VERSION" "$(sed -nE 's/^#define STEPKIT_VERSION "(.*)"$/\1/p' "$header")" "$version"
same "stepkit.h STEPKIT_VERSION_NUMBER" "$(sed -nE 's/^#define STEPKIT_VERSION_NUMBER ([0-9]+)$/\1/p' "$header")" "$number"
same "stepkit.h STEPKIT_ABI_VERSION" "$(sed -nE 's/^#define STEPKIT_ABI_VERSION ([0-9]+)$/\1/p' "$header")" "$abi"

# The Swift code has no version of its own: it returns the header's macros.
exports=$source/Sources/StepKit/ABI/LibraryExports.swift
if grep -nE '"[0-9]+\.[0-9]+\.[0-9]+"|\b[0-9]{4,}\b' "$exports"; then
    disagree "$exports spells a version out instead of using STEPKIT_VERSION / STEPKIT_VERSION_NUMBER"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/stepkit-version.XXXXXX")
trap 'rm -rf "$work"' EXIT

# The library, as loaded: what a host sees.
cat >"$work/version.c" <<'C'
#include <stdio.h>
#include <stepkit.h>
int main(void) { printf("%s %d\n", stepkit_version(), stepkit_version_number()); return 0; }
C
"$cc" -std=c99 -I "$source/include" -o "$work/version" "$work/version.c" "$library"
read -r lib_version lib_number < <(LD_LIBRARY_PATH="$(dirname "$library")" "$work/version")
same "stepkit_version()" "$lib_version" "$version"
same "stepkit_version_number()" "$lib_number" "$number"
same "soname" "$(readelf -d "$library" | sed -nE 's/.*\(SONAME\).*\[(.*)\].*/\1/p')" "libstepkit.so.$abi"
same "library file" "$(basename "$(readlink -f "$library")")" "libstepkit.so.$version"

# As installed.
"$cmake" --install "$build" --prefix "$work/prefix" >/dev/null
same "stepkit.pc Version" \
    "$(sed -nE 's/^Version: *//p' "$(find "$work/prefix" -name stepkit.pc -print -quit)")" "$version"
config_version=$(find "$work/prefix" -name StepKitConfigVersion.cmake -print -quit)
same "StepKitConfigVersion.cmake" "$(sed -nE 's/^set\(PACKAGE_VERSION "(.*)"\)$/\1/p' "$config_version")" "$version"
same "CPack (Debian packages)" \
    "$(sed -nE 's/^set\(CPACK_PACKAGE_VERSION "(.*)"\)$/\1/p' "$build/CPackConfig.cmake")" "$version"
same "Debian changelog (cmake/debian/changelog)" \
    "$(sed -nE '1s/^stepkit \(([^)]*)-[0-9]+\) .*/\1/p' "$source/cmake/debian/changelog")" "$version"
same "Debian runtime package" \
    "$(sed -nE 's/^set\(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME "(.*)"\)$/\1/p' "$build/CPackConfig.cmake")" "libstepkit$abi"

# The Python package: its version is VERSION's (pyproject.toml), and from a checkout, too.
pyproject=$source/bindings/python/pyproject.toml
if grep -nE '^version *=' "$pyproject"; then
    disagree "pyproject.toml sets a version of its own"
fi
grep -qE '^dynamic = \[.*"version".*\]' "$pyproject" || disagree "pyproject.toml: version is not dynamic"
grep -qxF 'input = "../../VERSION"' "$pyproject" || disagree "pyproject.toml does not read ../../VERSION"
read -r py_version py_library < <(cd "$work" && env STEPKIT_LIBRARY="$library" \
    PYTHONPATH="$source/bindings/python/src" "$python" -c \
    'import stepkit; print(stepkit.__version__, stepkit.version())')
same "Python stepkit.__version__" "$py_version" "$version"
same "Python stepkit.version()" "$py_library" "$version"

exit "$status"
