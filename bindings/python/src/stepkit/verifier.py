"""Verifying a submission: ``python -m stepkit verify TASK RESULT [--json] [-o FILE]``.

The submission (a task result, or a QuestionnaireResponse for a task imported from FHIR) is
replayed through the task's own navigation and answer checks (:meth:`Task.verify`,
docs/verify.md); every divergence is printed as ``PATH: code: message``.

Exit status, like a linter's: 0 the submission verifies, 1 it has divergences, 2 usage or bad
input (a file cannot be read, the task is not valid, the submission is not JSON, not a result or
response, or past the input limits, the library cannot be loaded).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List

from ._core import Task
from .errors import LibraryNotFoundError, ParseError, StepKitError

__all__ = ["add_arguments", "run", "format_report"]

EXIT_VERIFIED = 0
EXIT_DIVERGENCES = 1
EXIT_USAGE = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", metavar="TASK.json", help="the task definition (or a FHIR Questionnaire)")
    parser.add_argument("submission", metavar="RESULT.json", help="a task result, or a QuestionnaireResponse")
    parser.add_argument("--ignore", action="append", choices=("dates", "calculations"), default=[],
                        help="leave out the dates' order, or the submitted calculations (repeatable)")
    parser.add_argument("--unknown-fields", choices=("error", "ignore"), default="error",
                        help="whether a member the result's shape does not have is a divergence (default: error)")
    parser.add_argument("--allow-incomplete", action="store_true", help="a run that stops early is no divergence")
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    parser.add_argument("--output", "-o", metavar="FILE", help="write the engine's recomputed result to FILE")


def format_report(report: Dict[str, Any]) -> str:
    """One line per divergence, then a summary line."""
    lines: List[str] = []
    for d in report.get("divergences", []):
        lines.append(f"{d.get('path') or '(document)'}: {d.get('code')}: {d.get('message')}")
    count = len(report.get("divergences", []))
    more = " (more not listed)" if report.get("truncated") else ""
    lines.append("verified" if report.get("verified") else f"{count} divergence{'s' if count != 1 else ''}{more}")
    return "\n".join(lines)


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def run(args: argparse.Namespace) -> int:
    from .cli import _compile  # the one way the CLI reads a task or a Questionnaire

    task: Task = _compile(args.task)
    try:
        data = _read(args.submission)
    except OSError as exc:
        print(f"error: Cannot read {args.submission}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        report = task.verify(data, ignore=args.ignore, unknown_fields=args.unknown_fields,
                             allow_incomplete=args.allow_incomplete)
    except (ParseError, StepKitError) as exc:
        if isinstance(exc, LibraryNotFoundError):
            raise
        print(f"error: {args.submission} cannot be verified: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print(format_report(report))
    if args.output:
        recomputed: Any = report.get("questionnaireResponse") or report.get("result")
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                json.dump(recomputed, handle, indent=2, ensure_ascii=False)
                handle.write("\n")
        except OSError as exc:
            print(f"error: Cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
    return EXIT_VERIFIED if report.get("verified") else EXIT_DIVERGENCES
