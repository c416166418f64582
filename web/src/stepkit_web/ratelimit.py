"""Token buckets for session creation: one per invite link and one per client address, so one
link (or one client) cannot create sessions without bound. The clock is injected (ms), so the
tests move time instead of sleeping.

The buckets live in each worker's memory: with W workers (and N instances) the sustained rate
a link can reach is at most W x N times the configured one. That bounds a flood; an exact
global quota would need the database on every invite."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Callable, Optional


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


@dataclass(frozen=True)
class Rate:
    """``burst`` requests at once, then one every ``per_ms`` milliseconds."""
    burst: int
    per_ms: int


class TokenBuckets:
    """Buckets by key, at most ``max_keys`` of them (the least recently used are forgotten: a
    forgotten bucket is full again, which only ever lets a request through)."""

    def __init__(self, rate: Rate, clock: Optional[Callable[[], int]] = None,
                 max_keys: int = 10_000) -> None:
        self.rate = rate
        self.clock = clock or monotonic_ms
        self.max_keys = max_keys
        self._buckets: "OrderedDict[str, tuple]" = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: str) -> Optional[float]:
        """Takes a token for ``key``: None if there was one, else the seconds until there is."""
        now = self.clock()
        burst, per = self.rate.burst, max(1, self.rate.per_ms)
        with self._lock:
            tokens, last = self._buckets.pop(key, (float(burst), now))
            tokens = min(float(burst), tokens + max(0, now - last) / per)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                wait = None
            else:
                self._buckets[key] = (tokens, now)
                wait = (1.0 - tokens) * per / 1000.0
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
        return wait
