#!/usr/bin/env bash
# check_deb.sh CPACK BUILD_DIR SOURCE_DIR [CC]
# `cpack -G DEB` makes libstepkit<ABI> (the library with its soname in the multiarch directory, a
# shlibs file, the ldconfig trigger, the dependencies dpkg-shlibdeps finds, libjansson4 among
# them, and libssl3, whose libcrypto the library loads when it first needs a digest) and
# libstepkit-dev (the headers, the libstepkit.so link, stepkit.pc and the CMake package,
# depending on the library package alone). Both are Multi-Arch: same, with the Debian copyright
# file (DEP-5, Apache-2.0) and changelog. lintian finds no error and no warning (each override
# the packages carry says why, cmake/debian/). Without a container: the packages' fields and
# contents are checked, dpkg checks that they would install here (--dry-run, as root), and C and
# C++ programs built against the packages' files, unpacked into a temporary root, run.
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
# The headers include neither jansson nor PCRE2 and no static library is shipped: the
# development package needs the library package and nothing else.
dev_depends=$(dpkg-deb -f "$dev" Depends)
[ "$dev_depends" = "libstepkit$abi (= $version-1)" ] || fail "libstepkit-dev: Depends $dev_depends"
dpkg-deb --ctrl-tarfile "$runtime" | tar -xO ./shlibs | grep -qF "libstepkit $abi libstepkit$abi" \
    || fail "libstepkit$abi has no shlibs file"
dpkg-deb --ctrl-tarfile "$runtime" | tar -xO ./triggers | grep -qx "activate-noawait ldconfig" \
    || fail "libstepkit$abi does not trigger ldconfig"
for deb in "$runtime" "$dev"; do
    [ "$(dpkg-deb -f "$deb" Multi-Arch)" = same ] || fail "$(basename "$deb"): Multi-Arch is '$(dpkg-deb -f "$deb" Multi-Arch)'"
    maintainer=$(dpkg-deb -f "$deb" Maintainer)
    [[ $maintainer =~ ^[^\<]+\ \<[^@\>]+@[^@\>]+\.[^@\>]+\>$ ]] || fail "$(basename "$deb"): Maintainer '$maintainer'"
done

# The multiarch directory: Debian's triplet for this machine (dpkg-architecture, from dpkg-dev),
# else the compiler's.
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || "$cc" -print-multiarch)
[ -n "$multiarch" ] || fail "no multiarch triplet for this machine"
lib=./usr/lib/$multiarch
runtime_files=$(dpkg-deb -c "$runtime" | awk '{ print $6 }')
dev_files=$(dpkg-deb -c "$dev" | awk '{ print $6 }')
for file in "$lib/libstepkit.so.$abi" "$lib/libstepkit.so.$version"; do
    grep -qxF "$file" <<<"$runtime_files" || fail "libstepkit$abi lacks $file"
done
for file in ./usr/include/stepkit.h ./usr/include/stepkit.hpp "$lib/libstepkit.so" \
            "$lib/pkgconfig/stepkit.pc" "$lib/cmake/StepKit/StepKitConfig.cmake" \
            "$lib/cmake/StepKit/StepKitConfigVersion.cmake" "$lib/cmake/StepKit/StepKitTargets.cmake"; do
    grep -qxF "$file" <<<"$dev_files" || fail "libstepkit-dev lacks $file"
done
# Multi-Arch: same: every file outside the multiarch directory is the same on every architecture.
for files in "$runtime_files" "$dev_files"; do
    if grep -E '^\./usr/lib/[^/]+$|^\./usr/lib/(pkgconfig|cmake)/' <<<"$files"; then
        fail "a file in /usr/lib outside $lib"
    fi
done
for package in "libstepkit$abi" libstepkit-dev; do
    files=$runtime_files
    [ "$package" = libstepkit-dev ] && files=$dev_files
    for file in copyright changelog.Debian.gz; do
        grep -qxF "./usr/share/doc/$package/$file" <<<"$files" || fail "$package lacks /usr/share/doc/$package/$file"
    done
done
if grep -q '/include/' <<<"$runtime_files"; then fail "libstepkit$abi holds headers"; fi
if grep -q "libstepkit.so.$version" <<<"$dev_files"; then fail "libstepkit-dev holds the library itself"; fi

