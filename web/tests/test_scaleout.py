"""The scale-out, short: PostgreSQL, two app instances x two workers behind nginx, a bounded
load of double submits on loopback while every worker is killed with SIGKILL in turn. Every
acknowledged answer is in the final result; no 500; the database going down gives the 503
page. (scripts/load runs the long version and prints the README's figures.)"""

import httpx

from harness import AUTH, run


def test_postgres_two_instances_double_submits_and_kill_9_lose_nothing():
    seen = {}

    def database_down(base, pg, sessions):
        sid, path = next(iter(sessions.items()))
        pg.stop()
        r = httpx.get(base + path, timeout=60)
        seen["page"] = (r.status_code, r.text)
        seen["api"] = httpx.get(f"{base}/api/sessions/{sid}", timeout=60,
                                headers=AUTH).status_code

    report = run("postgres", participants=12, seconds=15, instances_n=2, workers=2, kill=True,
                 after=database_down)
    print(report)
    assert report["answers_lost"] == 0
    assert report["acknowledged_answers"] > 0 and report["stale_redirects"] > 0
    assert len(report["kills"]) == 4  # every worker of both instances, in turn
    assert not [s for s in report["statuses"] if s >= 500 and s != 502], report["statuses"]
    assert seen["page"][0] == 503 and "answers up to the last page" in seen["page"][1]
    assert seen["api"] == 503


def test_sqlite_one_instance_two_workers_double_submits_lose_nothing():
    report = run("sqlite", participants=6, seconds=4, instances_n=1, workers=2, kill=False)
    assert report["answers_lost"] == 0 and report["acknowledged_answers"] > 0
    assert not [s for s in report["statuses"] if s >= 500], report["statuses"]
