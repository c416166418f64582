"""Verifying a submission (Task.verify, python -m stepkit verify; docs/verify.md).

Every example task is walked with its answers file by the CLI, as a participant's client would;
the result verifies clean and the engine's recomputed result has the same answers. Then a
generator edits each result in every way issue 33 lists, each edit made where the task makes it
meaningful, and the report must name the edit's code at the edit's place: the expectations come
from the edit, not from what the engine said about it.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

import stepkit
from conftest import EXAMPLE_TASKS, LOOP, REPO, load_json, run_cli, write_json

FHIR_EXAMPLES = REPO / "examples" / "fhir"

#: A form item its visibleWhen hides and a calculation: what the examples may not exercise.
SCORED: Dict[str, Any] = {
    "identifier": "scored",
    "steps": [
        {"type": "form", "identifier": "f", "formItems": [
            {"identifier": "a", "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 10}},
            {"identifier": "why", "optional": True, "answerFormat": {"type": "text"},
             "visibleWhen": {"result": {"step": "f", "item": "a"}, "minimum": 5}},
        ]},
        {"type": "question", "identifier": "more", "optional": True, "answerFormat": {"type": "boolean"}},
        {"type": "completion", "identifier": "done"},
    ],
    "calculations": {"double": {"*": [{"answer": {"step": "f", "item": "a"}}, 2]}},
}
SCORED_ANSWERS = {"f": {"a": 2}, "more": True}


def walked(task_path: Path, answers_path: Path, tmp_path: Path, fmt: str = "stepkit") -> Dict[str, Any]:
    """The result the CLI's walk with an answers file writes (a client's submission)."""
    out = tmp_path / f"{task_path.stem}.{fmt}.result.json"
    # --output-dir: a signature (the onboarding example) is written to a file there.
    proc = run_cli("run", str(task_path), "--answers", str(answers_path), "--quiet", "--format", fmt, "-o", str(out),
                   "--output-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    return load_json(out)


def cases() -> List[Tuple[str, Optional[Dict[str, Any]]]]:
    return [(p.stem, None) for p in EXAMPLE_TASKS] + [("scored", SCORED)]


def case_files(name: str, definition: Optional[Dict[str, Any]], tmp_path: Path) -> Tuple[Path, Path]:
    if definition is None:
        task_path = REPO / "examples" / "tasks" / f"{name}.json"
        return task_path, task_path.with_name(f"{name}.answers.json")
    return write_json(tmp_path / f"{name}.json", definition), write_json(tmp_path / f"{name}.answers.json", SCORED_ANSWERS)


def answers_of(result: Dict[str, Any]) -> List[Tuple[str, Dict[str, Any]]]:
    """The path's step results as (step, {question: answer}), sections walked."""
    out: List[Tuple[str, Dict[str, Any]]] = []
    for entry, _ in step_entries(result):
        out.append((entry["identifier"], {q["identifier"]: q.get("answer") for q in entry.get("results", [])
                                          if "type" in q and q["type"] != "file"}))
    return out


def step_entries(result: Dict[str, Any], steps: Optional[set] = None) -> List[Tuple[Dict[str, Any], str]]:
    """Every step result of a result and its path, in order (section results walked: an entry
    whose results hold results with results of their own)."""
    found: List[Tuple[Dict[str, Any], str]] = []

    def walk(entries: List[Any], path: str) -> None:
        for i, entry in enumerate(entries):
            here = f"{path}[{i}]"
            inner = entry.get("results", []) if isinstance(entry, dict) else []
            is_section = steps is not None and entry.get("identifier") not in steps
            if is_section or (steps is None and inner and all(isinstance(r, dict) and "results" in r for r in inner)):
                walk(inner, here + ".results")
            else:
                found.append((entry, here))

    walk(result.get("results", []), "results")
    return found


# ------------------------------------------------------------------------------------------------
# Clean submissions


