#!/usr/bin/env python3
"""Runs the code blocks of the documentation (ctest ``docs.snippets``).

Every fenced code block of README.md, bindings/python/README.md, docs/*.md and web/README.md
runs, by its language (the first word after the opening fence):

- ``c``: compiled as C99 (``-Wall -Wextra -pedantic -Werror``) against include/ and the built
  library, then run; it must exit with 0.
- ``cpp``: compiled as C++17 under the same warnings; a block with ``main`` is linked and run,
  any other one only compiled.
- ``python``: run with the built library (``STEPKIT_LIBRARY``) and the package from
  bindings/python/src.
- ``sh``, ``bash``, ``console``, ``shell``: run by bash (``-euo pipefail``).
- ``json``: parsed.

Each block runs on its own, in a new temporary directory that holds what a block written for a
checkout's root expects there: links to the repository's ``examples/``, ``schema/`` and
``include/``, and the document's C and C++ blocks as ``app.c`` and ``app.cpp`` (README.md's
pkg-config commands build them). ``pkg-config stepkit`` finds a ``stepkit.pc`` made from
cmake/stepkit.pc.in for the built library, whose directory is on ``LD_LIBRARY_PATH``.

A block that is not meant to run as it is (an excerpt of a larger program, output, a layout
tree, a command that installs from the network or takes minutes) has the line
``<!-- excerpt -->`` immediately before its opening fence; a block in any other language must
have it. The test fails on the first line of a block that fails, with its output.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

EXCERPT = "<!-- excerpt -->"
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
SHELLS = {"sh", "bash", "console", "shell"}
TIMEOUT = 120  # seconds a block may take: each takes well under one


@dataclass
class Block:
    path: Path
    line: int  # the opening fence's line, from 1
    language: str
    code: str
    excerpt: bool

    def where(self, root: Path) -> str:
        return f"{self.path.relative_to(root)}:{self.line}"


def blocks_of(path: Path) -> List[Block]:
    """The fenced code blocks of a Markdown file, and whether each is marked as an excerpt."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: List[Block] = []
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match or (match["fence"][0] == "`" and "`" in match["info"]):
            if lines[i].strip() == EXCERPT:
                following = lines[i + 1] if i + 1 < len(lines) else ""
                if not FENCE.match(following):
                    raise SystemExit(f"{path}:{i + 1}: {EXCERPT} is not immediately before a code block")
            i += 1
            continue
        fence, indent = match["fence"], len(match["indent"])
        words = match["info"].split()
        language = words[0].lower() if words else ""
        body: List[str] = []
        j = i + 1
        while j < len(lines):
            closing = re.match(r"^ {0,3}(`{3,}|~{3,})\s*$", lines[j])
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence):
                break
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        excerpt = i > 0 and lines[i - 1].strip() == EXCERPT
        found.append(Block(path, i + 1, language, "\n".join(body) + "\n", excerpt))
        i = j + 1
    return found


