"""The StepKit terminal presenter: ``python -m stepkit run TASK.json``.

Subcommands:

``run TASK.json [--answers FILE] [--output FILE] [--output-dir DIR] [--quiet] [--task-run-uuid UUID] [--interactive]``
    Runs a task. On a terminal it asks each step's questions; with ``--answers FILE`` (a JSON
    object ``{"stepIdentifier": answer, ...}``, a form's answer being ``{"item": answer}``) it
    walks the task with those answers. When stdin is not a terminal and no ``--answers`` is
    given, it uses the answers file bundled with the task: ``TASK.answers.json`` next to
    ``TASK.json``. At the end it prints the task result as JSON (and writes it to ``--output``).
    Active, countdown and wait steps are run by :mod:`stepkit.active_presenter` (simulated
    recorder samples, written under ``--output-dir`` or a temporary directory). The consent
    steps are shown as text (the sections, the document under review); a step the host reports
    is asked in text (a signature as a typed name, an image as a file's path) and its answers-file
    entry is the report (``{"typedName": "..."}``); a signature or image is written under
    ``--output-dir``, which such a task needs. The games (spatial span, PSAT, Stroop, tower of
    Hanoi) are played with the keyboard (:mod:`stepkit.game_presenter`); in an answers file a
    game step's entry is the list of lines typed.

``check TASK.json [--strict] [--json]``
    Compiles a task, lists every problem of its definition, and runs the static checker
    (:mod:`stepkit.checker`, docs/checker.md): findings with path and severity.

``import-fhir QUESTIONNAIRE.json [-o TASK.json] [--strict] [--report FILE]``
    Translates a FHIR R4 Questionnaire into a task definition (docs/fhir.md): the task goes to
    ``-o`` (stdout without it), the import report (what was not translated, item by item) to
    stderr and to ``--report``. ``run`` also takes a Questionnaire directly (it is recognised by
    its ``resourceType``), and ``run --format fhir`` prints the result as a QuestionnaireResponse.

``verify TASK.json RESULT.json [--ignore dates] [--unknown-fields ignore] [--json] [-o FILE]``
    Replays a submitted result (or, for a FHIR Questionnaire, a QuestionnaireResponse) through
    the task (:mod:`stepkit.verifier`, docs/verify.md) and lists every divergence; ``-o`` writes
    the engine's own result. Exit status: 0 verified, 1 divergences, 2 usage or bad input.

``graph TASK.json [-o FILE.svg|png|pdf|dot]``
    Draws the navigation graph through Graphviz (:mod:`stepkit.graph`); DOT on stdout without -o.

This module holds the arguments and the exit codes; the run's parts have their own modules:
:mod:`stepkit.answers_file` (the walk with an answers file), :mod:`stepkit.presenter` (the
interactive presenter), :mod:`stepkit.answer_input` (what a format takes, and what was typed),
:mod:`stepkit.rendering` (answers as text), :mod:`stepkit.commands` (``:back`` ...),
:mod:`stepkit.active_presenter` (active steps) and :mod:`stepkit.game_presenter` (games).

Exit codes: 0 the task completed (``check``: no errors; ``graph``: drawn); 1 the task did not
complete (an answer was refused, a required step has no answer, the participant quit) or the
answers file is invalid (``check``: the definition has problems or the checker found errors, or
with ``--strict`` warnings); 2 usage or file problems (a file cannot be read or written, the task
is not valid, the library cannot be loaded, Graphviz is missing).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Callable, Dict, Optional, Sequence

from . import __version__, active_presenter, checker, graph, verifier
from ._core import Task, version
from .clock import ManualClock
from .answers_file import AnswersError, default_answers_path, load_answers, walk_with_answers
from .errors import LibraryNotFoundError, ParseError, StepKitError
from .presenter import Presenter

__all__ = ["main", "build_parser", "default_answers_path", "walk_with_answers", "Presenter"]

EXIT_COMPLETED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class _Exit(Exception):
    """Ends the command with an exit code (and a message for stderr)."""

    def __init__(self, code: int, message: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


# ------------------------------------------------------------------------------------------------
# Commands


def _is_questionnaire(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return False  # Task.from_file reports the problem
    return isinstance(data, dict) and data.get("resourceType") == "Questionnaire"


def _compile(path: str) -> Task:
    try:
        if _is_questionnaire(path):
            with open(path, "rb") as handle:
                return Task.from_fhir(handle.read())
        return Task.from_file(path)
    except (ParseError, StepKitError) as exc:
        if isinstance(exc, LibraryNotFoundError):
            raise
        if exc.code == "EIO":
            raise _Exit(EXIT_USAGE, exc.message)
        raise _Exit(EXIT_USAGE, f"{path} is not a valid task:\n{_problem_lines(exc)}")


def _problem_lines(exc: StepKitError) -> str:
    lines = []
    for problem in exc.errors:
        where = problem.get("path") or "(document)"
        lines.append(f"  {where}: {problem.get('message')}")
    return "\n".join(lines) or f"  {exc.message}"


def _write_output(path: str, result: Dict[str, Any]) -> None:
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
    except OSError as exc:
        raise _Exit(EXIT_USAGE, f"Cannot write {path}: {exc.strerror or exc}")


def cmd_run(args: argparse.Namespace) -> int:
    task = _compile(args.task)
    answers_path: Optional[str] = args.answers
    interactive = args.interactive or (answers_path is None and sys.stdin.isatty())
    if answers_path is None and not interactive:
        candidate = default_answers_path(args.task)
        if not os.path.exists(candidate):
            raise _Exit(
                EXIT_USAGE,
                f"stdin is not a terminal and no --answers file was given, and there is no "
                f"{candidate} next to the task. Run in a terminal, or pass --answers FILE.",
            )
        print(
            f"stdin is not a terminal: answering with {candidate} "
            "(pass --answers FILE to use another file).",
            file=sys.stderr,
        )
        answers_path = candidate
    try:
        answers = load_answers(answers_path) if answers_path is not None else None
    except AnswersError as exc:
        raise _Exit(EXIT_USAGE if exc.unreadable else EXIT_FAILED, exc.message)
    if answers is not None:
        known = {s.get("identifier") for s in task.info.get("steps", [])}
        unknown = [key for key in answers if key not in known]
        if unknown:
            print(
                f"note: the answers file names steps that are not in the task: {', '.join(unknown)}",
                file=sys.stderr,
            )
    options: Dict[str, Any] = {}
    if args.task_run_uuid:
        options["taskRunUUID"] = args.task_run_uuid
    if args.lang:
        options["language"] = args.lang
    if args.audit_actor:
        options["audit"] = {"actor": args.audit_actor}
    if args.seed is not None:
        options["seed"] = args.seed
    runner = active_presenter.prepare(task, args, options, interactive=answers is None)
    clock = getattr(args, "clock", None)
    try:
        session = task.open(options or None)
    except StepKitError as exc:
        raise _Exit(EXIT_USAGE, f"Cannot open the task: {exc.message}")
    if clock is not None:  # main(clock=...): a ManualClock for the whole run (tests)
        session.set_clock(clock)
        runner.clock = clock
    with session, runner.attach(session):
        active = runner if runner.enabled else None
        if answers is not None:
            step_count = int(task.info.get("stepCount") or 0)
            try:
                state = walk_with_answers(
                    session, answers, sys.stdout, quiet=args.quiet,
                    max_steps=max(1000, 50 * step_count), runner=active,
                )
            except AnswersError as exc:
                raise _Exit(EXIT_FAILED, exc.message)
        else:
            if sys.stdin.isatty():
                try:
                    import readline  # noqa: F401  (line editing and history for input())
                except ImportError:
                    pass
            try:
                state = Presenter(session, sys.stdout, runner=active, clock=clock).run()
            except KeyboardInterrupt:
                print(file=sys.stderr)
                state = session.finish("discarded")
        result = session.result_as(args.format) if args.format != "stepkit" else session.result
        trail = session.audit() if args.audit else None
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.output:
        _write_output(args.output, result)
    if args.audit and trail is not None:
        _write_output(args.audit, trail)
    reason = state.get("finishReason")
    if reason != "completed":
        print(f"The task was not completed (finished as {reason!r}).", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_COMPLETED


def cmd_import_fhir(args: argparse.Namespace) -> int:
    try:
        with open(args.questionnaire, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise _Exit(EXIT_USAGE, f"Cannot read {args.questionnaire}: {exc.strerror or exc}")
    try:
        translated = Task.translate_fhir(data, strict=args.strict)
    except (ParseError, StepKitError) as exc:
        if isinstance(exc, LibraryNotFoundError):
            raise
        raise _Exit(EXIT_FAILED, f"{args.questionnaire} cannot be imported:\n{_problem_lines(exc)}")
    report = translated.get("report", [])
    for entry in report:
        print(f"not translated: {entry.get('linkId') or '(questionnaire)'} at {entry.get('path')}: "
              f"{entry.get('reason')}", file=sys.stderr)
    if args.report:
        _write_output(args.report, report)
    if args.output:
        _write_output(args.output, translated["task"])
    else:
        print(json.dumps(translated["task"], indent=2, ensure_ascii=False))
    return EXIT_COMPLETED


def cmd_check(args: argparse.Namespace) -> int:
    return checker.run(args)


def cmd_graph(args: argparse.Namespace) -> int:
    return graph.run(args)


def cmd_verify(args: argparse.Namespace) -> int:
    return verifier.run(args)


def _command(
    commands: Any, name: str, func: Callable[[argparse.Namespace], int],
    add_arguments: Callable[[argparse.ArgumentParser], None], help: str, description: str,
) -> None:
    """Adds the subcommand `name`, run by `func`, whose options `add_arguments` adds."""
    command = commands.add_parser(name, help=help, description=description)
    add_arguments(command)
    command.set_defaults(func=func)


def _run_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("task", metavar="TASK.json", help="the task definition")
    run.add_argument("--answers", metavar="FILE", help='a JSON object {"stepIdentifier": answer, ...}')
    run.add_argument("--output", "-o", metavar="FILE", help="also write the result JSON to FILE")
    run.add_argument("--quiet", "-q", action="store_true", help="with answers: print only the result")
    run.add_argument("--task-run-uuid", metavar="UUID", help="the run's UUID (default: random)")
    run.add_argument(
        "--lang", metavar="TAG",
        help="the participant's language, a BCP-47 tag (fr-CA falls back to fr, then to the "
        "task's default): the task's texts and the engine's messages",
    )
    run.add_argument(
        "--audit", metavar="FILE",
        help="also write the run's audit trail (every accepted change, dated; docs/audit.md) to FILE",
    )
    run.add_argument("--audit-actor", metavar="NAME", help="the actor named in the audit trail's events")
    run.add_argument(
        "--seed", metavar="N", type=int,
        help="the seed of the run's randomized order, 0 to 2^53-1 (default: drawn; docs/randomization.md)",
    )
    run.add_argument(
        "--interactive", "-i", action="store_true", help="ask on stdin even if it is not a terminal"
    )
    run.add_argument(
        "--format", choices=("stepkit", "fhir"), default="stepkit",
        help="the result's format: StepKit's task result (default) or, for a FHIR "
        "Questionnaire, a FHIR R4 QuestionnaireResponse",
    )
    active_presenter.add_arguments(run)


def _import_fhir_arguments(fhir: argparse.ArgumentParser) -> None:
    fhir.add_argument("questionnaire", metavar="QUESTIONNAIRE.json", help="a FHIR R4 Questionnaire")
    fhir.add_argument("--output", "-o", metavar="TASK.json", help="write the task here (default: stdout)")
    fhir.add_argument("--report", metavar="FILE", help="also write the import report as JSON to FILE")
    fhir.add_argument("--strict", action="store_true", help="refuse the import if anything is not translated")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m stepkit",
        description="StepKit: run research tasks (ResearchKit-style) in a terminal.",
        epilog="Exit codes: 0 completed/valid, 1 not completed/invalid answers, 2 usage or file problems. "
        "The library is found through STEPKIT_LIBRARY, the package directory, or the system.",
    )
    parser.add_argument("--version", action="store_true", help="print the package and library versions")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    _command(commands, "run", cmd_run, _run_arguments,
             help="run a task interactively or with an answers file",
             description="Run a task. On a terminal, answer each step; with --answers, or when stdin "
             "is not a terminal (then TASK.answers.json next to TASK.json is used), walk the task "
             "with the given answers. Prints the task result as JSON.")
    _command(commands, "import-fhir", cmd_import_fhir, _import_fhir_arguments,
             help="translate a FHIR R4 Questionnaire into a task (docs/fhir.md)",
             description="Translate a FHIR R4 Questionnaire into a StepKit task definition. The "
             "import report (what was not translated) goes to stderr. Exit status: 0 translated, "
             "1 the Questionnaire cannot be imported (with --strict: or the report is not empty), "
             "2 unreadable file.")
    _command(commands, "check", cmd_check, checker.add_arguments,
             help="compile a task and check it for what is probably wrong (docs/checker.md)",
             description="Compile a task, list every problem of its definition, and run the static "
             "checker. Exit status: 0 no errors, 1 errors (with --strict: or warnings), 2 unreadable "
             "file or usage.")
    _command(commands, "verify", cmd_verify, verifier.add_arguments,
             help="verify a submitted result against its task (docs/verify.md)",
             description="Replay a task result (or a QuestionnaireResponse, for a FHIR Questionnaire) "
             "through the task's navigation and answer checks and list every divergence. Exit "
             "status: 0 verified, 1 divergences, 2 usage or bad input.")
    _command(commands, "graph", cmd_graph, graph.add_arguments,
             help="draw the navigation graph (Graphviz)",
             description="Draw the task's steps and navigation rules: -o FILE.svg, .png, .pdf or .dot "
             "(DOT on stdout without -o). SVG, PNG and PDF need Graphviz's dot.")
    return parser


def main(argv: Optional[Sequence[str]] = None, *, clock: Optional[ManualClock] = None) -> int:
    """Runs the command line ``argv``. ``clock``: a :class:`~stepkit.ManualClock` the ``run``
    session runs on instead of the system clock (for tests: the games' waits move it)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.clock = clock
    try:
        if args.version:
            print(f"stepkit (Python) {__version__}, libstepkit {version()}")
            return EXIT_COMPLETED
        if not getattr(args, "func", None):
            parser.print_usage(sys.stderr)
            print(f"{parser.prog}: error: a command is required (run, check, graph, import-fhir)", file=sys.stderr)
            return EXIT_USAGE
        return int(args.func(args))
    except _Exit as stop:
        if stop.message:
            print(f"error: {stop.message}", file=sys.stderr)
        return stop.code
    except LibraryNotFoundError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
