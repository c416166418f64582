"""The navigation graph as a picture: ``python -m stepkit graph TASK.json -o graph.svg|png|dot``.

Steps are nodes (identifier, type, title); navigation rules are labelled edges with the condition
in words (:func:`describe_predicate`: ``symptom does not contain "headache"``); default and
next-in-order moves are edges too ("otherwise"); a step with a skip rule is drawn dashed with a
note saying when it is skipped; sections are Graphviz clusters, and a repeating section's loop
(from its last step back to its first) a bold edge labelled with its bounds ("next person (1 to
12)"). The edges are the engine's own
(``Task.graph()``, the rule graph its navigation follows), so the picture never says
anything the engine does not do; the definition only gives the words on nodes, clusters and
branch edges (the task is compiled first, so only valid tasks are drawn). Graphviz's ``dot``
(``apt-get install graphviz``) renders SVG and PNG.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, TextIO

from ._core import Task
from .errors import DefinitionError, LibraryNotFoundError, StepKitError
from .rendering import is_active, step_title

__all__ = [
    "describe_predicate",
    "Edge",
    "NavigationGraph",
    "build_graph",
    "to_dot",
    "render",
    "add_arguments",
    "run",
    "main",
    "START",
    "END",
]

START = "$start"
END = "$end"
FORMATS = ("svg", "png", "dot", "pdf")

# ------------------------------------------------------------------------------------------------
# Predicates in words


def _value(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False)


def _values(v: Any, joiner: str) -> str:
    if not isinstance(v, list):
        return _value(v)
    if not v:
        return "[]"
    if len(v) == 1:
        return _value(v[0])
    return ", ".join(_value(x) for x in v[:-1]) + f" {joiner} " + _value(v[-1])


def _selector(sel: Any) -> str:
    if isinstance(sel, str):
        return sel
    if isinstance(sel, dict):
        name = str(sel.get("step", "?"))
        if "item" in sel and sel.get("item") != sel.get("step"):
            name += "." + str(sel["item"])
        if "task" in sel:
            name = f"{sel['task']}:{name}"
        return name
    return _value(sel)


# operator -> (holds, does not hold)
_WORDS = {
    "equals": ("is {}", "is not {}"),
    "notEquals": ("is not {}", "is {}"),
    "contains": ("contains {}", "does not contain {}"),
    "containsAny": ("contains any of {}", "contains none of {}"),
    "matches": ("matches /{}/", "does not match /{}/"),
    "minimum": ("is at least {}", "is not at least {}"),
    "maximum": ("is at most {}", "is not at most {}"),
    "exclusiveMinimum": ("is more than {}", "is not more than {}"),
    "exclusiveMaximum": ("is less than {}", "is not less than {}"),
}


def _test(op: str, operand: Any, negated: bool) -> str:
    if op == "answered":
        positive = bool(operand) != negated
        return "is answered" if positive else "is not answered"
    if op == "dontKnow":
        positive = bool(operand) != negated
        return "is \"don't know\"" if positive else "is not \"don't know\""
    words = _WORDS.get(op)
    if words is None:
        return f"{'not ' if negated else ''}{op} {_value(operand)}"
    if op == "matches":
        text = str(operand)
    elif op == "containsAny":
        text = _values(operand, "or")
    elif op in ("equals", "notEquals") and isinstance(operand, list) and len(operand) > 1:
        text = "exactly " + _values(operand, "and")
    else:
        text = _values(operand, "and")
    return words[1 if negated else 0].format(text)


def _comparison(p: Dict[str, Any], negated: bool) -> str:
    subject = _selector(p.get("result"))
    tests = [(k, v) for k, v in p.items() if k != "result"]
    if negated and len(tests) > 1:
        return "not (" + subject + " " + " and ".join(_test(k, v, False) for k, v in tests) + ")"
    return subject + " " + " and ".join(_test(k, v, negated) for k, v in tests)


def describe_predicate(p: Any, _nested: bool = False) -> str:
    """A predicate in words: ``{"not": {"result": "symptom", "contains": "headache"}}`` reads
    ``symptom does not contain "headache"``."""
    if not isinstance(p, dict):
        return _value(p)
    if len(p) == 1:
        (key, inner), = p.items()
        if key == "always":
            return "always" if inner else "never"
        if key in ("all", "any") and isinstance(inner, list):
            if not inner:
                return "always" if key == "all" else "never"
            if len(inner) == 1:
                return describe_predicate(inner[0], _nested)
            text = (" and " if key == "all" else " or ").join(describe_predicate(x, True) for x in inner)
            return f"({text})" if _nested else text
        if key == "not":
            if isinstance(inner, dict) and "result" in inner:
                return _comparison(inner, negated=True)
            if isinstance(inner, dict) and len(inner) == 1 and "not" in inner:
                return describe_predicate(inner["not"], _nested)
            if isinstance(inner, dict) and len(inner) == 1 and "always" in inner:
                return "never" if inner["always"] else "always"
            return "not " + describe_predicate(inner, True) if _is_group(inner) else f"not ({describe_predicate(inner)})"
    if "result" in p:
        return _comparison(p, negated=False)
    return _value(p)


def _is_group(p: Any) -> bool:
    return isinstance(p, dict) and len(p) == 1 and next(iter(p)) in ("all", "any") and len(next(iter(p.values())) or []) > 1


# ------------------------------------------------------------------------------------------------
# The graph


@dataclass
class Edge:
    source: str
    target: str
    label: str = ""
    #: "branch", "default" (defaultDestination), "next" (next in order: no rule, or no branch
    #: matched and no default), "direct", "start", "nextInstance" (a repeating section's loop)
    kind: str = "next"
    #: the rule this edge comes from (a step or section identifier), if any
    rule: Optional[str] = None
    #: for a destination that is a section: the section's identifier
    section: Optional[str] = None
    #: for the move past a section navigation passes over: the section, and why ("noInstances"
    #: for a repeating section with no instance; absent for its skip rule)
    passed_over: Optional[str] = None
    passed_over_by: Optional[str] = None


@dataclass
class StepNode:
    identifier: str
    type: str
    title: str
    sections: List[str]
    skip: Optional[str] = None
    modifier: Optional[str] = None
    items: List[str] = field(default_factory=list)


@dataclass
class SectionNode:
    identifier: str
    title: str
    parent: Optional[str]
    first: str
    last: str
    skip: Optional[str] = None


@dataclass
class NavigationGraph:
    identifier: str
    steps: List[StepNode]
    sections: List[SectionNode]
    edges: List[Edge]


def _flatten(items: List[Dict[str, Any]], sections: List[str], steps: List[StepNode],
             found: List[SectionNode], described: Dict[str, Dict[str, Any]]) -> None:
    for item in items:
        if item.get("type") == "section":
            parent = sections[-1] if sections else None
            start = len(steps)
            _flatten(item.get("steps") or [], sections + [item["identifier"]], steps, found, described)
            if len(steps) > start:
                found.append(SectionNode(item["identifier"], item.get("title") or "", parent,
                                         steps[start].identifier, steps[-1].identifier))
            continue
        info = described.get(item["identifier"], {})  # the engine's words for the step
        title = step_title(info) if "displayTitle" in info else ""
        if title == item["identifier"]:
            title = ""  # a step with nothing to call it by: the node shows its identifier already
        node = StepNode(item["identifier"], item.get("type", "?"), title, list(sections))
        if is_active(info):
            duration = info.get("stepDuration")  # the engine's, its defaults included
            if node.type != "wait" and isinstance(duration, (int, float)) and duration:
                node.items.append(f"{duration:g} s")
            recorders = [r.get("identifier", "?") for r in item.get("recorderConfigurations") or [] if isinstance(r, dict)]
            if recorders:
                node.items.append("records " + ", ".join(recorders))
        for form_item in item.get("formItems") or []:
            if "identifier" not in form_item:
                continue
            line = form_item["identifier"] + ("" if not form_item.get("optional") else " (optional)")
            if "visibleWhen" in form_item:
                line += " if " + describe_predicate(form_item["visibleWhen"])
            node.items.append(line)
        steps.append(node)


def build_graph(definition: Dict[str, Any], info: Optional[Dict[str, Any]] = None,
                rules: Optional[Dict[str, Any]] = None) -> NavigationGraph:
    """The navigation graph of a (valid) task definition. The edges are the engine's
    (``rules``: the compiled task's :meth:`~stepkit.Task.graph`, every way its navigation can
    go, docs/branching.md); the definition gives only what the nodes and clusters say. ``info``:
    the compiled task's :attr:`~stepkit.Task.info`, whose steps give the effective
    ``stepDuration`` of active steps. Without them, the definition is compiled to get them."""
    if info is None or rules is None:
        with Task.from_json(definition) as task:
            info = task.info if info is None else info
            rules = task.graph() if rules is None else rules
    described: Dict[str, Dict[str, Any]] = {s["identifier"]: s for s in info.get("steps") or []
                                            if isinstance(s, dict) and isinstance(s.get("identifier"), str)}
    steps: List[StepNode] = []
    sections: List[SectionNode] = []
    _flatten(definition.get("steps") or [], [], steps, sections, described)
    skips: Dict[str, Any] = definition.get("skipRules") or {}
    modifiers: Dict[str, Any] = definition.get("stepModifiers") or {}
    for node in steps:
        if node.identifier in skips:
            node.skip = describe_predicate(skips[node.identifier])
        modifier = modifiers.get(node.identifier)
        if isinstance(modifier, dict) and "when" in modifier:
            fields = ", ".join(sorted((modifier.get("set") or {}).keys()))
            node.modifier = f"sets {fields} if {describe_predicate(modifier['when'])}"
    for section in sections:
        if section.identifier in skips:
            section.skip = describe_predicate(skips[section.identifier])
    by_step = {node.identifier: node for node in steps}
    for action in definition.get("asyncActions") or []:
        if not isinstance(action, dict):
            continue
        name = action.get("identifier", "?")
        start = by_step.get(action.get("startStepIdentifier", ""))
        if start is not None:
            start.items.append(f"starts recording {name}")
        stop = by_step.get(action.get("stopStepIdentifier", ""))
        if stop is not None:
            stop.items.append(f"stops recording {name} after it")

    edges = [_edge(e) for e in rules.get("edges") or [] if isinstance(e, dict)]
    return NavigationGraph(str(definition.get("identifier", "")), steps, sections, edges)


def _edge(edge: Dict[str, Any]) -> Edge:
    """An edge of the engine's rule graph (``Task.graph()["edges"]``) as drawn: its label is the
    branch's condition in words, or "otherwise" for the move taken when no branch matches."""
    kind = str(edge.get("kind", "next"))
    source = edge.get("from")
    target = edge.get("to")
    if kind == "branch":
        label = describe_predicate(edge.get("when"))
    elif kind in ("default", "otherwise"):
        label = "otherwise"
    elif kind == "nextInstance":
        label = f"next {edge.get('section')} ({edge.get('minCount')} to {edge.get('maxCount')})"
    else:
        label = ""
    if edge.get("by") == "noInstances":
        # The move past a repeating section with no instance: its count came out as 0.
        count = edge.get("count")
        reads = _selector(count["answer"]) if isinstance(count, dict) and len(count) == 1 and "answer" in count else "its count"
        label = f"no {edge.get('passedOver')} ({reads} is 0)"
    return Edge(START if source is None else str(source), END if target is None else str(target), label,
                "next" if kind == "otherwise" else kind, edge.get("rule"), edge.get("section"),
                edge.get("passedOver"), edge.get("by"))