class Runner:
    def __init__(self, root: Path, library: Path, cc: str, cxx: str, python: str) -> None:
        self.root = root
        self.library = library
        self.cc = cc
        self.cxx = cxx
        self.python = python
        self.work = Path(tempfile.mkdtemp(prefix="stepkit-snippets."))
        self.prefix = self._pkg_config_prefix()

    def close(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)

    def _pkg_config_prefix(self) -> Path:
        """A prefix for pkg-config: the repository's headers and the built library."""
        prefix = self.work / "prefix"
        (prefix / "lib" / "pkgconfig").mkdir(parents=True)
        (prefix / "include").symlink_to(self.root / "include")
        real = self.library.resolve()
        for name in ("libstepkit.so", "libstepkit.so.0", real.name):
            link = prefix / "lib" / name
            if not link.exists():
                link.symlink_to(real)
        template = (self.root / "cmake" / "stepkit.pc.in").read_text(encoding="utf-8")
        version = (self.root / "VERSION").read_text(encoding="utf-8").split()[0]
        values = {"STEPKIT_PC_PREFIX": str(prefix), "STEPKIT_PC_LIBDIR": "${prefix}/lib",
                  "STEPKIT_PC_INCLUDEDIR": "${prefix}/include", "STEPKIT_PC_VERSION": version}
        pc = re.sub(r"@(\w+)@", lambda m: values[m.group(1)], template)
        (prefix / "lib" / "pkgconfig" / "stepkit.pc").write_text(pc, encoding="utf-8")
        return prefix

    def environment(self) -> Dict[str, str]:
        env = dict(os.environ)
        libdir = str(self.prefix / "lib")
        env["STEPKIT_LIBRARY"] = str(self.library)
        env["PYTHONPATH"] = str(self.root / "bindings" / "python" / "src")
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PKG_CONFIG_PATH"] = str(self.prefix / "lib" / "pkgconfig")
        env["LD_LIBRARY_PATH"] = libdir + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
        return env

    def directory(self, block: Block, all_blocks: List[Block]) -> Path:
        """A new directory for one block, laid out like a checkout's root (see the module's doc)."""
        here = Path(tempfile.mkdtemp(prefix=f"{block.path.stem}-{block.line}-", dir=self.work))
        for name in ("examples", "schema", "include"):
            (here / name).symlink_to(self.root / name)
        for language, name in (("c", "app.c"), ("cpp", "app.cpp")):
            same = [b for b in all_blocks if b.path == block.path and b.language == language]
            if same:
                (here / name).write_text(same[-1].code, encoding="utf-8")
        return here

    def run(self, command: List[str], cwd: Path, stdin: Optional[str] = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, cwd=cwd, env=self.environment(), text=True, input=stdin,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)

    def check(self, block: Block, all_blocks: List[Block]) -> Optional[str]:
        """Runs one block; None when it passes, else what went wrong."""
        if block.language == "json":
            try:
                json.loads(block.code)
            except json.JSONDecodeError as error:
                return f"not JSON: {error}"
            return None
        here = self.directory(block, all_blocks)
        warnings = ["-Wall", "-Wextra", "-pedantic", "-Werror"]
        include = ["-I", str(self.root / "include")]
        link = [str(self.library), f"-Wl,-rpath,{self.library.resolve().parent}"]
        steps: List[List[str]] = []
        if block.language == "c":
            (here / "snippet.c").write_text(block.code, encoding="utf-8")
            steps = [[self.cc, "-std=c99", *warnings, *include, "snippet.c", "-o", "snippet", *link], ["./snippet"]]
        elif block.language == "cpp":
            (here / "snippet.cpp").write_text(block.code, encoding="utf-8")
            if re.search(r"\bint\s+main\s*\(", block.code):
                steps = [[self.cxx, "-std=c++17", *warnings, *include, "snippet.cpp", "-o", "snippet", *link],
                         ["./snippet"]]
            else:
                steps = [[self.cxx, "-std=c++17", *warnings, *include, "-fsyntax-only", "snippet.cpp"]]
        elif block.language == "python":
            (here / "snippet.py").write_text(block.code, encoding="utf-8")
            steps = [[self.python, "snippet.py"]]
        elif block.language in SHELLS:
            (here / "snippet.sh").write_text(block.code, encoding="utf-8")
            steps = [["bash", "-euo", "pipefail", "snippet.sh"]]
        else:
            return (f"a {block.language or 'plain'} block, which this test cannot run: put {EXCERPT} on the "
                    "line before it if it is not meant to run, or give it a language (c, cpp, python, sh, json)")
        for step in steps:
            try:
                done = self.run(step, here, stdin="")
            except subprocess.TimeoutExpired:
                return f"{' '.join(step)}: still running after {TIMEOUT} s"
            if done.returncode != 0:
                return f"{' '.join(step)}: exit status {done.returncode}\n{done.stdout}"
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="the repository")
    parser.add_argument("--library", type=Path, required=True, help="the built libstepkit.so")
    parser.add_argument("--cc", default="cc")
    parser.add_argument("--cxx", default="c++")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("files", nargs="*", type=Path, help="Markdown files (default: the documentation)")
    args = parser.parse_args()
    root = args.source.resolve()
    files = [f.resolve() for f in args.files] or [
        root / "README.md", root / "bindings" / "python" / "README.md",
        *sorted((root / "docs").glob("*.md")), root / "web" / "README.md"]
    all_blocks = [block for path in files for block in blocks_of(path)]
    runner = Runner(root, args.library.resolve(), args.cc, args.cxx, args.python)
    failures = 0
    counts: Dict[str, int] = {}
    try:
        for block in all_blocks:
            if block.excerpt:
                counts["excerpt"] = counts.get("excerpt", 0) + 1
                continue
            problem = runner.check(block, all_blocks)
            if problem is None:
                counts[block.language] = counts.get(block.language, 0) + 1
                if block.language != "json":
                    print(f"ok    {block.where(root)} {block.language}")
            else:
                failures += 1
                print(f"FAIL  {block.where(root)} {block.language or 'plain'}: {problem.rstrip()}")
    finally:
        runner.close()
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    print(f"{len(all_blocks)} blocks in {len(files)} files: {summary}; {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
