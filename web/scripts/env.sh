# web/scripts/env.sh — sourced by web/scripts/{test,serve,load}: the Python environment.
#
# stepkit_web_env [test]   creates web/.venv when missing and installs the binding
#                          (bindings/python, built from the CMake build directory) and stepkit_web (with its test extra when asked)
#                          unless already installed for the current pyproject files; exports
#                          STEPKIT_LIBRARY (kept when set, else build/libstepkit.so.0, built
#                          with CMake when missing) and STEPKIT_WEB_PY (the venv's python).

stepkit_web_env() {
    local extra=${1:-}
    local venv="$web/.venv"
    if [ ! -x "$venv/bin/python" ]; then
        python3 -m venv "$venv"
    fi
    local build_dir=${STEPKIT_BUILD_DIR:-build}
    local build="$root/$build_dir"
    if [ ! -f "$build/libstepkit.so.0" ]; then
        stepkit_section "web: building the library ($build_dir)"
        (cd "$root" && stepkit_cmake_build "$build_dir" stepkit)
    fi
    local stamp="$venv/.stepkit-web-installed${extra:+-$extra}"
    if [ ! -f "$stamp" ] || [ "$web/pyproject.toml" -nt "$stamp" ] \
            || [ "$root/bindings/python/pyproject.toml" -nt "$stamp" ]; then
        # The binding is installed as a user installs it (its scikit-build-core build), reusing
        # the CMake build directory with its own settings, so the library is not compiled again.
        local cached_type cached_tests
        cached_type=$(sed -nE 's/^CMAKE_BUILD_TYPE:[A-Z]+=(.*)$/\1/p' "$build/CMakeCache.txt")
        cached_tests=$(sed -nE 's/^STEPKIT_BUILD_TESTS:[A-Z]+=(.*)$/\1/p' "$build/CMakeCache.txt")
        "$venv/bin/pip" install -q "scikit-build-core>=1.0"
        "$venv/bin/pip" install -q --no-build-isolation -Cbuild-dir="$build" \
            -Ccmake.build-type="${cached_type:-Release}" \
            -Ccmake.define.STEPKIT_BUILD_TESTS="${cached_tests:-ON}" "$root/bindings/python"
        "$venv/bin/pip" install -q -e "$web${extra:+[$extra]}"
        touch "$stamp"
    fi
    if [ -z "${STEPKIT_LIBRARY:-}" ]; then
        export STEPKIT_LIBRARY="$build/libstepkit.so.0"
    fi
    export STEPKIT_WEB_PY="$venv/bin/python"
}
