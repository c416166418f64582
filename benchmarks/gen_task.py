#!/usr/bin/env python3
"""Seeded generator of benchmark tasks for StepKit.

    python3 benchmarks/gen_task.py --steps 1000 --seed 1 --out DIR/t1000

writes DIR/t1000.json (the task, task format v1) and DIR/t1000.walk (the walk: one line per
step the session presents, in order, `identifier<TAB>answer JSON`, or `identifier<TAB>-` when
the driver only goes forward: an instruction, or an optional question left unanswered).

A task is made of blocks of 10 steps, each with a realistic mix of question and form steps
(numeric, scale, textChoice single and multiple with an exclusive choice, boolean, text, date,
a form mixing numeric/textChoice/text/date items with a visibleWhen), and rules that read only
the block's own answers, so every rule is local and a fast engine has per-step cost independent
of the task's size:

    b<k>_intro    instruction
    b<k>_age      question numeric integer 0..120 years
    b<k>_mood     question scale 1..10
    b<k>_symptom  question textChoice single (5 choices)
    b<k>_pain     question boolean; predicate rule: pain == false -> b<k>_date
    b<k>_where    question textChoice multiple (5 choices + exclusive "none")
    b<k>_notes    question text, optional; skip rule: mood >= 8
    b<k>_date     question date 2020-01-01..2030-12-31; direct rule -> b<k>_form
    b<k>_form     form: weight (numeric decimal), sleep (textChoice single), comment (text,
                  optional, visibleWhen sleep is "poor"), since (date)
    b<k>_check    question boolean; step modifier when pain; predicate rule:
                  symptom contains "dizziness" and check -> b<k+1>_age (skips the next intro),
                  default next in order; the last block's rule ends the task ("$end")

Answers are drawn from a seeded RNG, and the generator follows the navigation rules itself to
write the walk, so branches, skip rules and modifiers are all exercised while the walk stays a
linear sequence of presented steps that a driver can replay without parsing state.

    python3 benchmarks/gen_task.py --forms 500 --items 20 --out DIR/forms

writes instead a task of 500 form steps of 20 items each (numeric, scale, single choice, boolean,
text, date, decimal, multiple choice, cycling) and a final instruction: walking every form gives
a session with 10,000 answers (the save/restore benchmark).
"""

import argparse
import json
import random

BLOCK = 10

SYMPTOMS = ["headache", "dizziness", "nausea", "fatigue", "other"]
PLACES = ["head", "neck", "back", "chest", "legs"]
SLEEP = ["poor", "fair", "good", "great"]


def block_steps(k):
    p = f"b{k}_"
    return [
        {"type": "instruction", "identifier": p + "intro", "title": f"Part {k + 1}",
         "text": "A few questions about how you have been since the last check-in."},
        {"type": "question", "identifier": p + "age", "title": "How old are you?",
         "answerFormat": {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 120,
                          "unit": "years"}},
        {"type": "question", "identifier": p + "mood", "title": "How do you feel today?",
         "answerFormat": {"type": "scale", "minimum": 1, "maximum": 10, "step": 1,
                          "minimumValueDescription": "Bad", "maximumValueDescription": "Great"}},
        {"type": "question", "identifier": p + "symptom", "title": "What is your main symptom?",
         "answerFormat": {"type": "textChoice", "style": "singleChoice",
                          "textChoices": [{"text": s.capitalize(), "value": s} for s in SYMPTOMS]}},
        {"type": "question", "identifier": p + "pain", "title": "Are you in pain?",
         "answerFormat": {"type": "boolean"}},
        {"type": "question", "identifier": p + "where", "title": "Where does it hurt?",
         "answerFormat": {"type": "textChoice", "style": "multipleChoice",
                          "textChoices": [{"text": s.capitalize(), "value": s} for s in PLACES]
                          + [{"text": "Nowhere in particular", "value": "none", "exclusive": True}]}},
        {"type": "question", "identifier": p + "notes", "title": "Anything else?", "optional": True,
         "answerFormat": {"type": "text", "maximumLength": 200, "multipleLines": True}},
        {"type": "question", "identifier": p + "date", "title": "When did it start?",
         "answerFormat": {"type": "date", "style": "date", "minimumDate": "2020-01-01",
                          "maximumDate": "2030-12-31"}},
        {"type": "form", "identifier": p + "form", "title": "About last night",
         "formItems": [
             {"identifier": "weight", "text": "Weight",
              "answerFormat": {"type": "numeric", "style": "decimal", "minimum": 20,
                               "maximum": 300, "unit": "kg", "maximumFractionDigits": 1}},
             {"identifier": "sleep", "text": "Sleep quality",
              "answerFormat": {"type": "textChoice", "style": "singleChoice",
                               "textChoices": [{"text": s.capitalize(), "value": s} for s in SLEEP]}},
             {"sectionTitle": "Optional"},
             {"identifier": "comment", "text": "Why?", "optional": True,
              "visibleWhen": {"result": {"step": p + "form", "item": "sleep"}, "contains": "poor"},
              "answerFormat": {"type": "text", "maximumLength": 100}},
             {"identifier": "since", "text": "Since when?",
              "answerFormat": {"type": "date", "style": "date", "minimumDate": "2020-01-01",
                               "maximumDate": "2030-12-31"}}]},
        {"type": "question", "identifier": p + "check", "title": "Shall we go on?",
         "text": "Answer yes to continue.", "answerFormat": {"type": "boolean"}},
    ]


