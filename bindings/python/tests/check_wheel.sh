#!/usr/bin/env bash
# check_wheel.sh PYTHON BUILD_DIR SOURCE_DIR
# The Python package as a user gets it: `python -m build --wheel` (scikit-build-core, reusing the
# CMake build directory BUILD_DIR, whose library is already built: its cache gains
# scikit-build-core's entries, nothing is rebuilt; the "python" component puts libcrypto beside
# libstepkit.so, which loads it from there on the first digest), `auditwheel repair` (libjansson
# and libpcre2-8 copied into the wheel, a manylinux platform tag), then the wheel installed into a
# new virtual environment and used there with a clean environment: no STEPKIT_LIBRARY, no
# PYTHONPATH, no LD_LIBRARY_PATH, no Swift toolchain on PATH, from outside the repository.
# A task runs end to end through the API (with the wheel's C extension, stepkit._speedups, in
# use: a cp39-abi3 wheel) and the command line (the demo task), and the package, the library
# and the wheel agree with VERSION.
set -euo pipefail
python=$1
build=$(cd "$2" && pwd)
source=$(cd "$3" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/stepkit-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
version=$(head -n 1 "$source/VERSION")

# The build directory's own settings (pyproject.toml would turn its tests off, say), so that
# reusing it changes and rebuilds nothing.
cached() { sed -nE "s/^$1:[A-Z]+=(.*)\$/\1/p" "$build/CMakeCache.txt"; }
build_type=$(cached CMAKE_BUILD_TYPE)
echo "--- python -m build --wheel (build-dir $build, ${build_type:-Release})"
"$python" -m build --wheel --no-isolation -Cbuild-dir="$build" \
    -Ccmake.build-type="${build_type:-Release}" \
    -Ccmake.define.STEPKIT_BUILD_TESTS="$(cached STEPKIT_BUILD_TESTS | grep . || echo ON)" -o "$work/dist" \
    "$source/bindings/python" >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
tail -n 3 "$work/build.log"
wheel=$(ls "$work"/dist/*.whl)
echo "--- auditwheel repair $(basename "$wheel")"
"$python" -m auditwheel repair -w "$work/repaired" "$wheel" >"$work/repair.log" 2>&1 \
    || { cat "$work/repair.log" >&2; exit 1; }
repaired=$(ls "$work"/repaired/*.whl)
name=$(basename "$repaired")
echo "$name"
# cp39-abi3: the C extension (stepkit/_speedups.abi3.so) uses CPython's limited API of 3.9.
case "$name" in
    "stepkit-$version-cp39-abi3-manylinux_"*"_x86_64.whl"|"stepkit-$version-cp39-abi3-manylinux_"*"_aarch64.whl") ;;
    *) echo "unexpected wheel name $name (version $version, cp39-abi3, a manylinux tag)" >&2; exit 1 ;;
esac
"$python" -m auditwheel show "$repaired"
contents=$("$python" -m zipfile -l "$repaired")
for lib in stepkit/libstepkit.so stepkit/_speedups.abi3.so stepkit/libcrypto.so stepkit.libs/libjansson stepkit.libs/libpcre2-8; do
    grep -qF "$lib" <<<"$contents" || { echo "the wheel lacks $lib" >&2; echo "$contents" >&2; exit 1; }
done

# The licence: Apache-2.0 in the metadata, the repository's LICENSE and NOTICE in the wheel.
"$python" - "$repaired" "$source" <<'PY'
import sys, zipfile
wheel, source = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = z.namelist()
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    fields = [line for line in z.read(metadata).decode().splitlines() if line.startswith("License")]
    assert "License-Expression: Apache-2.0" in fields, fields
    for name in ("LICENSE", "NOTICE"):
        packed = next((n for n in names if n.endswith(".dist-info/licenses/" + name)), None)
        assert packed is not None, f"the wheel lacks .dist-info/licenses/{name}"
        assert z.read(packed) == open(f"{source}/{name}", "rb").read(), f"{name} differs from the repository's"
print("licence:", ", ".join(fields))
PY
# ... and the licences of the other projects' libraries it carries (CMakeLists.txt: their Debian
# copyright files, where dpkg knows them).
if command -v dpkg-query >/dev/null 2>&1; then
    for lib in libcrypto libjansson libpcre2-8; do
        grep -qE "^stepkit/licenses/$lib\.copyright " <<<"$contents" \
            || { echo "the wheel lacks stepkit/licenses/$lib.copyright" >&2; exit 1; }
    done
    echo "licences of the bundled libraries: stepkit/licenses/{libcrypto,libjansson,libpcre2-8}.copyright"
fi

# The sdist (not compiled here: that is a full Swift build) carries the native project, so that
# `python -m build` and `pip install stepkit-*.tar.gz` can build the library from it.
echo "--- python -m build --sdist"
"$python" -m build --sdist --no-isolation -o "$work/sdist" "$source/bindings/python" \
    >"$work/sdist.log" 2>&1 || { cat "$work/sdist.log" >&2; exit 1; }
sdist_files=$(tar -tzf "$work/sdist/stepkit-$version.tar.gz")
for file in native/VERSION native/CMakeLists.txt native/cmake/stepkit.map native/include/stepkit.h \
            native/Sources/CStepKit/module.modulemap native/Sources/StepKit/ABI/LibraryExports.swift \
            native/Sources/StepKitCore/Model/Task.swift native/Sources/StepKitBase/JSON/JSON.swift \
            src/stepkit/_ffi.py pyproject.toml LICENSE NOTICE; do
    grep -qxF "stepkit-$version/$file" <<<"$sdist_files" || { echo "the sdist lacks $file" >&2; exit 1; }
done
# Every module of the engine (Sources/StepKit, StepKitCore, StepKitBase).
swift_in_sdist=$(grep -c "^stepkit-$version/native/Sources/StepKit[A-Za-z]*/.*\.swift$" <<<"$sdist_files")
swift_in_repo=$(find "$source/Sources" -path "$source/Sources/StepKit*" -name '*.swift' | wc -l)
[ "$swift_in_sdist" -eq "$swift_in_repo" ] \
    || { echo "the sdist has $swift_in_sdist Swift files, the repository $swift_in_repo" >&2; exit 1; }
echo "stepkit-$version.tar.gz: $(wc -l <<<"$sdist_files") files, the native project included"

echo "--- a new virtual environment"
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-index --no-deps "$repaired"

# PATH without the Swift toolchain (nor anything else of the build: only the venv and the
# system's directories that have no swift in them).
clean_path="$work/venv/bin"
IFS=: read -r -a dirs <<<"$PATH"
for dir in "${dirs[@]}"; do
    [ -n "$dir" ] && [ -d "$dir" ] || continue
    [ -e "$dir/swift" ] || [ -e "$dir/swiftc" ] && continue
    clean_path="$clean_path:$dir"
done
run() {
    (cd "$work" && env -i PATH="$clean_path" HOME="$work" LANG=C.UTF-8 "$@")
}
if run bash -c 'command -v swift || command -v swiftc'; then
    echo "the Swift toolchain is still on PATH" >&2
    exit 1
fi

site=$(run python -c 'import stepkit, os; print(os.path.dirname(stepkit.__file__))')
case "$site" in
    "$work/venv/"*) ;;
    *) echo "stepkit imported from $site, not the virtual environment" >&2; exit 1 ;;
