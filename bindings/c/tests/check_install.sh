#!/usr/bin/env bash
# check_install.sh CMAKE BUILD_DIR SOURCE_DIR [CC]
# `cmake --install` into a temporary prefix, then a program built with
# `pkg-config --cflags --libs stepkit` against that prefix runs.
set -euo pipefail
cmake=$1
build=$2
source=$3
cc=${4:-cc}

prefix=$(mktemp -d "${TMPDIR:-/tmp}/stepkit-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT

"$cmake" --install "$build" --prefix "$prefix"

pc=$(find "$prefix" -name stepkit.pc -print -quit)
if [ -z "$pc" ]; then
    echo "stepkit.pc was not installed" >&2
    exit 1
fi
libdir=$(dirname "$(dirname "$pc")")
echo "--- $pc"
cat "$pc"

for file in "$prefix/include/stepkit.h" "$libdir/libstepkit.so" "$libdir/libstepkit.so.0" \
            "$libdir/libstepkit.so.0.1.0"; do
    if [ ! -e "$file" ]; then
        echo "missing: $file" >&2
        exit 1
    fi
done
[ -L "$libdir/libstepkit.so" ] && [ -L "$libdir/libstepkit.so.0" ] || {
    echo "libstepkit.so and libstepkit.so.0 should be links to libstepkit.so.0.1.0" >&2
    exit 1
}

export PKG_CONFIG_PATH="$(dirname "$pc")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
[ "$(pkg-config --variable=prefix stepkit)" = "$prefix" ] || {
    echo "stepkit.pc names prefix $(pkg-config --variable=prefix stepkit), expected $prefix" >&2
    exit 1
}
echo "--- pkg-config --modversion stepkit: $(pkg-config --modversion stepkit)"
flags=$(pkg-config --cflags --libs stepkit)
echo "--- $cc -std=c99 install_smoke.c $flags"
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Wextra -pedantic -Werror -o "$prefix/install_smoke" \
    "$source/bindings/c/tests/install_smoke.c" $flags

LD_LIBRARY_PATH="$libdir" "$prefix/install_smoke"
# It really used the installed copy.
LD_LIBRARY_PATH="$libdir" ldd "$prefix/install_smoke" | grep -F "$libdir/libstepkit.so.0"
