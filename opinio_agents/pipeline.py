"""Entity-level orchestration: retrieve -> count support -> synthesize -> guard -> alerts.

:class:`HighlightPipeline` turns an indexed entity and a list of queries into a
:class:`~opinio_agents.models.HighlightSet`. It is synthesizer-agnostic: the
extractive and the LLM synthesizers plug in through
:class:`~opinio_agents.synthesis.base.Synthesizer`.

Example:
    >>> pipeline = HighlightPipeline(RetrieverFactory(SentenceStore(".opinio")))  # doctest: +SKIP
    >>> result = pipeline.run("1", ["wi-fi", "breakfast"])          # doctest: +SKIP
    >>> result.cons[0].support.describe()                           # doctest: +SKIP
    'mentioned in 41 of 160 reviews, 78% negative'
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.models import Evidence, HighlightSet, RunMeta, Support
from opinio_agents.retrieval.factory import RetrieverFactory, RetrieverKind, ScoredSentence
from opinio_agents.stores.sentence_store import SentenceStore
from opinio_agents.synthesis.base import QueryEvidence, SynthesisOutcome, Synthesizer
from opinio_agents.synthesis.polarity import SENTIMENT_THRESHOLD
from opinio_agents.synthesis.support import count_support

if TYPE_CHECKING:
    from llama_index.core.vector_stores.types import MetadataFilters

__all__ = ["HighlightPipeline", "resolve_queries", "MAJORITY_BACKFILL"]

#: Deeper sentences added on the majority side when the top-K evidence has none of it.
MAJORITY_BACKFILL = 2


def resolve_queries(store: SentenceStore, entity_key: str, queries: Sequence[str] | None) -> list[str]:
    """The queries to answer: the given ones, else the entity's expert-review queries."""
    if queries:
        cleaned = [q.strip() for q in queries if q and q.strip()]
        if not cleaned:
            raise ConfigError("every query given is empty; pass queries such as --query wi-fi")
        return list(dict.fromkeys(cleaned))
    asked = store.entity_record(entity_key).queries
    if asked:
        return asked
    raise ConfigError(
        f"entity {entity_key!r} has no expert-review queries; pass queries explicitly "
        "(CLI: --query 'wi-fi' --query 'breakfast')"
    )


