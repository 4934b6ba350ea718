"""One writer at a time per store: an advisory ``flock`` on ``<store>/writer.lock``.

The lock is held by a process (not a thread): the kernel releases it when the
process dies, however it dies, so a killed writer never leaves the store locked.
While it holds the lock the writer keeps its pid in the file, so that a second
writer can say who holds it and a reader can tell an entity that is being
written from one left half-written by a killed run. Readers never take the lock.

Example:
    >>> import tempfile
    >>> from opinio_agents.stores.lock import StoreLock, writer_pid
    >>> tmp = tempfile.TemporaryDirectory()  # removed when the example's names go
    >>> folder = tmp.name
    >>> with StoreLock(folder):
    ...     writer_pid(folder) is not None
    True
    >>> writer_pid(folder) is None
    True
"""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from opinio_agents.errors import StoreError

__all__ = ["StoreLock", "StoreLockedError", "LOCK_FILE", "writer_pid", "left_by_dead"]

LOCK_FILE = "writer.lock"
_POLL_SECONDS = 0.2

# Locks this process holds, by resolved store path: flock is per open file, so a second
# StoreLock of the same store in this process would deadlock against itself. It re-enters instead.
_HELD: dict[str, tuple[int, int]] = {}  # path -> (fd, depth)
_HELD_LOCK = threading.RLock()
_TURNS: dict[str, threading.RLock] = {}  # path -> the lock threads of this process take turns on


class StoreLockedError(StoreError):
    """Another process is writing to the store (raised at once unless waiting was asked for)."""


def _lock_path(store_dir: str | Path) -> Path:
    return Path(store_dir) / LOCK_FILE


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def left_by_dead(name: str) -> bool:
    """Whether a temporary name ``<anything>.tmp-<pid>-<hex>`` / ``.old-<pid>-<hex>`` / ``.<pid>.<hex>.tmp``
    was made by a process that no longer runs (so it is a killed run's leftover, safe to delete).

    Example:
        >>> left_by_dead(f"x.tmp-{os.getpid()}-ab12cd34")
        False
    """
    import re

    match = re.search(r"(?:\.tmp-|\.old-|\.)(\d+)[-.][0-9a-f]{8}", name)
    if match is None:
        return True  # a leftover of a version that did not record its pid
    pid = int(match.group(1))
    return pid != os.getpid() and not _pid_alive(pid)


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text("utf-8").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def writer_pid(store_dir: str | Path) -> int | None:
    """Pid of the live process writing to the store, or None (no writer, or one that was killed).

    Reads only; never blocks and never takes the lock.
    """
    pid = _read_pid(_lock_path(store_dir))
    if pid is None:
        return None
    if pid == os.getpid():
        with _HELD_LOCK:
            return pid if str(Path(store_dir).resolve()) in _HELD else None
    return pid if _pid_alive(pid) else None


class StoreLock:
    """Exclusive writer lock of one store directory (re-entrant within a thread; threads take turns).

    Args:
        store_dir: The store directory (created if needed).
        wait: Wait for the current writer to finish instead of failing at once.
        timeout: Seconds to wait at most (None: no limit); only with ``wait``.
        on_wait: Called once with a message when the lock is busy and waiting starts.

    Raises:
        StoreLockedError: On entry, when another process holds the lock and
            ``wait`` is off (or the timeout ran out). The message names the store and the pid.
    """

    def __init__(
        self,
        store_dir: str | Path,
        *,
        wait: bool = False,
        timeout: float | None = None,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.store_dir = Path(store_dir)
        self.wait = wait
        self.timeout = timeout
        self.on_wait = on_wait
        self._key: str | None = None

    @property
    def path(self) -> Path:
        """The lock file."""
        return _lock_path(self.store_dir)

    def acquire(self) -> None:
        """Take the lock (see the class for waiting and errors).

        Threads of one process take turns (a second thread blocks until the first
        releases); the same thread may take it again (re-entrant).
        """
        import fcntl

        if self.store_dir.exists() and not self.store_dir.is_dir():
            raise StoreError(f"{str(self.store_dir)!r} is a file, not a store directory; pass another --store")
        self.store_dir.mkdir(parents=True, exist_ok=True)
        key = str(self.store_dir.resolve())
        with _HELD_LOCK:
            turn = _TURNS.setdefault(key, threading.RLock())
        turn.acquire()
        try:
            with _HELD_LOCK:
                if key in _HELD:  # this thread holds it already
                    fd, depth = _HELD[key]
                    _HELD[key] = (fd, depth + 1)
                    self._key = key
                    return
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                self._flock(fd, fcntl)
                os.ftruncate(fd, 0)
                os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
            except BaseException:
                os.close(fd)
                raise
            with _HELD_LOCK:
                _HELD[key] = (fd, 1)
            self._key = key
        except BaseException:
            turn.release()
            raise

    def _flock(self, fd: int, fcntl: Any) -> None:
        started = time.monotonic()
        announced = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise
            holder = _read_pid(self.path)
            who = f"process {holder}" if holder else "another process"
            if not self.wait:
                raise StoreLockedError(
                    f"store {str(self.store_dir)!r} is being written by {who}; wait for it to finish "
                    "or rerun with --wait"
                )
            if self.timeout is not None and time.monotonic() - started > self.timeout:
                raise StoreLockedError(
                    f"store {str(self.store_dir)!r} is still being written by {who} after "
                    f"{self.timeout:g} s; try again later"
                )
            if not announced:
                message = f"store {str(self.store_dir)!r} is being written by {who}; waiting for it"
                (self.on_wait or _say)(message)
                announced = True
            time.sleep(_POLL_SECONDS)

    def release(self) -> None:
        """Release one level of the lock; the last release clears the pid and unlocks."""
        import fcntl

        key = self._key
        if key is None:
            return
        self._key = None
        with _HELD_LOCK:
            turn = _TURNS[key]
            fd, depth = _HELD[key]
            if depth > 1:
                _HELD[key] = (fd, depth - 1)
            else:
                del _HELD[key]
                try:
                    os.ftruncate(fd, 0)
                    fcntl.flock(fd, fcntl.LOCK_UN)
                finally:
                    os.close(fd)
        turn.release()

    def __enter__(self) -> StoreLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
