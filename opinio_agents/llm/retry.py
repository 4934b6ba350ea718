"""Retry with exponential backoff for transient model errors (429, 5xx, timeouts).

Which errors are transient is decided by :func:`is_retryable`: HTTP 408/409/425/429
and 5xx status codes (read from ``status_code`` or ``response.status_code``, so it
works for ``openai``, ``httpx`` and most provider SDKs), timeouts and connection
errors and response bodies that are not JSON. A ``Retry-After`` / ``retry-after-ms`` header is honoured, capped at
``max_delay``. Anything else (400 bad request, 401 bad key, ...) fails at once.

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
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from opinio_agents.errors import ConfigError, LLMError

__all__ = ["RetryPolicy", "is_retryable", "status_code_of", "call_with_retry", "acall_with_retry"]

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
    """

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 20.0
    jitter: bool = True

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ConfigError(f"max_retries={self.max_retries} must be >= 0")
        if self.base_delay < 0 or self.max_delay < 0:
            raise ConfigError(
                f"base_delay={self.base_delay} and max_delay={self.max_delay} must be >= 0 seconds"
            )

    def delay(self, retry_index: int, exc: BaseException | None = None) -> float:
        """Seconds to wait before retry number ``retry_index`` (0-based)."""
        hinted = _retry_after(exc) if exc is not None else None
        if hinted is not None:
            return max(0.0, min(hinted, self.max_delay))
        delay = min(self.base_delay * (2**retry_index), self.max_delay)
        if self.jitter and delay > 0:
            delay = random.uniform(delay / 2, delay)
        return delay


def _describe(exc: BaseException) -> str:
    code = status_code_of(exc)
    prefix = f"HTTP {code}: " if code is not None else ""
    text = str(exc).strip() or type(exc).__name__
    return f"{prefix}{type(exc).__name__}: {text[:300]}"


def call_with_retry(
    fn: Callable[[], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Any] = time.sleep,
    what: str = "model call",
) -> tuple[T, int]:
    """Run ``fn`` until it succeeds or a non-transient error / the retry budget stops it.

    Returns:
        ``(result, attempts)``.

    Raises:
        LLMError: With ``attempts`` set, chained to the last error.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return fn(), attempt
        except Exception as exc:
            if isinstance(exc, LLMError):
                raise
            if not is_retryable(exc) or attempt > policy.max_retries:
                raise LLMError(f"{what} failed: {_describe(exc)}", attempts=attempt) from exc
            sleep(policy.delay(attempt - 1, exc))


async def acall_with_retry(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    what: str = "model call",
) -> tuple[T, int]:
    """Async twin of :func:`call_with_retry`."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return await fn(), attempt
        except Exception as exc:
            if isinstance(exc, LLMError):
                raise
            if not is_retryable(exc) or attempt > policy.max_retries:
                raise LLMError(f"{what} failed: {_describe(exc)}", attempts=attempt) from exc
            await asyncio.sleep(policy.delay(attempt - 1, exc))