class HighlightPipeline:
    """Retrieval + synthesis for one entity at a time.

    Args:
        retrievers: The retriever factory over the store holding the entity.
        synthesizer: How highlights are written (extractive by default).
        retriever: ``bm25``, ``dense`` or ``hybrid``.
        top_k: Evidence sentences per query (the paper uses 5 and 10).
        filters: Metadata filters applied to retrieval.
    """

    def __init__(
        self,
        retrievers: RetrieverFactory,
        synthesizer: Synthesizer | None = None,
        *,
        retriever: RetrieverKind = "hybrid",
        top_k: int = 10,
        filters: MetadataFilters | None = None,
    ) -> None:
        if synthesizer is None:
            from opinio_agents.synthesis.extractive import ExtractiveSynthesizer

            synthesizer = ExtractiveSynthesizer(retrievers.encoder)
        self.retrievers = retrievers
        self.store = retrievers.store
        self.synthesizer = synthesizer
        self.retriever = retriever
        self.top_k = top_k
        self.filters = filters

    def evidence(self, entity_id: str | int, queries: Sequence[str]) -> list[QueryEvidence]:
        """Retrieve the top-K evidence and the entity-wide support of each query."""
        key = self.store.require_entity(entity_id)
        info = self.store.entity_record(key)
        stored = self.store.sentences(key)
        embeddings = self.store.embeddings(key)
        query_vectors = self.retrievers.encoder.encode(list(queries))
        total_reviews = info.n_reviews or None
        items = []
        position = self.store.positions(key)
        for query, query_vector in zip(queries, query_vectors):
            hits = self.retrievers.retrieve(
                key,
                query,
                retriever=self.retriever,
                top_k=self.top_k,
                filters=self.filters,
                query_embedding=query_vector,
            )
            support = count_support(
                query,
                stored,
                total_reviews=total_reviews,
                embeddings=embeddings,
                query_embedding=query_vector,
                encoder=self.retrievers.encoder,
            )
            hits = self._with_majority_side(key, query, hits, support, query_vector)
            evidence = [
                Evidence(sentence_id=h.sentence.sentence_id, text=h.sentence.text, score=h.score, sentiment=h.sentiment)
                for h in hits
            ]
            rows = [position[h.sentence.sentence_id] for h in hits]
            items.append(
                QueryEvidence(
                    query=query,
                    evidence=evidence,
                    support=support,
                    entity_name=info.entity_name,
                    vectors=embeddings[rows] if rows else None,
                )
            )
        return items

    def _with_majority_side(
        self, key: str, query: str, hits: list[ScoredSentence], support: Support, query_vector: np.ndarray
    ) -> list[ScoredSentence]:
        """Add up to ``MAJORITY_BACKFILL`` deeper hits on the entity-wide majority side when the top-K has none.

        Without them, a query most reviews criticise could only be written up
        from its few positive top-K sentences.
        """
        if support.positive == support.negative:
            return hits
        sign = 1 if support.positive > support.negative else -1
        if any(sign * h.sentiment > SENTIMENT_THRESHOLD for h in hits):
            return hits
        deeper = self.retrievers.retrieve(
            key,
            query,
            retriever=self.retriever,
            top_k=self.top_k * 5,
            filters=self.filters,
            query_embedding=query_vector,
        )
        seen = {h.sentence.sentence_id for h in hits}
        extra = [h for h in deeper if h.sentence.sentence_id not in seen and sign * h.sentiment > SENTIMENT_THRESHOLD]
        return hits + extra[:MAJORITY_BACKFILL]

    def stream(self, entity_id: str | int, queries: Sequence[str] | None = None) -> Iterator[SynthesisOutcome]:
        """Yield each query's outcome as soon as it is synthesized (guarded against softened complaints)."""
        from opinio_agents.synthesis.alerts import guard_highlights

        key = self.store.require_entity(entity_id)
        items = self.evidence(key, resolve_queries(self.store, key, queries))
        for outcome in self.synthesizer.synthesize_many(items):
            if outcome.failure is None:
                outcome.highlights = guard_highlights(outcome.item, outcome.highlights)
            yield outcome

    def run(self, entity_id: str | int, queries: Sequence[str] | None = None) -> HighlightSet:
        """All highlights, alerts and failures of one entity."""
        from opinio_agents.synthesis.alerts import detect_alerts

        key = self.store.require_entity(entity_id)
        info = self.store.entity_record(key)
        asked = resolve_queries(self.store, key, queries)
        timings: dict[str, float] = {}
        started = time.perf_counter()
        items = self.evidence(key, asked)
        timings["retrieval"] = time.perf_counter() - started

        t0 = time.perf_counter()
        result = HighlightSet(entity_id=info.entity_id, entity_name=info.entity_name)
        from opinio_agents.synthesis.alerts import guard_highlights

        outcomes = {o.item.query: o for o in self.synthesizer.synthesize_many(items)}
        for query in asked:  # keep the asked order, whatever the completion order
            outcome = outcomes[query]
            if outcome.failure is not None:
                result.failures.append(outcome.failure)
                continue
            for highlight in guard_highlights(outcome.item, outcome.highlights):
                result.add(highlight)
        timings["synthesis"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        stored = self.store.sentences(key)
        result.alerts = detect_alerts([s.sentence for s in stored], [s.sentiment for s in stored])
        timings["alerts"] = time.perf_counter() - t0
        timings["total"] = time.perf_counter() - started
        result.meta = RunMeta(
            retriever=self.retriever,
            top_k=self.top_k,
            synthesizer=self.synthesizer.name,
            model=self.synthesizer.model_name,
            queries=asked,
            timings={k: round(v, 4) for k, v in timings.items()},
            tokens=self.synthesizer.usage,
        )
        return result
