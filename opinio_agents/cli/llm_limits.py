"""The ``--llm-timeout`` / ``--llm-deadline`` options shared by ``highlight``, ``evaluate`` and ``chat``.

Example:
    >>> llm_limits(30.0, None)
    {'timeout': 30.0}
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

__all__ = ["LLMTimeoutOpt", "LLMDeadlineOpt", "llm_limits"]

LLMTimeoutOpt = Annotated[
    float | None,
    typer.Option(
        "--llm-timeout",
        min=0.1,
        help="Seconds one LLM request may take before it is retried (default 60).",
    ),
]
LLMDeadlineOpt = Annotated[
    float | None,
    typer.Option(
        "--llm-deadline",
        min=0.1,
        help="Total seconds one query may spend on the LLM, retries and repair turn included (default 120).",
    ),
]


def llm_limits(timeout: float | None, deadline: float | None = None) -> dict[str, Any]:
    """The ``llm_options`` of :class:`~opinio_agents.api.OpinioRAG` for the options given (none: defaults)."""
    out: dict[str, Any] = {}
    if timeout is not None:
        out["timeout"] = float(timeout)
    if deadline is not None:
        out["deadline"] = float(deadline)
    return out
