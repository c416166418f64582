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

# The installed library is stripped, the build tree's keeps its symbols; README.md quotes both
# sizes ("stripped (X MB instead of Y MB)", MB = 10^6 bytes): each stays within 10 % of the files.
installed_size=$(stat -c %s "$(readlink -f "$libdir/libstepkit.so.0")")
build_size=$(stat -c %s "$(readlink -f "$build/libstepkit.so")")
quote=$(grep -oE 'stripped \([0-9.]+ MB instead of [0-9.]+ MB\)' "$source/README.md" || true)
[ -n "$quote" ] || { echo "README.md quotes no sizes of the stripped library" >&2; exit 1; }
echo "--- README.md: $quote; installed $installed_size bytes, build tree $build_size bytes"
awk -v quote="$quote" -v installed="$installed_size" -v built="$build_size" 'BEGIN {
    split(quote, w, /[( ]/); q_installed = w[3] * 1e6; q_built = w[7] * 1e6
    status = 0
    if (installed > built * 0.95) { print "the installed library is not stripped"; status = 1 }
    if (installed < q_installed * 0.9 || installed > q_installed * 1.1) {
        printf "README.md says %.1f MB installed, the file has %.1f MB\n", q_installed / 1e6, installed / 1e6; status = 1 }
    if (built < q_built * 0.9 || built > q_built * 1.1) {
        printf "README.md says %.1f MB in the build tree, the file has %.1f MB\n", q_built / 1e6, built / 1e6; status = 1 }
    exit status }' >&2
