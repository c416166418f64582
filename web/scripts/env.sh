# web/scripts/env.sh — sourced by web/scripts/{test,serve,load}: the Python environment.
#
# stepkit_web_env [test]   creates web/.venv when missing and installs the binding
#                          (bindings/python) and stepkit_web (with its test extra when asked)
#                          unless already installed for the current pyproject files; exports
#                          STEPKIT_LIBRARY (kept when set, else build/libstepkit.so.0, built
#                          with CMake when missing) and STEPKIT_WEB_PY (the venv's python).

stepkit_web_env() {
    local extra=${1:-}
    local venv="$web/.venv"
    if [ ! -x "$venv/bin/python" ]; then
        python3 -m venv "$venv"
    fi
    local stamp="$venv/.stepkit-web-installed${extra:+-$extra}"
    if [ ! -f "$stamp" ] || [ "$web/pyproject.toml" -nt "$stamp" ] \
            || [ "$root/bindings/python/pyproject.toml" -nt "$stamp" ]; then
        if [ -n "$extra" ]; then
            "$venv/bin/pip" install -q -e "$root/bindings/python" -e "$web[$extra]"
        else
            "$venv/bin/pip" install -q -e "$root/bindings/python" -e "$web"
        fi
        touch "$stamp"
    fi
    if [ -z "${STEPKIT_LIBRARY:-}" ]; then
        local build_dir=${STEPKIT_BUILD_DIR:-build}
        if [ ! -f "$root/$build_dir/libstepkit.so.0" ]; then
            stepkit_section "web: building the library ($build_dir)"
            (cd "$root" && stepkit_cmake_build "$build_dir" stepkit)
        fi
        export STEPKIT_LIBRARY="$root/$build_dir/libstepkit.so.0"
    fi
    export STEPKIT_WEB_PY="$venv/bin/python"
}
