"""Retry with exponential backoff for transient model errors (429, 5xx, timeouts).

Which errors are transient is decided by :func:`is_retryable`: HTTP 408/409/425/429
and 5xx status codes (read from ``status_code`` or ``response.status_code``, so it
works for ``openai``, ``httpx`` and most provider SDKs), timeouts and connection
errors and response bodies that are not JSON. A ``Retry-After`` / ``retry-after-ms`` header is honoured, capped at
``max_delay``. Anything else (400 bad request, 401 bad key, ...) fails at once.

This is the package's only retry policy: models built from a string have the
provider client's own retries switched off (``max_retries=0`` in
:func:`~opinio_agents.llm.providers.resolve_chat_model`, and
:func:`~opinio_agents.llm.providers.without_client_retries` for models passed
in), so ``attempts`` in every result and error is the number of requests made.
A :class:`Deadline` bounds one query as a whole: no request starts, and no
backoff sleep runs, past it (:class:`~opinio_agents.errors.LLMDeadlineError`).
The async path cancels the request in flight at the deadline; a synchronous
request ends at its own timeout, which structured calls cap at the deadline, so a
query takes at most ``deadline + min(timeout, deadline)``.

Example:
    >>> policy = RetryPolicy(max_retries=2, base_delay=0.0)
    >>> calls = []
    >>> def flaky():
    ...     calls.append(1)
    ...     if len(calls) < 2:
    ...         raise TimeoutError("slow")
    ...     return "ok"
    >>> call_with_retry(flaky, policy)
    ('ok', 2)
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from opinio_agents.errors import ConfigError, LLMDeadlineError, LLMError

__all__ = [
    "RetryPolicy",
    "Deadline",
    "is_retryable",
    "status_code_of",
    "call_with_retry",
    "acall_with_retry",
    "describe_error",
]

T = TypeVar("T")

_RETRYABLE_STATUS = {408, 409, 425, 429}


def status_code_of(exc: BaseException) -> int | None:
    """The HTTP status code carried by an exception, if any."""
    code = getattr(exc, "status_code", None)
    if code is None:
        response = getattr(exc, "response", None)
        code = getattr(response, "status_code", None)
    try:
        return int(code) if code is not None else None
    except (TypeError, ValueError):
        return None


def is_retryable(exc: BaseException) -> bool:
    """True for rate limits, server errors, timeouts, dropped connections and garbled bodies."""
    if isinstance(exc, json.JSONDecodeError):
        return True  # the server (or a proxy) sent a body that is not JSON: transient
    code = status_code_of(exc)
    if code is not None:
        return code in _RETRYABLE_STATUS or code >= 500
    if isinstance(exc, (TimeoutError, ConnectionError, asyncio.TimeoutError)):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    # openai.APITimeoutError / APIConnectionError, httpx.TimeoutException / NetworkError
    return bool(names & {"APITimeoutError", "APIConnectionError", "TimeoutException", "NetworkError"})


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    try:
        if headers.get("retry-after-ms") is not None:
            return float(headers["retry-after-ms"]) / 1000.0
        if headers.get("retry-after") is not None:
            return float(headers["retry-after"])
    except (TypeError, ValueError):
        return None
    return None


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry transient failures.

    Args:
        max_retries: Retries after the first attempt (0 = try once).
        base_delay: Delay before the first retry, in seconds; doubled each retry.
        max_delay: Upper bound of one delay (also caps a server's Retry-After).
        jitter: Randomise each delay in ``[delay/2, delay]`` to spread bursts.
        deadline: Total seconds one query may take (every request, every backoff
            sleep and the repair turn together); None for no total limit.
    """

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 20.0
    jitter: bool = True
    deadline: float | None = None

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigError(f"max_retries={self.max_retries} must be >= 0")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ConfigError(
                f"base_delay={self.base_delay} and max_delay={self.max_delay} must be >= 0 seconds"
            )
        if self.deadline is not None and not (self.deadline > 0 and math.isfinite(self.deadline)):
            raise ConfigError(f"deadline={self.deadline} must be a finite number of seconds > 0 (or None)")

    @property
    def max_attempts(self) -> int:
        """Requests one model call may make: the first plus ``max_retries``."""
        return self.max_retries + 1

    def start(self, *, clock: Callable[[], float] = time.monotonic) -> Deadline:
        """A :class:`Deadline` for one query that starts now."""
        return Deadline(self.deadline, clock=clock)

    def delay(self, retry_index: int, exc: BaseException | None = None) -> float:
        """Seconds to wait before retry number ``retry_index`` (0-based)."""
        hinted = _retry_after(exc) if exc is not None else None
        if hinted is not None:
            return max(0.0, min(hinted, self.max_delay))
        delay = min(self.base_delay * (2**retry_index), self.max_delay)
        if self.jitter and delay > 0:
            delay = random.uniform(delay / 2, delay)
        return delay


