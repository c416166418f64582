#!/usr/bin/env bash
# check_require.sh PYTHON SOURCE_DIR
# The dependency checks cannot be fooled by a folder: from a directory holding a folder named
# like a module that is not installed (as the CMake build directory build/ is named like Python's
# `build` module), scripts/lib/require refuses to run the test and names the module and its pip
# command, and deps.sh's stepkit_have_python_module says it is missing (so it gets installed).
# A module that is installed (json) passes both, and require then runs the command.
set -euo pipefail
python=$1
source=$(cd "$2" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/stepkit-require-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
module=stepkit_not_installed_module
mkdir -p "$work/$module"
cd "$work"
"$python" -c "import $module" || { echo "the folder should pass a plain import here" >&2; exit 1; }

status=0
out=$(PYTHONPATH="$work" bash "$source/scripts/lib/require" --python "$python" --module "$module=$module-pip" \
      --program stepkit-no-such-program -- echo ran 2>&1) || status=$?
echo "$out"
[ "$status" -eq 1 ] || { echo "require exited with $status, expected 1" >&2; exit 1; }
grep -qF "Python modules (for $python): $module" <<<"$out" || { echo "the module is not named" >&2; exit 1; }
grep -qF "$python -m pip install $module-pip" <<<"$out" || { echo "no pip command" >&2; exit 1; }
grep -qF "apt-get install stepkit-no-such-program" <<<"$out" || { echo "no install command for the program" >&2; exit 1; }
if grep -qx ran <<<"$out"; then echo "the command ran" >&2; exit 1; fi

[ "$(bash "$source/scripts/lib/require" --python "$python" --module json --program bash -- echo ran)" = ran ] \
    || { echo "require did not run the command with everything present" >&2; exit 1; }

# deps.sh (sourced, as scripts/test and scripts/demo do; it uses python3).
# shellcheck source=../lib/deps.sh
source "$source/scripts/lib/deps.sh"
if PYTHONPATH="$work" stepkit_have_python_module "$module"; then
    echo "deps.sh took the folder $module for an installed module" >&2
    exit 1
fi
stepkit_have_python_module json || { echo "deps.sh does not find json" >&2; exit 1; }
echo "require and deps.sh: a folder is not a module"
