"""One vocabulary across C, C++ and Python: the binding binds every function stepkit.h declares,
names statuses with the library's stepkit_status_name(), and uses the C method names
(go_forward/go_backward; forward/back are deprecated aliases kept for one release)."""

from __future__ import annotations

import contextlib
import io
import re
import warnings

import pytest

import stepkit
from stepkit import _ffi
from stepkit.errors import error_from_json
from stepkit.presenter import Presenter

from conftest import REPO

HEADER = REPO / "include" / "stepkit.h"


def declared_functions() -> set:
    """Every function include/stepkit.h declares: `stepkit_name(` outside comments (a
    function-pointer typedef, `(*stepkit_clock_fn)(`, does not match)."""
    text = re.sub(r"/\*.*?\*/", " ", HEADER.read_text(encoding="utf-8"), flags=re.S)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return set(re.findall(r"\b(stepkit_[A-Za-z0-9_]+)\s*\(", text))


def test_the_binding_binds_every_function_of_the_header():
    declared = declared_functions()
    assert len(declared) >= 30  # the parse found the declarations
    bound = set(_ffi._PROTOTYPES)
    assert declared - bound == set(), "declared in stepkit.h but not bound by the Python binding"
    assert bound - declared == set(), "bound by the Python binding but not declared in stepkit.h"


def test_every_bound_function_has_its_types_declared():
    cdll = _ffi.lib()
    for name, (restype, argtypes) in _ffi._PROTOTYPES.items():
        fn = getattr(cdll, name)
        assert fn.argtypes == argtypes and fn.restype == restype, name


# The status codes as include/stepkit.h defines them (the spec), and their names.
HEADER_STATUSES = {0: "OK", -1: "EINVAL", -2: "EPARSE", -3: "EDEFINITION", -4: "EANSWER",
                   -5: "ESTATE", -6: "ERESTORE", -7: "EIO", -8: "EINTERNAL"}


def test_the_header_defines_the_statuses_the_test_expects():
    text = HEADER.read_text(encoding="utf-8")
    defined = {int(number): name for name, number in
               re.findall(r"#define STEPKIT_(OK|E[A-Z]+) \(?(-?\d+)\)?", text)}
    assert defined == HEADER_STATUSES


@pytest.mark.parametrize("status, name", sorted(HEADER_STATUSES.items()))
def test_status_name_names_every_status(status, name):
    assert _ffi.status_name(status) == name


@pytest.mark.parametrize("status", [1, -9, 100, -(2**31)])
def test_status_name_is_none_for_a_number_that_is_no_status(status):
    assert _ffi.status_name(status) is None


def test_every_error_class_uses_the_librarys_name():
    for status, name in HEADER_STATUSES.items():
        if status == 0:
            continue
        cls = stepkit.errors.error_class(status)
        assert cls.STATUS == status and cls.CODE == _ffi.status_name(status) == name


def test_a_failed_calls_code_is_the_status_name():
    with pytest.raises(stepkit.ParseError) as caught:
        stepkit.Task.from_json("not json")
    assert caught.value.code == _ffi.status_name(caught.value.status) == "EPARSE"


def test_an_error_without_details_is_named_by_the_library():
    assert error_from_json(-4, None).code == "EANSWER"
    assert error_from_json(-99, None).code == "EUNKNOWN"  # no status: the library names none
    assert error_from_json(-99, {"message": "m"}).code == "EUNKNOWN"


# -- stepkit_task_compile_with_options: Task.from_json(limits=...) --------------------------------

SMALL = {"identifier": "t", "steps": [{"type": "instruction", "identifier": "a", "title": "A"},
                                      {"type": "instruction", "identifier": "b", "title": "B"}]}


def test_limits_refuse_a_definition_past_them():
    with pytest.raises(stepkit.InvalidArgumentError) as caught:
        stepkit.Task.from_json(SMALL, limits={"maxDefinitionBytes": 16})
    assert caught.value.errors[0]["code"] == "tooLarge"
    with pytest.raises(stepkit.DefinitionError) as caught_steps:
        stepkit.Task.from_json(SMALL, limits={"maxSteps": 1})
    assert caught_steps.value.errors[0]["code"] == "tooManySteps"


def test_limits_within_reach_compile_the_same_task():
    with stepkit.Task.from_json(SMALL, limits={"maxSteps": 2}) as task:
        assert [s["identifier"] for s in task.info["steps"]] == ["a", "b"]


def test_bad_limits_are_refused_with_their_path():
    with pytest.raises(stepkit.InvalidArgumentError) as caught:
        stepkit.Task.from_json(SMALL, limits={"maxSteps": "many"})
    assert "limits" in caught.value.path


