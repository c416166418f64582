"""The files StepKit writes (issue 11, part C): the autosave file and recorder files.

- links planted where StepKit writes are never followed (temporary files, recorder files, the
  autosave path itself); stale temporary files of a crash are removed;
- two sessions never share an autosave path (same process or another): the second is refused;
- identifiers never go into file names as they are: `part1/walk`, `..`, `a/b` stay inside the
  output directory, and a run that recorded with them saves and restores;
- a call whose autosave fails changes nothing, recorder files included, and a host that dies
  between writing samples and the autosave leaves files that the restored run repairs.

Every test runs on a ManualClock; nothing depends on timing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
import tempfile
from typing import Any, Callable, Dict, List

import pytest

import stepkit

from conftest import START_MS, autosaved, cli_env

RUN = "0b3f1c2e-8d4a-4f6b-9c1d-2e3f4a5b6c7d"


def task_with(step: str, recorders: List[str]) -> Dict[str, Any]:
    return {
        "identifier": "files",
        "steps": [
            {"type": "instruction", "identifier": "intro"},
            {
                "type": "active",
                "identifier": step,
                "stepDuration": 60,
                "recorderConfigurations": [{"type": "accelerometer", "identifier": r} for r in recorders],
            },
            {"type": "completion", "identifier": "done"},
        ],
    }


SIMPLE = {
    "identifier": "simple",
    "steps": [
        {"type": "instruction", "identifier": "intro"},
        {"type": "question", "identifier": "name", "answerFormat": {"type": "text"}},
        {"type": "completion", "identifier": "done"},
    ],
}


def start(session: stepkit.Session) -> None:
    session.forward()
    session.start()


def file_results(session: stepkit.Session) -> List[Dict[str, Any]]:
    return [f for r in session.result["results"] for f in r["results"] if f.get("type") == "file"]


def items(path: Path) -> List[Any]:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert set(document) == {"items"}
    return document["items"]


def listing(directory: Path) -> List[str]:
    return sorted(p.name for p in directory.iterdir())


def error_code(info: Any) -> str:
    return info.value.errors[0]["code"]


# ------------------------------------------------------------------------------------------------
# Autosave: links, temporaries, one session per path


def victim_file(tmp_path: Path) -> Path:
    """A file holding "precious" that a link may point to: nothing StepKit does may change it."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    return victim


def saves_dir(tmp_path: Path) -> Path:
    """An empty directory for autosaves."""
    saves = tmp_path / "saves"
    saves.mkdir()
    return saves


def test_a_link_at_the_old_temporary_name_is_left_alone(tmp_path: Path) -> None:
    victim, saves = victim_file(tmp_path), saves_dir(tmp_path)
    path = saves / "session.json"
    os.symlink(victim, str(path) + ".tmp")  # the name earlier versions wrote through
    with stepkit.Task.from_json(SIMPLE) as task:
        with task.open({"autosave": str(path)}) as session:
            session.forward()
            session.set_answer("Ada")
            assert victim.read_text() == "precious"
            assert autosaved(task, path) == session.save()
            # the file and the planted link; no temporary file, no lock file
            assert listing(saves) == ["session.json", "session.json.tmp"]
    assert victim.read_text() == "precious"


def test_stale_temporaries_of_a_crash_are_removed_and_only_they(tmp_path: Path) -> None:
    victim, saves = victim_file(tmp_path), saves_dir(tmp_path)
    path = saves / "session.json"
    stale = saves / ".session.json.stepkit-tmp-abcdefghij12"
    stale.write_text("{half a save")
    linked = saves / ".session.json.stepkit-tmp-0123456789ab"
    os.symlink(victim, linked)
    kept = [".session.json.stepkit-tmp-short", ".other.json.stepkit-tmp-abcdefghij12",
            ".session.json.stepkit-tmp-ABCDEFGHIJ12", "notes.txt"]
    for name in kept:
        (saves / name).write_text("not ours")
    with stepkit.Task.from_json(SIMPLE) as task:
        with task.open({"autosave": str(path)}):
            assert not stale.exists() and not os.path.lexists(linked)
            assert victim.read_text() == "precious"
            for name in kept:
                assert (saves / name).read_text() == "not ours"


