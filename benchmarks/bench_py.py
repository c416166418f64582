#!/usr/bin/env python3
"""The Python driver of StepKit's benchmark suite: one step through the binding.

    STEPKIT_LIBRARY=<release lib> PYTHONPATH=bindings/python/src \\
        python3 benchmarks/bench_py.py TASK.json TASK.walk BUDGET_S

A step is what a Python host does: ``session.set_answer(value)`` (when the walk has an answer;
the value is a Python object, decoded once before timing) + ``session.go_forward()``, which returns
the new state as a dict. Prints one JSON line {"figure": "pystep", "engine": [s per step, ...]}.
"""

import json
import sys
import time

import stepkit


def main():
    task_path, walk_path, budget = sys.argv[1], sys.argv[2], float(sys.argv[3])
    walk = []
    with open(walk_path, encoding="utf-8") as f:
        for line in f:
            ident, _, text = line.rstrip("\n").partition("\t")
            walk.append((ident, None if text == "-" else json.loads(text)))
    t0 = time.perf_counter()
    task = stepkit.Task.from_file(task_path)
    compile_s = time.perf_counter() - t0

    # first walk: verified against the walk file
    with task.open() as session:
        state = session.state
        if callable(state):  # a method in some versions of the binding
            state = state()
        for ident, answer in walk:
            got = state["step"]["identifier"] if state["step"] else None
            if got != ident:
                raise SystemExit(f"bench_py: the session presents {got}, the walk expects {ident}")
            if answer is not None:
                session.set_answer(answer)
            state = session.go_forward()
        if state["status"] != "finished":
            raise SystemExit("bench_py: the walk did not finish the task")

    samples = []
    start = time.perf_counter()
    perf = time.perf_counter
    while len(samples) < 25 and (len(samples) < 3 or perf() - start < budget):
        session = task.open()
        total = 0.0
        for _ident, answer in walk:
            a = perf()
            if answer is not None:
                session.set_answer(answer)
            session.go_forward()
            total += perf() - a
        session.close()
        samples.append(total / len(walk))
    print(json.dumps({"figure": "pystep", "task": task_path.rsplit("/", 1)[-1], "steps": len(walk),
                      "compileSeconds": compile_s, "engine": samples}), flush=True)


if __name__ == "__main__":
    main()
