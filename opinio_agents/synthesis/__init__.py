"""Synthesizers: evidence -> key-point highlights (extractive, LLM, long-context), the Summarizer seam, the alert guard.

Heavy members are imported lazily on first attribute access.
"""

from __future__ import annotations

import importlib
from typing import Any

from opinio_agents.models import QueryEvidence
from opinio_agents.synthesis.base import SynthesisOutcome, Synthesizer

__all__ = [
    "QueryEvidence",
    "SynthesisOutcome",
    "Synthesizer",
    "Summarizer",
    "SummaryDone",
    "CriticalComplaintCheck",
    "ExtractiveSynthesizer",
    "LLMSynthesizer",
    "LongContextSynthesizer",
    "detect_alerts",
    "guard_highlights",
    "CRITICAL_CATEGORIES",
    "count_support",
    "to_key_point",
]

_LAZY = {
    "Summarizer": "opinio_agents.synthesis.summarizer",
    "SummaryDone": "opinio_agents.synthesis.summarizer",
    "CriticalComplaintCheck": "opinio_agents.synthesis.alerts",
    "ExtractiveSynthesizer": "opinio_agents.synthesis.extractive",
    "LLMSynthesizer": "opinio_agents.synthesis.llm",
    "LongContextSynthesizer": "opinio_agents.synthesis.long_context",
    "detect_alerts": "opinio_agents.synthesis.alerts",
    "guard_highlights": "opinio_agents.synthesis.alerts",
    "CRITICAL_CATEGORIES": "opinio_agents.synthesis.alerts",
    "count_support": "opinio_agents.synthesis.support",
    "to_key_point": "opinio_agents.synthesis.keypoint",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'opinio_agents.synthesis' has no attribute {name!r}")