root=$work/root
dpkg-deb -x "$runtime" "$root"
dpkg-deb -x "$dev" "$root"
libdir=$root/usr/lib/$multiarch
soname=$(readelf -d "$libdir/libstepkit.so.$version" | sed -nE 's/.*\(SONAME\).*\[(.*)\].*/\1/p')
[ "$soname" = "libstepkit.so.$abi" ] || fail "the packaged library's SONAME is $soname"
[ "$(readlink "$libdir/libstepkit.so")" = "libstepkit.so.$abi" ] || fail "libstepkit.so does not link to the soname"

# The copyright file: machine-readable (DEP-5), the Apache License 2.0, as the repository's
# LICENSE; the changelog's first entry is this version.
for package in "libstepkit$abi" libstepkit-dev; do
    copyright=$root/usr/share/doc/$package/copyright
    head -n 1 "$copyright" | grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
        || fail "$package: the copyright file is not in the machine-readable format"
    grep -qx 'License: Apache-2.0' "$copyright" || fail "$package: the copyright file names no Apache-2.0 licence"
    grep -qF 'Version 2.0, January 2004' "$source/LICENSE" || fail "LICENSE is not the Apache License 2.0"
    gzip -dc "$root/usr/share/doc/$package/changelog.Debian.gz" | head -n 1 | grep -q "^stepkit ($version-1) " \
        || fail "$package: the changelog's first entry is not $version-1"
done

# lintian: no error, no warning (an override, with its reason, is allowed).
echo "--- lintian"
if ! command -v lintian >/dev/null 2>&1; then
    fail "lintian is not installed: apt-get install lintian (bash scripts/test installs it)"
fi
lintian_out=$(lintian --show-overrides "$runtime" "$dev" 2>&1 | grep -v "^running with root privileges" || true)
echo "$lintian_out"
if grep -E '^[EW]: ' <<<"$lintian_out" >/dev/null; then
    fail "lintian reports errors or warnings (above)"
fi

# Installable here: dpkg resolves the dependencies against this system without installing.
if [ "$(id -u)" -eq 0 ] && command -v dpkg >/dev/null 2>&1; then
    echo "--- dpkg --dry-run -i"
    dpkg --dry-run -i "$runtime" "$dev"
else
    echo "--- dpkg --dry-run -i: skipped (needs root)"
fi

# A C program built with the packaged stepkit.pc (its prefix moved to the temporary root).
pc="$libdir/pkgconfig/stepkit.pc"
[ "$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion stepkit)" = "$version" ] \
    || fail "stepkit.pc says version $(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion stepkit)"
grep -qx 'prefix=/usr' "$pc" || fail "stepkit.pc: $(grep '^prefix=' "$pc")"
if grep -E '^(Requires|Libs)\.private' "$pc"; then fail "stepkit.pc has private dependencies: no static library is shipped"; fi
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --define-variable=prefix="$root/usr" --cflags --libs stepkit)
echo "--- $cc install_smoke.c $flags"
# shellcheck disable=SC2086
"$cc" -std=c99 -Wall -Wextra -pedantic -Werror -o "$work/smoke" "$source/bindings/c/tests/install_smoke.c" $flags
LD_LIBRARY_PATH="$libdir" "$work/smoke"
LD_LIBRARY_PATH="$libdir" ldd "$work/smoke" | grep -F "$libdir/libstepkit.so.$abi"

# The packaged CMake package finds the unpacked files too (its paths are relative), from C++.
cmake_bin=cmake
case $cpack in */*) [ -f "$(dirname "$cpack")/cmake" ] && cmake_bin="$(dirname "$cpack")/cmake" ;; esac
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
"$cmake_bin" -S "$source/bindings/cpp/tests/consumer" -B "$work/consumer" "${generator[@]}" \
    -DCMAKE_PREFIX_PATH="$root/usr" -DSTEPKIT_SOURCE_DIR="$source" >"$work/consumer.log" 2>&1 \
    && "$cmake_bin" --build "$work/consumer" >>"$work/consumer.log" 2>&1 \
    || { cat "$work/consumer.log" >&2; exit 1; }
grep -F "StepKit $version from $libdir/cmake/StepKit" "$work/consumer.log"
LD_LIBRARY_PATH="$libdir" "$work/consumer/cpp_consumer" | head -n 3