def test_from_file_passes_limits(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(__import__("json").dumps(SMALL), encoding="utf-8")
    with pytest.raises(stepkit.DefinitionError):
        stepkit.Task.from_file(path, limits={"maxSteps": 1})


# -- go_forward / go_backward, and the deprecated aliases ---------------------------------------


def test_go_forward_and_go_backward_navigate():
    with stepkit.Task.from_json(SMALL) as task, task.open() as session:
        assert session.go_forward()["step"]["identifier"] == "b"
        assert session.go_backward()["step"]["identifier"] == "a"


def test_forward_and_back_still_work_and_say_they_are_deprecated():
    with stepkit.Task.from_json(SMALL) as task, task.open() as session:
        with pytest.warns(DeprecationWarning, match="go_forward"):
            assert session.forward()["step"]["identifier"] == "b"
        with pytest.warns(DeprecationWarning, match="go_backward"):
            assert session.back()["step"]["identifier"] == "a"
        with pytest.warns(DeprecationWarning):
            with pytest.raises(stepkit.StateError):
                session.back()  # the alias raises what go_backward raises


def test_the_library_and_its_hosts_use_the_new_names_without_warnings():
    with stepkit.Task.from_json(SMALL) as task, task.open() as session:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            session.go_forward()
            session.go_backward()


# -- what a host shows: decided by the engine (docs/reference.md, "What a host shows") -----------

from stepkit import rendering  # noqa: E402


def _first_state(step):
    definition = {"identifier": "t", "steps": [step, {"type": "completion", "identifier": "end"}]}
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        return session.state, task.info


# The rule, from the reference: title, else question, else text (not blank, trimmed), else the
# identifier.
TITLES = [
    ({"type": "question", "identifier": "q", "title": "T", "question": "Q?", "text": "X",
      "answerFormat": {"type": "boolean"}}, "T"),
    ({"type": "question", "identifier": "q", "question": "Q?", "text": "X",
      "answerFormat": {"type": "boolean"}}, "Q?"),
    ({"type": "question", "identifier": "q", "title": "  ", "question": " Q? ",
      "answerFormat": {"type": "boolean"}}, "Q?"),
    ({"type": "instruction", "identifier": "i", "text": "Read this."}, "Read this."),
    ({"type": "instruction", "identifier": "i", "title": "", "text": "\n"}, "i"),
    ({"type": "countdown", "identifier": "c"}, "c"),
]


@pytest.mark.parametrize("step, title", TITLES, ids=[str(i) for i in range(len(TITLES))])
def test_the_state_and_the_task_info_give_the_display_title(step, title):
    state, info = _first_state(step)
    assert state["step"]["displayTitle"] == title
    assert info["steps"][0]["displayTitle"] == title
    assert rendering.step_title(state["step"]) == title


def test_the_display_title_is_the_presented_one_after_piping():
    definition = {"identifier": "t", "steps": [
        {"type": "question", "identifier": "name", "title": "Name?", "answerFormat": {"type": "text"}},
        {"type": "instruction", "identifier": "hi", "title": "Hello {{name}}"},
        {"type": "completion", "identifier": "end"}],
        "calculations": {"name": {"answer": "name"}},
        "stepModifiers": {"end": {"when": {"always": True}, "set": {"title": "Bye {{name}}"}}}}
    with stepkit.Task.from_json(definition) as task, task.open() as session:
        session.set_answer("Ada")
        assert session.go_forward()["step"]["displayTitle"] == "Hello Ada"
        assert session.go_forward()["step"]["displayTitle"] == "Bye Ada"  # a modifier's title


@pytest.mark.parametrize("kind, active", [("active", True), ("countdown", True), ("wait", True),
                                          ("instruction", False), ("completion", False)])
def test_is_active_is_the_engines(kind, active):
    state, info = _first_state({"type": kind, "identifier": "s"})
    assert state["step"]["isActive"] is active and info["steps"][0]["isActive"] is active
    assert rendering.is_active(state["step"]) is active
    assert (state["active"] is not None) is active  # the state's timer agrees


def test_the_boolean_and_dont_know_labels_are_in_the_effective_format():
    state, _ = _first_state({"type": "question", "identifier": "q", "optional": True,
                             "answerFormat": {"type": "boolean", "showDontKnowButton": True}})
    fmt = state["step"]["answerFormat"]
    assert (fmt["yesString"], fmt["noString"], fmt["customDontKnowButtonText"]) == ("Yes", "No", "I don't know")
    assert rendering.render_answer(fmt, True) == "Yes" and rendering.render_answer(fmt, False) == "No"
    assert rendering.render_answer(fmt, {"dontKnow": True}) == "I don't know"
    assert state["navigation"]["canSkip"] is True and rendering.can_skip(state)


def test_labels_the_definition_gives_are_kept_and_no_dont_know_label_without_the_button():
    state, _ = _first_state({"type": "question", "identifier": "q", "answerFormat": {
        "type": "boolean", "yesString": "Oui", "noString": "Non"}})
    fmt = state["step"]["answerFormat"]
    assert (fmt["yesString"], fmt["noString"]) == ("Oui", "Non")
    assert "customDontKnowButtonText" not in fmt
    assert rendering.boolean_labels(fmt) == ("Oui", "Non")
    assert state["navigation"]["canSkip"] is False and not rendering.can_skip(state)
    state, _ = _first_state({"type": "question", "identifier": "q", "answerFormat": {
        "type": "numeric", "style": "integer", "showDontKnowButton": True, "customDontKnowButtonText": "Pass"}})
    assert rendering.render_answer(state["step"]["answerFormat"], {"dontKnow": True}) == "Pass"


def test_the_vocabulary_reads_the_engine_and_decides_nothing():
    # A step whose words disagree with the engine's: the engine's win.
    step = {"identifier": "s", "type": "countdown", "title": "Mine", "displayTitle": "Engine's", "isActive": False}
    assert rendering.step_title(step) == "Engine's" and rendering.is_active(step) is False
    assert rendering.can_skip({"navigation": {"canSkip": False}, "step": {"optional": True}}) is False


HOSTS = [REPO / "bindings" / "python" / "src" / "stepkit", REPO / "web" / "src" / "stepkit_web"]


def test_no_host_keeps_its_own_presenter_decisions():
    """The words and lists the engine now decides appear in no host's source."""
    forbidden = [
        (r"""["']active["'],\s*["']countdown["'],\s*["']wait["']""", "the list of active step types"),
        (r"""or\s+["']I don't know["']""", 'the "don\'t know" label'),
        (r"""or\s+["'](Yes|No)["']""", "the boolean labels"),
        (r"""get\(["']title["']\)\s+or\s+\w+\.get\(["'](question|text|identifier)["']\)""", "a step title rule"),
        (r"""get\(["']question["']\)\s+or\s+\w+\.get\(["'](title|text)["']\)""", "a step title rule"),
        (r"""get\(["']optional["']\)\)?\s*(and|&&)""", "a skip rule"),
    ]
    found = []
    for folder in HOSTS:
        for path in folder.rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            found += [f"{path.name}: {what}" for pattern, what in forbidden if re.search(pattern, text)]
    run_task = (REPO / "bindings" / "c" / "examples" / "run_task.c").read_text(encoding="utf-8")
    if 'json_object_get(step, "optional")' in run_task:
        found.append("run_task.c: a skip rule")
    assert found == []


# -- stepkit_session_control, and active(op), its deprecated name --------------------------------

WALK = {"identifier": "w", "steps": [{"type": "active", "identifier": "walk", "stepDuration": 30}]}


def test_control_drives_the_active_step():
    with stepkit.Task.from_json(WALK) as task, task.open() as session:
        assert session.control("start")["active"]["status"] == "running"
        assert session.suspend()["active"]["status"] == "suspended"  # the named ops use control
        with pytest.raises(stepkit.InvalidArgumentError):
            session.control("bogus")


def test_active_still_works_and_says_it_is_deprecated():
    with stepkit.Task.from_json(WALK) as task, task.open() as session:
        with pytest.warns(DeprecationWarning, match="control"):
            assert session.active("start")["active"]["status"] == "running"
        with pytest.warns(DeprecationWarning):
            with pytest.raises(stepkit.StateError):
                session.active("start")  # running already: what control raises


def test_the_old_c_name_is_the_same_function():
    with stepkit.Task.from_json(WALK) as task, task.open() as session:
        state = session._call("stepkit_session_active", b"start")
        assert state["active"]["status"] == "running"


class _GoesForwardToTheEnd:
    """A stand-in session for the terminal presenter: going forward finishes the task."""

    def go_forward(self) -> dict:
        return {"status": "finished"}


@pytest.mark.parametrize("optional, can_skip_now", [(True, False), (False, True), (True, True)])
def test_the_terminal_says_enter_leaves_a_question_unanswered_when_the_state_says_it_may(optional, can_skip_now):
    """The hint reads the state's navigation.canSkip, not the step's optional: a state (made up
    here) where the two disagree shows which one the presenter follows."""
    out = io.StringIO()
    presenter = Presenter(_GoesForwardToTheEnd(), out=out, read=lambda prompt: "")
    state = {"status": "inProgress",
             "step": {"identifier": "q", "type": "question", "optional": optional, "displayTitle": "q",
                      "answerFormat": {"type": "boolean"}},
             "navigation": {"canSkip": can_skip_now, "hasNextStep": True}}
    with contextlib.ExitStack() as stack:
        assert presenter._present(state, stack) == {"status": "finished"}
    assert ("Optional: Enter leaves it unanswered" in out.getvalue()) is can_skip_now