def block_rules(k, last):
    p = f"b{k}_"
    after = "$end" if last else f"b{k + 1}_age"
    nav = {
        p + "pain": {"type": "predicate",
                     "branches": [{"when": {"result": p + "pain", "equals": False},
                                   "destination": p + "date"}]},
        p + "date": {"type": "direct", "destination": p + "form"},
        p + "check": {"type": "predicate",
                      "branches": [{"when": {"all": [{"result": p + "symptom", "contains": "dizziness"},
                                                     {"result": p + "check", "equals": True}]},
                                    "destination": after}]},
    }
    if last:
        nav[p + "check"]["defaultDestination"] = "$end"
    skip = {p + "notes": {"result": p + "mood", "minimum": 8}}
    mods = {p + "check": {"when": {"result": p + "pain", "equals": True},
                          "set": {"text": "Thank you for telling us about your pain."}}}
    return nav, skip, mods


def make_task(steps, name):
    if steps % BLOCK:
        raise SystemExit("--steps must be a multiple of 10")
    blocks = steps // BLOCK
    task = {"identifier": name, "steps": [], "navigationRules": {}, "skipRules": {},
            "stepModifiers": {}}
    for k in range(blocks):
        task["steps"].extend(block_steps(k))
        nav, skip, mods = block_rules(k, k == blocks - 1)
        task["navigationRules"].update(nav)
        task["skipRules"].update(skip)
        task["stepModifiers"].update(mods)
    return task


def date(rng):
    return f"{rng.randint(2020, 2030):04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def answer_for(short, rng):
    """An answer for the step (None: just go forward)."""
    if short == "age":
        return rng.randint(18, 90)
    if short == "mood":
        return rng.randint(1, 10)
    if short == "symptom":
        return [rng.choice(SYMPTOMS)]
    if short == "pain":
        return rng.random() < 0.6
    if short == "where":
        if rng.random() < 0.2:
            return ["none"]
        return sorted(rng.sample(PLACES, rng.randint(1, 3)), key=PLACES.index)
    if short == "notes":
        if rng.random() < 0.3:
            return None  # optional: left unanswered
        words = ["tired", "since", "morning", "after", "lunch", "worse", "better", "slightly"]
        return " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
    if short == "date":
        return date(rng)
    if short == "form":
        a = {"weight": round(rng.uniform(45, 120), 1), "sleep": [rng.choice(SLEEP)],
             "since": date(rng)}
        if a["sleep"] == ["poor"] and rng.random() < 0.7:
            a["comment"] = "woke up twice"
        return a
    if short == "check":
        return True
    return None


def walk(steps, seed):
    """Follows the rules of make_task() with seeded answers; returns [(identifier, answer)]."""
    rng = random.Random(seed)
    blocks = steps // BLOCK
    order = [s for k in range(blocks) for s in
             ["intro", "age", "mood", "symptom", "pain", "where", "notes", "date", "form", "check"]]
    answers = {}  # (k, short) -> answer
    out = []
    i = 0  # index into order of the current step
    while i is not None:
        k, short = divmod(i, BLOCK)[0], order[i]
        a = answer_for(short, rng)
        if a is not None:
            answers[(k, short)] = a
        out.append((f"b{k}_{short}", a))
        # forward: the rule of the step just left, then skip rules of destinations
        i = leave(i, k, short, answers, blocks, order)
        while i is not None:
            k2, s2 = i // BLOCK, order[i]
            if s2 == "notes" and answers.get((k2, "mood"), 0) >= 8:
                i = leave(i, k2, s2, answers, blocks, order)  # skipped: as if leaving it
                continue
            break
    return out


