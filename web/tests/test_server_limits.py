"""Slow and greedy clients against the server `python -m stepkit_web serve` ships with, on
127.0.0.1 (issue 26, item 5): a trickled request head or body is cut within its bound, an
idle keep-alive connection is closed, an oversized head is refused with the memory bounded,
and idle connections beyond the limit do not starve a real request."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from conftest import API_KEY, KEY
from harness import free_port, wait_ready

HEADER_TIMEOUT = 2
BODY_TIMEOUT = 2
KEEP_ALIVE = 1
CONNECTIONS = 20


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("limits")
    port = free_port()
    env = dict(os.environ, STEPKIT_WEB_INTEGRITY_KEY=KEY, STEPKIT_WEB_API_KEY=API_KEY,
               PYTHONPATH=os.pathsep.join(sys.path))
    log = open(workdir / "server.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "stepkit_web", "serve", "--db", f"sqlite:///{workdir / 'r.db'}",
         "--host", "127.0.0.1", "--port", str(port), "--header-timeout", str(HEADER_TIMEOUT),
         "--body-timeout", str(BODY_TIMEOUT), "--keep-alive", str(KEEP_ALIVE),
         "--connections", str(CONNECTIONS), "--max-head", "16384"],
        env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url + "/healthz", 60, proc)
        yield proc, port, url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def closed_within(sock: socket.socket, seconds: float, trickle: bytes = b"") -> float:
    """Sends ``trickle`` a byte at a time (one every 0.2 s) until the server closes the
    connection; returns how long that took (fails after ``seconds``)."""
    start = time.monotonic()
    sock.settimeout(0.2)
    i = 0
    while time.monotonic() - start < seconds:
        try:
            data = sock.recv(65536)
            if data == b"":
                return time.monotonic() - start
            if b"HTTP/1.1 408" in data:
                return time.monotonic() - start
        except socket.timeout:
            pass
        except ConnectionResetError:
            return time.monotonic() - start
        if i < len(trickle):
            try:
                sock.sendall(trickle[i:i + 1])
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - start
            i += 1
    raise AssertionError(f"the connection was still open after {seconds} s")


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_a_trickled_request_head_is_cut(server):
    _, port, _ = server
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\n")
        took = closed_within(s, HEADER_TIMEOUT + 5, b"X-Slow: " + b"a" * 200)
    assert took <= HEADER_TIMEOUT + 2


def test_a_connection_that_sends_nothing_is_cut(server):
    _, port, _ = server
    with socket.create_connection(("127.0.0.1", port)) as s:
        assert closed_within(s, HEADER_TIMEOUT + 5) <= HEADER_TIMEOUT + 2


def test_a_trickled_body_is_cut(server):
    _, port, _ = server
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"POST /i/abcdefgh HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  b"Content-Type: application/x-www-form-urlencoded\r\n"
                  b"Content-Length: 1000\r\n\r\n")
        assert closed_within(s, BODY_TIMEOUT + 5, b"a=" + b"b" * 500) <= BODY_TIMEOUT + 2


def test_an_idle_keep_alive_connection_is_closed(server):
    _, port, _ = server
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        s.settimeout(10)
        assert b"200 OK" in s.recv(65536)
        assert closed_within(s, KEEP_ALIVE + 5) <= KEEP_ALIVE + 2


def test_an_oversized_head_is_refused_and_memory_stays_bounded(server):
    proc, port, _ = server
    before = rss_kib(proc.pid)
    for _ in range(4):
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.settimeout(10)
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            sent = 0
            chunk = b"a" * 65536
            try:
                while sent < 64 * 1024 * 1024:  # up to 64 MiB of one header
                    s.sendall(chunk)
                    sent += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            try:
                reply = s.recv(65536)
            except (ConnectionResetError, socket.timeout):
                reply = b""
            assert sent < 64 * 1024 * 1024  # the server stopped reading long before
            assert reply == b"" or reply.startswith((b"HTTP/1.1 400", b"HTTP/1.1 431")), reply
    assert rss_kib(proc.pid) - before < 20 * 1024  # KiB
    assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200


def test_idle_connections_beyond_the_limit_do_not_starve_a_request(server):
    _, port, url = server
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(2 * CONNECTIONS)]
    try:
        # Uvicorn alone answers 503 ("Exceeded concurrency limit") at once when the
        # connections are over the limit: a 200 means an idle connection made room.
        r = httpx.get(url + "/healthz", timeout=HEADER_TIMEOUT * 10)
        assert r.status_code == 200
    finally:
        for s in idle:
            s.close()