def failed_recorders_after_planting(out: Path, plant: Callable[[Path], None]) -> List[str]:
    """Records one accelerometer sample into `out` (the session going on after a recorder
    failure), removes the file and calls `plant` with its name, records another: the recorders
    that failed then."""
    with stepkit.Task.from_json(task_with("walk", ["accel"])) as task:
        with task.open({"taskRunUUID": RUN, "outputDirectory": str(out), "continueOnRecorderFailure": True}) as session:
            start(session)
            session.record("accel", {"x": 1})
            name = out / file_results(session)[0]["fileName"]
            name.unlink()
            plant(name)
            state = session.record("accel", {"x": 2})
            return [e["recorder"] for e in state["events"] if e["type"] == "recorderFailed"]


def test_a_fifo_planted_at_our_names_blocks_nothing(tmp_path: Path) -> None:
    # Opening a FIFO waits for its other end; StepKit opens existing names without waiting.
    saves = saves_dir(tmp_path)
    path = saves / "session.json"
    os.mkfifo(saves / ".session.json.stepkit-tmp-fifofifofifo")
    with stepkit.Task.from_json(SIMPLE) as task:
        with task.open({"autosave": str(path)}) as session:
            assert listing(saves) == ["session.json"]  # removed like any stale temporary
            session.forward()
    out = tmp_path / "out"
    out.mkdir()
    assert failed_recorders_after_planting(out, os.mkfifo) == ["accel"]


def test_a_link_at_the_autosave_path_is_refused(tmp_path: Path) -> None:
    victim = tmp_path / "victim.json"
    victim.write_text("precious")
    link = tmp_path / "session.json"
    os.symlink(victim, link)
    with stepkit.Task.from_json(SIMPLE) as task:
        with pytest.raises(stepkit.StepKitIOError) as info:
            task.open({"autosave": str(link)})
        assert error_code(info) == "autosaveNotAFile"
        assert "symbolic link" in info.value.message
        with task.open() as session:
            saved = session.save()
        with pytest.raises(stepkit.StepKitIOError) as info:
            task.restore(saved, {"autosave": str(link)})
        assert error_code(info) == "autosaveNotAFile"
        with pytest.raises(stepkit.StepKitIOError) as info:
            task.open({"autosave": str(tmp_path) + "/"})
        assert error_code(info) == "autosaveNotAFile"
    assert victim.read_text() == "precious"
    assert os.path.islink(link)
    assert listing(tmp_path) == ["session.json", "victim.json"]  # nothing written, no lock left