# ------------------------------------------------------------------------------------------------
# DOT


def _q(text: str) -> str:
    """A DOT quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _wrap(text: str, width: int = 36) -> str:
    words, lines, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return "\n".join(lines)


_SHAPES = {
    "instruction": ("note", "#f5f5f5"),
    "completion": ("box", "#d9f2d9"),
    "question": ("box", "#ddeeff"),
    "form": ("box3d", "#e6e0f8"),
    "page": ("box3d", "#e6e0f8"),
    "review": ("folder", "#fff6cc"),
    "active": ("hexagon", "#ffe8cc"),
    "countdown": ("hexagon", "#ffe8cc"),
    "wait": ("hexagon", "#ffe8cc"),
}


def to_dot(graph: NavigationGraph) -> str:
    """The graph in Graphviz's DOT language."""
    out: List[str] = [
        f"digraph {_q(graph.identifier or 'task')} {{",
        "  graph [rankdir=TB, compound=true, fontname=\"Helvetica\", labelloc=t, label="
        + _q(f"Task {graph.identifier}") + "];",
        "  node [fontname=\"Helvetica\", fontsize=11, style=\"filled,rounded\", shape=box];",
        "  edge [fontname=\"Helvetica\", fontsize=9];",
        f"  {_q(START)} [shape=circle, label=\"start\", style=filled, fillcolor=black, fontcolor=white, width=0.5];",
        f"  {_q(END)} [shape=doublecircle, label=\"end\", style=filled, fillcolor=black, fontcolor=white, width=0.4];",
    ]
    children: Dict[Optional[str], List[SectionNode]] = {}
    for section in graph.sections:
        children.setdefault(section.parent, []).append(section)

    def node_line(node: StepNode, indent: str) -> str:
        shape, color = _SHAPES.get(node.type, ("box", "white"))
        lines = [node.identifier, f"({node.type})"]
        if node.title:
            lines.append(_wrap(node.title))
        lines += ["• " + _wrap(item) for item in node.items]
        style = "filled,rounded"
        if node.modifier:
            lines.append(_wrap("modifier: " + node.modifier))
        if node.skip:
            lines.append(_wrap("skipped if " + node.skip))
            style = "filled,rounded,dashed"
        return f"{indent}{_q(node.identifier)} [label={_q(chr(10).join(lines))}, shape={shape}, fillcolor={_q(color)}, style={_q(style)}];"

    def emit(parent: Optional[str], indent: str) -> None:
        for node in graph.steps:
            if (node.sections[-1] if node.sections else None) == parent:
                out.append(node_line(node, indent))
        for section in children.get(parent, []):
            label = section.title + (" " if section.title else "") + f"[{section.identifier}]"
            style = "rounded"
            if section.skip:
                label += "\n" + _wrap("skipped if " + section.skip, 48)
                style = "rounded,dashed"
            out.append(f"{indent}subgraph {_q('cluster_' + section.identifier)} {{")
            out.append(f"{indent}  label={_q(label)}; style={_q(style)}; color=\"#7a7a7a\";")
            emit(section.identifier, indent + "  ")
            out.append(f"{indent}}}")

    emit(None, "  ")
    for edge in graph.edges:
        attributes = []
        if edge.label:
            attributes.append(f"label={_q(_wrap(edge.label, 40))}")
        if edge.kind in ("default", "next") and edge.label:
            attributes.append("style=dashed")
        if edge.kind == "branch":
            attributes.append("color=\"#1f5fbf\", fontcolor=\"#1f5fbf\"")
        if edge.kind == "nextInstance":
            # The loop back up: drawn bold, and left out of the ranking so the steps stay in order.
            attributes.append("style=bold, color=\"#8a4fbf\", fontcolor=\"#8a4fbf\", constraint=false")
        if edge.passed_over_by == "noInstances":
            # The way round a repeating section with no instance, in the loop's colour.
            attributes.append("color=\"#8a4fbf\", fontcolor=\"#8a4fbf\"")
        if edge.section and edge.kind != "nextInstance":
            attributes.append(f"lhead={_q('cluster_' + edge.section)}")
        suffix = f" [{', '.join(attributes)}]" if attributes else ""
        out.append(f"  {_q(edge.source)} -> {_q(edge.target)}{suffix};")
    out.append("}")
    return "\n".join(out) + "\n"


