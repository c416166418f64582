"""The interactive terminal presenter (``python -m stepkit run TASK.json`` on a terminal): shows
each step, reads answers, lets the engine validate them, and navigates. Active steps are
presented by an :class:`~stepkit.active_presenter.ActiveRunner`."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import sys
from typing import Any, Callable, Dict, List, Optional, TextIO, Tuple

from ._core import Session
from .active_presenter import ActiveRunner
from .clock import ManualClock
from .game_presenter import GamePresenter, Timeline, is_game
from .rendering import is_active
from .answer_input import InputError, describe_format, parse_input
from .commands import HELP, NAVIGATION, command_name, navigate
from .errors import AnswerError, ParseError, StateError, StepKitError
from .rendering import can_skip, problems_text, render_answer, review_instances, review_lines, time_left

__all__ = ["Presenter"]

State = Dict[str, Any]



def section_block(state: State) -> Optional[Tuple[str, Dict[str, Any]]]:
    """The repeating section the current step is in (its name and the state's entry), or None:
    a section's entry in ``instances`` lists its ``steps``."""
    for name, info in (state.get("instances") or {}).items():
        if isinstance(info, dict) and isinstance(info.get("steps"), list):
            return name, info
    return None


class _Command(Exception):
    """A navigation command typed instead of an answer (:back, :skip, :quit)."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class Presenter:
    """Presents a session on a terminal. ``read(prompt)`` returns a line or None at end of
    input. ``runner``: the :class:`ActiveRunner` attached to the session for its active steps
    (without one, an interactive runner is attached when the first active step comes).
    ``clock``: the session's clock when it is a :class:`~stepkit.ManualClock` (tests, replays),
    which games then move instead of sleeping (:mod:`stepkit.game_presenter`)."""

    def __init__(
        self,
        session: Session,
        out: TextIO = sys.stdout,
        read: Optional[Callable[[str], Optional[str]]] = None,
        *,
        runner: Optional[ActiveRunner] = None,
        clock: Optional[ManualClock] = None,
    ) -> None:
        # The repeating section of the step being presented (`_present`), or None.
        self._section: Optional[Tuple[str, Dict[str, Any]]] = None
        # An edit from a review into one instance of a step's repeating block: (block, k);
        # that instance alone is asked (`_repeating`), then the block's menu.
        self._editing: Optional[Tuple[str, int]] = None
        self.session = session
        self.out = out
        self.read = read or self._read_stdin
        self.runner = runner
        self.clock = clock

    @staticmethod
    def _read_stdin(prompt: str) -> Optional[str]:
        try:
            return input(prompt)
        except EOFError:
            return None

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def error(self, text: str) -> None:
        self.say(f"  ! {text}")

    def run(self) -> State:
        """Runs until the task finishes; returns the final state."""
        self.say("Type :help for help.")
        with contextlib.ExitStack() as stack:
            state = self.session.state
            while state.get("status") == "inProgress":
                try:
                    # Time limits run out on the session's clock; what ran out while the
                    # participant was typing is processed before the next step is shown.
                    if state.get("timeLimits"):
                        state = self.session.tick()
                        if state.get("status") != "inProgress":
                            break
                    state = self._present(state, stack)
                except _Command as command:
                    moved = navigate(self.session, command.name, self.say)
                    state = moved if moved is not None else self.session.state
            return state

    # -- reading ----------------------------------------------------------------------------------

    def _line(self, prompt: str) -> Tuple[str, str]:
        """Reads a line; raises _Command for :back/:skip/:quit. Returns (raw, stripped)."""
        while True:
            line = self.read(prompt)
            if line is None:
                self.say()
                raise _Command(":quit")
            stripped = line.strip()
            name = command_name(stripped) if stripped.startswith(":") else None
            if name == ":help":
                self.say(HELP)
                continue
            if name in NAVIGATION:
                raise _Command(str(name))
            if stripped.startswith(":") and re.fullmatch(r":[A-Za-z]+", stripped):
                self.error(f"Unknown command {stripped}. Type :help for help.")
                continue
            return line, stripped

    def _ask(
        self, fmt: Dict[str, Any], current: Any, optional: bool, prompt: str, describe: bool = True
    ) -> Tuple[bool, Any]:
        """Reads one answer. Returns (False, None) for Enter (keep/leave), else
        (True, ("value", answer)) or, for raw JSON (``=...``), (True, ("json", text))."""
        if describe:
            for line in describe_format(fmt):
                self.say(line)
        if current is not None:
            self.say(f"  Current answer: {render_answer(fmt, current)} (Enter keeps it)")
        elif optional and describe:
            self.say("  Optional: Enter leaves it unanswered")
        while True:
            raw, stripped = self._line(prompt)
            if stripped == "":
                return False, None
            if stripped.startswith("="):
                return True, ("json", stripped[1:])
            try:
                return True, ("value", parse_input(fmt, raw, self.read))
            except InputError as exc:
                self.error(str(exc))

    # -- calls --------------------------------------------------------------------------------------

    def _forward(self) -> Optional[State]:
        """Goes forward: the new state, or None after showing why the step cannot be left. On
        the last step of a repeating section's last instance, first "add another / remove /
        done" (the engine says what may be done: ``canAdd``, ``canRemove``)."""
        try:
            block = self._section
            if block is not None:
                moved = self._section_menu(*block)
                if moved is not None:
                    return moved
            return self.session.go_forward()
        except StateError as exc:
            self.error(problems_text(exc))
            return None

    def _section_menu(self, name: str, info: Dict[str, Any]) -> Optional[State]:
        """Add another instance of the repeating section ``name`` (then forward into it), remove
        one, or done (None: go forward as usual). Only on its last step in its last instance
        (``info``: the section's entry in the state the step was presented with)."""
        step = info.get("step")
        steps = info.get("steps") or []
        count = int(info.get("count") or 0)
        if not steps or step != steps[-1] or int(info.get("current") or 0) != count - 1:
            return None
        if not (info.get("canAdd") or info.get("canRemove")):
            return None
        if info.get("overCount"):
            self.say(f"  You said you have {info.get('expectedCount')}: remove {info['overCount']} of these.")
        while True:
            choices = (["a: add another"] if info.get("canAdd") else []) \
                + ([f"r N: remove number N (1-{count})"] if info.get("canRemove") else []) + ["Enter: done"]
            _, stripped = self._line(f"  [{', '.join(choices)}] > ")
            try:
                if stripped == "":
                    return None
                if stripped.lower() == "a" and info.get("canAdd"):
                    self.session.add_instance(name)
                    return self.session.go_forward()
                if re.fullmatch(r"[rR]\s*\d+", stripped) and info.get("canRemove"):
                    number = int(stripped[1:].strip())
                    moved = self.session.remove_instance(number - 1, name)
                    self.say(f"  Removed number {number}; {moved['instances'][name]['count']} left.")
                    return moved
                self.error("Type a, r N or press Enter.")
            except StepKitError as exc:
                self.error(exc.message)

    def _typed(self, kind_value: Tuple[str, Any]) -> Tuple[bool, Any]:
        """What ``_ask`` read as an answer: (True, the value), raw JSON (``=...``) decoded; or
        (False, None) after showing why the JSON is not valid."""
        kind, value = kind_value
        if kind != "json":
            return True, value
        try:
            return True, json.loads(value)
        except ValueError as exc:
            self.error(f"That is not valid JSON: {exc}")
            return False, None

    def _set(self, kind_value: Tuple[str, Any], wrap: Optional[str] = None) -> Optional[State]:
        """Sets an answer (a form item's with ``wrap``): the new state, or None after showing
        why it was refused."""
        kind, value = kind_value
        try:
            if kind == "json":
                if wrap is None:
                    return self.session.set_answer_json(value)
                valid, decoded = self._typed(kind_value)
                if not valid:
                    return None
                return self.session.set_answer({wrap: decoded})
            return self.session.set_answer(value if wrap is None else {wrap: value})
        except (AnswerError, ParseError) as exc:
            self.error(exc.message)
        except (StepKitError, ValueError, TypeError) as exc:
            self.error(getattr(exc, "message", str(exc)))
        return None

    # -- steps ----------------------------------------------------------------------------------

    def _section_heading(self, state: State) -> None:
        """A repeating section's step: which instance it is asked for (its title, or "N of M")."""
        block = section_block(state)
        if block is None:
            return
        name, info = block
        k = int(info.get("current") or 0)
        titles = info.get("titles") or []
        title = titles[k] if k < len(titles) and titles[k] else f"{name} {k + 1}"
        self.say(f"  [{title} — {k + 1} of {info.get('count')}]")

    def _header(self, state: State) -> None:
        step = state.get("step") or {}
        progress = state.get("progress") or {}
        position = ""
        if progress.get("current") and progress.get("total"):
            position = f" {progress['current']} of {progress['total']}"
        optional = " (optional)" if step.get("optional") else ""
        self.say()
        self.say(f"── Step{position}{optional} " + "─" * 40)
        self._section_heading(state)
        title = step.get("title")
        if title:
            self.say(str(title))
        for key in ("question", "text", "detailText", "footnote"):
            value = step.get(key)
            if isinstance(value, str) and value:
                self.say(f"  {value}" if key != "question" else str(value))
        self._shown(step)
        left = time_left(state)
        if left:
            self.say(f"  {left}")
        if state.get("returnsToReview"):
            self.say("  (Changing an answer: going on returns to the review.)")
        self._missing_summary(state)

    def _shown(self, step: Dict[str, Any]) -> None:
        """What a consent step or a step the host reports shows, as text: the consent sections,
        the document under review, a table's items, the media a step points to."""
        for section in step.get("consentSections") or []:
            if isinstance(section, dict):
                self.say(f"  ■ {section.get('title')}")
                self.say(f"    {section.get('summary') or section.get('content') or ''}")
        document = step.get("document")
        if isinstance(document, dict) and isinstance(document.get("markdown"), str):
            self.say("")
            for line in document["markdown"].splitlines():
                self.say(f"  │ {line}" if line else "  │")
            self.say(f"  (version {document.get('version')}, SHA-256 {document.get('sha256')})")
        bullet = "•" if step.get("isBulleted") else " "
        for item in step.get("items") or []:
            self.say(f"  {bullet} {item}")
        for key, label in (("videoURL", "Video"), ("pdfURL", "Document"), ("url", "Page")):
            if isinstance(step.get(key), str):
                self.say(f"  {label}: {step[key]}")

    def _missing_summary(self, state: State) -> None:
        """On the step that would finish the task, what is still missing (a task checking its
        required answers at completion lets earlier steps be left without them): the engine's
        ``missingAnswers``, each message as it gives it."""
        navigation = state.get("navigation") or {}
        missing = [m for m in state.get("missingAnswers") or [] if isinstance(m, dict)]
        if navigation.get("hasNextStep", True) or not missing:
            return
        self.say(f"  Before finishing, {len(missing)} required answer{'s' if len(missing) != 1 else ''} "
                 "must be given (:back goes back):")
        for m in missing:
            self.say(f"   - {m.get('message')} [{m.get('path')}]")

    def _present(self, state: State, stack: contextlib.ExitStack) -> State:
        """Presents the current step until the session leaves it (or a refusal); returns the
        state then."""
        step = state.get("step") or {}
        kind = step.get("type")
        # The repeating section this step is in, as this state says (its menu in `_forward`).
        block = section_block(state)
        self._section = None if block is None else (block[0], dict(block[1], step=step.get("identifier")))
        self._header(state)
        if step.get("reportedByHost") is True:
            return self._reported(state)
        if kind == "question":
            return self._question(state)
        if "formItems" in step:  # a form, a page or a consent review (forms StepKit writes)
            return self._form(state)
        if kind == "review":
            return self._review(state)
        if is_active(step) and is_game(state):
            return GamePresenter(
                self.session, self.out, self.read, Timeline(self.clock),
                reads_stdin=self.read is Presenter._read_stdin,
            ).run(state)
        if is_active(step):
            if self.runner is None:
                self.runner = stack.enter_context(ActiveRunner(interactive=True, out=self.out).attach(self.session))
            return self.runner.present(self, state)
        navigation = state.get("navigation") or {}
        label = "continue" if navigation.get("hasNextStep", True) else "finish"
        self._line(f"[Enter to {label}] ")
        moved = self._forward()
        return moved if moved is not None else state  # a refused call changes nothing

    def _reported(self, state: State) -> State:
        """A step the host reports, asked in text: a signature as a typed name, an image as a
        file's path, a table or PDF as read, a video as watched or not, a web view's message, each
        permission granted or not. The report goes to the engine, which checks it."""
        step = state.get("step") or {}
        identifier = str(step.get("identifier"))
        kind = step.get("type")
        while True:
            report: Dict[str, Any]
            if kind == "signature":
                _, name = self._line("Type your full name to sign: ")
                report = {"typedName": name}
            elif kind == "imageCapture":
                _, path = self._line("Path of the image (PNG or JPEG): ")
                try:
                    data = open(path, "rb").read()
                except OSError as exc:
                    self.error(f"Cannot read {path}: {exc.strerror}")
                    continue
                content_type = "image/png" if data.startswith(b"\x89PNG") else "image/jpeg"
                report = {"image": {"contentType": content_type, "base64": base64.b64encode(data).decode("ascii")}}
            elif kind == "videoInstruction":
                _, answer = self._line("Did you watch the video to the end? [y/n] ")
                report = {"playbackCompleted": answer.lower() in ("y", "yes")}
            elif kind == "webView":
                _, message = self._line("What the page said: ")
                report = {"message": message}
            elif kind == "requestPermissions":
                granted: list[str] = []
                denied: list[str] = []
                for permission in step.get("permissions") or []:
                    _, answer = self._line(f"Allow {permission}? [y/n] ")
                    (granted if answer.lower() in ("y", "yes") else denied).append(permission)
                report = {"granted": granted, "denied": denied}
            else:  # table, pdfViewer
                self._line("[Enter when you have read it] ")
                report = {"viewed": True}
            try:
                self.session.report(identifier, **report)
            except (AnswerError, StateError, ParseError) as exc:
                self.error(exc.message)
                continue
            except StepKitError as exc:
                self.error(exc.message)
                continue
            moved = self._forward()
            if moved is not None:
                return moved

    def _review(self, state: State) -> State:
        """A review step: the engine's list, numbered; a number edits that step (a repeating
        section's step in its instance), ``N.K`` the K-th instance listed under step N (its
        repeating group or question); the engine brings the participant back here. Enter goes
        on."""
        while True:
            entries = (state.get("review") or {}).get("steps") or []
            for line in review_lines(state.get("review")):
                self.say(line)
            navigation = state.get("navigation") or {}
            label = "continue" if navigation.get("hasNextStep", True) else "finish"
            _, stripped = self._line(f"[Enter to {label}, or a step's number (N, or N.K for an instance) to change its answer] ")
            if stripped == "":
                moved = self._forward()
                return moved if moved is not None else state
            chosen = re.fullmatch(r"(\d+)(?:\.(\d+))?", stripped)
            if chosen and 1 <= int(chosen.group(1)) <= len(entries):
                entry = entries[int(chosen.group(1)) - 1]
                step = str(entry.get("step"))
                places = review_instances(entry)
                try:
                    if chosen.group(2) is None:
                        if isinstance(entry.get("instance"), int):
                            return self.session.review_edit_instance(step, int(entry["instance"]), entry.get("section"))
                        return self.session.review_edit(step)
                    k = int(chosen.group(2))
                    if 1 <= k <= len(places):
                        block, index = places[k - 1]
                        edited = self.session.review_edit_instance(step, index, block)
                        self._editing = (block, index)
                        return edited
                except StepKitError as exc:
                    self.error(exc.message)
                    continue
            self.error(f"Type a number from 1 to {len(entries)} (N.K for an instance listed under it), or Enter.")

    def _question(self, state: State) -> State:
        step = state.get("step") or {}
        if isinstance(step.get("repeat"), dict):
            state = self._repeating(state, step, str(step.get("identifier")), wrap=None)
            while True:
                moved = self._forward()
                if moved is not None:
                    return moved
                state = self._repeating(self.session.state, step, str(step.get("identifier")), wrap=None)
        fmt = step.get("answerFormat") or {}
        describe = True
        while True:
            given, value = self._ask(fmt, state.get("answer"), can_skip(state), "> ", describe)
            describe = False
            if given:
                answered = self._set(value)
                if answered is None:
                    continue
                state = answered
            moved = self._forward()
            if moved is not None:
                return moved

    def _form(self, state: State) -> State:
        step = state.get("step") or {}
        while True:
            section: Optional[str] = None
            for item in step.get("formItems") or []:
                if not isinstance(item, dict):
                    continue
                if "sectionTitle" in item and "identifier" not in item:
                    section = str(item.get("sectionTitle"))  # shown before its first visible item
                    continue
                identifier = str(item.get("identifier"))
                visible = state.get("visibleItems")
                if isinstance(visible, list) and identifier not in visible:
                    continue  # hidden now by its visibleWhen
                if section is not None:
                    self.say(f"  ── {section}")
                    section = None
                if isinstance(item.get("repeat"), dict):
                    state = self._repeating(state, item, identifier, wrap=identifier)
                else:
                    state = self._form_item(state, step, item, identifier)
            moved = self._forward()
            if moved is not None:
                return moved

    # -- repeating blocks ---------------------------------------------------------------------

    def _repeating(self, state: State, block: Dict[str, Any], name: str, wrap: Optional[str]) -> State:
        """A repeating group or question (``block``: its form item or question step): each
        instance asked in turn, then "add another / remove / done" until done. ``wrap``: the
        form item's identifier (the block's answer is under it), None for a question step."""
        count = int(((state.get("instances") or {}).get(name) or {}).get("count") or 0)
        if self._editing is not None and self._editing[0] == name:
            k, self._editing = self._editing[1], None
            state = self._instance(state, block, name, wrap, k)  # the instance chosen on the review
        else:
            for k in range(count):
                state = self._instance(state, block, name, wrap, k)
        return self._instances_menu(state, name, "  ", lambda state, k: self._instance(state, block, name, wrap, k),
                                    over_count=True)

    def _instances_menu(self, state: State, path: str, indent: str, ask: Callable[[State, int], State],
                        over_count: bool = False) -> State:
        """"add another / remove number N / change number N / done" for the repeating block at
        ``path`` (``medication`` or ``medication.doses``) until done: ``ask(state, k)`` asks
        instance ``k``; ``over_count`` says how many to remove when there are more than the
        answer its count follows. One loop for outer and nested blocks, so both answer alike."""
        while True:
            info = (state.get("instances") or {}).get(path) or {}
            count = int(info.get("count") or 0)
            if over_count and info.get("overCount"):
                self.say(f"{indent}You said you have {info.get('expectedCount')}: remove {info['overCount']} of these.")
            choices = (["a: add another"] if info.get("canAdd") else []) \
                + ([f"r N: remove number N (1-{count})"] if info.get("canRemove") else []) \
                + [f"e N: change number N (1-{count})", "Enter: done"]
            _, stripped = self._line(f"{indent}[{', '.join(choices)}] > ")
            try:
                if stripped == "":
                    return state
                if stripped.lower() == "a":
                    state = self.session.add_instance(path)
                    state = ask(state, int(state["instances"][path]["current"]))
                elif re.fullmatch(r"[rReE]\s*\d+", stripped):
                    number = int(stripped[1:].strip())
                    if stripped[0] in "rR":
                        state = self.session.remove_instance(number - 1, path)
                        self.say(f"{indent}Removed number {number}; {state['instances'][path]['count']} left.")
                    else:
                        state = ask(self.session.enter_instance(number - 1, path), number - 1)
                else:
                    self.error("Type a, r N, e N or press Enter.")
            except StepKitError as exc:
                self.error(exc.message)

    def _instance(self, state: State, block: Dict[str, Any], name: str, wrap: Optional[str], k: int) -> State:
        """Asks instance ``k`` of a block: a group's items one by one, or a question's answer."""
        titles = ((state.get("instances") or {}).get(name) or {}).get("titles") or []
        title = titles[k] if k < len(titles) and titles[k] else f"{block.get('text') or block.get('question') or name} {k + 1}"
        self.say(f"  ── {title}")
        if self.session.state["instances"][name]["current"] != k:
            state = self.session.enter_instance(k, name)
        items = block.get("items")
        if isinstance(items, list):
            for inner in items:
                # An item its visibleWhen hides in this instance (with the answers so far) is not asked.
                hidden = ((state.get("instances") or {}).get(name) or {}).get("hidden") or []
                if isinstance(inner, dict) and inner.get("identifier") not in (hidden[k] if k < len(hidden) else []):
                    if isinstance(inner.get("repeat"), dict) and isinstance(inner.get("items"), list):
                        state = self._nested(state, name, wrap, k, inner)
                    elif isinstance(inner.get("repeat"), dict):
                        state = self._instance_answers(state, name, wrap, k, inner)
                    else:
                        state = self._instance_item(state, name, wrap, k, inner)
            return state
        return self._instance_item(state, name, wrap, k, None, block.get("answerFormat") or {})

    def _instance_item(self, state: State, name: str, wrap: Optional[str], k: int,
                       inner: Optional[Dict[str, Any]], fmt: Optional[Dict[str, Any]] = None) -> State:
        """One answer in instance ``k``: a group's item ``inner``, or (``inner`` None) a
        repeating question's answer of format ``fmt``."""
        answers = state.get("answer")
        listed = answers.get(wrap) if wrap is not None and isinstance(answers, dict) else answers
        instances = listed if isinstance(listed, list) else []
        entry = instances[k] if k < len(instances) else None
        if inner is not None:
            fmt = inner.get("answerFormat") or {}
            optional = bool(inner.get("optional"))
            self.say(f"    {inner.get('text') or inner.get('identifier')}{' (optional)' if optional else ''}")
            current = entry.get(inner.get("identifier")) if isinstance(entry, dict) else None
        else:
            optional, current = False, entry
        while True:
            given, value = self._ask(fmt or {}, current, optional, "    > ", False)
            if not given:
                return state
            valid, answer = self._typed(value)
            if not valid:
                continue
            if inner is not None:
                # A group's instances before k are left as they are ({} changes nothing).
                whole: Any = [{} for _ in range(k)] + [{inner.get("identifier"): answer}]
            else:
                # A question's list: the others kept, this instance's answer replaced.
                whole = list(instances) + [None] * max(0, k + 1 - len(instances))
                whole[k] = answer
            answered = self._set(("value", whole if wrap is None else whole), wrap=wrap)
            if answered is not None:
                return answered

    def _nested(self, state: State, outer: str, wrap: Optional[str], k: int, group: Dict[str, Any]) -> State:
        """A repeating group inside instance ``k`` of ``outer`` (a medication's doses): each of
        its instances in that medication asked in turn, then "add another / remove / done", the
        calls naming it by its path (``outer.group``), in the medication the participant is in."""
        gid = str(group.get("identifier"))
        path = f"{outer}.{gid}"

        def info(state: State) -> Dict[str, Any]:
            return (state.get("instances") or {}).get(path) or {}

        def ask(state: State, j: int) -> State:
            titles = info(state).get("titles") or []
            title = titles[j] if j < len(titles) and titles[j] else f"{group.get('text') or gid} {j + 1}"
            self.say(f"    ── {title}")
            if info(state).get("current") != j:
                state = self.session.enter_instance(j, path)
            for item in group.get("items") or []:
                if isinstance(item, dict):
                    state = self._nested_item(state, wrap, k, gid, j, item)
            return state

        for j in range(int(info(state).get("count") or 0)):
            state = ask(state, j)
        return self._instances_menu(state, path, "    ", ask)

    def _nested_item(self, state: State, wrap: Optional[str], k: int, gid: str, j: int, item: Dict[str, Any]) -> State:
        """One item of inner instance ``j`` of the group ``gid`` in outer instance ``k``."""
        fmt = item.get("answerFormat") or {}
        optional = bool(item.get("optional"))
        identifier = item.get("identifier")
        self.say(f"      {item.get('text') or identifier}{' (optional)' if optional else ''}")
        answers = state.get("answer")
        outer = answers.get(wrap) if wrap is not None and isinstance(answers, dict) else None
        entry = outer[k] if isinstance(outer, list) and k < len(outer) and isinstance(outer[k], dict) else {}
        found = entry.get(gid)
        inner: List[Any] = found if isinstance(found, list) else []
        current = inner[j].get(identifier) if j < len(inner) and isinstance(inner[j], dict) else None
        while True:
            given, value = self._ask(fmt, current, optional, "      > ", False)
            if not given:
                return state
            valid, answer = self._typed(value)
            if not valid:
                continue
            # The instances before k (and the doses before j) are left as they are ({} changes nothing).
            whole: List[Dict[str, Any]] = [{} for _ in range(k)] + [{gid: [{} for _ in range(j)] + [{identifier: answer}]}]
            answered = self._set(("value", whole), wrap=wrap)
            if answered is not None:
                return answered

    def _instance_answers(self, state: State, name: str, wrap: Optional[str], k: int, inner: Dict[str, Any]) -> State:
        """A repeating question inside instance ``k`` of a group: its answers one per line, an
        empty line ending them (none typed keeps what it had)."""
        fmt = inner.get("answerFormat") or {}
        identifier = inner.get("identifier")
        self.say(f"    {inner.get('text') or identifier} (several answers: one a line, an empty line ends)")
        while True:
            given_any, answers = False, []
            while True:
                given, value = self._ask(fmt, None, True, "    + ", False)
                if not given:
                    break
                given_any = True
                valid, answer = self._typed(value)
                if not valid:
                    continue
                answers.append(answer)
            if not given_any:
                return state
            answered = self._set(("value", [{} for _ in range(k)] + [{identifier: answers}]), wrap=wrap)
            if answered is not None:
                return answered

    def _form_item(self, state: State, step: Dict[str, Any], item: Dict[str, Any], identifier: str) -> State:
        """Asks for one item of a form; returns the state after its answer (answers and
        visibility may have changed)."""
        fmt = item.get("answerFormat") or {}
        optional = bool(item.get("optional"))
        self.say(f"  {item.get('text') or identifier}{' (optional)' if optional else ''}")
        if item.get("detailText"):
            self.say(f"    {item['detailText']}")
        describe = True
        while True:
            answers = state.get("answer")
            current = answers.get(identifier) if isinstance(answers, dict) else None
            given, value = self._ask(fmt, current, optional, "  > ", describe)
            describe = False
            if not given:
                # The engine says whether the item is needed now (a task checking required
                # answers at completion lets the form be left without it).
                needed = [
                    p for p in state.get("problems") or []
                    if isinstance(p, dict) and p.get("code") == "answerRequired" and p.get("item") == identifier
                ]
                if current is None and needed:
                    self.error(str(needed[0].get("message") or "This item needs an answer."))
                    continue
                return state
            answered = self._set(value, wrap=identifier)
            if answered is not None:
                return answered