def test_two_sessions_on_one_autosave_path_in_one_process(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    with stepkit.Task.from_json(SIMPLE) as task:
        first = task.open({"autosave": str(path)})
        first.forward()
        saved = path.read_text(encoding="utf-8")
        for spelling in (str(path), str(tmp_path / "." / "session.json")):
            with pytest.raises(stepkit.StepKitIOError) as info:
                task.open({"autosave": spelling})
            assert error_code(info) == "autosaveInUse"
            assert str(path) in info.value.message or "session.json" in info.value.message
            with pytest.raises(stepkit.StepKitIOError) as info:
                task.restore(saved, {"autosave": spelling})
            assert error_code(info) == "autosaveInUse"
        assert path.read_text(encoding="utf-8") == saved  # the refusals wrote nothing
        first.set_answer("Ada")  # the first session still saves, without a spurious EIO
        assert autosaved(task, path) == first.save()
        first.close()
        with task.restore(path.read_text(encoding="utf-8"), {"autosave": str(path)}) as second:
            assert second.state["answer"] == "Ada"
            second.set_answer("Grace")
            assert autosaved(task, path) == second.save()


HOLDER = textwrap.dedent(
    """
    import sys
    import stepkit
    task = stepkit.Task.from_json(sys.argv[1])
    session = task.open({"autosave": sys.argv[2]})
    print("holding", flush=True)
    sys.stdin.readline()
    session.close()
    print("released", flush=True)
    """
)


def test_two_sessions_on_one_autosave_path_in_two_processes(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, json.dumps(SIMPLE), str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=cli_env(), text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline() == "holding\n"
        with stepkit.Task.from_json(SIMPLE) as task:
            with pytest.raises(stepkit.StepKitIOError) as info:
                task.open({"autosave": str(path)})
            assert error_code(info) == "autosaveInUse"
            child.stdin.write("\n")
            child.stdin.flush()
            assert child.stdout.readline() == "released\n"
            with task.open({"autosave": str(path)}) as session:
                session.forward()
    finally:
        child.kill()
        child.wait(timeout=30)


def test_a_removed_directory_made_again_is_claimed_again(tmp_path: Path) -> None:
    saves = tmp_path / "saves"
    saves.mkdir()
    path = saves / "session.json"
    with stepkit.Task.from_json(SIMPLE) as task:
        with task.open({"autosave": str(path)}) as session:
            session.forward()
            shutil.rmtree(saves)
            with pytest.raises(stepkit.StepKitIOError):
                session.set_answer("lost")
            saves.mkdir()
            session.set_answer("Ada")  # takes the lock again before it saves
            with pytest.raises(stepkit.StepKitIOError) as info:
                task.open({"autosave": str(path)})
            assert error_code(info) == "autosaveInUse"
            assert autosaved(task, path) == session.save()


# ------------------------------------------------------------------------------------------------
# Recorder file names


@pytest.mark.parametrize(
    "step, recorders",
    [
        ("part1/walk", ["accel"]),
        ("..", ["../../escape", "a/b"]),
        ("walk", ["/abs/path", "x-1", "x%2D1"]),
        ("étape 1", ["ü", "s" * 200]),
    ],
)
def test_identifiers_never_reach_outside_the_directory(tmp_path: Path, step: str, recorders: List[str]) -> None:
    out = tmp_path / "a" / "out"
    out.mkdir(parents=True)
    saves = tmp_path / "saves"
    saves.mkdir()
    autosave = saves / "session.json"
    with stepkit.Task.from_json(task_with(step, recorders)) as task:
        options = {"taskRunUUID": RUN, "outputDirectory": str(out), "autosave": str(autosave)}
        with task.open(options) as session:
            session.set_clock(stepkit.ManualClock(START_MS))
            start(session)
            for i, r in enumerate(recorders):
                session.record(r, {"i": i})
            saved = autosave.read_text(encoding="utf-8")
        files = [p for p in tmp_path.rglob("*") if p.is_file() and p.parent != saves]
        assert all(p.parent == out for p in files), files  # nothing outside, no subdirectory
        assert len(files) == len(recorders)  # different identifiers, different files
        # The session's own autosave restores once its recorders wrote (the `part1/walk` bug),
        # and the restored run goes on writing the same files.
        with task.restore(saved, {"outputDirectory": str(out), "autosave": str(autosave)}) as back:
            back.set_clock(stepkit.ManualClock(START_MS + 1000))
            for i, r in enumerate(recorders):
                back.record(r, {"again": i})
            results = file_results(back)
            assert sorted(f["identifier"] for f in results) == sorted(recorders)
            for f in results:
                name = f["fileName"]
                assert "/" not in name and not name.startswith(".") and len(name.encode()) <= 255
                i = recorders.index(f["identifier"])
                assert items(out / name) == [{"i": i}, {"again": i}]


def test_file_names_are_encoded_reversibly() -> None:
    definition = task_with("part1/walk-2", ["a/b", "a%2Fb"])
    expected = {
        "a/b": f"{RUN.upper()}-part1%2Fwalk%2D2-2-a%2Fb-0.json",
        "a%2Fb": f"{RUN.upper()}-part1%2Fwalk%2D2-2-a%252Fb-0.json",
    }
    with tempfile.TemporaryDirectory() as out, stepkit.Task.from_json(definition) as task:
        with task.open({"taskRunUUID": RUN, "outputDirectory": out}) as session:
            start(session)
            session.record("a/b", {"x": 1})
            session.record("a%2Fb", {"x": 2})
            names = {f["identifier"]: f["fileName"] for f in file_results(session)}
        assert names == expected
        assert sorted(os.listdir(out)) == sorted(expected.values())


def saved_with_file_name(task: stepkit.Task, out: Path, name: str) -> str:
    with task.open({"taskRunUUID": RUN, "outputDirectory": str(out)}) as session:
        start(session)
        session.record("accel", {"x": 1})
        document = json.loads(session.save())
    visit = document["path"][-1]
    visit["active"]["recorders"][0]["files"][0]["fileName"] = name
    from test_restore import signed

    return json.dumps(signed(document), separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize("name", ["../escape.json", "/etc/passwd", ".hidden.json", "..", ".", "", "a/b.json", "x" * 256])
def test_restore_refuses_file_names_outside_the_directory(tmp_path: Path, name: str) -> None:
    with stepkit.Task.from_json(task_with("walk", ["accel"])) as task:
        text = saved_with_file_name(task, tmp_path, name)
        with pytest.raises(stepkit.RestorationError) as info:
            task.restore(text, {"outputDirectory": str(tmp_path)})
        assert error_code(info) == "damaged"


def test_restore_accepts_names_of_earlier_versions(tmp_path: Path) -> None:
    # Earlier versions wrote identifiers as they were (spaces, Unicode, "-"): still restorable.
    with stepkit.Task.from_json(task_with("walk", ["accel"])) as task:
        name = f"{RUN.upper()}-my step-2-accel é-0.json"
        text = saved_with_file_name(task, tmp_path, name)
        with task.restore(text, {"outputDirectory": str(tmp_path)}) as back:
            assert file_results(back)[0]["fileName"] == name


# ------------------------------------------------------------------------------------------------
# Recorder files: links


def test_a_link_planted_at_a_recorder_file_name_is_not_followed(tmp_path: Path) -> None:
    victim = victim_file(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    with stepkit.Task.from_json(task_with("walk", ["accel"])) as task:
        with task.open({"taskRunUUID": RUN, "outputDirectory": str(out)}) as session:
            start(session)
            name = f"{RUN.upper()}-walk-2-accel-0.json"
            os.symlink(victim, out / name)  # predictable: the host chose the run's UUID
            session.record("accel", {"x": 1})
            assert victim.read_text() == "precious"
            assert not os.path.islink(out / name)
            assert items(out / name) == [{"x": 1}]
            # Replaced by a link after the first batch: the recorder fails, and writes nothing
            # through it.
            (out / name).unlink()
            os.symlink(victim, out / name)
            state = session.record("accel", {"x": 2})
            failed = [e for e in state["events"] if e["type"] == "recorderFailed"]
            assert failed and failed[0]["samplesLost"] == 1
            assert state["finishReason"] == "failed"
    assert victim.read_text() == "precious"


def test_a_hard_link_at_a_recorder_file_is_not_written(tmp_path: Path) -> None:
    victim = tmp_path / "out" / "victim.txt"
    out = tmp_path / "out"
    out.mkdir()
    victim.write_text("precious, and long enough to be written into by an offset")
    assert failed_recorders_after_planting(out, lambda name: os.link(victim, name)) == ["accel"]
    assert victim.read_text() == "precious, and long enough to be written into by an offset"


# ------------------------------------------------------------------------------------------------
# Recorder files and a failed autosave, or a host that died before it


def recording_session(task: stepkit.Task, out: Path, autosave: Path) -> stepkit.Session:
    session = task.open({"taskRunUUID": RUN, "outputDirectory": str(out), "autosave": str(autosave)})
    session.set_clock(stepkit.ManualClock(START_MS))
    start(session)
    return session


def test_a_failed_autosave_leaves_the_recorder_file_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    saves = tmp_path / "saves"
    saves.mkdir()
    autosave = saves / "session.json"
    with stepkit.Task.from_json(task_with("walk", ["accel"])) as task:
        with recording_session(task, out, autosave) as session:
            state_before = session.state
            shutil.rmtree(saves)
            with pytest.raises(stepkit.StepKitIOError):
                session.record("accel", [{"t": 0}])  # would create the file
            assert listing(out) == []  # the file the refused call created is gone
            assert session.state == state_before
            saves.mkdir()
            session.record("accel", [{"t": 1}, {"t": 2}])
            name = out / file_results(session)[0]["fileName"]
            before = name.read_bytes()
            saved = session.save()
            shutil.rmtree(saves)
            for batch in ([{"t": 3, "long": "x" * 500}], [{"t": 4}]):
                with pytest.raises(stepkit.StepKitIOError) as info:
                    session.record("accel", batch)
                assert error_code(info) == "autosaveFailed"
                assert name.read_bytes() == before  # nothing changed, the file included
                assert session.save() == saved
            saves.mkdir()
            session.record("accel", {"t": 5})
            assert items(name) == [{"t": 1}, {"t": 2}, {"t": 5}]
            assert autosaved(task, autosave, START_MS) == session.save()


def test_samples_of_a_call_that_was_never_saved_are_dropped_after_restore(tmp_path: Path) -> None:
    """The host died after the samples were written and before the autosave: the restored run's
    recorded length is the truth, and its next write (or its stop) cuts the rest off."""
    out = tmp_path / "out"
    out.mkdir()
    autosave = tmp_path / "session.json"
    with stepkit.Task.from_json(task_with("walk", ["accel", "gyro"])) as task:
        with recording_session(task, out, autosave) as session:
            before_any = autosave.read_text(encoding="utf-8")  # no file yet
            session.record("accel", [{"t": 1}])
            session.record("gyro", [{"g": 1}])
            committed = autosave.read_text(encoding="utf-8")  # both files hold one sample
            session.record("accel", [{"t": 2, "pad": "y" * 300}])  # written, "never saved"
            session.record("gyro", [{"g": 2, "pad": "y" * 300}])
            names = {f["identifier"]: out / f["fileName"] for f in file_results(session)}
        # Restored from the last autosave the dead host wrote.
        with task.restore(committed, {"outputDirectory": str(out), "autosave": str(autosave)}) as back:
            back.set_clock(stepkit.ManualClock(START_MS + 1000))
            back.record("accel", {"t": 3})  # a shorter batch over the longer unsaved one
            assert items(names["accel"]) == [{"t": 1}, {"t": 3}]
            back.finish_active()  # the stop settles gyro's file at its recorded length
            assert items(names["gyro"]) == [{"g": 1}]
        # A file created by a call that was never saved: created again, exclusively.
        with task.restore(before_any, {"outputDirectory": str(out), "autosave": str(autosave)}) as back:
            back.set_clock(stepkit.ManualClock(START_MS + 2000))
            back.record("accel", {"t": "new"})
            assert items(names["accel"]) == [{"t": "new"}]


# ------------------------------------------------------------------------------------------------
# The autosave's cost: visits are encoded once (kept text), never stale


def test_kept_visit_texts_never_go_stale(tmp_path: Path) -> None:
    """Each save reuses the text of visits that did not change: going back, changing answers,
    going forward again, reals that need different digits; the autosave file is what
    stepkit_session_save says after every call, and restores to the same session."""
    definition = {
        "identifier": "reals",
        "steps": [{"type": "question", "identifier": f"q{i}", "answerFormat": {"type": "numeric", "style": "decimal"}}
                  for i in range(6)] + [{"type": "completion", "identifier": "done"}],
    }
    path = tmp_path / "session.json"
    values = [0.1, 1 / 3, 2.5, 1e-7, 123456.789, 0.30000000000000004]
    with stepkit.Task.from_json(definition) as task:
        with task.open({"autosave": str(path)}) as session:
            session.set_clock(stepkit.ManualClock(START_MS))
            moves = [("answer", 0), ("forward",), ("answer", 1), ("forward",), ("answer", 2), ("back",),
                     ("answer", 3), ("back",), ("answer", 4), ("forward",), ("forward",), ("answer", 5),
                     ("forward",), ("back",), ("back",), ("answer", 0), ("forward",), ("forward",), ("answer", 1),
                     ("forward",)]
            for move in moves:
                if move[0] == "answer":
                    session.set_answer(values[move[1]])
                elif move[0] == "forward":
                    session.forward()
                else:
                    session.back()
                text = path.read_text(encoding="utf-8")
                assert autosaved(task, path, START_MS) == session.save(), move
                with task.restore(text) as back:
                    back.set_clock(stepkit.ManualClock(START_MS))
                    assert back.save() == session.save(), move
                    assert back.result == session.result, move


# ------------------------------------------------------------------------------------------------
# The autosave file as a journal: a snapshot, then one record per call (the call's change)

JOURNAL_TASK = {
    "identifier": "journal",
    "steps": [{"type": "question", "identifier": f"q{i}", "answerFormat": {"type": "text"}} for i in range(40)]
    + [{"type": "completion", "identifier": "done"}],
}


def journal_walk(task: stepkit.Task, path: Path, calls: int, options: Any = None) -> List[Any]:
    """Opens a session autosaving to `path` and makes `calls` calls (answers and moves); returns
    after each call (and at open) the file's bytes and `save()`."""
    history = []
    with task.open(dict(options or {}, autosave=str(path))) as session:
        history.append((path.read_bytes(), session.save()))
        session.set_clock(stepkit.ManualClock(START_MS))
        history.append((path.read_bytes(), session.save()))
        for i in range(calls):
            if i % 3 == 2:
                session.forward()
            elif i % 7 == 6:
                session.back()
            else:
                session.set_answer(f"answer {i} " + "x" * (i % 5))
            history.append((path.read_bytes(), session.save()))
    return history


def restored_save(task: stepkit.Task, data: bytes, options: Any = None) -> str:
    with task.restore(data.decode("utf-8"), options) as back:
        return back.save()


def test_the_autosave_file_is_a_snapshot_and_a_journal_of_changes(tmp_path: Path) -> None:
    """Right after open the file is save()'s text; each call appends one record of its change
    (the file grows by the change, not by the history) and the file restores to the session."""
    path = tmp_path / "session.json"
    with stepkit.Task.from_json(JOURNAL_TASK) as task:
        history = journal_walk(task, path, 30)
        assert history[0][0].decode("utf-8") == history[0][1]
        for (before, _), (after, saved) in zip(history, history[1:]):
            assert after.startswith(before), "a call rewrote the file instead of appending its change"
            lines = after[len(before):].decode("utf-8").strip("\n").split("\n")
            assert len(lines) == 1
            record = json.loads(lines[0])
            assert set(record) == {"journal", "digest", "change"} and record["journal"] == "SHA-256"
            assert len(after) - len(before) < 600, "a record holds more than the call's change"
            assert restored_save(task, after) == saved


def test_a_torn_last_record_is_ignored_at_every_byte(tmp_path: Path) -> None:
    """A crash in the middle of an append leaves a last record without its newline: cut at every
    byte offset of the last record, the file restores to the state after the call before."""
    path = tmp_path / "session.json"
    with stepkit.Task.from_json(JOURNAL_TASK) as task:
        history = journal_walk(task, path, 12)
        for k in (1, len(history) - 2):
            before, saved_before = history[k]
            after, saved_after = history[k + 1]
            assert after.startswith(before)
            for cut in range(len(before), len(after)):
                assert restored_save(task, after[:cut]) == saved_before, cut
            assert restored_save(task, after) == saved_after


def test_a_changed_removed_or_moved_record_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    with stepkit.Task.from_json(JOURNAL_TASK) as task:
        data, _ = journal_walk(task, path, 9)[-1]
        snapshot, *records = data.split(b"\n")
        assert records[-1] == b"" and len(records) == 11  # set_clock and 9 calls
        records = records[:-1]

        def refused(lines: List[bytes]) -> str:
            with pytest.raises(stepkit.RestorationError) as info:
                task.restore(b"\n".join([snapshot] + lines + [b""]).decode("utf-8"))
            return error_code(info)

        changed = records[4].replace(b"answer", b"ANSWER", 1)
        assert changed != records[4]
        assert refused(records[:4] + [changed] + records[5:]) == "integrityCheckFailed"
        assert refused(records[:4] + records[5:]) == "integrityCheckFailed"  # one removed
        assert refused(records[:3] + [records[4], records[3]] + records[5:]) == "integrityCheckFailed"  # moved
        # A record re-signed as the unkeyed chain would sign it still fails: its digest chains
        # to the one before, which no longer matches.
        record = json.loads(records[4])
        record["change"] = {"members": {"touched": True}}
        forged = json.dumps(record, separators=(",", ":")).encode()
        assert refused(records[:4] + [forged] + records[5:]) == "integrityCheckFailed"
        assert refused(records[:4] + [b"not a record"] + records[5:]) == "damaged"
        # Whole records cut off at the end: an earlier call's state (as after a crash).
        assert restored_save(task, b"\n".join([snapshot] + records[:5] + [b""])) != restored_save(task, data)


def test_with_a_key_the_journal_is_signed_with_it(tmp_path: Path) -> None:
    path = tmp_path / "session.json"
    key = {"integrityKey": "k" * 32}
    with stepkit.Task.from_json(JOURNAL_TASK) as task:
        data, saved = journal_walk(task, path, 6, key)[-1]
        snapshot, *records = data.split(b"\n")
        assert all(json.loads(r)["journal"] == "HMAC-SHA256" for r in records if r)
        assert restored_save(task, data, key) == saved
        with pytest.raises(stepkit.RestorationError) as info:
            task.restore(data.decode("utf-8"))
        assert error_code(info) == "keyRequired"
        with pytest.raises(stepkit.RestorationError) as info:
            task.restore(data.decode("utf-8"), {"integrityKey": "w" * 32})
        assert error_code(info) == "integrityCheckFailed"
        # A record re-signed without the key (a SHA-256 chain anyone can compute) is refused.
        import hashlib
        head = json.loads(snapshot)["integrity"]["digest"]
        change = json.dumps({"members": {"touched": True}}, separators=(",", ":"))
        digest = hashlib.sha256((head + "\n" + change).encode()).hexdigest()
        forged = ('{"journal":"SHA-256","digest":"%s","change":%s}' % (digest, change)).encode()
        with pytest.raises(stepkit.RestorationError) as info:
            task.restore(b"\n".join([snapshot, forged, b""]).decode("utf-8"), key)
        assert error_code(info) == "integrityCheckFailed"


def test_the_journal_is_compacted_into_a_new_snapshot(tmp_path: Path) -> None:
    """Records add up to at most the snapshot's size (and at least 64 KiB) before a new
    snapshot replaces them: the file never grows past that, restores to the session after every
    call, and right after a compaction is save()'s text again."""
    path = tmp_path / "session.json"
    with stepkit.Task.from_json(JOURNAL_TASK) as task:
        with task.open({"autosave": str(path)}) as session:
            session.set_clock(stepkit.ManualClock(START_MS))
            compactions = 0
            previous = path.read_bytes()
            for i in range(400):
                session.set_answer(f"{i} " + "y" * 300)
                data = path.read_bytes()
                if not data.startswith(previous):
                    compactions += 1
                    assert data.decode("utf-8") == session.save()
                snapshot = data.split(b"\n", 1)[0]
                assert len(data) - len(snapshot) <= max(len(snapshot), 64 * 1024)
                if i % 50 == 0 or not data.startswith(previous):
                    assert restored_save(task, data) == session.save()
                previous = data
            assert compactions >= 1
            assert autosaved(task, path) == session.save()


def test_a_file_changed_behind_the_session_is_written_whole_again(tmp_path: Path) -> None:
    """The session appends only to the file it wrote, as long as it wrote it: a file someone
    extended, cut or replaced since is written whole (a new snapshot) by the next call that
    changes the session; a call that changes nothing saved leaves a file as written alone."""
    path = tmp_path / "session.json"
    with stepkit.Task.from_json(JOURNAL_TASK) as task:
        with task.open({"autosave": str(path)}) as session:
            session.set_clock(stepkit.ManualClock(START_MS))
            session.set_answer("one")
            before = path.read_bytes()
            stamp = os.stat(path).st_mtime_ns
            session.set_answer("one")  # the same answer: nothing saved changes
            assert path.read_bytes() == before and os.stat(path).st_mtime_ns == stamp
            with open(path, "ab") as extended:
                extended.write(b"junk")
            session.set_answer("two")
            snapshot = path.read_text(encoding="utf-8")
            assert snapshot == session.save()
            session.set_answer("three")  # appended again
            assert path.read_text(encoding="utf-8").startswith(snapshot + "\n")
            assert autosaved(task, path) == session.save()
            path.write_text(snapshot[:-10], encoding="utf-8")  # cut
            session.forward()
            assert path.read_text(encoding="utf-8") == session.save()
