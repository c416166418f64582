#!/usr/bin/env python3
"""StepKit's benchmark suite: builds the release library, runs the C and Python drivers, prints
the table (see benchmarks/README.md). Run it as `bash benchmarks/run` from the repository.

Options:
  --no-build       reuse the library copied by the last run (.build-bench/lib/libstepkit.so)
  --lib PATH       benchmark this libstepkit.so instead of building one
  --quick          smaller budgets (about a minute; numbers are noisier)
Everything generated (library copy, drivers, tasks, results.json, table.md) goes to .build-bench/
(gitignored).
"""

import argparse
import glob
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sysconfig
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "benchmarks")
OUT = os.path.join(ROOT, ".build-bench")
SCRATCH = os.path.join(ROOT, ".build-release")
BUILD = ["swift", "build", "-c", "release", "--product", "stepkit", "-Xswiftc", "-static-stdlib",
         "--scratch-path", SCRATCH]


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def build_library(args):
    """Returns (path of the library to benchmark, where it came from)."""
    lib_dir = os.path.join(OUT, "lib")
    os.makedirs(lib_dir, exist_ok=True)
    target = os.path.join(lib_dir, "libstepkit.so")
    if args.lib:
        shutil.copy2(args.lib, target)
        return target, f"given: {args.lib}"
    if args.no_build:
        if not os.path.exists(target):
            sys.exit("bench: --no-build but no library in .build-bench/lib: run without it once")
        return target, "reused from the last run"
    built = os.path.join(SCRATCH, "release", "libstepkit.so")
    origin = "built now"
    for attempt in range(3):
        log("building the release library: " + " ".join(BUILD[:-1]) + " .build-release")
        t0 = time.time()
        proc = subprocess.run(BUILD, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        if proc.returncode == 0:
            log(f"built in {time.time() - t0:.0f} s")
            break
        log("build failed (the engine may be mid-edit):\n" + proc.stdout[-1500:])
        if attempt < 2:
            log("retrying in 30 s")
            time.sleep(30)
    else:
        if os.path.exists(target):
            log("WARNING: using the library of the last benchmark run")
            return target, "WARNING: build failed; library of the last benchmark run"
        if not os.path.exists(built):
            sys.exit("bench: the release build fails")
        log("WARNING: using the last successful build in .build-release")
        origin = "WARNING: build failed; last successful build in .build-release"
    # a private copy: the engine may be rebuilt while the benchmark runs
    shutil.copy2(built, target + ".tmp")
    os.replace(target + ".tmp", target)
    return target, origin


def build_drivers(lib):
    cc = os.environ.get("CC", "cc")
    lib_dir = os.path.dirname(lib)
    inc = os.path.join(ROOT, "include")
    cmds = [
        [cc, "-O2", "-Wall", "-Wno-deprecated-declarations", "-I" + inc,
         os.path.join(BENCH, "bench.c"), "-o", os.path.join(OUT, "bench"), "-L" + lib_dir,
         "-lstepkit", "-ljansson", "-lcrypto", "-lpthread", "-Wl,-rpath," + lib_dir],
        [cc, "-O2", "-Wall", "-I" + inc, os.path.join(BENCH, "load.c"), "-o",
         os.path.join(OUT, "load"), "-ldl"],
        [cc, "-O2", "-Wall", "-I" + inc, os.path.join(BENCH, "autosave.c"), "-o",
         os.path.join(OUT, "bench-autosave"), "-L" + lib_dir, "-lstepkit", "-Wl,-rpath," + lib_dir],
        [cc, "-O2", "-Wall", "-I" + inc, os.path.join(BENCH, "calc.c"), "-o",
         os.path.join(OUT, "calc"), "-L" + lib_dir, "-lstepkit", "-Wl,-rpath," + lib_dir],
        # long choice lists (issue 26, item 10): writes the definitions and, under callgrind,
        # counts one compile's instructions (the same driver as the ctest scaling.choices)
        [cc, "-O2", "-Wall", "-I" + inc, os.path.join(ROOT, "bindings", "c", "tests", "choice_scaling.c"),
         "-o", os.path.join(OUT, "choice_scaling"), "-L" + lib_dir, "-lstepkit", "-Wl,-rpath," + lib_dir],
    ]
    # the C side of the Python walk figures: a shared object the Python driver loads (pywalk.c)
    cmds.append([cc, "-O2", "-Wall", "-shared", "-fPIC", os.path.join(BENCH, "pywalk.c"), "-o",
                 os.path.join(OUT, "pywalk.so"), "-ljansson"])
    for cmd in cmds:
        subprocess.run(cmd, check=True)
    # the binding's optional C extension (bindings/python/ext/_speedups.c), as CMake builds it
    # (limited API, abi3), against this Python's headers; without them its rows say "off"
    extension = os.path.join(OUT, "_speedups.abi3.so")
    if os.path.exists(extension):
        os.remove(extension)
    if subprocess.run([cc, "-O2", "-Wall", "-std=c99", "-shared", "-fPIC", "-fvisibility=hidden",
                       "-I" + sysconfig.get_paths()["include"],
                       os.path.join(ROOT, "bindings", "python", "ext", "_speedups.c"), "-o",
                       extension]).returncode != 0:
        log("WARNING: the Python extension does not build (no Python headers?): ctypes rows only")


EMPTY_SCRATCH = os.path.join(OUT, "empty")


def build_empty_library():
    """The load figure's floor: benchmarks/empty, a Swift library with one exported function,
    built the way the engine ships (release, -static-stdlib). Returns its path."""
    log("building the empty Swift library (benchmarks/empty)")
    subprocess.run(["swift", "build", "-c", "release", "--product", "empty", "-Xswiftc",
                    "-static-stdlib", "--scratch-path", EMPTY_SCRATCH],
                   cwd=os.path.join(BENCH, "empty"), check=True, stdout=subprocess.DEVNULL)
    return os.path.join(EMPTY_SCRATCH, "release", "libempty.so")


def run_valgrind(cmd):
    """Runs a driver under valgrind (`cmd` starts with `valgrind --tool=...`) and returns the
    driver's last output line, a JSON object; on failure, stops with valgrind's own report."""
    log(" ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        tool = cmd[1].split("=", 1)[-1]
        sys.exit(f"bench: {tool} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# Instruction counts (callgrind): walk entries instrumented per task, after the first.
INSTR_ENTRIES = {"t10": 0, "t1000": 201, "t100000": 201}
# Functions whose inclusive cost is event building (mangled Swift names, as callgrind reports
# them): Session.emit (when not inlined), the queue's EventQueue.append, and whatever they call.
EVENT_FUNCTIONS = ("7SessionV4emit", "10EventQueueV6append")


# Input events (issue 35, docs/active-tasks.md): a Stroop game's key presses, and a tower of
# Hanoi's moves (a game that takes any number of inputs), counted at several lengths of game so
# that a cost growing with the inputs already taken shows; the Hanoi moves with autosave too.
INPUT_COUNTS = (20, 160)
HANOI_COUNTS = (20, 160, 1000)
# With autosave an input costs more the more inputs the game has taken (the saved game is its
# inputs, written again for each: benchmarks/README.md), so 1,000 would take minutes under callgrind.
AUTOSAVE_COUNTS = (20, 160)


def callgrind_input(bench, n, game="stroop", autosave=False):
    """Instructions of `bench instr-input n game`: n stepkit_session_input calls, no output asked
    for (autosaved to a file in .build-bench when `autosave`)."""
    tag = f"{game}.{n}" + (".autosave" if autosave else "")
    out = os.path.join(OUT, f"callgrind.input.{tag}.out")
    extra = [os.path.join(OUT, "input-autosave.json")] if autosave else []
    run_valgrind(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + out,
                  bench, "instr-input", str(n), game, *extra])
    with open(out, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
    return 0


def callgrind_instr(bench, task, walk, entries, events=True):
    """Runs `bench instr` under callgrind twice: once counting every instruction, once counting
    only inside event building (--toggle-collect on EVENT_FUNCTIONS: exactly their inclusive
    cost, callees included). Returns (steps, total Ir, Ir inside event building)."""
    def run(tag, extra):
        out = os.path.join(OUT, f"callgrind.instr{tag}.{os.path.basename(task)}.out")
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + out,
               *extra, bench, "instr", task, walk, str(entries)]
        steps = run_valgrind(cmd)["steps"]
        total = 0
        with open(out, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("totals:"):
                    total = int(line.split()[1])
        return steps, total
    steps, total = run("", [])
    if not events:
        return steps, total, None
    _, inside = run(".events", [f"--toggle-collect=*{name}*" for name in EVENT_FUNCTIONS])
    return steps, total, inside


def callgrind_dumps(out, driver, remove=False):
    """Runs `driver` (the driver and its arguments) under callgrind, which it instruments with
    a dump per client request, into `out`.*; returns [(the request's text, the dump's Ir)] and
    removes the dump files when `remove`."""
    for old in glob.glob(out + "*"):
        os.remove(old)
    run_valgrind(["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + out,
                  *driver])
    dumps = []
    for path in glob.glob(out + ".*"):
        name, total = None, None
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("desc: Trigger: Client Request: "):
                    name = line.split("Client Request: ", 1)[1].strip()
                elif line.startswith("totals:"):
                    total = int(line.split()[1])
        if remove:
            os.remove(path)
        if name is not None and total is not None:
            dumps.append((name, total))
    return dumps


def callgrind_run(bench, task, walk, n):
    """Runs `bench instr-run` under callgrind (issue 36): one dump each for n compiles, n
    json_loads, n reused runs, n results and n json_dumps of the result. Returns {dump name: Ir}."""
    out = os.path.join(OUT, f"callgrind.run.{os.path.basename(task)}.out")
    return dict(callgrind_dumps(out, [bench, "instr-run", task, walk, str(n)]))


# Walk entries profiled one by one on the 1,000-step task (`bench instr-entries`): a window past
# the session's first steps, so each kind of step shows its steady cost.
ENTRY_WINDOW = (200, 400)


def callgrind_entries(bench, task, walk, window):
    """Runs `bench instr-entries` under callgrind (one dump an entry) and returns
    {kind: [Ir of each entry]}, the kind being what follows `b<k>_` in the step's identifier
    (benchmarks/gen_task.py names every step so)."""
    out = os.path.join(OUT, f"callgrind.entries.{os.path.basename(task)}.out")
    kinds = {}
    for name, total in callgrind_dumps(out, [bench, "instr-entries", task, walk, str(window[0]), str(window[1])],
                                       remove=True):
        if name.startswith("entry "):
            kinds.setdefault(name.split()[-1].split("_", 1)[-1], []).append(total)
    return kinds


def dhat_shared_writes(bench, task, walk, state):
    """Bytes a step writes into memory that every session of a task shares (the compiled task's
    objects and the handle registry): `bench shared` under DHAT with 2 and with 4 walks, the
    writes the two extra walks made into blocks allocated as often in both runs (so before the
    walks: at compile, or once in the process), divided by their steps. Each such write is a
    reference count or a lock word that a second core running the same task must take back."""
    runs = []
    for walks in (2, 4):
        out = os.path.join(OUT, f"dhat.shared{state}.{walks}.json")
        cmd = ["valgrind", "--tool=dhat", "--dhat-out-file=" + out, bench, "shared", task, walk,
               str(walks), str(state)]
        steps = run_valgrind(cmd)["steps"]
        with open(out, encoding="utf-8") as f:
            data = json.load(f)
        sites = {}
        for pp in data["pps"]:
            site = tuple(pp["fs"])
            blocks, writes = sites.get(site, (0, 0))
            sites[site] = (blocks + pp["tbk"], writes + pp.get("wb", 0))
        # frame indexes differ between runs: key the sites by their frames' text
        runs.append(({tuple(data["ftbl"][i] for i in k): v for k, v in sites.items()}, steps))
    (small, steps), (big, _) = runs
    extra = sum(big[k][1] - small[k][1] for k in big
                if k in small and big[k][0] == small[k][0] and big[k][1] > small[k][1])
    return extra / (2 * steps)


# Long choice lists (issue 26, item 10): the sizes the issue measured (80,000 text choices,
# 3.1 MB: 36 s; 50,000 FHIR answer options: 95 s), timed against json_loads of the same text,
# and the instructions of one compile at n and 4n choices, whose ratio is about 4 when the
# compile is linear in the choices.
CHOICE_LISTS = (("task", 80000), ("fhir", 50000))
CHOICE_SCALING_N = 5000


def generate_choice_lists():
    """Writes .build-bench/choices-task-80000.json and choices-fhir-50000.json (the driver
    builds them); returns {kind: path}."""
    paths = {}
    for kind, n in CHOICE_LISTS:
        path = os.path.join(OUT, f"choices-{kind}-{n}.json")
        with open(path, "w", encoding="utf-8") as f:
            subprocess.run([os.path.join(OUT, "choice_scaling"), "text", kind, str(n)], stdout=f, check=True)
        paths[kind] = path
    return paths


def callgrind_choice_scaling(kind, n):
    """Instructions of one compile of n choices of `kind` (callgrind, instrumentation around the
    compile only)."""
    out = os.path.join(OUT, f"callgrind.choices.{kind}.{n}.out")
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--callgrind-out-file=" + out,
           os.path.join(OUT, "choice_scaling"), kind, str(n)]
    run_valgrind(cmd)
    with open(out, encoding="utf-8", errors="replace") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("totals:"))


def generate_tasks():
    gen = os.path.join(BENCH, "gen_task.py")
    jobs = [(f"t{n}", ["--steps", str(n)]) for n in (10, 100, 1000, 100000)]
    jobs.append(("forms", ["--forms", "500", "--items", "20"]))
    for name, extra in jobs:
        prefix = os.path.join(OUT, name)
        if (os.path.exists(prefix + ".walk")
                and os.path.getmtime(prefix + ".walk") >= os.path.getmtime(gen)):
            continue
        log(f"generating {name}")
        subprocess.run([sys.executable, gen, "--seed", "1", "--out", prefix] + extra, check=True)
    # issue 31: a walk with 100 instances of a repeating section, and the same steps without
    gen_instances = os.path.join(BENCH, "gen_instances.py")
    walk = os.path.join(OUT, "instances.walk")
    if not os.path.exists(walk) or os.path.getmtime(walk) < os.path.getmtime(gen_instances):
        log("generating instances, flat")
        subprocess.run([sys.executable, gen_instances, "--out", OUT], check=True)


def run_json(cmd, env=None):
    log(" ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed ({proc.returncode})")
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


# --------------------------------------------------------------------------------------------

def fmt_time(s):
    if s is None:
        return "–"
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.1f} µs"
    if s < 1:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