esac
echo "--- ldd $site/libstepkit.so"
ldd "$site/libstepkit.so"
for lib in libjansson libpcre2-8; do
    ldd "$site/libstepkit.so" | grep -E "^\s*$lib[^ ]* => $work/venv/.*/stepkit\.libs/" >/dev/null || {
        echo "$lib does not come from the wheel" >&2
        exit 1
    }
done

echo "--- a task end to end, through the API"
run python - "$version" <<'PY'
import os
import sys

import stepkit

version = sys.argv[1]
assert "STEPKIT_LIBRARY" not in os.environ
path = stepkit.library_path()
assert path.startswith(os.path.dirname(stepkit.__file__)), path
assert stepkit.__version__ == version, (stepkit.__version__, version)
assert stepkit.version() == version, (stepkit.version(), version)
assert stepkit.SPEEDUPS, "the wheel's C extension (stepkit._speedups) is not in use"
task = stepkit.Task.from_json({"identifier": "wheel", "steps": [
    {"type": "question", "identifier": "mood", "answerFormat": {"type": "scale", "minimum": 1, "maximum": 5}},
    {"type": "question", "identifier": "ok", "answerFormat": {"type": "boolean"}}]})
with task.open() as session:
    try:
        session.set_answer(9)
        raise SystemExit("an answer out of range was accepted")
    except stepkit.AnswerError as error:
        print("refused:", error.message)
    session.set_answer(4)
    session.go_forward(state=False)  # through the C extension
    here = os.path.realpath(os.path.dirname(path))
    def wheel_libcrypto():
        """The libcrypto files mapped into this process from the package's own directory."""
        files = {line.split()[-1] for line in open("/proc/self/maps") if "libcrypto" in line}
        return {f for f in files if os.path.dirname(os.path.realpath(f)) == here}
    assert not wheel_libcrypto(), "libcrypto was loaded before a digest was needed"
    saved = session.save()     # the first digest: libcrypto loaded from beside libstepkit.so
    loaded = wheel_libcrypto()
    assert len(loaded) == 1, (loaded, here)
    print("libcrypto:", ", ".join(loaded))
with task.restore(saved) as session:
    session.set_answer(True)
    state = session.forward()
    assert state["finishReason"] == "completed", state
    print("completed:", [r["identifier"] for r in session.result["results"]])
print(f"stepkit {stepkit.__version__} from {path}")
PY

echo "--- the demo task, through the command line"
cp "$source/examples/tasks/daily-checkin.json" "$source/examples/tasks/daily-checkin.answers.json" "$work/"
run stepkit run daily-checkin.json --answers daily-checkin.answers.json --output result.json --quiet </dev/null >/dev/null
run python -c 'import json; r = json.load(open("result.json")); print("result:", r["identifier"], len(r["results"]), "step results")'
run python -m stepkit check daily-checkin.json >/dev/null
echo "wheel $name: installs and runs without the toolchain"
