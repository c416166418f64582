"""Threads: one task shared by threads, a session shared by threads, per-thread errors."""

from __future__ import annotations

import threading

import stepkit


def test_sessions_on_a_shared_task_in_threads(task):
    errors = []
    results = []

    def run(n):
        try:
            for _ in range(20):
                with task.open() as session:
                    session.forward()
                    session.set_answer(n % 2 == 0)
                    session.forward()
                    session.set_answer(18 + n)
                    session.forward()
                    session.skip()
                    session.set_answer({"name": f"user{n}"})
                    session.forward()
                    state = session.forward()
                    assert state["finishReason"] == "completed"
                    results.append(session.result["results"][2]["results"][0]["answer"])
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert sorted(set(results)) == [18 + n for n in range(6)]


def test_errors_are_per_thread(task):
    """Each thread sees its own failure's error JSON even when failures interleave."""
    mismatches = []
    barrier = threading.Barrier(4)

    def run(kind):
        with task.open() as session:
            session.forward()
            barrier.wait()
            for _ in range(200):
                try:
                    if kind == "answer":
                        session.set_answer("not a boolean")
                    elif kind == "state":
                        session.forward()
                    elif kind == "reason":
                        session.finish("bogus")
                    else:
                        session.set_answer_json("{")
                except stepkit.StepKitError as exc:
                    expected = {"answer": "EANSWER", "state": "ESTATE", "reason": "EINVAL", "parse": "EPARSE"}[kind]
                    if exc.code != expected or exc.error.get("code") != expected:
                        mismatches.append((kind, exc.code))
                else:
                    mismatches.append((kind, "no error"))

    threads = [threading.Thread(target=run, args=(k,)) for k in ("answer", "state", "reason", "parse")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not mismatches, mismatches[:10]


def test_one_session_used_from_several_threads(task):
    with task.open() as session:
        session.forward()
        errors = []

        def run():
            try:
                for i in range(200):
                    session.set_answer(i % 2 == 0)
                    session.state
                    session.result
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not errors, errors
        assert session.state["answer"] in (True, False)


def test_close_while_other_threads_use_the_session(task):
    for _ in range(20):
        session = task.open()
        stop = threading.Event()
        outcomes = []

        def run():
            while not stop.is_set():
                try:
                    session.state
                except stepkit.StateError as exc:
                    outcomes.append(exc.message)
                    return

        threads = [threading.Thread(target=run) for _ in range(3)]
        for t in threads:
            t.start()
        session.close()
        stop.set()
        for t in threads:
            t.join(60)
        assert all("closed" in m for m in outcomes)
