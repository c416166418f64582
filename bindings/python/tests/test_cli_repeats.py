"""Issue 31's "walk with several instances from the CLI" on the published FHIR forms with
repeating groups (the Android FHIR SDK catalog's repeated group, LHC-Forms' min/max-occurs
form; read from STEPKIT_FHIR_FORMS, default ``<repo>/../shared/fhir/q``, and skipped with a
message when absent): typed on the terminal presenter with three repetitions (one removed in
the first), the QuestionnaireResponse it writes (``--format fhir``) checked against R4's nesting
rules and validated with ``fhir.resources`` (test_fhir_repetitions.py says the rules), each
repetition holding what was typed into it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import load_json, run_cli
from test_fhir_repetitions import FORMS, check_r4_shape, validate


def form(name: str) -> Path:
    path = FORMS / name
    if not path.exists():
        pytest.skip(f"the published FHIR forms are not here: {FORMS} is absent (set STEPKIT_FHIR_FORMS)")
    return path


def children(item: Dict[str, Any], link: str) -> List[Dict[str, Any]]:
    return [c for c in item.get("item", []) if c["linkId"] == link]


def walk(tmp_path: Path, path: Path, typed: List[str]) -> Dict[str, Any]:
    output = tmp_path / "response.json"
    proc = run_cli("run", str(path), "-i", "--format", "fhir", "-o", str(output), input="\n".join(typed) + "\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    response = load_json(output)
    validate(response)
    check_r4_shape(response, json.loads(path.read_text(encoding="utf-8")))
    assert response["status"] == "completed"
    return response


def test_the_android_repeated_group_on_the_terminal(tmp_path: Path) -> None:
    path = form("afhir_repeated_group.json")
    response = walk(tmp_path, path, [
        "a", "2024-01-01", "1",   # add the first repetition: its date, A
        "a", "2024-01-02", "3",   # a second: C
        "a", "2024-01-03", "2",   # a third: B
        "r 2",                    # remove the second
        "",                       # done
    ])
    reps = [i for i in response["item"] if i["linkId"] == "1"]
    assert [[a["valueDate"] for c in children(r, "1-1") for a in c["answer"]] for r in reps] == [["2024-01-01"], ["2024-01-03"]]
    assert [[a["valueCoding"]["code"] for c in children(r, "1-2") for a in c["answer"]] for r in reps] == [["answer-a"], ["answer-b"]]


def test_lhc_min_max_occurs_on_the_terminal(tmp_path: Path) -> None:
    path = form("lhc_min_max_occurs.json")
    response = walk(tmp_path, path, [
        "1,2", "first", "4,5",    # repetition 1 (minOccurs 2: two to start): Apple Orange; Pear Peach
        "3,4", "", "1,3",         # repetition 2: Banana Pear; no note; Apple Banana
        "a",                      # a third (maxOccurs 3)
        "5,1", "third", "2,4",
        "",                       # done
    ])
    reps = [i for i in response["item"] if i["linkId"] == "1"]
    assert len(reps) == 3

    def picked(rep: Dict[str, Any], link: str) -> List[str]:
        return sorted(a.get("valueString") or a["valueCoding"].get("code") or a["valueCoding"]["display"]
                      for c in children(rep, link) for a in c["answer"])

    assert [picked(r, "1.1") for r in reps] == [["Apple", "Orange"], ["Banana", "Pear"], ["Apple", "Peach"]]
    assert [picked(r, "1.3") for r in reps] == [["Peach", "Pear"], ["Apple", "Banana"], ["Orange", "Pear"]]
    assert [[a["valueString"] for c in children(r, "1.2") for a in c["answer"]] for r in reps] == [["first"], [], ["third"]]