def render(dot: str, path: str, fmt: Optional[str] = None) -> None:
    """Writes ``dot`` to ``path``: as DOT text, or rendered by Graphviz (svg, png, pdf).

    Raises FileNotFoundError when Graphviz's ``dot`` is not installed, and
    subprocess.CalledProcessError when it fails."""
    fmt = (fmt or os.path.splitext(path)[1].lstrip(".") or "svg").lower()
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}; expected one of: {', '.join(FORMATS)}")
    if fmt == "dot":
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(dot)
        return
    program = shutil.which("dot")
    if program is None:
        raise FileNotFoundError("Graphviz's 'dot' program is not installed (apt-get install graphviz).")
    subprocess.run([program, f"-T{fmt}", "-o", path], input=dot.encode("utf-8"), check=True,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)


# ------------------------------------------------------------------------------------------------
# Command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("task", metavar="TASK.json", help="the task definition")
    parser.add_argument("-o", "--output", metavar="FILE",
                        help="where to write the graph: FILE.svg, FILE.png, FILE.pdf or FILE.dot (default: DOT on stdout)")
    parser.add_argument("--format", "-T", choices=FORMATS, help="the output format (default: from the file name)")


def run(args: argparse.Namespace, out: Optional[TextIO] = None, err: Optional[TextIO] = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        with open(args.task, "rb") as handle:
            text = handle.read()
    except OSError as exc:
        print(f"error: cannot read {args.task}: {exc.strerror or exc}", file=err)
        return 2
    try:
        with Task.from_json(text) as task:  # only valid tasks are drawn
            info = task.info
            rules = task.graph()
        definition = json.loads(text)
    except LibraryNotFoundError as exc:
        print(f"error: {exc.message}", file=err)
        return 2
    except DefinitionError as exc:
        print(f"error: {args.task} is not a valid task:", file=err)
        for problem in exc.errors:
            print(f"  {problem.get('path') or '(task)'}: {problem.get('message')}", file=err)
        return 2
    except StepKitError as exc:
        print(f"error: {args.task}: {exc.message}", file=err)
        return 2
    dot = to_dot(build_graph(definition, info, rules))
    if not args.output:
        if args.format not in (None, "dot"):
            print("error: --format other than dot needs -o FILE", file=err)
            return 2
        out.write(dot)
        return 0
    try:
        render(dot, args.output, args.format)
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=err)
        return 2
    except subprocess.CalledProcessError as exc:
        detail = exc.stderr.decode("utf-8", "replace").strip() if exc.stderr else ""
        print(f"error: Graphviz failed: {detail or exc}", file=err)
        return 2
    except OSError as exc:
        print(f"error: cannot write {args.output}: {exc.strerror or exc}", file=err)
        return 2
    print(f"wrote {args.output}", file=err)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stepkit graph",
                                     description="Draw a task's navigation graph through Graphviz.")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
