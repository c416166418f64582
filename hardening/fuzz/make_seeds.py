#!/usr/bin/env python3
"""Seed corpora for the StepKit fuzz targets: python3 make_seeds.py OUTDIR

OUTDIR/compile/  the example tasks (examples/tasks/*.json without the answers files)
OUTDIR/answers/  operation sequences (see fuzz_answers.c) that walk each example with its answers
                 from the start, and short ones from each of the harness's starting points (the
                 walk's steps: an answer, state, forward, back, tick, result)
OUTDIR/restore/  restoration data saved at every step of those walks (see fuzz_restore.c), as is
                 and in "re-sign" mode, plus the same data against the changed headache task
OUTDIR/forged/   edit programs for fuzz_forged.c: a saved run of its pool, a mode (keyed or not)
                 and one or two semantic edits (one of each kind on a spread of runs)
OUTDIR/verify/   for fuzz_verify.c: each walk's completed result as raw text, and edit programs
                 (one of each edit, a few of two) on the harness's own clean result
OUTDIR/fhir/     the example Questionnaires (examples/fhir/*.json without the answers files)
OUTDIR/clock/    operation sequences (see fuzz_clock.c) over every example task: walks on a
                 monotone clock with a save/restore check at every step, and walks whose clock
                 jumps to INT64_MIN / INT64_MAX / far back, suspends at INT64_MAX and resumes at -2e12
Needs the Python binding (bindings/python/src) and STEPKIT_LIBRARY (or a findable libstepkit.so).
"""
import json
import os
import shutil
import struct
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "bindings" / "python" / "src"))
import stepkit  # noqa: E402

TASKS = ["headache", "daily-checkin", "health-survey", "intake", "medications", "short-walk"]
EXAMPLES = REPO / "examples" / "tasks"
RUN_UUID = "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10"


def answer_op(text: str) -> bytes:
    data = text.encode("utf-8")
    return bytes([0]) + struct.pack("<H", len(data)) + data