def leave(i, k, short, answers, blocks, order):
    nxt = i + 1 if i + 1 < blocks * BLOCK else None
    if short == "pain" and answers.get((k, "pain")) is False:
        return k * BLOCK + order.index("date")
    if short == "date":
        return k * BLOCK + order.index("form")
    if short == "check":
        if "dizziness" in answers.get((k, "symptom"), []) and answers.get((k, "check")) is True:
            return None if k == blocks - 1 else (k + 1) * BLOCK + order.index("age")
        return None if k == blocks - 1 else nxt
    return nxt


ITEM_FORMATS = [
    ("numeric", {"type": "numeric", "style": "integer", "minimum": 0, "maximum": 1000, "unit": "mg"}),
    ("scale", {"type": "scale", "minimum": 0, "maximum": 10, "step": 1}),
    ("single", {"type": "textChoice", "style": "singleChoice",
                "textChoices": [{"text": s.capitalize(), "value": s} for s in SYMPTOMS]}),
    ("boolean", {"type": "boolean"}),
    ("text", {"type": "text", "maximumLength": 100}),
    ("date", {"type": "date", "style": "date", "minimumDate": "2020-01-01", "maximumDate": "2030-12-31"}),
    ("decimal", {"type": "numeric", "style": "decimal", "minimum": 0, "maximum": 500, "unit": "kg"}),
    ("multiple", {"type": "textChoice", "style": "multipleChoice",
                  "textChoices": [{"text": s.capitalize(), "value": s} for s in PLACES]}),
]


def make_form_task(forms, items, name):
    """`forms` form steps of `items` items each (formats cycling through ITEM_FORMATS), then an
    instruction step "end": walking every form leaves the session in progress with
    forms * items answers (the save/restore benchmark)."""
    steps = []
    for f in range(forms):
        steps.append({"type": "form", "identifier": f"f{f}", "title": f"Page {f + 1}",
                      "formItems": [{"identifier": f"i{j}", "text": f"Item {j}",
                                     "answerFormat": ITEM_FORMATS[j % len(ITEM_FORMATS)][1]}
                                    for j in range(items)]})
    steps.append({"type": "instruction", "identifier": "end", "title": "Almost done"})
    return {"identifier": name, "steps": steps}


def form_walk(forms, items, seed):
    rng = random.Random(seed)
    out = []
    for f in range(forms):
        a = {}
        for j in range(items):
            kind = ITEM_FORMATS[j % len(ITEM_FORMATS)][0]
            a[f"i{j}"] = {
                "numeric": lambda: rng.randint(0, 1000),
                "scale": lambda: rng.randint(0, 10),
                "single": lambda: [rng.choice(SYMPTOMS)],
                "boolean": lambda: rng.random() < 0.5,
                "text": lambda: "note " + str(rng.randint(0, 10 ** 6)),
                "date": lambda: date(rng),
                "decimal": lambda: round(rng.uniform(0, 500), 1),
                "multiple": lambda: sorted(rng.sample(PLACES, 2), key=PLACES.index),
            }[kind]()
        out.append((f"f{f}", a))
    out.append(("end", None))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, help="number of steps (multiple of 10)")
    ap.add_argument("--forms", type=int, help="instead: a task of this many form steps ...")
    ap.add_argument("--items", type=int, default=20, help="... of this many items each")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True, help="output prefix: writes PREFIX.json, PREFIX.walk")
    args = ap.parse_args()
    if args.forms:
        name = f"forms{args.forms}x{args.items}"
        task = make_form_task(args.forms, args.items, name)
        steps = form_walk(args.forms, args.items, args.seed)
    elif args.steps:
        name = f"bench{args.steps}"
        task = make_task(args.steps, name)
        steps = walk(args.steps, args.seed)
    else:
        raise SystemExit("give --steps or --forms")
    with open(args.out + ".json", "w", encoding="utf-8") as f:
        json.dump(task, f, separators=(",", ":"))
    with open(args.out + ".walk", "w", encoding="utf-8") as f:
        for ident, a in steps:
            text = "-" if a is None else json.dumps(a, separators=(",", ":"))
            f.write(f"{ident}\t{text}\n")


if __name__ == "__main__":
    main()
