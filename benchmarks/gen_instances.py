#!/usr/bin/env python3
"""Benchmark tasks for repeating sections (issue 31): a walk with 100 instances, and the same
steps without instances.

    python3 benchmarks/gen_instances.py --out DIR

writes DIR/instances.json and .walk: an instruction, a repeating section of three question
steps (numeric, text, boolean) with minCount and maxCount 100, then a completion step; the walk
answers each step of each of the 100 instances (300 steps inside instances). And DIR/flat.json
and .walk: the same instruction, the same three steps written out 100 times (300 steps, no
section), the same completion step and the same answers: what a step costs outside an instance.
"""

import argparse
import json
import os

INSTANCES = 100


def inner(suffix=""):
    return [
        {"type": "question", "identifier": "dose" + suffix, "question": "Dose (mg)",
         "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 100000}},
        {"type": "question", "identifier": "name" + suffix, "question": "Name", "answerFormat": {"type": "text"}},
        {"type": "question", "identifier": "daily" + suffix, "question": "Every day?", "answerFormat": {"type": "boolean"}},
    ]


def answers(k):
    return [str(10 * k + 5), json.dumps(f"medication {k + 1}"), "true" if k % 2 else "false"]


def write(prefix, task, walk):
    with open(prefix + ".json", "w", encoding="utf-8") as f:
        json.dump(task, f)
    with open(prefix + ".walk", "w", encoding="utf-8") as f:
        f.write("".join(f"{step}\t{answer}\n" for step, answer in walk))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="directory to write into")
    args = p.parse_args()
    intro = {"type": "instruction", "identifier": "intro", "title": "Your medications"}
    done = {"type": "completion", "identifier": "done"}
    block = {"type": "section", "identifier": "medication",
             "repeat": {"minCount": INSTANCES, "maxCount": INSTANCES, "title": "Medication {{index}}: {{name}}"},
             "steps": inner()}
    walk = [("intro", "-")]
    flat_steps, flat_walk = [], [("intro", "-")]
    for k in range(INSTANCES):
        for step, answer in zip(inner(), answers(k)):
            walk.append((step["identifier"], answer))
        for step, answer in zip(inner(f"_{k}"), answers(k)):
            flat_steps.append(step)
            flat_walk.append((step["identifier"], answer))
    walk.append(("done", "-"))
    flat_walk.append(("done", "-"))
    write(os.path.join(args.out, "instances"), {"identifier": "instances", "steps": [intro, block, done]}, walk)
    write(os.path.join(args.out, "flat"), {"identifier": "flat", "steps": [intro, *flat_steps, done]}, flat_walk)


if __name__ == "__main__":
    main()
