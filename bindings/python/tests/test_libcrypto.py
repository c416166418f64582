"""libcrypto through the binding: loaded on the first save (or the first task info, whose
fingerprint is a digest), not on import; where it cannot be loaded, save, restore and task info
raise StepKitIOError "libcryptoUnavailable" and change nothing.

Each case runs in a new interpreter, since a process loads libcrypto (or fails to) once. The
stand-in for a missing libcrypto is the C tests' not_libcrypto library (a library with
libcrypto's soname and none of its functions), built beside libstepkit.so in the CMake build.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import stepkit

TASK = {"identifier": "t", "steps": [
    {"type": "question", "identifier": "mood", "answerFormat": {"type": "scale", "minimum": 1, "maximum": 5}},
    {"type": "question", "identifier": "ok", "answerFormat": {"type": "boolean"}}]}


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            env=dict(os.environ), timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_libcrypto_is_loaded_by_the_first_save_only():
    out = run_python(f"""
        import json, os
        import stepkit
        def crypto():
            return sorted({{line.split()[-1] for line in open("/proc/self/maps") if "libcrypto" in line}})
        task = stepkit.Task.from_json({TASK!r})
        session = task.open()
        session.set_answer(3)
        session.forward()
        print(json.dumps(crypto()))
        saved = session.save()
        print(json.dumps(crypto()))
        restored = task.restore(saved)
        print(json.dumps(restored.state["step"]["identifier"]))
    """)
    before, after, step = (json.loads(line) for line in out.splitlines())
    # Neither the interpreter nor the package loads it (the package imports no hashlib or ssl).
    assert before == [] and len(after) == 1, (before, after)
    assert step == "ok"


def test_task_info_loads_libcrypto_for_its_fingerprint():
    out = run_python(f"""
        import json
        import stepkit
        def crypto():
            return sorted({{line.split()[-1] for line in open("/proc/self/maps") if "libcrypto" in line}})
        task = stepkit.Task.from_json({TASK!r})
        print(json.dumps(crypto()))
        fingerprint = task.info["fingerprint"]
        print(json.dumps(crypto()))
        with task.open() as session:
            print(json.dumps(fingerprint == json.loads(session.save())["task"]["fingerprint"]))
    """)
    before, after, same = (json.loads(line) for line in out.splitlines())
    assert before == [] and len(after) == 1, (before, after)
    assert same is True


def stand_in() -> str:
    library = os.path.realpath(stepkit.library_path())
    path = os.path.join(os.path.dirname(library), "libnot_libcrypto.so")
    if not os.path.exists(path):
        pytest.skip("not_libcrypto is built only with the CMake build's tests (beside " + library + ")")
    return path


def test_unavailable_libcrypto_fails_save_and_restore_and_changes_nothing():
    out = run_python(f"""
        import ctypes, json
        ctypes.CDLL({stand_in()!r}, mode=ctypes.RTLD_GLOBAL)
        import stepkit
        task = stepkit.Task.from_json({TASK!r})
        session = task.open()
        session.set_answer(3)
        before = session.state
        for call in (session.save, lambda: task.restore('{{"format":"stepkit-restoration","version":1,'
                                                          '"integrity":{{"algorithm":"SHA-256","digest":"00"}}}}'),
                     lambda: task.info, lambda: task.fingerprint):
            try:
                call()
                raise SystemExit("no error")
            except stepkit.StepKitIOError as error:
                print(json.dumps([error.status, error.errors[0]["code"], "could not be loaded" in error.message]))
        assert session.state == before
        session.forward()
        print(json.dumps(session.state["step"]["identifier"]))
    """)
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines == [[-7, "libcryptoUnavailable", True]] * 4 + ["ok"]
