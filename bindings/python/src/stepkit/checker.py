"""The static checker: ``python -m stepkit check TASK.json [--strict] [--json]``.

:func:`check_task` runs the engine's checker (``stepkit_task_check``, see docs/checker.md) on a
compiled task; :func:`check_file` compiles a task file first and turns definition errors into
findings of severity ``error`` as well, so one report covers both.

Exit status of the command (for CI): 0 when there is no error (with ``--strict``: no error and
no warning), 1 when there are errors (definition errors included: the task does not compile),
2 when the file cannot be read, is not JSON, or the library cannot be loaded (or bad usage).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Optional, Sequence, TextIO

from ._core import Task
from .errors import DefinitionError, LibraryNotFoundError, StepKitError

__all__ = ["check_task", "check_file", "format_report", "add_arguments", "run", "main", "SEVERITIES"]

SEVERITIES = ("error", "warning", "info")

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_USAGE = 2


def check_task(task: Task) -> Dict[str, Any]:
    """The checker's report for a compiled task (:meth:`Task.check`): ``{"problems":
    [{"severity", "code", "message", "path"}], "errors": N, "warnings": N}``."""
    return task.check()


def _definition_report(exc: StepKitError) -> Dict[str, Any]:
    problems = [
        {"severity": "error", "code": p.get("code", "invalid"), "message": p.get("message", ""), "path": p.get("path", "")}
        for p in (exc.errors or [{"code": exc.code, "message": exc.message, "path": getattr(exc, "path", "")}])
    ]
    return {"problems": problems, "errors": len(problems), "warnings": 0}


def check_file(path: str) -> Dict[str, Any]:
    """Compiles and checks the task in ``path``. The report has ``"compiled"`` (whether the
    task compiled), ``"task"`` (its identifier, when it did) and ``"infos"`` besides the
    checker's fields; definition errors are findings of severity ``error``.

    Raises StepKitIOError (unreadable file), ParseError (not JSON) and LibraryNotFoundError."""
    try:
        task = Task.from_file(path)
    except DefinitionError as exc:
        report = _definition_report(exc)
        report.update(compiled=False, task=None)
    else:
        with task:
            report = dict(check_task(task))
            report.update(compiled=True, task=task.identifier)
    problems: List[Dict[str, Any]] = report.get("problems") or []
    report["problems"] = problems
    report["errors"] = sum(1 for p in problems if p.get("severity") == "error")
    report["warnings"] = sum(1 for p in problems if p.get("severity") == "warning")
    report["infos"] = sum(1 for p in problems if p.get("severity") == "info")
    report["file"] = path
    return report


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def format_report(report: Dict[str, Any]) -> str:
    """The report as text, one finding per line: ``FILE: PATH: SEVERITY: MESSAGE [code]``."""
    name = report.get("file", "task")
    lines = []
    for p in report.get("problems", []):
        where = p.get("path") or "(task)"
        lines.append(f"{name}: {where}: {p.get('severity')}: {p.get('message')} [{p.get('code')}]")
    counts = ", ".join([_plural(report.get("errors", 0), "error"), _plural(report.get("warnings", 0), "warning"),
                        _plural(report.get("infos", 0), "info")])
    if not report.get("compiled", True):
        lines.append(f"{name}: the task does not compile: {counts}")
    elif report.get("problems"):
        lines.append(f"{name}: task '{report.get('task')}': {counts}")
    else:
        lines.append(f"{name}: ok: task '{report.get('task')}', no problems found")
    return "\n".join(lines)


def exit_status(report: Dict[str, Any], strict: bool = False) -> int:
    if report.get("errors", 0) or (strict and report.get("warnings", 0)):
        return EXIT_PROBLEMS
    return EXIT_OK


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", metavar="TASK.json", help="the task definition")
    parser.add_argument("--strict", action="store_true", help="warnings fail too (exit status 1)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def run(args: argparse.Namespace, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        report = check_file(args.task)
    except LibraryNotFoundError as exc:
        print(f"error: {exc.message}", file=err)
        return EXIT_USAGE
    except StepKitError as exc:
        where = f" (at {exc.path})" if getattr(exc, "path", "") else ""
        print(f"error: {args.task}: {exc.message}{where}", file=err)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False), file=out)
    else:
        print(format_report(report), file=out)
    return exit_status(report, strict=args.strict)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m stepkit check",
        description="Check a task for what compiles but is probably wrong (docs/checker.md).",
        epilog="Exit status: 0 no errors, 1 errors (or warnings with --strict), 2 unreadable file or usage.",
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
