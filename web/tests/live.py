"""A real server for browser tests: uvicorn on 127.0.0.1 in a thread of the test process (so
the app can run on the test's manual clock), ready when /healthz answers."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any, Iterator, List

import httpx
import uvicorn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    def __init__(self, app, port=None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "LiveServer":
        self.thread.start()
        deadline = time.monotonic() + 30
        while True:  # readiness: poll the health endpoint, bounded
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.05)

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@contextlib.contextmanager
def live_service(tmp_path_factory: Any, name: str, **options: Any) -> Iterator[LiveServer]:
    """The service on a fresh SQLite database (in a temporary folder named `name`), on a manual
    clock at 2026-01-01T09:00:00Z, served on a free port its links are made absolute to, with
    `create_app`'s other `options`; the server also holds its `db_url`, `app` and `clock`."""
    import stepkit

    from conftest import API_KEY, KEY
    from stepkit_web.app import create_app

    clock = stepkit.ManualClock.from_iso("2026-01-01T09:00:00Z")
    db_url = f"sqlite:///{tmp_path_factory.mktemp(name) / 'runs.db'}"
    port = free_port()
    app = create_app(db_url, KEY, api_key=API_KEY, clock=clock, base_url=f"http://127.0.0.1:{port}",
                     **options)
    with LiveServer(app, port) as live:
        live.db_url, live.app, live.clock = db_url, app, clock
        yield live


def click(page: Any, action: str) -> None:
    """Clicks the submit button with this action and waits for the page it leads to."""
    with page.expect_navigation():
        page.click(f'button[name=action][value="{action}"]')


def legends(page: Any) -> List[str]:
    """The titles of the repeating group's instances on the page, in order."""
    return [el.inner_text().strip() for el in page.query_selector_all("fieldset.instance > legend")]