@pytest.mark.parametrize("name,definition", cases(), ids=[c[0] for c in cases()])
def test_a_walked_result_verifies_clean_and_is_recomputed_the_same(name: str, definition: Any, tmp_path: Path) -> None:
    task_path, answers_path = case_files(name, definition, tmp_path)
    result = walked(task_path, answers_path, tmp_path)
    with stepkit.Task.from_file(task_path) as task:
        report = task.verify(result)
    assert report["verified"] is True, report["divergences"]
    assert report["divergences"] == []
    own = report["result"]
    assert answers_of(own) == answers_of(result)
    assert own.get("calculations") == result.get("calculations")
    assert own["taskRunUUID"] == result["taskRunUUID"]
    assert own["startDate"] == result["startDate"]
    # The CLI agrees, with a linter's exit status, and writes the recomputed result.
    submitted = write_json(tmp_path / "submitted.json", result)
    recomputed = tmp_path / "recomputed.json"
    proc = run_cli("verify", str(task_path), str(submitted), "-o", str(recomputed))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "verified"
    assert answers_of(load_json(recomputed)) == answers_of(result)


def test_a_loop_verifies_clean_and_a_visit_too_many_does_not() -> None:
    with stepkit.Task.from_json(LOOP) as task, task.open() as session:
        for answer in (True, True, False):
            session.set_answer(answer)
            session.go_forward()
        result = session.result
        assert [e["identifier"] for e in result["results"]] == ["again", "again", "again", "done"]
        assert task.verify(result)["verified"] is True
        extra = copy.deepcopy(result)
        extra["results"].insert(3, copy.deepcopy(extra["results"][2]))  # a fourth "no": navigation ends the loop
        report = task.verify(extra, ignore=["dates"])
        assert [(d["code"], d["path"]) for d in report["divergences"]] == [("repeatedStep", "results[3]")]


# ------------------------------------------------------------------------------------------------
# The mutation generator

Mutation = Tuple[str, Dict[str, Any], str, str, bool]  # class, submission, code, path, only that one


def definition_formats(definition: Dict[str, Any]) -> Dict[str, Tuple[Dict[str, Any], bool]]:
    """Question identifier (a question step's, a form item's) → (its answer format, required)."""
    found: Dict[str, Tuple[Dict[str, Any], bool]] = {}

    def walk(steps: List[Dict[str, Any]]) -> None:
        for step in steps:
            if step.get("type") == "section":
                walk(step.get("steps", []))
            elif step.get("type") == "question":
                found[step["identifier"]] = (step.get("answerFormat", {}), not step.get("optional", False))
            elif step.get("type") == "form":
                for item in step.get("formItems", []):
                    if "identifier" in item:
                        found[item["identifier"]] = (item.get("answerFormat", {}),
                                                     not item.get("optional", False) and not step.get("optional", False))

    walk(definition.get("steps", []))
    return found


def all_steps(definition: Dict[str, Any]) -> List[Dict[str, Any]]:
    out: List[Dict[str, Any]] = []

    def walk(steps: List[Dict[str, Any]]) -> None:
        for step in steps:
            if step.get("type") == "section":
                walk(step.get("steps", []))
            else:
                out.append(step)

    walk(definition.get("steps", []))
    return out


def wrong_type(answer: Any) -> Any:
    """A value of another JSON type than `answer`'s that no format of its kind takes."""
    return True if isinstance(answer, (dict, list)) else {"wrong": 1}


def sample(fmt: Dict[str, Any]) -> Any:
    """A value the format takes, for an answer the generator adds (None: no simple one)."""
    kind = fmt.get("type")
    if kind == "text":
        return "added"
    if kind == "boolean":
        return True
    if kind in ("numeric", "scale"):
        return fmt.get("minimum", 0)
    if kind == "textChoice":
        return [fmt["textChoices"][0]["value"]]
    return None


