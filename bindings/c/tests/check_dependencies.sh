#!/usr/bin/env bash
# check_dependencies.sh LIBRARY
# The library needs only libc, libm, libstdc++, libgcc_s, libjansson and libpcre2-8 (the regular
# expressions of definitions): nothing from the Swift toolchain. Not OpenSSL's libcrypto either:
# the library loads it the first time it needs a digest (Sources/StepKitBase/Integrity/LibCrypto.swift),
# so loading StepKit does not load it. It has no RPATH/RUNPATH, and its SONAME is libstepkit.so.0.
set -euo pipefail
library=$1
allowed='^(libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libjansson\.so\.4|libpcre2-8\.so\.0|ld-linux[-a-z0-9_.]*\.so\.[0-9]+|linux-vdso\.so\.1)$'
status=0

soname=$(readelf -d "$library" | sed -nE 's/.*\(SONAME\).*\[(.*)\].*/\1/p')
if [ "$soname" = "libstepkit.so.0" ]; then
    echo "SONAME: $soname"
else
    echo "SONAME is '${soname}', expected libstepkit.so.0" >&2
    status=1
fi

needed=$(readelf -d "$library" | sed -nE 's/.*\(NEEDED\).*\[(.*)\].*/\1/p')
echo "NEEDED: $(echo $needed)"
for lib in $needed; do
    if ! [[ $lib =~ $allowed ]]; then
        echo "unexpected dependency (readelf NEEDED): $lib" >&2
        status=1
    fi
done

paths=$(readelf -d "$library" | sed -nE 's/.*\((RPATH|RUNPATH)\).*\[(.*)\].*/\2/p')
if [ -n "$paths" ]; then
    echo "unexpected RPATH/RUNPATH: $paths" >&2
    status=1
fi

# The full closure, as the dynamic loader resolves it.
ldd_out=$(ldd "$library")
echo "$ldd_out"
if grep -q 'not found' <<<"$ldd_out"; then
    echo "unresolved dependencies" >&2
    status=1
fi
if grep -qi 'swift' <<<"$ldd_out"; then
    echo "a dependency comes from the Swift toolchain" >&2
    status=1
fi
while read -r name _; do
    [ -n "$name" ] || continue
    name=$(basename "$name")
    if ! [[ $name =~ $allowed ]]; then
        echo "unexpected dependency (ldd): $name" >&2
        status=1
    fi
done <<<"$ldd_out"

# No Swift runtime symbol is left undefined (it is linked in, statically).
undefined_swift=$(nm -D --undefined-only "$library" | awk '{ print $NF }' | grep -E '^(\$s|_swift|swift_)' || true)
if [ -n "$undefined_swift" ]; then
    echo "undefined Swift runtime symbols:" >&2
    printf '  %s\n' $undefined_swift | head -20 >&2
    status=1
fi
exit "$status"
