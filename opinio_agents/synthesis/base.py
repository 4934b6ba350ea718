"""The synthesizer interface shared by the extractive and the LLM synthesizers.

A synthesizer turns the retrieved evidence for one query into zero, one or two
highlights (a query may yield a PRO and a CON when reviews genuinely split).
Entity-level orchestration (retrieval, support counts, alerts) lives in
:mod:`opinio_agents.pipeline`; synthesizers only see :class:`QueryEvidence`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal

from opinio_agents.errors import OpinioError
from opinio_agents.models import Highlight, QueryEvidence, QueryFailure, TokenUsage

__all__ = ["Synthesizer", "SynthesisOutcome", "LLMStatus"]

#: How a model's answer for one query went (counted in ``RunMeta.llm``, see :class:`~opinio_agents.models.LLMOutcomes`).
LLMStatus = Literal["answered", "repaired", "fallback", "failed", "contradicted"]


@dataclass
class SynthesisOutcome:
    """Result for one query: its highlights, or the failure that stopped it.

    ``llm`` is set by synthesizers whose text a model writes: ``answered``, ``repaired``,
    ``fallback`` (the extractive highlight stands in), ``failed``, or ``contradicted`` (a
    valid answer that verification then replaced by the fallback).
    """

    item: QueryEvidence
    highlights: list[Highlight] = field(default_factory=list)
    failure: QueryFailure | None = None
    llm: LLMStatus | None = None


class Synthesizer(ABC):
    """Base class: implement :meth:`synthesize`; override :meth:`synthesize_many` for concurrency."""

    #: Short name recorded in ``HighlightSet.meta.synthesizer``.
    name: str = "synthesizer"
    #: Model name recorded in ``HighlightSet.meta.model`` (None for non-LLM synthesizers).
    model_name: str | None = None

    def __init__(self) -> None:
        self.usage = TokenUsage()

    @abstractmethod
    def synthesize(self, item: QueryEvidence) -> list[Highlight]:
        """Return the highlights for one query (empty when the evidence says nothing)."""

    def fallback(self, item: QueryEvidence) -> list[Highlight]:
        """The highlights shown for ``item`` when this synthesizer's own are unusable or contradicted.

        Model-based synthesizers return the extractive highlights, marked
        ``origin="extractive-fallback"``; the default has none.
        """
        return []

    def synthesize_many(self, items: Sequence[QueryEvidence]) -> Iterator[SynthesisOutcome]:
        """Yield one outcome per query as it completes; a failing query does not stop the rest."""
        for item in items:
            try:
                yield SynthesisOutcome(item=item, highlights=self.synthesize(item))
            except OpinioError as exc:
                attempts = getattr(exc, "attempts", None) or 1
                yield SynthesisOutcome(
                    item=item, failure=QueryFailure(query=item.query, error=str(exc), attempts=attempts)
                )