def mutations(definition: Dict[str, Any], result: Dict[str, Any]) -> Iterator[Mutation]:
    steps = {s["identifier"] for s in all_steps(definition)}
    formats = definition_formats(definition)
    entries = step_entries(result, steps)
    top = result["results"]

    def edit(change: Callable[[Dict[str, Any]], None]) -> Dict[str, Any]:
        copied = copy.deepcopy(result)
        change(copied)
        return copied

    def at(submission: Dict[str, Any], path: str) -> Any:
        """The object at a path written as the report writes it (results[2].results[0])."""
        node: Any = submission
        for part in path.replace("]", "").replace("[", ".").split("."):
            node = node[int(part)] if part.isdigit() else node[part]
        return node

    yield "otherTask", edit(lambda r: r.update(identifier=r["identifier"] + "-other")), "otherTask", "identifier", True
    yield "otherVersion", edit(lambda r: r.update(taskFingerprint="0" * 64)), "otherVersion", "taskFingerprint", True
    yield "unknownField", edit(lambda r: r.update(submittedBy="client 7")), "unknownField", "submittedBy", True
    yield ("unknownIdentifier", edit(lambda r: r["results"].append({"identifier": "noSuchStep", "startDate": r["endDate"],
                                                                    "endDate": r["endDate"], "results": []})),
           "unknownIdentifier", f"results[{len(top)}].identifier", True)
    yield "datesOutOfOrder", edit(lambda r: r.update(endDate="2000-01-01T00:00:00.000Z")), "datesOutOfOrder", "endDate", True
    calculations = result.get("calculations") or {}
    if calculations:
        name = next(iter(calculations))
        lie = 12345 if not isinstance(calculations[name], (int, float)) else calculations[name] + 1000
        yield ("calculationMismatch", edit(lambda r: r["calculations"].update({name: lie})), "calculationMismatch",
               f"calculations.{name}", True)
    # Path edits (dates ignored: a moved step's dates are out of order too, which is not the point).
    plain = [i for i, e in enumerate(top) if e["identifier"] in steps]
    if plain:
        i = plain[0]
        yield "repeatedStep", edit(lambda r: r["results"].insert(i + 1, copy.deepcopy(r["results"][i]))), "repeatedStep", f"results[{i + 1}]", True
    pairs = [i for i in plain if i + 1 in plain and top[i]["identifier"] != top[i + 1]["identifier"]]
    if pairs:
        i = pairs[0]

        def swap(r: Dict[str, Any]) -> None:
            r["results"][i], r["results"][i + 1] = r["results"][i + 1], r["results"][i]
        yield "reorderedStep", edit(swap), "reorderedStep", f"results[{i}]", True
    if plain:
        i = plain[0]
        dropped = edit(lambda r: r["results"].pop(i))
        after = [p for _, p in step_entries(dropped, steps) if p.startswith(f"results[{i}]")]
        yield "missingStep", dropped, "missingStep", after[0] if after else "results", False
    on_path = {e["identifier"] for e, _ in entries}
    off_path = [s for s in all_steps(definition) if s["identifier"] not in on_path]
    if off_path:
        extra = {"identifier": off_path[0]["identifier"], "startDate": result["startDate"], "endDate": result["startDate"], "results": []}
        yield "unexpectedStep", edit(lambda r: r["results"].insert(1, extra)), "unexpectedStep", "results[1]", True
    # Answer edits.
    answered = [(e, p, j, q) for e, p in entries for j, q in enumerate(e.get("results", []))
                if q.get("identifier") in formats and q.get("answer") is not None]
    if answered:
        _, p, j, q = answered[0]
        path = f"{p}.results[{j}].answer"
        yield "wrongType", edit(lambda r: at(r, f"{p}.results[{j}]").update(answer=wrong_type(q["answer"]))), "wrongType", path, False
    for _, p, j, q in answered:
        fmt = formats[q["identifier"]][0]
        if fmt.get("type") in ("numeric", "scale") and "maximum" in fmt:
            too_big = fmt["maximum"] + 1000
            yield ("answerRefused", edit(lambda r: at(r, f"{p}.results[{j}]").update(answer=too_big)), "answerRefused",
                   f"{p}.results[{j}].answer", False)
            break
    for _, p, j, q in answered:
        if formats[q["identifier"]][1]:
            yield ("requiredAnswerMissing", edit(lambda r: at(r, f"{p}.results[{j}]").update(answer=None)),
                   "requiredAnswerMissing", f"{p}.results[{j}].answer", False)
            break
    # An answer on a form item its rules hid in this run (absent from the step result).
    for step in all_steps(definition):
        if step.get("type") != "form":
            continue
        for e, p in entries:
            if e["identifier"] != step["identifier"]:
                continue
            listed = {q["identifier"] for q in e["results"]}
            for item in step["formItems"]:
                value = sample(item.get("answerFormat", {})) if "visibleWhen" in item else None
                if "identifier" in item and item["identifier"] not in listed and value is not None:
                    n = len(e["results"])
                    added = {"identifier": item["identifier"], "type": "", "answer": value,
                             "startDate": e["startDate"], "endDate": e["endDate"]}
                    added.pop("type")
                    yield ("disabledItem", edit(lambda r: at(r, p)["results"].append(added)), "disabledItem",
                           f"{p}.results[{n}].answer", False)
                    return


