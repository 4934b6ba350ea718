"""Thread-safe token accounting for a run of language-model calls.

Example:
    >>> meter = UsageMeter()
    >>> meter.record(prompt_tokens=120, completion_tokens=30)
    >>> meter.record(prompt_tokens=120, completion_tokens=30, cached=True)
    >>> meter.snapshot().calls, meter.snapshot().cached_calls
    (2, 1)
    >>> prompt_token_ratio(240, 12_000)
    0.02
"""

from __future__ import annotations

import threading

from opinio_agents.models import TokenUsage

__all__ = ["UsageMeter", "prompt_token_ratio"]


class UsageMeter:
    """Accumulates prompt/completion tokens and call counts from many threads.

    Cached calls are counted in ``calls`` and ``cached_calls`` and keep the token
    counts recorded when the response was first produced, so the figures of a
    re-run match the first run; ``calls - cached_calls`` is what was billed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage = TokenUsage()

    def record(self, *, prompt_tokens: int, completion_tokens: int, cached: bool = False) -> None:
        """Add one call."""
        with self._lock:
            self._usage = self._usage.add(
                TokenUsage(
                    prompt_tokens=max(0, int(prompt_tokens)),
                    completion_tokens=max(0, int(completion_tokens)),
                    calls=1,
                    cached_calls=1 if cached else 0,
                )
            )

    def add(self, usage: TokenUsage) -> None:
        """Add a whole :class:`TokenUsage`."""
        with self._lock:
            self._usage = self._usage.add(usage)

    def snapshot(self) -> TokenUsage:
        """A copy of the totals so far."""
        with self._lock:
            return self._usage.model_copy()

    def reset(self) -> None:
        """Zero the totals."""
        with self._lock:
            self._usage = TokenUsage()


def prompt_token_ratio(prompt_tokens: int, baseline_prompt_tokens: int) -> float | None:
    """Prompt tokens sent divided by what the long-context baseline would send.

    Returns None when the baseline figure is zero (nothing to compare with).
    """
    if baseline_prompt_tokens <= 0:
        return None
    return round(prompt_tokens / baseline_prompt_tokens, 6)
