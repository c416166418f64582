#!/usr/bin/env python3
"""Summarises callgrind_annotate output for benchmarks/profile.md.

    python3 benchmarks/profile_top.py STEPS_A PREFIX_A [STEPS_B PREFIX_B] [--top N]

reads PREFIX.txt (callgrind_annotate --inclusive=yes) and PREFIX-self.txt (--inclusive=no) of the
two runs, e.g. .build-bench/annotate.t1000 (benchmarks/profile writes them). For each run: the
top N functions by inclusive cost, with Swift names demangled (`swift demangle --simplified`),
entries that callgrind splits by source file (inlining) or by call count merged under one name
(keeping the largest count), callgrind's recursion instances (name'2) left out, and the cost per
profiled step (--unit: another word for it); the top 10 by self cost. Then, for
the functions of B's top list, how their per-step cost grows from A to B. Prints Markdown.
"""

import re
import subprocess
import sys

LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*?)(?:\s+\[([^\]]*)\])?\s*$")


def demangle(names):
    try:
        proc = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(names),
                              stdout=subprocess.PIPE, text=True, check=True)
        out = proc.stdout.split("\n")
        if len(out) >= len(names):
            return out[:len(names)]
    except (OSError, subprocess.CalledProcessError):
        pass
    return names


def load(path):
    costs = {}
    section = 0  # 1: PROGRAM TOTALS, 2: the function table; the rest (auto-annotation) is ignored
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if "PROGRAM TOTALS" in line:
                section = 1
            elif section == 1 and "file:function" in line:
                section = 2
                continue
            elif section == 2 and not line.strip():
                break
            if section == 0:
                continue
            m = LINE.match(line)
            if not m:
                continue
            count = int(m.group(1).replace(",", ""))
            where = m.group(2)
            fn = where.split(":", 1)[1] if ":" in where else where
            obj = m.group(3) or ""
            if fn.startswith("0x") and obj:
                fn = f"{fn} ({obj.rsplit('/', 1)[-1]}, no symbols)"
            costs[fn] = max(costs.get(fn, 0), count)
    total = costs.pop("PROGRAM TOTALS", None) or max(costs.values())
    names = list(costs)
    pretty = dict(zip(names, demangle(names)))
    merged = {}
    for fn, c in costs.items():
        name = re.sub(r" \(\d+x\)$", "", pretty[fn].strip())
        merged[name] = max(merged.get(name, 0), c)
    return total, merged


def short(name, width=110):
    return name if len(name) <= width else name[: width - 1] + "…"


UNIT = "step"
RECURSIVE = re.compile(r"'\d+\b")  # callgrind's recursion instances: inclusive cost counted twice


def report(label, steps, pre, n, skip):
    total, costs = load(pre + ".txt")
    print(f"### {label}: {steps} {UNIT}{'' if steps == 1 else 's'} profiled, {total:,} Ir in all, "
          f"{total // steps:,} Ir per {UNIT}\n")
    print(f"| # | inclusive Ir | % | Ir per {UNIT} | function |")
    print("|---|---|---|---|---|")
    top = sorted(((c, name) for name, c in costs.items()
                  if name not in skip and not RECURSIVE.search(name)), reverse=True)
    for i, (c, name) in enumerate(top[:n], 1):
        print(f"| {i} | {c:,} | {100 * c / total:.1f} | {c // steps:,} | `{short(name)}` |")
    print()
    try:
        _, selfc = load(pre.replace("annotate.", "annotate-self.") + ".txt")
    except OSError:
        return total, costs
    print("Top 10 by self cost (exclusive):\n")
    print("| # | self Ir | % | function |")
    print("|---|---|---|---|")
    top = sorted(((c, name) for name, c in selfc.items()), reverse=True)[:10]
    for i, (c, name) in enumerate(top, 1):
        print(f"| {i} | {c:,} | {100 * c / total:.1f} | `{short(name)}` |")
    print()
    return total, costs


def main():
    global UNIT
    args = sys.argv[1:]
    n = 15
    if "--unit" in args:
        i = args.index("--unit")
        UNIT = args[i + 1]
        del args[i:i + 2]
    if "--top" in args:
        i = args.index("--top")
        n = int(args[i + 1])
        del args[i:i + 2]
    skip = {"main", "one_step", "0x0000000000000000"}
    steps_a, pre_a = int(args[0]), args[1]
    ta, ca = report(pre_a.rsplit("/", 1)[-1], steps_a, pre_a, n, skip)
    if len(args) < 4:
        return
    steps_b, pre_b = int(args[2]), args[3]
    tb, cb = report(pre_b.rsplit("/", 1)[-1], steps_b, pre_b, n, skip)
    print("### Growth per step, B vs A (functions of B's top list)\n")
    print("| function | Ir/step A | Ir/step B | B / A |")
    print("|---|---|---|---|")
    top_b = sorted(((c, name) for name, c in cb.items()
                    if name not in skip and not RECURSIVE.search(name)), reverse=True)[:n]
    for c, name in top_b:
        a = ca.get(name, 0) / steps_a
        b = c / steps_b
        ratio = f"{b / a:,.2f}×" if a else "new"
        print(f"| `{short(name, 90)}` | {a:,.0f} | {b:,.0f} | {ratio} |")
    print(f"| **all (per step)** | {ta / steps_a:,.0f} | {tb / steps_b:,.0f} | "
          f"{(tb / steps_b) / (ta / steps_a):,.2f}× |")


if __name__ == "__main__":
    main()