#: Every class of issue 33's list; the generator must produce each from some example.
CLASSES = {"otherTask", "otherVersion", "unknownField", "unknownIdentifier", "datesOutOfOrder", "calculationMismatch",
           "repeatedStep", "reorderedStep", "missingStep", "unexpectedStep", "wrongType", "answerRefused",
           "requiredAnswerMissing", "disabledItem"}


def test_every_mutation_of_every_example_is_refused_with_its_code(tmp_path: Path) -> None:
    generated = set()
    failures: List[str] = []
    for name, definition in cases():
        task_path, answers_path = case_files(name, definition, tmp_path)
        result = walked(task_path, answers_path, tmp_path)
        source = load_json(task_path)
        with stepkit.Task.from_file(task_path) as task:
            for cls, submission, code, path, only in mutations(source, result):
                generated.add(cls)
                ignore = ["dates"] if cls in ("repeatedStep", "reorderedStep", "missingStep", "unexpectedStep") else []
                report = task.verify(submission, ignore=ignore)
                found = [(d["code"], d["path"]) for d in report["divergences"]]
                expected = [(code, path)]
                if report["verified"] or (found != expected if only else found[:1] != expected):
                    failures.append(f"{name} {cls}: expected {expected}{'' if only else ' first'}, found {found}")
    assert not failures, "\n".join(failures)
    assert generated == CLASSES


def test_the_cli_exits_one_on_divergences_and_prints_each(tmp_path: Path) -> None:
    task_path, answers_path = case_files("scored", SCORED, tmp_path)
    result = walked(task_path, answers_path, tmp_path)
    result["calculations"]["double"] = 99
    result["extra"] = True
    submitted = write_json(tmp_path / "lying.json", result)
    proc = run_cli("verify", str(task_path), str(submitted))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[-1] == "2 divergences"
    assert any(line.startswith("calculations.double: calculationMismatch:") for line in lines)
    assert any(line.startswith("extra: unknownField:") for line in lines)
    proc = run_cli("verify", str(task_path), str(submitted), "--unknown-fields", "ignore", "--ignore", "calculations", "--json")
    assert proc.returncode == 0, proc.stdout
    assert json.loads(proc.stdout)["result"]["calculations"] == {"double": 4}


# ------------------------------------------------------------------------------------------------
# Bad input


def test_bad_submissions_are_errors_not_reports(tmp_path: Path) -> None:
    with stepkit.Task.from_json(SCORED) as task:
        with pytest.raises(stepkit.ParseError):
            task.verify("{not json")
        with pytest.raises(stepkit.InvalidArgumentError) as huge:
            task.verify('{"identifier": "scored", "results": [' + ",".join(["{}"] * (12 << 20)) + "]}")
        assert huge.value.errors[0]["code"] == "tooLarge"
        with pytest.raises(stepkit.InvalidArgumentError) as deep:
            task.verify('{"identifier": "scored", "results": ' + "[" * 300 + "]" * 300 + "}")
        assert deep.value.errors[0]["code"] == "tooDeep"
        with pytest.raises(stepkit.InvalidArgumentError) as shape:
            task.verify("[1, 2]")
        assert shape.value.errors[0]["code"] == "notASubmission"
        with pytest.raises(stepkit.InvalidArgumentError) as fhir:
            task.verify({"resourceType": "QuestionnaireResponse", "status": "completed"})
        assert fhir.value.errors[0]["code"] == "notFHIR"
        with pytest.raises(stepkit.InvalidArgumentError):
            task.verify({"identifier": "scored"}, ignore=["everything"])
    task_path = write_json(tmp_path / "scored.json", SCORED)
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json", encoding="utf-8")
    assert run_cli("verify", str(task_path), str(garbage)).returncode == 2
    assert run_cli("verify", str(task_path), str(tmp_path / "absent.json")).returncode == 2
    assert run_cli("verify", str(task_path)).returncode == 2


