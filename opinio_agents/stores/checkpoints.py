"""Named points of a write, where the reliability probe can kill the process (``kill -9``).

Set ``OPINIO_KILL_AT=<name>`` (or ``<name>@<n>`` for its n-th occurrence, counted from 1)
and the process sends itself ``SIGKILL`` when it reaches that point, so that a test
can stop an indexing run at an exact, repeatable place and check what the next run
makes of the store. ``OPINIO_PAUSE_AT=<name>[@<n>]`` with ``OPINIO_PAUSE_FILE=<path>``
pauses there instead: the process writes its pid to ``<path>.reached`` and waits until
``<path>`` exists (at most 10 minutes), so that a test can act while a writer is mid-way.
Without these variables :func:`checkpoint` does nothing.

The points, in the order one ``opinio index`` reaches them: ``after-catalog``,
``after-stale-vectors``, ``chroma-chunk`` (after each chunk of vectors),
``after-finish``, ``bm25-files-written``, ``bm25-stamped``, ``bm25-old-moved``,
``bm25-in-place``, ``hiro-fit-saved``, ``hiro-paths-tmp``, ``hiro-paths-in-place``,
``before-marker``, ``after-marker``.

Example:
    >>> checkpoint("after-catalog")  # no OPINIO_KILL_AT: nothing happens
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter

__all__ = ["checkpoint", "KILL_ENV", "PAUSE_ENV", "PAUSE_FILE_ENV", "CHECKPOINTS"]

KILL_ENV = "OPINIO_KILL_AT"
PAUSE_ENV = "OPINIO_PAUSE_AT"
PAUSE_FILE_ENV = "OPINIO_PAUSE_FILE"
_PAUSE_LIMIT_S = 600.0
CHECKPOINTS: tuple[str, ...] = (
    "after-catalog",
    "after-stale-vectors",
    "chroma-chunk",
    "after-finish",
    "bm25-files-written",
    "bm25-stamped",
    "bm25-old-moved",
    "bm25-in-place",
    "hiro-fit-saved",
    "hiro-paths-tmp",
    "hiro-paths-in-place",
    "before-marker",
    "after-marker",
)
_seen: Counter[tuple[str, str]] = Counter()
_lock = threading.Lock()


def _hit(env: str, name: str) -> bool:
    wanted = os.environ.get(env)
    if not wanted:
        return False
    target, _, nth = wanted.partition("@")
    if target != name:
        return False
    with _lock:
        _seen[env, name] += 1
        count = _seen[env, name]
    return count == (int(nth) if nth.isdigit() else 1)


def checkpoint(name: str) -> None:
    """Kill (``OPINIO_KILL_AT``) or pause (``OPINIO_PAUSE_AT``) this process when it reaches ``name``."""
    if _hit(KILL_ENV, name):
        os.kill(os.getpid(), signal.SIGKILL)
    if _hit(PAUSE_ENV, name):
        gate = os.environ.get(PAUSE_FILE_ENV)
        if not gate:
            return
        with open(gate + ".reached", "w", encoding="utf-8") as handle:
            handle.write(str(os.getpid()))
        started = time.monotonic()
        while not os.path.exists(gate) and time.monotonic() - started < _PAUSE_LIMIT_S:
            time.sleep(0.05)
