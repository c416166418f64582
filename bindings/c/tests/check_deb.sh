#!/usr/bin/env bash
# check_deb.sh CPACK BUILD_DIR SOURCE_DIR [CC]
# `cpack -G DEB` makes libstepkit<ABI> (the library with its soname, a shlibs file, the
# dependencies dpkg-shlibdeps finds, libjansson4 among them, and libssl3, whose libcrypto the
# library loads when it first needs a digest) and libstepkit-dev (the
# headers, the libstepkit.so link, stepkit.pc and the CMake package). Without a container: the
# packages' fields and contents are checked, dpkg checks that they would install here
# (--dry-run, as root), and a C program built against the packages' files, unpacked into a
# temporary root, runs.
set -euo pipefail
cpack=$1
build=$2
source=$3
cc=${4:-cc}

version=$(head -n 1 "$source/VERSION")
abi=${version%%.*}
work=$(mktemp -d "${TMPDIR:-/tmp}/stepkit-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "$*" >&2; exit 1; }

"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work/out" >"$work/cpack.log" 2>&1 \
    || { cat "$work/cpack.log" >&2; exit 1; }
runtime=$(ls "$work"/out/libstepkit"$abi"_"$version"-1_*.deb 2>/dev/null) || fail "no libstepkit$abi $version package"
dev=$(ls "$work"/out/libstepkit-dev_"$version"-1_*.deb 2>/dev/null) || fail "no libstepkit-dev $version package"

for deb in "$runtime" "$dev"; do
    echo "--- $(basename "$deb")"
    dpkg-deb -f "$deb" Package Version Architecture Depends Section
    dpkg-deb -c "$deb" | awk '{ print "   ", $6, $7, $8 }'
done

depends=$(dpkg-deb -f "$runtime" Depends)
depends_names=$(tr ',' '\n' <<<"$depends" | awk '{ print $1 }')
for needed in libc6 libjansson4 libssl3 libstdc++6; do
    grep -qxF "$needed" <<<"$depends_names" || fail "libstepkit$abi does not depend on $needed: $depends"
done
dev_depends=$(dpkg-deb -f "$dev" Depends)
grep -qF "libstepkit$abi (= $version-1)" <<<"$dev_depends" || fail "libstepkit-dev: Depends $dev_depends"
for needed in libjansson-dev libpcre2-dev; do
    grep -qF "$needed" <<<"$dev_depends" || fail "libstepkit-dev does not depend on $needed"
done
dpkg-deb --ctrl-tarfile "$runtime" | tar -xO ./shlibs | grep -qF "libstepkit $abi libstepkit$abi" \
    || fail "libstepkit$abi has no shlibs file"

runtime_files=$(dpkg-deb -c "$runtime" | awk '{ print $6 }')
dev_files=$(dpkg-deb -c "$dev" | awk '{ print $6 }')
for file in ./usr/lib/libstepkit.so.$abi ./usr/lib/libstepkit.so.$version; do
    grep -qxF "$file" <<<"$runtime_files" || fail "libstepkit$abi lacks $file"
done
for file in ./usr/include/stepkit.h ./usr/include/stepkit.hpp ./usr/lib/libstepkit.so \
            ./usr/lib/pkgconfig/stepkit.pc ./usr/lib/cmake/StepKit/StepKitConfig.cmake \
            ./usr/lib/cmake/StepKit/StepKitConfigVersion.cmake ./usr/lib/cmake/StepKit/StepKitTargets.cmake; do
    grep -qxF "$file" <<<"$dev_files" || fail "libstepkit-dev lacks $file"
done
if grep -q '/include/' <<<"$runtime_files"; then fail "libstepkit$abi holds headers"; fi
if grep -q "libstepkit.so.$version" <<<"$dev_files"; then fail "libstepkit-dev holds the library itself"; fi

root=$work/root
dpkg-deb -x "$runtime" "$root"
dpkg-deb -x "$dev" "$root"
soname=$(readelf -d "$root/usr/lib/libstepkit.so.$version" | sed -nE 's/.*\(SONAME\).*\[(.*)\].*/\1/p')
[ "$soname" = "libstepkit.so.$abi" ] || fail "the packaged library's SONAME is $soname"
[ "$(readlink "$root/usr/lib/libstepkit.so")" = "libstepkit.so.$abi" ] || fail "libstepkit.so does not link to the soname"

# Installable here: dpkg resolves the dependencies against this system without installing.
if [ "$(id -u)" -eq 0 ] && command -v dpkg >/dev/null 2>&1; then
    echo "--- dpkg --dry-run -i"
    dpkg --dry-run -i "$runtime" "$dev"
else
    echo "--- dpkg --dry-run -i: skipped (needs root)"
fi

# A C program built with the packaged stepkit.pc (its prefix moved to the temporary root).
pc="$root/usr/lib/pkgconfig/stepkit.pc"
[ "$(PKG_CONFIG_PATH="$root/usr/lib/pkgconfig" pkg-config --modversion stepkit)" = "$version" ] \
    || fail "stepkit.pc says version $(PKG_CONFIG_PATH="$root/usr/lib/pkgconfig" pkg-config --modversion stepkit)"
grep -qx 'prefix=/usr' "$pc" || fail "stepkit.pc: $(grep '^prefix=' "$pc")"
flags=$(PKG_CONFIG_PATH="$root/usr/lib/pkgconfig" pkg-config --define-variable=prefix="$root/usr" --cflags --libs stepkit)
echo "--- $cc install_smoke.c $flags"
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Wextra -pedantic -Werror -o "$work/smoke" "$source/bindings/c/tests/install_smoke.c" $flags
LD_LIBRARY_PATH="$root/usr/lib" "$work/smoke"
LD_LIBRARY_PATH="$root/usr/lib" ldd "$work/smoke" | grep -F "$root/usr/lib/libstepkit.so.$abi"

# The packaged CMake package finds the unpacked files too (its paths are relative), from C++.
cmake_bin=cmake
case $cpack in */*) [ -f "$(dirname "$cpack")/cmake" ] && cmake_bin="$(dirname "$cpack")/cmake" ;; esac
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
"$cmake_bin" -S "$source/bindings/cpp/tests/consumer" -B "$work/consumer" "${generator[@]}" \
    -DCMAKE_PREFIX_PATH="$root/usr" -DSTEPKIT_SOURCE_DIR="$source" >"$work/consumer.log" 2>&1 \
    && "$cmake_bin" --build "$work/consumer" >>"$work/consumer.log" 2>&1 \
    || { cat "$work/consumer.log" >&2; exit 1; }
grep -F "StepKit $version from $root/usr/lib/cmake/StepKit" "$work/consumer.log"
LD_LIBRARY_PATH="$root/usr/lib" "$work/consumer/cpp_consumer" | head -n 3
