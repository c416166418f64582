#!/usr/bin/env bash
# check_types.sh PYTHON SOURCE_DIR
# `mypy --strict` on the package (bindings/python/src/stepkit, marked typed by py.typed) and on
# tests/typed_user.py, a small program using the public API as a user's code would; then that
# program runs against the library (STEPKIT_LIBRARY). The settings are pyproject.toml's [tool.mypy].
set -euo pipefail
python=$1
source=$(cd "$2" && pwd)
package=$source/bindings/python

cd "$package"
# mypy 1.11 or later: older ones (Debian 12's python3-mypy is 1.0) read ctypes' stubs differently.
"$python" -c 'import sys, mypy.version as v
sys.exit(tuple(int(p) for p in v.__version__.split("+")[0].split(".")[:2]) < (1, 11))' || {
    echo "mypy $("$python" -m mypy --version) is older than 1.11, which this check needs:" \
         "$python -m pip install --upgrade mypy (bash scripts/test installs it)" >&2
    exit 1
}
echo "--- mypy --strict src/stepkit tests/typed_user.py ($("$python" -m mypy --version))"
MYPYPATH="$package/src" "$python" -m mypy --strict --config-file pyproject.toml --no-incremental \
    --cache-dir /dev/null src/stepkit tests/typed_user.py
echo "--- python tests/typed_user.py"
PYTHONPATH="$package/src" "$python" tests/typed_user.py