class Deadline:
    """The moment after which a query starts no new request and no backoff sleep.

    Args:
        seconds: Time allowed from now; None never expires.
        clock: A monotonic clock (injectable for tests).

    Example:
        >>> Deadline(None).remaining() is None
        True
        >>> Deadline(30.0).expired()
        False
    """

    def __init__(self, seconds: float | None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._end = None if seconds is None else clock() + seconds

    def remaining(self) -> float | None:
        """Seconds left (never negative), or None without a deadline."""
        if self._end is None:
            return None
        return max(0.0, self._end - self._clock())

    def expired(self) -> bool:
        """True once the deadline has passed."""
        left = self.remaining()
        return left is not None and left <= 0.0

    def error(self, what: str, attempts: int, last: str | None = None) -> LLMDeadlineError:
        """The error raised when the deadline stops a query."""
        because = f"; last error: {last}" if last else ""
        return LLMDeadlineError(
            f"{what} stopped: the per-query deadline of {self.seconds:g} s passed "
            f"(raise it with deadline= / --llm-deadline){because}",
            attempts=attempts,
        )


def describe_error(exc: BaseException, redact: Callable[[str], str] | None = None, limit: int = 160) -> str:
    """One short line for a failed request: ``HTTP 500: InternalServerError: ...``.

    The exception text (which may quote a server's body) is cut to ``limit``
    characters, escaped like a Python string literal, and passed through
    ``redact`` (e.g. to withhold text that repeats the prompt).
    """
    code = status_code_of(exc)
    prefix = f"HTTP {code}: " if code is not None else ""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if redact is not None:
        text = redact(text)
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    escaped = repr(text)[1:-1]
    return f"{prefix}{type(exc).__name__}: {escaped}"


def _give_up(
    exc: Exception, attempt: int, policy: RetryPolicy, deadline: Deadline | None
) -> tuple[str | None, float]:
    """Why to stop after this failure (``"final"``, ``"deadline"``) or None, and the delay before the next attempt."""
    if not is_retryable(exc) or attempt > policy.max_retries:
        return "final", 0.0
    pause = policy.delay(attempt - 1, exc)
    left = deadline.remaining() if deadline is not None else None
    if left is not None and (left <= 0.0 or pause >= left):
        return "deadline", 0.0  # the next attempt could not start before the deadline
    return None, pause


def call_with_retry(
    fn: Callable[[], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Any] = time.sleep,
    what: str = "model call",
    deadline: Deadline | None = None,
    spent: int = 0,
    redact: Callable[[str], str] | None = None,
) -> tuple[T, int]:
    """Run ``fn`` until it succeeds or a non-transient error / the retry budget / the deadline stops it.

    Args:
        fn: One request (e.g. one ``model.invoke``).
        policy: Retries and backoff.
        sleep: The backoff sleep (injectable for tests).
        what: What is called, for the error message.
        deadline: The query's deadline; no attempt and no sleep starts past it.
        spent: Requests the query made before this call (added to ``attempts`` of errors).
        redact: Applied to exception text before it goes into an error message.

    Returns:
        ``(result, attempts)``: attempts of this call only (``spent`` not included).

    Raises:
        LLMError: With ``attempts`` (= requests made, ``spent`` included), chained to the last error.
        LLMDeadlineError: The deadline passed before the call could succeed.
    """
    attempt = 0
    last: str | None = None
    while True:
        if deadline is not None and deadline.expired():
            raise deadline.error(what, spent + attempt, last)
        attempt += 1
        try:
            return fn(), attempt
        except Exception as exc:
            if isinstance(exc, LLMError):
                raise
            last = describe_error(exc, redact)
            stop, pause = _give_up(exc, attempt, policy, deadline)
            if stop == "deadline" and deadline is not None:
                raise deadline.error(what, spent + attempt, last) from exc
            if stop:
                raise LLMError(f"{what} failed: {last}", attempts=spent + attempt) from exc
            sleep(pause)


async def acall_with_retry(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    what: str = "model call",
    deadline: Deadline | None = None,
    spent: int = 0,
    redact: Callable[[str], str] | None = None,
) -> tuple[T, int]:
    """Async twin of :func:`call_with_retry`; an attempt in flight is cancelled at the deadline."""
    attempt = 0
    last: str | None = None
    while True:
        if deadline is not None and deadline.expired():
            raise deadline.error(what, spent + attempt, last)
        attempt += 1
        left = deadline.remaining() if deadline is not None else None
        try:
            if left is None:
                return await fn(), attempt
            return await asyncio.wait_for(fn(), timeout=left), attempt
        except Exception as exc:
            if isinstance(exc, LLMError):
                raise
            last = describe_error(exc, redact)
            stop, pause = _give_up(exc, attempt, policy, deadline)
            if stop == "deadline" and deadline is not None:
                raise deadline.error(what, spent + attempt, last) from exc
            if stop:
                raise LLMError(f"{what} failed: {last}", attempts=spent + attempt) from exc
            await asyncio.sleep(pause)
