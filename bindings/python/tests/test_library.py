"""Finding and loading libstepkit.so (each case in a fresh interpreter)."""

from __future__ import annotations

import ctypes.util
import os
import shutil
import subprocess
import sys

import stepkit
from conftest import SRC

PROBE = (
    "import stepkit\n"
    "try:\n"
    "    print('LOADED', stepkit.library_path(), stepkit.version())\n"
    "except stepkit.LibraryNotFoundError as exc:\n"
    "    assert isinstance(exc, OSError) and isinstance(exc, stepkit.StepKitError)\n"
    "    print('NOTFOUND', exc)\n"
)


def probe(env_library, pythonpath=str(SRC)):
    env = {k: v for k, v in os.environ.items() if k not in ("STEPKIT_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = pythonpath
    if env_library is not None:
        env["STEPKIT_LIBRARY"] = env_library
    return subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=60
    )


def test_env_variable_is_used():
    proc = probe(stepkit.library_path())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("LOADED ")
    assert os.path.realpath(proc.stdout.split()[1]) == os.path.realpath(stepkit.library_path())


def test_env_variable_wrong_path_is_an_error_not_a_fallback(tmp_path):
    missing = str(tmp_path / "libstepkit.so")
    proc = probe(missing)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("NOTFOUND")
    assert "STEPKIT_LIBRARY" in proc.stdout
    assert missing in proc.stdout


def test_not_a_stepkit_library():
    libm = ctypes.util.find_library("m") or "libm.so.6"
    proc = probe(libm)
    assert proc.stdout.startswith("NOTFOUND"), proc.stdout + proc.stderr
    assert "not a compatible StepKit library" in proc.stdout


def test_library_in_package_directory(tmp_path):
    package = tmp_path / "stepkit"
    shutil.copytree(SRC / "stepkit", package, ignore=shutil.ignore_patterns("__pycache__", "libstepkit.so*"))
    shutil.copy(stepkit.library_path(), package / "libstepkit.so")
    proc = probe(None, pythonpath=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[:2] == ["LOADED", str(package / "libstepkit.so")]


def test_not_found_message_lists_where_it_looked(tmp_path):
    package = tmp_path / "stepkit"
    shutil.copytree(SRC / "stepkit", package, ignore=shutil.ignore_patterns("__pycache__", "libstepkit.so*"))
    proc = probe(None, pythonpath=str(tmp_path))
    if ctypes.util.find_library("stepkit"):
        assert proc.stdout.startswith("LOADED")  # installed system-wide: found there
        return
    assert proc.stdout.startswith("NOTFOUND"), proc.stdout + proc.stderr
    assert "STEPKIT_LIBRARY" in proc.stdout
    assert "libstepkit.so.0" in proc.stdout


def test_cli_without_library(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(SRC)
    env["STEPKIT_LIBRARY"] = str(tmp_path / "missing.so")
    task = tmp_path / "task.json"
    task.write_text('{"identifier": "t", "steps": [{"type": "instruction", "identifier": "i"}]}')
    proc = subprocess.run(
        [sys.executable, "-m", "stepkit", "run", str(task)],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 2
    assert "libstepkit.so" in proc.stderr and "STEPKIT_LIBRARY" in proc.stderr


def test_load_library_twice_is_the_same():
    assert stepkit.load_library() is stepkit.load_library()
    assert stepkit.load_library(stepkit.library_path()) is stepkit.load_library()
