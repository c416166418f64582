"""The terminal presenter: python -m stepkit run/check, through a real subprocess."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import SMALL_TASK, example, load_json, run_cli, step_ids, write_json

EXAMPLES = ["daily-checkin", "health-survey", "intake"]


def answers_of(result):
    """{stepIdentifier: {questionIdentifier: answer}} of a result."""
    return {s["identifier"]: {q["identifier"]: q["answer"] for q in s["results"]} for s in result["results"]}


@pytest.fixture
def small_task_file(tmp_path):
    path = tmp_path / "small.json"
    path.write_text(json.dumps(SMALL_TASK), encoding="utf-8")
    return path


def check_example_result(name, task_path, answers_path, result):
    task = load_json(task_path)
    answers = load_json(answers_path)
    assert result["identifier"] == task["identifier"]
    by_step = answers_of(result)
    for step in task["steps"]:
        sid = step["identifier"]
        assert sid in by_step, f"{name}: step {sid} missing from the result"
        if step["type"] == "question":
            expected = answers.get(sid)  # None: skipped optional step
            assert by_step[sid] == {sid: expected}, sid
        elif step["type"] == "form":
            given = answers.get(sid, {})
            for item in step["formItems"]:
                if "identifier" in item:
                    assert by_step[sid][item["identifier"]] == given.get(item["identifier"]), (
                        sid,
                        item["identifier"],
                    )
    assert step_ids(result) == [s["identifier"] for s in task["steps"]]


@pytest.mark.parametrize("name", EXAMPLES)
def test_run_example_with_answers(name, tmp_path):
    task_path = example(name)
    answers_path = task_path.with_name(f"{name}.answers.json")
    output = tmp_path / "result.json"
    proc = run_cli("run", str(task_path), "--answers", str(answers_path), "--output", str(output))
    assert proc.returncode == 0, proc.stderr
    result = load_json(output)
    check_example_result(name, task_path, answers_path, result)
    # the walk names each step and its answer, then prints the result JSON (indent 2)
    task = load_json(task_path)
    first_question = next(s for s in task["steps"] if s["type"] in ("question", "form"))
    assert (first_question.get("title") or first_question["identifier"]) in proc.stdout
    json_start = proc.stdout.index('{\n  "identifier"')
    assert json.loads(proc.stdout[json_start:]) == result


@pytest.mark.parametrize("name", EXAMPLES)
def test_run_example_stdin_not_a_tty(name, tmp_path):
    task_path = example(name)
    answers_path = task_path.with_name(f"{name}.answers.json")
    if not answers_path.exists():
        pytest.skip(f"{answers_path} is not there yet")
    output = tmp_path / "result.json"
    proc = run_cli("run", str(task_path), "--output", str(output), stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert "not a terminal" in proc.stderr
    assert answers_path.name in proc.stderr
    check_example_result(name, task_path, answers_path, load_json(output))


def test_quiet_prints_only_the_result(tmp_path):
    task_path = example("daily-checkin")
    proc = run_cli("run", str(task_path), "--quiet", "--task-run-uuid", "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["identifier"] == "daily-checkin"
    assert result["taskRunUUID"].lower() == "9f1c7a52-3b8e-4d2a-a1f0-6c2d4e8b9a10"


def test_optional_step_missing_from_answers_is_skipped(small_task_file, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"likes": True, "age": 30, "about": {"name": "Ann"}}))
    output = tmp_path / "out.json"
    proc = run_cli("run", str(small_task_file), "--answers", str(answers), "-o", str(output))
    assert proc.returncode == 0, proc.stderr
    result = answers_of(load_json(output))
    assert result["color"] == {"color": None}
    assert result["about"] == {"name": "Ann", "email": None}
    assert "(skipped)" in proc.stdout


def test_required_step_missing_from_answers(small_task_file, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"likes": True}))
    proc = run_cli("run", str(small_task_file), "--answers", str(answers))
    assert proc.returncode == 1
    assert "'age'" in proc.stderr


def test_refused_answer_in_answers_file(small_task_file, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"likes": True, "age": 12}))
    proc = run_cli("run", str(small_task_file), "--answers", str(answers))
    assert proc.returncode == 1
    assert "'age'" in proc.stderr
    assert "18" in proc.stderr  # the engine's message


def test_refused_form_item_names_item(small_task_file, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"likes": True, "age": 30, "about": {"name": "Ann", "email": "nope"}}))
    proc = run_cli("run", str(small_task_file), "--answers", str(answers))
    assert proc.returncode == 1
    assert "'about'" in proc.stderr and "'email'" in proc.stderr


@pytest.mark.parametrize(
    "content", ["{", "[1, 2]", '"x"', "\xff", '{"age": NaN}', '{"age": 30, "age": 31}']
)
def test_invalid_answers_file(small_task_file, tmp_path, content):
    answers = tmp_path / "answers.json"
    answers.write_bytes(content.encode("latin-1"))
    proc = run_cli("run", str(small_task_file), "--answers", str(answers))
    assert proc.returncode == 1
    assert "answers file" in proc.stderr


def test_missing_answers_file(small_task_file, tmp_path):
    proc = run_cli("run", str(small_task_file), "--answers", str(tmp_path / "none.json"))
    assert proc.returncode == 2
    assert "none.json" in proc.stderr


def test_no_tty_and_no_bundled_answers(small_task_file):
    proc = run_cli("run", str(small_task_file), stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "small.answers.json" in proc.stderr
    assert "--answers" in proc.stderr


def test_no_tty_uses_bundled_answers_next_to_task(small_task_file):
    bundled = small_task_file.with_name("small.answers.json")
    bundled.write_text(json.dumps({"likes": False, "age": 77, "about": {"name": "Bo"}}))
    proc = run_cli("run", str(small_task_file), "-q", stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert answers_of(json.loads(proc.stdout))["age"] == {"age": 77}


def test_missing_task_file(tmp_path):
    proc = run_cli("run", str(tmp_path / "nothing.json"))
    assert proc.returncode == 2
    assert "nothing.json" in proc.stderr


def test_invalid_task_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"identifier": "x", "steps": [{"type": "question", "identifier": "q"}]}))
    proc = run_cli("run", str(bad), "--answers", str(bad))
    assert proc.returncode == 2
    assert "steps[0].answerFormat" in proc.stderr


def test_usage_errors():
    assert run_cli().returncode == 2
    assert run_cli("run").returncode == 2
    assert run_cli("frobnicate").returncode == 2
    help_run = run_cli("run", "--help")
    assert help_run.returncode == 0 and "--answers" in help_run.stdout


def test_version():
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert "0.1.0" in proc.stdout


def test_output_unwritable(small_task_file, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"likes": True, "age": 30, "about": {"name": "Ann"}}))
    proc = run_cli(
        "run", str(small_task_file), "--answers", str(answers), "-o", str(tmp_path / "no" / "dir" / "x.json")
    )
    assert proc.returncode == 2


def test_check_command(small_task_file, tmp_path):
    ok = run_cli("check", str(small_task_file))
    assert ok.returncode == 0 and "ok" in ok.stdout
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "identifier": "x",
                "steps": [
                    {"type": "question", "identifier": "q"},
                    {"type": "instruction", "identifier": "i", "colour": 1},
                ],
            }
        )
    )
    proc = run_cli("check", str(bad))
    assert proc.returncode == 1
    assert "steps[0].answerFormat" in proc.stdout
    assert "steps[1].colour" in proc.stdout


# ------------------------------------------------------------------------------------------------
# Interactive presenter (forced with --interactive, answers typed on stdin)


def test_interactive_walk(small_task_file, tmp_path):
    output = tmp_path / "out.json"
    typed = "\n".join(
        [
            "",  # intro: continue
            "maybe",  # not y/n: asked again
            "y",
            "abc",  # not a number
            "150",  # refused by the engine (out of range): asked again
            "42",
            ":skip",  # colour is optional
            "",  # form: name is required: asked again
            "Ann",
            "",  # email optional: left unanswered
            ":help",
            "",  # completion: finish
        ]
    ) + "\n"
    proc = run_cli("run", str(small_task_file), "--interactive", "-o", str(output), input=typed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "Do you like it?" in out
    assert "Answer y or n." in out
    assert "Enter a whole number between 18 and 90." in out or "18" in out
    assert ":back" in out  # the help text
    result = answers_of(load_json(output))
    assert result["likes"] == {"likes": True}
    assert result["age"] == {"age": 42}
    assert result["color"] == {"color": None}
    assert result["about"] == {"name": "Ann", "email": None}


def test_interactive_choices_back_and_raw_json(small_task_file, tmp_path):
    output = tmp_path / "out.json"
    typed = "\n".join(
        [
            "",
            "n",
            "=30",  # raw JSON
            "3",  # no such choice
            "2",  # Blue
            ":back",  # back to colour, prefilled with Blue
            "",  # Enter keeps Blue
            '={"x": 1}',  # raw JSON for the name item: refused
            "={oops",  # not JSON at all: said so, asked again
            "Bo",
            "bo@example.org",
            "",
        ]
    ) + "\n"
    proc = run_cli("run", str(small_task_file), "-i", "-o", str(output), input=typed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "That is not valid JSON" in proc.stdout + proc.stderr
    result = answers_of(load_json(output))
    assert result["likes"] == {"likes": False}
    assert result["age"] == {"age": 30}
    assert result["color"] == {"color": ["blue"]}
    assert result["about"] == {"name": "Bo", "email": "bo@example.org"}


def test_interactive_quit_discards(small_task_file, tmp_path):
    output = tmp_path / "out.json"
    proc = run_cli("run", str(small_task_file), "-i", "-o", str(output), input="\ny\n:quit\n")
    assert proc.returncode == 1
    assert "discarded" in proc.stderr
    result = load_json(output)
    assert step_ids(result) == ["intro", "likes", "age"]


def test_interactive_end_of_input_discards(small_task_file):
    proc = run_cli("run", str(small_task_file), "-i", input="\n")
    assert proc.returncode == 1
    assert "discarded" in proc.stderr


def test_interactive_example_daily_checkin(tmp_path):
    task_path = example("daily-checkin")
    output = tmp_path / "out.json"
    typed = "\n".join(
        [
            "4",  # mood
            "23:40",  # bedtime
            "6:55",  # wake time, normalised to 06:55
            "4",  # quality: Good
            "1,2",  # symptoms: headache, fatigue
            "y",  # medication
            "",  # optional note: unanswered
            "",  # completion
        ]
    ) + "\n"
    proc = run_cli("run", str(task_path), "-i", "-o", str(output), input=typed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = answers_of(load_json(output))
    assert result["mood"] == {"mood": 4}
    assert result["sleep"] == {"bedtime": "23:40", "wake_time": "06:55", "quality": [4]}
    assert result["symptoms"] == {"symptoms": ["headache", "fatigue"]}
    assert result["medication_taken"] == {"medication_taken": True}
    assert result["notes"] == {"notes": None}



def test_terminal_stdin_is_interactive(small_task_file, tmp_path):
    """On a real terminal (a pty), `run` without --answers asks the participant."""
    import os
    import select
    import sys
    import time

    from conftest import cli_env

    output = tmp_path / "out.json"
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "stepkit", "run", str(small_task_file), "-o", str(output)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=cli_env(),
        close_fds=True,
    )
    os.close(slave)
    # The terminal's line discipline queues the lines; input() reads them one prompt at a time.
    os.write(master, b"\ny\n42\n\nAnn\n\n\n")
    transcript = b""
    deadline = time.time() + 60
    try:
        while time.time() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                transcript += chunk
            elif proc.poll() is not None:
                break
        proc.wait(timeout=30)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    text = transcript.decode("utf-8", "replace")
    assert proc.returncode == 0, text
    assert "not a terminal" not in text
    assert "Do you like it?" in text
    result = answers_of(load_json(output))
    assert result["likes"] == {"likes": True}
    assert result["about"] == {"name": "Ann", "email": None}


def test_interactive_repeating_group_add_remove_done(tmp_path):
    """Issue 31: the medications example's repeating group on a terminal: each instance asked
    under its title, then "a" adds another, "r N" removes one (its answers go), Enter is done;
    the result has one object per instance, in order."""
    output = tmp_path / "out.json"
    typed = "\n".join(
        [
            "",  # intro
            "y",  # takes medication
            "1",  # how many: one instance to start with
            "Aspirin", "100", "1", "",  # medication 1: name, dose, every day, no reason
            "x",  # not a menu choice: asked again
            "a",  # add another
            "Zinc", "5", "3", "colds",  # medication 2
            "a",  # add a third
            "Iron", "20", "1", "",
            "r 1",  # remove Aspirin
            "",  # done
            "n",  # side effects
            "0",  # missed doses
            "",  # completion
        ]
    ) + "\n"
    proc = run_cli("run", str(example("medications")), "-i", "-o", str(output), input=typed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "── Medication 3: " in proc.stdout and "Removed number 1; 2 left." in proc.stdout
    assert "Type a, r N, e N or press Enter." in proc.stdout
    result = load_json(output)
    form = next(r for r in result["results"] if r["identifier"] == "medication")
    group = form["results"][0]
    assert group["type"] == "group"
    assert [{q["identifier"]: q["answer"] for q in i["results"]} for i in group["instances"]] == [
        {"name": "Zinc", "dose": 5, "frequency": ["asNeeded"], "reason": "colds"},
        {"name": "Iron", "dose": 20, "frequency": ["daily"], "reason": None},
    ]


NESTED_TASK = {
    "identifier": "meds",
    "steps": [
        {"type": "form", "identifier": "list", "formItems": [
            {"identifier": "medication", "text": "Medications", "repeat": {"minCount": 1, "maxCount": 3, "title": "Medication {{index}}: {{name}}"},
             "items": [
                 {"identifier": "name", "text": "Name", "answerFormat": {"type": "text"}},
                 {"identifier": "doses", "text": "Doses", "repeat": {"minCount": 1, "maxCount": 2, "title": "Dose {{index}}"},
                  "items": [{"identifier": "amount", "text": "Amount", "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 0}}]}]}]},
        {"type": "completion", "identifier": "done"},
    ],
}


def test_interactive_nested_repeating_group(tmp_path):
    """Issue 31: a repeating group inside a repeating group on a terminal (a medication's doses):
    each dose asked under its title inside its medication, "a" adds a dose to that medication
    (refused past its maxCount, with the engine's message), "r N" removes one, Enter is done;
    the result nests each dose inside its medication."""
    task = write_json(tmp_path / "nested.json", NESTED_TASK)
    output = tmp_path / "out.json"
    typed = "\n".join(
        [
            "Aspirin",  # medication 1's name
            "5",  # its dose 1 (minCount 1)
            "a", "10",  # another dose
            "a",  # a third: past maxCount 2, refused
            "r 1",  # remove the 5
            "",  # doses done
            "a",  # another medication
            "Iron", "65", "",  # its name, its one dose, doses done
            "",  # medications done
            "",  # completion
        ]
    ) + "\n"
    proc = run_cli("run", str(task), "-i", "-o", str(output), input=typed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "── Dose 2" in proc.stdout and "Removed number 1; 1 left." in proc.stdout
    assert "maxCount" in proc.stdout
    result = load_json(output)
    group = result["results"][0]["results"][0]
    meds = [{q["identifier"]: q for q in i["results"]} for i in group["instances"]]
    assert [m["name"]["answer"] for m in meds] == ["Aspirin", "Iron"]
    assert [[d["results"][0]["answer"] for d in m["doses"]["instances"]] for m in meds] == [[10], [65]]