def test_wrong_shapes_inside_a_result_are_divergences() -> None:
    with stepkit.Task.from_json(SCORED) as task:
        report = task.verify({"identifier": "scored", "results": [
            "not a step",
            {"identifier": "f", "results": [{"identifier": "a", "type": "numeric", "answer": 3},
                                            {"identifier": "a", "type": "numeric", "answer": 4},
                                            {"identifier": "nope", "answer": 1}]},
            {"identifier": "more", "results": [{"identifier": "more", "type": "text", "answer": True}]},
            {"identifier": "done", "results": []}], "calculations": {"double": 6}, "startDate": "yesterday"})
        found = [(d["code"], d["path"]) for d in report["divergences"]]
        assert ("wrongType", "results[0]") in found
        assert ("duplicateItem", "results[1].results[1]") in found
        assert ("unknownIdentifier", "results[1].results[2].identifier") in found
        assert ("wrongType", "results[2].results[0].type") in found
        assert ("invalidDate", "startDate") in found
        assert report["result"]["calculations"] == {"double": 6}


# ------------------------------------------------------------------------------------------------
# FHIR: QuestionnaireResponses verify the same way


def fhir_cases() -> List[Path]:
    return sorted(p for p in FHIR_EXAMPLES.glob("*.json") if not p.name.endswith(".answers.json")
                  and p.with_name(p.stem + ".answers.json").exists())


@pytest.mark.parametrize("path", fhir_cases(), ids=lambda p: p.stem)
def test_a_walked_questionnaire_response_verifies_clean_and_mutations_do_not(path: Path, tmp_path: Path) -> None:
    response = walked(path, path.with_name(path.stem + ".answers.json"), tmp_path, fmt="fhir")
    with stepkit.Task.from_fhir(path.read_bytes()) as task:
        report = task.verify(response)
        assert report["verified"] is True, report["divergences"]
        assert report["questionnaireResponse"]["item"] == response["item"]
        # Another Questionnaire.
        other = dict(response, questionnaire="http://example.org/Questionnaire/other")
        assert [d["code"] for d in task.verify(other)["divergences"]] == ["otherTask"]
        # An answer under a linkId the Questionnaire does not have.
        unknown = copy.deepcopy(response)
        unknown["item"].append({"linkId": "no-such-item", "answer": [{"valueString": "x"}]})
        assert [(d["code"], d["path"]) for d in task.verify(unknown)["divergences"]] == \
            [("unknownIdentifier", f"item[{len(response['item'])}].linkId")]
        # A value of the wrong type: valueBoolean where a number was answered.
        wrong = copy.deepcopy(response)
        place = first_answer(wrong["item"], "item")
        assert place is not None
        holder, where = place
        holder["answer"] = [{"valueAttachment": {"url": "http://example.org/x"}}]
        codes = [(d["code"], d["path"]) for d in task.verify(wrong)["divergences"]]
        assert codes[:1] == [("wrongType", where)]


def first_answer(items: List[Dict[str, Any]], path: str) -> Optional[Tuple[Dict[str, Any], str]]:
    for i, item in enumerate(items):
        here = f"{path}[{i}]"
        if "answer" in item:
            return item, here + ".answer"
        found = first_answer(item.get("item", []), here + ".item")
        if found:
            return found
    return None


# ------------------------------------------------------------------------------------------------
# The published FHIR forms beside the repository (STEPKIT_FHIR_FORMS, else ../shared/fhir/q):
# each walked with an answer each question's format takes, its QuestionnaireResponse verified,
# then edited.

import os  # noqa: E402

FORMS = Path(os.environ.get("STEPKIT_FHIR_FORMS") or (REPO.parent / "shared" / "fhir" / "q"))


def published_forms() -> List[str]:
    return sorted(p.name for p in FORMS.glob("*.json")) if FORMS.is_dir() else ["(absent)"]


def sample_answer(fmt: Dict[str, Any]) -> Any:
    """An answer the (effective) format takes: its first choice (a multiple choice's first two,
    as a repeating choice's minOccurs may ask), its minimum, a short text..."""
    choices = fmt.get("textChoices") or fmt.get("choices")
    if choices:
        many = fmt.get("style") == "multipleChoice" and len(choices) > 1
        return [c["value"] for c in choices[:2 if many else 1]]
    kind = fmt.get("type")
    simple = {"boolean": True, "text": "x", "email": "a@example.org", "date": "2026-01-02",
              "dateTime": "2026-01-02T10:30Z", "timeOfDay": "10:30"}
    if kind in ("numeric", "scale", "continuousScale"):
        return fmt.get("minimum", 1)
    return simple.get(kind)


