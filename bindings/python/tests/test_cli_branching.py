"""The terminal presenter on branching tasks: it follows rules, visibleWhen and loops."""

from __future__ import annotations

import json

from conftest import LOOP, run_cli, step_ids

HEADACHE = {
    "identifier": "headache",
    "steps": [
        {"type": "instruction", "identifier": "intro", "title": "Headache survey"},
        {
            "type": "question",
            "identifier": "symptom",
            "title": "What is your symptom?",
            "answerFormat": {
                "type": "textChoice",
                "style": "singleChoice",
                "textChoices": [
                    {"text": "Headache", "value": "headache"},
                    {"text": "Dizziness", "value": "dizziness"},
                ],
            },
        },
        {"type": "question", "identifier": "severity", "title": "Does it interfere?", "answerFormat": {"type": "boolean"}},
        {
            "type": "form",
            "identifier": "about",
            "title": "About you",
            "formItems": [
                {"identifier": "smoker", "text": "Do you smoke?", "answerFormat": {"type": "boolean"}},
                {
                    "identifier": "perday",
                    "text": "Cigarettes per day",
                    "visibleWhen": {"result": {"step": "about", "item": "smoker"}, "equals": True},
                    "answerFormat": {"type": "numeric", "style": "integer", "minimum": 1, "maximum": 100},
                },
            ],
        },
        {
            "type": "section",
            "identifier": "extra",
            "title": "Extra",
            "steps": [
                {"type": "question", "identifier": "x1", "title": "X1", "answerFormat": {"type": "boolean"}},
                {"type": "question", "identifier": "x2", "title": "X2", "answerFormat": {"type": "boolean"}},
            ],
        },
        {"type": "completion", "identifier": "done", "title": "Thank you"},
    ],
    "navigationRules": {
        "symptom": {
            "type": "predicate",
            "branches": [{"when": {"not": {"result": "symptom", "contains": "headache"}}, "destination": "about"}],
        }
    },
    "skipRules": {"about": {"result": "severity", "equals": False}},
}

def test_presenter_follows_branches_and_visibility(tmp_path):
    task_file = tmp_path / "headache.json"
    task_file.write_text(json.dumps(HEADACHE))
    output = tmp_path / "out.json"
    typed = "\n".join(
        [
            "",  # intro
            "2",  # dizziness -> about (severity is not asked)
            "y",  # smoker -> perday becomes visible
            "7",  # perday
            "y",  # x1
            "n",  # x2
            "",  # done
        ]
    ) + "\n"
    proc = run_cli("run", str(task_file), "-i", "-o", str(output), input=typed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Cigarettes per day" in proc.stdout
    assert "Does it interfere?" not in proc.stdout
    result = json.loads(output.read_text())
    assert step_ids(result) == ["intro", "symptom", "about", "extra", "done"]
    about = result["results"][2]
    assert [(q["identifier"], q["answer"]) for q in about["results"]] == [("smoker", True), ("perday", 7)]

    # not a smoker: the hidden item is not asked
    proc = run_cli("run", str(task_file), "-i", "-o", str(output), input="\n2\nn\ny\nn\n\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Cigarettes per day" not in proc.stdout


def test_answers_walk_follows_branches(tmp_path):
    task_file = tmp_path / "headache.json"
    task_file.write_text(json.dumps(HEADACHE))
    answers = tmp_path / "answers.json"
    # severity is never visited (dizziness jumps to about), so it needs no answer
    answers.write_text(json.dumps({"symptom": ["dizziness"], "about": {"smoker": False}, "x1": True, "x2": True}))
    proc = run_cli("run", str(task_file), "--answers", str(answers), "-q")
    assert proc.returncode == 0, proc.stderr
    assert step_ids(json.loads(proc.stdout)) == ["intro", "symptom", "about", "extra", "done"]


def test_presenter_loop_and_back(tmp_path):
    task_file = tmp_path / "loop.json"
    task_file.write_text(json.dumps(LOOP))
    output = tmp_path / "out.json"
    proc = run_cli("run", str(task_file), "-i", "-o", str(output), input="y\ny\nn\n\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert step_ids(json.loads(output.read_text())) == ["again", "again", "again", "done"]


def test_answers_walk_stops_an_endless_loop(tmp_path):
    task_file = tmp_path / "loop.json"
    task_file.write_text(json.dumps(LOOP))
    answers = tmp_path / "answers.json"
    answers.write_text('{"again": true}')
    proc = run_cli("run", str(task_file), "--answers", str(answers), "-q")
    assert proc.returncode == 1
    assert "did not end" in proc.stderr
    answers.write_text('{"again": false}')
    proc = run_cli("run", str(task_file), "--answers", str(answers), "-q")
    assert proc.returncode == 0, proc.stderr
