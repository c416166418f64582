#!/usr/bin/env python3
"""The Python walk figures (issue 36): a reused walk through the binding against the same walk
from C, both in this process, samples interleaved.

    STEPKIT_LIBRARY=<lib> PYTHONPATH=bindings/python/src \\
        python3 benchmarks/bench_pywalk.py PYWALK.so TASK.json TASK.walk BUDGET_S [--no-orjson]

PYWALK.so is benchmarks/pywalk.c built as a shared object (benchmarks/run builds it); the C walk
calls the library through the binding's own handle on it. Four walks, each open + the walk +
close on a task compiled once:

- ``cNoState``: C, every call with ``out == NULL``;
- ``pyNoState``: Python, ``set_answer(value, state=False)`` and ``go_forward(state=False)``
  (a binding without the ``state`` keyword: the plain calls, their states dropped unread);
- ``cStates``: C asking every call for its state and parsing it with jansson;
- ``pyStates``: Python reading every call's state (``state["step"]``).

``--no-orjson`` hides orjson before the binding is imported, so the states are parsed with the
standard library's json. ``STEPKIT_SPEEDUPS`` chooses the binding's C extension as the package
does (benchmarks/run passes the one it builds, then ``off``: ctypes only). Prints one JSON line {"figure": "pywalk", ...} with seconds per walk.
"""

import ctypes
import inspect
import json
import sys
import time


def main():
    argv = [a for a in sys.argv[1:] if a != "--no-orjson"]
    if "--no-orjson" in sys.argv:
        sys.modules["orjson"] = None  # the import fails, as where orjson is not installed
    import stepkit
    from stepkit import _ffi

    so_path, task_path, walk_path, budget = argv[0], argv[1], argv[2], float(argv[3])
    walk = []  # (identifier, kind, answer text, answer value): kind 0 none, 1 answer, 2 back
    with open(walk_path, encoding="utf-8") as f:
        for line in f:
            ident, _, text = line.rstrip("\n").partition("\t")
            kind = 0 if text == "-" else 2 if text == "<back>" else 1
            walk.append((ident, kind, text, json.loads(text) if kind == 1 else None))
    task = stepkit.Task.from_file(task_path)
    has_state_keyword = "state" in inspect.signature(stepkit.Session.go_forward).parameters
    parser = getattr(stepkit, "JSON_PARSER", "json")

    # the first walk checks the walk file against what the session presents
    with task.open() as session:
        state = session.state
        for ident, kind, _text, answer in walk:
            got = state["step"]["identifier"] if state["step"] else None
            if got != ident:
                raise SystemExit(f"bench_pywalk: the session presents {got}, the walk expects {ident}")
            if kind == 1:
                session.set_answer(answer)
            state = session.go_backward() if kind == 2 else session.go_forward()
        if state["status"] != "finished":
            raise SystemExit("bench_pywalk: the walk did not finish the task")

    # the C walk, through the binding's own handle on the library
    cdll = _ffi.lib()

    class Api(ctypes.Structure):
        _fields_ = [(name, ctypes.c_void_p) for name in
                    ("open", "set_answer", "go_forward", "go_backward", "session_free", "string_free")]

    def address(fn):
        return ctypes.cast(fn, ctypes.c_void_p).value

    api = Api(*(address(getattr(cdll, "stepkit_" + name)) for name in
                ("session_open", "session_set_answer", "session_go_forward", "session_go_backward",
                 "session_free", "string_free")))
    pywalk = ctypes.CDLL(so_path)
    run_c = pywalk.pywalk_run
    run_c.restype = ctypes.c_double
    run_c.argtypes = [ctypes.POINTER(Api), ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                      ctypes.POINTER(ctypes.c_int), ctypes.c_int, ctypes.c_int, ctypes.c_int]
    n = len(walk)
    answers = (ctypes.c_char_p * n)(*[w[2].encode() if w[1] == 1 else None for w in walk])
    kinds = (ctypes.c_int * n)(*[w[1] for w in walk])
    handle = task._handle

    def c_walks(reps, read_states):
        seconds = run_c(ctypes.byref(api), handle, answers, kinds, n, reps, read_states)
        if seconds < 0:
            raise SystemExit(f"bench_pywalk: the C walk failed ({seconds})")
        return seconds

    steps = [(kind, answer) for _ident, kind, _text, answer in walk]
    perf = time.perf_counter

    def py_no_state(reps):
        start = perf()
        for _ in range(reps):
            session = task.open()
            if has_state_keyword:
                for kind, answer in steps:
                    if kind == 1:
                        session.set_answer(answer, state=False)
                    if kind == 2:
                        session.go_backward(state=False)
                    else:
                        session.go_forward(state=False)
            else:
                for kind, answer in steps:
                    if kind == 1:
                        session.set_answer(answer)
                    if kind == 2:
                        session.go_backward()
                    else:
                        session.go_forward()
            session.close()
        return perf() - start

    def py_states(reps):
        start = perf()
        for _ in range(reps):
            session = task.open()
            for kind, answer in steps:
                if kind == 1:
                    session.set_answer(answer)["step"]
                if kind == 2:
                    session.go_backward()["step"]
                else:
                    session.go_forward()["step"]
            session.close()
        return perf() - start

    # One walk per sample, many samples, medians: on this shared machine a walk of a few hundred
    # µs is now and then descheduled for tens of ms; a sample of one walk loses only itself.
    samples = {"cNoState": [], "pyNoState": [], "cStates": [], "pyStates": []}
    start = perf()
    while len(samples["cNoState"]) < 2000 and (len(samples["cNoState"]) < 50 or perf() - start < budget):
        samples["cNoState"].append(c_walks(1, 0))
        samples["pyNoState"].append(py_no_state(1))
        samples["cStates"].append(c_walks(1, 1))
        samples["pyStates"].append(py_states(1))
    task.close()
    print(json.dumps({"figure": "pywalk", "task": task_path.rsplit("/", 1)[-1], "entries": n,
                      "parser": parser, "stateKeyword": has_state_keyword,
                      "speedups": getattr(stepkit, "SPEEDUPS", False), **samples}),
          flush=True)


if __name__ == "__main__":
    main()