def walk_to_response(task: stepkit.Task) -> Optional[Dict[str, Any]]:
    with task.open() as session:
        state = session.state
        for _ in range(300):
            if state.get("status") != "inProgress":
                break
            step = state["step"]
            items = step.get("formItems")
            answers = ([(i["identifier"], sample_answer(i["answerFormat"])) for i in items if "answerFormat" in i]
                       if items is not None else [(None, sample_answer(step.get("answerFormat") or {}))])
            for entry in items or []:
                if "repeat" in entry and "items" in entry:
                    # A repeating group: one instance more than it starts with (where it may have
                    # one), each answered as a form is.
                    name = entry["identifier"]
                    if state["instances"][name]["canAdd"]:
                        state = session.add_instance(name)
                    instance = {i["identifier"]: sample_answer(i["answerFormat"]) for i in entry["items"]}
                    answers.append((name, [{k: v for k, v in instance.items() if v is not None}] * state["instances"][name]["count"]))
            for item, value in answers:
                if value is None:
                    continue
                try:
                    session.set_answer({item: value} if item else value)
                except stepkit.StepKitError:
                    pass  # not every first choice or minimum is allowed: left unanswered
            try:
                state = session.go_forward()
            except stepkit.StepKitError:
                state = session.skip()
        if state.get("finishReason") != "completed":
            return None
        return session.result_as("fhir")


def calculated_link_ids(items: List[Dict[str, Any]]) -> List[str]:
    found: List[str] = []
    for item in items:
        exts = item.get("extension", [])
        if any(e.get("url", "").endswith("calculatedExpression") for e in exts):
            found.append(item["linkId"])
        found += calculated_link_ids(item.get("item", []))
    return found


def find_item(items: List[Dict[str, Any]], link_id: str, path: str) -> Optional[Tuple[Dict[str, Any], str]]:
    for i, item in enumerate(items):
        here = f"{path}[{i}]"
        if item.get("linkId") == link_id:
            return item, here
        for j, answer in enumerate(item.get("answer", [])):
            found = find_item(answer.get("item", []), link_id, f"{here}.answer[{j}].item")
            if found:
                return found
        found = find_item(item.get("item", []), link_id, here + ".item")
        if found:
            return found
    return None


@pytest.mark.parametrize("name", published_forms())
def test_a_published_forms_response_verifies_and_its_edits_do_not(name: str) -> None:
    if not FORMS.is_dir():
        pytest.skip(f"the published FHIR forms are not here: {FORMS} is absent (set STEPKIT_FHIR_FORMS)")
    questionnaire = json.loads((FORMS / name).read_text(encoding="utf-8"))
    with stepkit.Task.from_fhir(questionnaire) as task:
        response = walk_to_response(task)
        assert response is not None, f"{name}: the walk did not complete"
        report = task.verify(response)
        assert report["verified"] is True, report["divergences"]
        assert report["questionnaireResponse"].get("item") == response.get("item")
        unknown = copy.deepcopy(response)
        unknown.setdefault("item", []).append({"linkId": "no-such-item", "answer": [{"valueString": "x"}]})
        assert [(d["code"], d["path"]) for d in task.verify(unknown)["divergences"]] == \
            [("unknownIdentifier", f"item[{len(unknown['item']) - 1}].linkId")]
        if "questionnaire" in response:
            other = dict(response, questionnaire="http://example.org/Questionnaire/other")
            assert [d["code"] for d in task.verify(other)["divergences"]] == ["otherTask"]
        answered = first_answer(response.get("item", []), "item")
        if answered is not None:
            wrong = copy.deepcopy(response)
            holder, where = first_answer(wrong["item"], "item")  # type: ignore[misc]
            holder["answer"] = [{"valueAttachment": {"url": "http://example.org/x"}}]
            found = [(d["code"], d["path"]) for d in task.verify(wrong)["divergences"]]
            assert found[:1] == [("wrongType", where)] or found[:1] == [("calculationMismatch", where)]
        for link_id in calculated_link_ids(questionnaire.get("item", [])):
            located = find_item(response.get("item", []), link_id, "item")
            if located is None or "answer" not in located[0]:
                continue
            lying = copy.deepcopy(response)
            item, where = find_item(lying["item"], link_id, "item")  # type: ignore[misc]
            item["answer"] = [{"valueDecimal": 987654.5}]
            found = [(d["code"], d["path"]) for d in task.verify(lying)["divergences"]]
            assert ("calculationMismatch", where + ".answer") in found, found