def main() -> None:
    out = Path(sys.argv[1])
    clock_seeds(out / "clock")
    fhir_seeds(out / "fhir")
    for sub in ("compile", "answers", "restore", "forged", "verify"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    for index, name in enumerate(TASKS):
        text = (EXAMPLES / f"{name}.json").read_text(encoding="utf-8")
        (out / "compile" / f"{name}.json").write_text(text, encoding="utf-8")
        answers_path = EXAMPLES / f"{name}.answers.json"
        answers = json.loads(answers_path.read_text(encoding="utf-8")) if answers_path.exists() else {}
        task = stepkit.Task.from_json(text)
        journal_dir = tempfile.mkdtemp(prefix="stepkit-seeds-")
        journal = Path(journal_dir) / "autosave.json"
        # The autosave file (a snapshot and a journal of every call's change) is a seed too.
        session = task.open({"taskRunUUID": RUN_UUID, "continueOnRecorderFailure": True, "autosave": str(journal)})
        ops = bytearray([index, 0])  # byte 1 = 0: the session opened afresh
        saves = [session.save()]
        walk_answers = []  # the answer op for each step of the walk (b"" when it has none)
        for _ in range(60):
            state = session.state
            if state["status"] != "inProgress":
                break
            step = state["step"]
            ident = step["identifier"]
            walk_answers.append(answer_op(json.dumps(answers[ident])) if ident in answers else b"")
            if ident in answers:
                ops += answer_op(json.dumps(answers[ident]))
                try:
                    session.set_answer(answers[ident])
                except stepkit.StepKitError:
                    pass
            if step.get("type") in ("active", "countdown", "wait"):
                ops += bytes([5, 0, 7, 255, 7, 255, 6])  # start, +2 x 63.75 s, tick
                try:
                    session.active("start")
                except Exception:
                    pass
            ops += bytes([1])  # forward
            try:
                session.go_forward()
            except stepkit.StepKitError:
                try:
                    session.skip()
                except stepkit.StepKitError:
                    break
            saves.append(session.save())
        ops += bytes([8, 10, 2, 2, 9, 4, 0])  # state, save/restore check, back, back, result, finish completed
        (out / "answers" / f"{name}.ops").write_bytes(bytes(ops))
        # a second, simpler sequence: forward/back/skip only
        (out / "answers" / f"{name}-nav.ops").write_bytes(bytes([index, 0, 1, 1, 3, 2, 1, 6, 9, 4, 1]))
        # from each starting point k (the harness's walk is this one, on a manual clock: the
        # answers line up with its steps as far as the two walks agree)
        for k in range(1, len(walk_answers) + 1):
            here = walk_answers[k] if k < len(walk_answers) else b""
            (out / "answers" / f"{name}-from-{k:02d}.ops").write_bytes(
                bytes([index, k]) + here + bytes([8, 1, 2, 6, 9, 1]))
        for k, saved in enumerate(saves):
            data = saved.encode("utf-8")
            (out / "restore" / f"{name}-{k:02d}").write_bytes(bytes([0, index]) + data)
            (out / "restore" / f"{name}-{k:02d}-resign").write_bytes(bytes([1, index]) + data)
            if name == "headache":
                (out / "restore" / f"{name}-{k:02d}-migrate").write_bytes(bytes([3, 6]) + data)
        if session.state["status"] != "inProgress":
            result = json.dumps(session.result).encode("utf-8")
            for options in range(4):
                (out / "verify" / f"{name}-raw-{options}").write_bytes(bytes([index, 1 | options << 1]) + result)
        for options in range(4):
            (out / "verify" / f"{name}-clean-{options}").write_bytes(bytes([index, options << 1]))
        for op in range(10):
            (out / "verify" / f"{name}-edit-{op}").write_bytes(bytes([index, 2, op, op * 3 + 1, op + 2]))
        (out / "verify" / f"{name}-two").write_bytes(bytes([index, 0, 2, 1, 2, 3, 4, 7]))
        session.close()
        (out / "restore" / f"{name}-journal").write_bytes(bytes([0, index]) + journal.read_bytes())
        shutil.rmtree(journal_dir)
        task.close()
    # fuzz_forged.c: <base><mode>(<op><a><b>)*; the pool holds about 20 runs per task.
    for base in range(0, 120, 7):
        (out / "forged" / f"run-{base:03d}").write_bytes(bytes([base, base & 1]))
        for op in range(13):
            edit = bytes([op, base // 7 + op, (base * 3 + op) & 0xFF])
            (out / "forged" / f"run-{base:03d}-op{op:02d}").write_bytes(bytes([base, op & 1]) + edit)
        (out / "forged" / f"run-{base:03d}-two").write_bytes(bytes([base, 0, 7, 0, 4, 9, 1, 1]))


def fhir_seeds(out: Path) -> None:
    """fuzz_fhir.c inputs (no library needed): each example Questionnaire as it is."""
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted((REPO / "examples" / "fhir").glob("*.json")):
        if not path.name.endswith(".answers.json"):
            shutil.copyfile(path, out / path.name)


def clock_seeds(out: Path) -> None:
    """fuzz_clock.c inputs (no library needed): byte 0 is the task's index among the example
    tasks sorted by name (as the harness sorts them), byte 1 bit 0 the monotone clock."""
    out.mkdir(parents=True, exist_ok=True)
    names = sorted(p.name[: -len(".json")] for p in EXAMPLES.glob("*.json") if not p.name.endswith(".answers.json"))
    # one step: answer from the answers file, check, start (if active), 2 x 63.75 s, tick,
    # save/restore (carry on with the restored session), forward, tick
    step = bytes([9, 14, 5, 0, 2, 255, 2, 255, 4, 10, 1, 6, 4])
    extremes = bytes([
        6, 5, 0, 2, 20, 4, 2, 40,   # forward, start, +5 s, tick, +10 s
        0, 2, 5, 1,                 # clock = INT64_MAX, suspend
        0, 7, 5, 2, 4, 14,          # clock = -2e12, resume, tick, check
        10, 0, 0, 0, 4, 10, 1,      # save/restore, clock = INT64_MIN, tick, save/restore (carry on)
        3, 255, 4, 0, 3, 4, 14,     # back 255 s, tick, clock = INT64_MAX - 1, tick, check
        5, 4, 5, 5, 12, 4, 13, 1,   # suspendTask, resumeTask, set clock again, tick, finish saved
    ])
    for index, name in enumerate(names):
        (out / f"{name}-monotone").write_bytes(bytes([index, 1]) + step * 10 + bytes([13, 0, 14]))
        (out / f"{name}-wild-walk").write_bytes(bytes([index, 0]) + (step + bytes([0, index % 16])) * 6)
        (out / f"{name}-extremes").write_bytes(bytes([index, 0]) + extremes)
        (out / f"{name}-extremes-monotone").write_bytes(bytes([index, 1]) + extremes)


if __name__ == "__main__":
    main()