def fmt_bytes(b):
    if b < 10 * 1024:
        return f"{b:,.0f} B"
    if b < 10 * 1024 * 1024:
        return f"{b / 1024:,.1f} KiB"
    return f"{b / 1024 / 1024:,.1f} MiB"


class Table:
    def __init__(self):
        self.rows = []

    def add(self, figure, values, floor=None, ratio=None, target="report", ok=None, fmt=fmt_time,
            floor_text=None):
        values = list(values)
        med = statistics.median(values) if values else None
        fmed = statistics.median(floor) if floor else None
        if ratio is None and med is not None and fmed:
            ratio = med / fmed
        status = "" if ok is None else ("ok" if ok(ratio if ratio is not None else med) else "MISSED")
        self.rows.append({
            "figure": figure, "n": len(values), "median": fmt(med) if med is not None else "–",
            "min": fmt(min(values)) if values else "–", "max": fmt(max(values)) if values else "–",
            "floor": floor_text if floor_text is not None else (fmt(fmed) if fmed else "–"),
            "ratio": f"{ratio:.2f}×" if ratio is not None else "–", "target": target,
            "status": status, "rawMedian": med, "rawRatio": ratio})
        return med, ratio

    def markdown(self):
        head = ["figure", "n", "median", "min", "max", "floor (median)", "ratio", "target", ""]
        keys = ["figure", "n", "median", "min", "max", "floor", "ratio", "target", "status"]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in self.rows:
            lines.append("| " + " | ".join(str(r[k]) for k in keys) + " |")
        return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description="StepKit benchmark suite")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--lib")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    q = 0.4 if args.quick else 1.0
    os.makedirs(OUT, exist_ok=True)
    t_start = time.time()
    load0 = os.getloadavg()
    lib, lib_origin = build_library(args)
    t_built = time.time()
    build_drivers(lib)
    generate_tasks()
    bench = os.path.join(OUT, "bench")
    P = lambda name: os.path.join(OUT, name)  # noqa: E731
    results = []

    # compile
    for name, budget, mins in (("t10", 2, 3), ("t1000", 5, 3), ("t100000", 10, 1)):
        results += run_json([bench, "compile", P(name + ".json"), str(budget * q), str(mins)])
    # long choice lists: compile (and FHIR import) vs json_loads, and instructions at n and 4n
    choice_files = generate_choice_lists()
    results += run_json([bench, "compile", choice_files["task"], str(4 * q), "3"])
    results += run_json([bench, "compile-fhir", choice_files["fhir"], str(4 * q), "3"])
    choice_instr = {kind: (callgrind_choice_scaling(kind, CHOICE_SCALING_N),
                           callgrind_choice_scaling(kind, 4 * CHOICE_SCALING_N)) for kind in ("task", "fhir")}
    results.append({"figure": "choiceInstr", "n": CHOICE_SCALING_N, "counts": choice_instr})
    # steps: C, per task size
    results += run_json([bench, "steps", P("t10.json"), P("t10.walk"), "0", str(2 * q)])
    results += run_json([bench, "steps", P("t100.json"), P("t100.walk"), "0", str(5 * q)])
    results += run_json([bench, "steps", P("t1000.json"), P("t1000.walk"), "0", str(12 * q)])
    # per-step scaling: 100,000-step vs 100-step task, interleaved in one process
    results += run_json([bench, "scaling", P("t100.json"), P("t100.walk"), P("t100000.json"),
                         P("t100000.walk"), "2000", str(16 * q)])
    # steps: Python
    env = dict(os.environ, STEPKIT_LIBRARY=lib,
               PYTHONPATH=os.path.join(ROOT, "bindings", "python", "src"))
    results += run_json([sys.executable, os.path.join(BENCH, "bench_py.py"), P("t1000.json"),
                         P("t1000.walk"), str(12 * q)], env=env)
    # the survey walked through the binding and from C in one process (bench_pywalk.py): with
    # the binding's C extension and orjson, with orjson hidden, and with ctypes only
    extension = P("_speedups.abi3.so") if os.path.exists(P("_speedups.abi3.so")) else "off"
    for extra, speedups, key in (([], extension, ""), (["--no-orjson"], extension, " (json)"),
                                 ([], "off", " (ctypes)")):
        for r in run_json([sys.executable, os.path.join(BENCH, "bench_pywalk.py"), P("pywalk.so"),
                           os.path.join(BENCH, "survey.json"), os.path.join(BENCH, "survey.walk"),
                           str(6 * q)] + extra, env=dict(env, STEPKIT_SPEEDUPS=speedups)):
            r["task"] = "survey.json" + key
            results.append(r)
    # save / restore, memory, threads, load
    results += run_json([bench, "saverestore", P("forms.json"), P("forms.walk"), str(6 * q)])
    results += run_json([bench, "memory", P("t100.json"), P("t100.walk"), "10000", "1000", "10"])
    results += run_json([bench, "threads", P("t100.json"), P("t100.walk"), str(10 * q)])
    # autosave: one call's cost as the history grows (files in .build-bench/autosave/)
    autosave_dir = P("autosave")
    shutil.rmtree(autosave_dir, ignore_errors=True)
    os.makedirs(autosave_dir)
    autosaves = run_json([P("bench-autosave"), autosave_dir, "1", "1000", "5000"])
    results += autosaves
    # calculations: a scored screener's step with and without its total and band (benchmarks/calc.c)
    results += run_json([P("calc"), str(4 * q)])
    loads = []
    for _ in range(7):
        loads += run_json([os.path.join(OUT, "load"), lib, P("t10.json")])
    results += loads
    # load floor: dlopen + first call of an empty Swift library built the same way, alternating
    # with the engine's (7 each, fresh processes)
    empty_lib = build_empty_library()
    loads2, empties = [], []
    for _ in range(7):
        empties += run_json([os.path.join(OUT, "load"), "--empty", empty_lib])
        loads2 += run_json([os.path.join(OUT, "load"), lib, P("t10.json")])
    results += empties
    # a whole run of the realistic survey (benchmarks/survey.json), reused task, result JSON
    survey = os.path.join(BENCH, "survey.json"), os.path.join(BENCH, "survey.walk")
    results += run_json([bench, "run", survey[0], survey[1], str(8 * q)])
    # issue 33: verifying the survey's finished result against restoring the same run
    results += run_json([bench, "verify", survey[0], survey[1], str(4 * q)])
    # instruction counts (callgrind): no-output steps on 10, 1,000 and 100,000 steps
    instr = {}
    for name, entries in INSTR_ENTRIES.items():
        instr[name] = callgrind_instr(bench, P(name + ".json"), P(name + ".walk"), entries,
                                      events=name == "t1000")
    survey_instr = callgrind_instr(bench, survey[0], survey[1], 0)
    run_instr = callgrind_run(bench, survey[0], survey[1], 10)
    entries = callgrind_entries(bench, P("t1000.json"), P("t1000.walk"), ENTRY_WINDOW)
    shared = [dhat_shared_writes(bench, P("t100.json"), P("t100.walk"), state) for state in (0, 1)]
    results.append({"figure": "instr", "counts": {k: list(v) for k, v in instr.items()},
                    "survey": list(survey_instr), "entries": entries, "sharedWrites": shared,
                    "run": run_instr})
    results.append({"figure": "instr-input", "counts": {str(n): callgrind_input(bench, n) for n in INPUT_COUNTS},
                    "hanoi": {str(n): callgrind_input(bench, n, "hanoi") for n in HANOI_COUNTS},
                    "hanoiAutosave": {str(n): callgrind_input(bench, n, "hanoi", True) for n in AUTOSAVE_COUNTS}})
    # issue 31: no-output steps inside 100 instances of a repeating section, and the same steps
    # outside one (benchmarks/gen_instances.py)
    results.append({"figure": "instr-instances",
                    "counts": {name: list(callgrind_instr(bench, P(name + ".json"), P(name + ".walk"), 0, events=False))
                               for name in ("instances", "flat")}})
    load1 = os.getloadavg()

    # ---------------------------------------------------------------------------------------
    by = {}
    for r in results:
        by.setdefault((r["figure"], r.get("task")), r)
    t = Table()
    le = lambda k: (lambda x: x is not None and x <= k)  # noqa: E731
    for name, label in (("t10", "10"), ("t1000", "1,000"), ("t100000", "100,000")):
        r = by[("compile", name + ".json")]
        t.add(f"compile, {label}-step task ({fmt_bytes(r['bytes'])}; {r['iters']}×/sample)",
              r["engine"], r["floor"], target="≤ 0.8× floor (issue 36)", ok=le(0.8))
    for (kind, n), label, before in zip(CHOICE_LISTS, ("text choices (stepkit_task_compile)",
                                                          "FHIR answerOptions (stepkit_task_compile_fhir)"),
                                         ("36 s", "95 s")):
        fig = "compile" if kind == "task" else "compile-fhir"
        r = by[(fig, os.path.basename(choice_files[kind]))]
        t.add(f"compile, {n:,} {label} ({fmt_bytes(r['bytes'])})", r["engine"], r["floor"],
              target=f"report (issue 26: {before} before)")
    for kind, label in (("task", "text choices"), ("fhir", "FHIR answerOptions")):
        small, large = choice_instr[kind]
        t.add(f"instructions of one compile, {4 * CHOICE_SCALING_N:,} vs {CHOICE_SCALING_N:,} {label} "
              f"(callgrind; {large:,} / {small:,} Ir)", [large / small], ratio=large / small,
              fmt=lambda x: f"{x:.2f}×", floor_text="linear ≈ 4×",
              target="< 5× (linear)", ok=lambda x: x is not None and x < 5)
    run = by[("run", "survey.json")]
    t.add(f"whole run, survey ({fmt_bytes(run['bytes'])} task, {run['entries']} walk entries incl. one "
          f"back step, {fmt_bytes(run['resultBytes'])} result): compile + open + walk + result + free",
          run["engine"], run["floor"], target="≤ 1.5× json_loads(task) + json_dumps(result)", ok=le(1.5))
    rr = by[("reusedRun", "survey.json")]
    t.add("the same run on a task compiled once: open + walk + result + free", rr["engine"], rr["floor"],
          target="≤ 0.8× json_dumps(result) (issue 36)", ok=le(0.8))
    res = by[("result", "survey.json")]
    t.add(f"result JSON (survey, finished; {fmt_bytes(res['resultBytes'])})", res["engine"], res["floor"],
          target="≤ 0.5× json_dumps (issue 36)", ok=le(0.5))
    # issue 36's targets, in instructions (callgrind, `bench instr-run`: 10 of each on the survey)
    ri = by[("instr", None)]["run"]
    for what, floor, label, target in (
            ("result", "json_dumps", "result JSON", 0.5),
            ("reused run", "json_dumps", "the run on a task compiled once (open + walk + result + free)", 0.8),
            ("compile", "json_loads", "compile + free of the survey's task", 0.8)):
        if what in ri and floor in ri:
            t.add(f"instructions: {label} vs {floor} (survey; callgrind, {ri[what] // 10:,} / {ri[floor] // 10:,} Ir)",
                  [ri[what] / ri[floor]], ratio=ri[what] / ri[floor], fmt=lambda x: f"{x:.2f}×",
                  floor_text=floor, target=f"≤ {target}× (issue 36)", ok=le(target))
    ver = by[("verify", "survey.json")]
    t.add(f"verify a {ver['steps']}-step result (survey, {fmt_bytes(ver['resultBytes'])}; replay + report + recomputed "
          f"result) vs restoring the same run ({fmt_bytes(ver['savedBytes'])})", ver["engine"], ver["floor"],
          floor_text="restore " + fmt_time(statistics.median(ver["floor"])), target="≤ 1.5× restore", ok=le(1.5))
    ins = by[("instr", None)]
    for name, label in (("t10", "10"), ("t1000", "1,000"), ("t100000", "100,000")):
        steps, total, _ = ins["counts"][name]
        t.add(f"instructions per no-output step, {label}-step task (set_answer + go_forward, out NULL; "
              f"callgrind, {steps} steps)", [total / steps], fmt=lambda x: f"{x:,.0f} Ir",
              target="≤ 4,000 Ir, flat (issue 36)", ok=lambda x: x is not None and x <= 4000)
    steps, total, events = ins["counts"]["t1000"]
    t.add(f"instructions building events, no callback and no output (1,000-step task, {steps} steps; "
          f"total {total / steps:,.0f} Ir per step)", [events / steps], fmt=lambda x: f"{x:,.0f} Ir",
          target="0 (not built)", ok=lambda x: x is not None and x == 0)
    inputs = by[("instr-input", None)]["counts"]
    for n in INPUT_COUNTS:
        t.add(f"instructions per input event, a Stroop game's key press (stepkit_session_input, out NULL; "
              f"callgrind, {n} inputs)", [inputs[str(n)] / n], fmt=lambda x: f"{x:,.0f} Ir",
              target="report; flat in the inputs taken (issue 35)")
    for key, label, counts in (("hanoi", "", HANOI_COUNTS), ("hanoiAutosave", ", autosaved", AUTOSAVE_COUNTS)):
        for n in counts:
            t.add(f"instructions per input event, a tower of Hanoi move (stepkit_session_input, out NULL{label}; "
                  f"callgrind, {n} inputs)", [by[("instr-input", None)][key][str(n)] / n], fmt=lambda x: f"{x:,.0f} Ir",
                  target="report; flat in the inputs taken (issue 35)")
    inst = by[("instr-instances", None)]["counts"]
    (steps, inside, _), (flat_steps, outside, _) = inst["instances"], inst["flat"]
    t.add(f"instructions per no-output step, a walk with 100 instances of a 3-step repeating section "
          f"(set_answer + go_forward, out NULL; callgrind, {steps} steps)", [inside / steps],
          fmt=lambda x: f"{x:,.0f} Ir", target="report (issue 31)")
    ratio = (inside / steps) / (outside / flat_steps)
    t.add(f"instructions: a step inside an instance vs a step outside one (the same 300 steps written "
          f"out; callgrind, {inside / steps:,.0f} / {outside / flat_steps:,.0f} Ir)", [ratio], ratio=ratio,
          fmt=lambda x: f"{x:.2f}×", target="≤ 1.5× (issue 31)", ok=lambda x: x is not None and x <= 1.5)
    steps, total, events = ins["survey"]
    t.add(f"instructions per no-output walk entry, survey ({steps} entries after the first; events "
          f"{events / steps:,.0f} Ir of them)", [total / steps], fmt=lambda x: f"{x:,.0f} Ir")
    c_step = by[("steps", "t1000.json")]
    c_med, _ = t.add(f"C step, 1,000-step task (set_answer + go_forward; {c_step['steps']} steps/walk, "
                     f"state {c_step['stateBytes']:.0f} B)",
                     c_step["engine"], c_step["floor"], target="≤ 1.5× floor", ok=le(1.5))
    py = by[("pystep", "t1000.json")]
    t.add("Python step, 1,000-step task (set_answer + forward)", py["engine"],
          ratio=statistics.median(py["engine"]) / c_med, floor_text="C step " + fmt_time(c_med),
          target="report (ratio to C step)")
    for task_key, label in (("survey.json", ""), ("survey.json (json)", ", orjson hidden"),
                            ("survey.json (ctypes)", ", ctypes only")):
        pw = by[("pywalk", task_key)]
        if label != ", orjson hidden":
            t.add(f"Python reused walk, survey ({pw['entries']} entries; open + walk + close), states not read "
                  f"(state=False{', C extension' if not label else label})", pw["pyNoState"], pw["cNoState"],
                  target="≤ 2× C walk, out NULL" if not label else "report", ok=le(2) if not label else None)
            t.rows[-1]["floor"] = "C walk, out NULL " + t.rows[-1]["floor"]
        if label == ", ctypes only":
            continue
        t.add(f"Python walk reading every state, survey (parser {pw['parser']}{label})", pw["pyStates"],
              pw["cStates"], target="≤ 1.5× C asking for the states + jansson" if not label else "report",
              ok=le(1.5) if not label else None)
        t.rows[-1]["floor"] = "C states + json_loads " + t.rows[-1]["floor"]
    s10 = by[("steps", "t10.json")]
    t.add(f"C step, 10-step task ({s10['steps']} steps/walk)", s10["engine"], s10["floor"])
    s100 = by[("steps", "t100.json")]
    m100, _ = t.add(f"C step, 100-step task ({s100['steps']} steps/walk)", s100["engine"],
                    s100["floor"])
    sc = by[("scaling", "t100000.json")]
    t.add(f"C step, 100,000-step task (first {sc['steps']:,} steps of {sc['walk']:,}) vs 100-step "
          f"task (whole walks, {sc['steps']:,} steps), interleaved", sc["engine"], sc["floor"],
          floor_text="100-step " + fmt_time(statistics.median(sc["floor"])),
          target="≤ 1.25× 100-step", ok=le(1.25))
    for fig, label in (("save", "save"), ("restore", "restore"), ("saverestore", "save + restore")):
        r = by[(fig, "forms.json")]
        t.add(f"{label}, {r['answers']:,} answers ({fmt_bytes(r['bytes'])})", r["engine"], r["floor"],
              target="≤ 1.5× floor (jansson + SHA-256)", ok=le(1.5))
    mem = by[("memory", "t100.json")]
    t.add(f"memory per open session ({mem['sessions']:,} on the 100-step task; heap)",
          [mem["sessionHeapBytes"]], fmt=fmt_bytes, floor_text="RSS " + fmt_bytes(mem["sessionRssBytes"]),
          target="≤ 4 KiB + answers", ok=lambda x: x is not None and x <= 4096)
    t.add(f"memory per answer ({mem['answeredSessions']:,} sessions × first 10 steps = "
          f"{mem['answersPerSession']} answers each; heap)",
          [mem["heapBytesPerAnswer"]], fmt=fmt_bytes,
          floor_text=f"session + answers {fmt_bytes(mem['answeredSessionHeapBytes'])}")
    t.add(f"compiled 100-step task size (heap; task JSON {fmt_bytes(mem['taskJsonBytes'])})",
          [mem["taskHeapBytes"]], fmt=fmt_bytes, floor_text="RSS " + fmt_bytes(mem["taskRssBytes"]))
    th = by[("threads", "t100.json")]
    t.add(f"2 threads / 1 thread throughput (100-step task; load avg {th['loadavg']})", th["ratio"],
          ratio=statistics.median(th["ratio"]), fmt=lambda x: f"{x:.2f}×",
          floor_text=f"jansson control {statistics.median(th['controlRatio']):.2f}×; CPU/wall with 2 "
                     f"threads: engine {statistics.median(th['cpuShare2']):.2f}, control "
                     f"{statistics.median(th['controlCpuShare2']):.2f}",
          target="≥ 1.8×", ok=lambda x: x is not None and x >= 1.8)
    t.add("2 threads / 1 thread, each thread on a task it compiled itself (what sharing one task costs)",
          th["ratioTaskPerThread"], ratio=statistics.median(th["ratioTaskPerThread"]), fmt=lambda x: f"{x:.2f}×",
          floor_text="the same one-thread runs", target="report")
    no_out, with_state = ins["sharedWrites"]
    t.add("bytes a step writes into what all sessions of the task share (100-step task; valgrind DHAT: "
          "reference counts and lock words the second core must take back), with the state as output / none",
          [with_state], fmt=lambda x: f"{x:,.0f} B", floor_text=f"no output {no_out:,.0f} B", target="report")
    for r in autosaves:
        t.add(f"set_answer with autosave, {r['visits']:,} visits ({fmt_bytes(r['bytes'])} saved; "
              f"without autosave {fmt_time(statistics.median(r['plain']))}, save alone "
              f"{fmt_time(statistics.median(r['save']))})", r["autosave"], r["floor"],
              floor_text="write+fsync+rename " + fmt_time(statistics.median(r["floor"])))
    calc = by[("calc", "screener9")]
    t.add("C step with calculations (9-item screener: total + band in every state)", calc["engine"],
          calc["floor"], floor_text="same task without " + fmt_time(statistics.median(calc["floor"])))
    t.add("dlopen (RTLD_NOW) + first call (stepkit_version), vs an empty Swift library built the same way",
          [r["dlopen"] + r["firstCall"] for r in loads2], [r["dlopen"] + r["firstCall"] for r in empties],
          target="≤ 1.5× empty library", ok=le(1.5))
    t.add("library load (dlopen RTLD_NOW)", [r["dlopen"] for r in loads])
    t.add("first call (stepkit_version)", [r["firstCall"] for r in loads])
    t.add("first compile + open + state (10-step task)", [r["firstTask"] for r in loads],
          [r["warmTask"] for r in loads], floor_text=None)
    t.rows[-1]["floor"] = "warm " + t.rows[-1]["floor"]
    # The first digest of the process loads libcrypto (Sources/StepKitBase/Integrity/LibCrypto.swift).
    t.add("first save (loads libcrypto), 10-step task", [r["firstSave"] for r in loads],
          [r["warmSave"] for r in loads], floor_text=None)
    t.rows[-1]["floor"] = "warm " + t.rows[-1]["floor"]

    cpu = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    with open(lib, "rb") as f:
        lib_sha = hashlib.sha256(f.read()).hexdigest()[:12]
    git = subprocess.run(["git", "-C", ROOT, "log", "-1", "--format=%h %cI"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True).stdout.strip()
    header = (f"StepKit benchmarks — {time.strftime('%Y-%m-%d %H:%M %Z')}; {os.cpu_count()} CPUs "
              f"({cpu}); load average {load0[0]:.2f} at start, {load1[0]:.2f} at end; library "
              f"{os.path.relpath(lib, ROOT)} sha256 {lib_sha} ({lib_origin}); git HEAD {git} "
              f"(+ working tree); build {t_built - t_start:.0f} s, benchmarks {time.time() - t_built:.0f} s")
    notes = []
    for r in (s10, s100, c_step):
        if r.get("setAnswerPerStep"):
            notes.append(f"C step on {r['task']}: set_answer {fmt_time(statistics.median(r['setAnswerPerStep']))}"
                         f" + go_forward {fmt_time(statistics.median(r['goForwardPerStep']))} per step "
                         f"(medians; set_answer's time averaged over every step, answered or not).")
    kinds = ins["entries"]
    if kinds:
        count = sum(len(v) for v in kinds.values())
        total = sum(sum(v) for v in kinds.values())
        parts = ", ".join(f"{k} {statistics.median(v):,.0f} ({len(v)}, {sum(v) / total:.0%})"
                          for k, v in sorted(kinds.items(), key=lambda kv: -sum(kv[1])))
        notes.append(f"no-output walk entries {ENTRY_WINDOW[0]}–{ENTRY_WINDOW[1] - 1} of the 1,000-step task "
                     f"one by one (callgrind; {total / count:,.0f} Ir an entry): by step, the median Ir "
                     f"(entries, share of the instructions): {parts}.")
    if mem["heapLeftAfterTaskFree"] > 4096:
        notes.append(f"heap still allocated after every session and the task were freed: "
                     f"{fmt_bytes(mem['heapLeftAfterTaskFree'])} (after sessions only: "
                     f"{fmt_bytes(mem['heapLeftAfterSessionsFree'])}).")
    sr = by[("save", "forms.json")]
    if not sr["roundTrip"]:
        notes.append("save → restore → save did not give the same data.")
    md = header + "\n\n" + t.markdown() + ("\n\n" + "\n".join("- " + n for n in notes) if notes else "")
    print(md)
    with open(os.path.join(OUT, "table.md"), "w", encoding="utf-8") as f:
        f.write(md + "\n")
    with open(os.path.join(OUT, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"header": header, "rows": t.rows, "raw": results}, f, indent=1)
    log(f"done in {time.time() - t_start:.0f} s; table in .build-bench/table.md, raw in "
        ".build-bench/results.json")


if __name__ == "__main__":
    main()
