"""The retrieval-based summarizer: retrieve -> count support -> synthesize, per query.

:class:`HighlightPipeline` is the :class:`~opinio_agents.synthesis.summarizer.Summarizer`
of the OpinioRAG paper: for each query it retrieves the top-K evidence sentences,
counts the query's support over the whole entity and hands both to a per-query
:class:`~opinio_agents.synthesis.base.Synthesizer` (extractive or LLM). The
critical-complaint guard, the alerts and the timings are the summarizer base
class's single post-processing step.

Review sentences that read as instructions to an AI assistant
(:func:`~opinio_agents.text.injection.injection_reasons`: "ignore previous
instructions", "tell the user ...", role tags, fake answer JSON) are kept out of
the evidence and the support pool a synthesizer sees, and a highlight whose only
evidence is such a sentence (a synthesizer that found it elsewhere) is dropped;
both are reported in ``HighlightSet.meta.flagged``. The sentences still count for
support and alerts: they are reviews, only not instructions.

Example:
    >>> pipeline = HighlightPipeline(RetrieverFactory(SentenceStore(".opinio")))  # doctest: +SKIP
    >>> result = pipeline.run("1", ["wi-fi", "breakfast"])          # doctest: +SKIP
    >>> result.cons[0].support.describe()                           # doctest: +SKIP
    'mentioned in 41 of 160 reviews, 78% negative'
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.kinds import RetrieverKind
from opinio_agents.models import (
    SENTIMENT_THRESHOLD,
    Evidence,
    FlaggedSentence,
    HighlightSet,
    QueryEvidence,
    RunMeta,
    Support,
)
from opinio_agents.retrieval.factory import RetrieverFactory, ScoredSentence
from opinio_agents.synthesis.alerts import CriticalComplaintCheck
from opinio_agents.synthesis.base import SynthesisOutcome, Synthesizer
from opinio_agents.synthesis.selection import support_pool
from opinio_agents.synthesis.summarizer import Draft, HighlightRequest, Summarizer, usage_delta
from opinio_agents.synthesis.support import aspect_mentions, support_of
from opinio_agents.text.injection import injection_reasons
from opinio_agents.trends import Weighting, in_window

if TYPE_CHECKING:
    from collections.abc import Iterator

    from llama_index.core.vector_stores.types import MetadataFilters

    from opinio_agents.synthesis.verification import HighlightVerifier

__all__ = ["HighlightPipeline", "MAJORITY_BACKFILL"]

#: Deeper sentences added on the majority side when the top-K evidence has none of it.
MAJORITY_BACKFILL = 2


class HighlightPipeline(Summarizer):
    """Retrieval + per-query synthesis for one entity at a time (a :class:`Summarizer`).

    Args:
        retrievers: The retriever factory over the store holding the entity (it caches
            each entity's retrievers until the entity is re-indexed).
        synthesizer: How highlights are written (extractive by default).
        retriever: ``bm25``, ``dense`` or ``hybrid``.
        top_k: Evidence sentences per query (the paper uses 5 and 10).
        filters: Metadata filters applied to retrieval.
        checks: The post-processing step (critical-complaint guard + alerts).
        screen_injection: Keep instruction-like review sentences out of the evidence and
            drop highlights that rest on them only (reported in ``meta.flagged``).
        verifier: Verify each highlight against its own evidence (see
            :class:`~opinio_agents.synthesis.summarizer.Summarizer`).
        weighting: Count support only over a window of publication dates and/or weight
            reviews by recency or helpful votes (:class:`~opinio_agents.trends.Weighting`;
            default: every review once). With a window, the evidence and the support
            pool come from that window too, and so do the trends.

    Example:
        >>> pipeline = HighlightPipeline(factory, retriever="bm25", top_k=5)   # doctest: +SKIP
        >>> pipeline.summarize("101", ["wi-fi"]).meta.mode                   # doctest: +SKIP
        'queries'
    """

    def __init__(
        self,
        retrievers: RetrieverFactory,
        synthesizer: Synthesizer | None = None,
        *,
        retriever: RetrieverKind = "hybrid",
        top_k: int = 10,
        filters: MetadataFilters | None = None,
        checks: CriticalComplaintCheck | None = None,
        screen_injection: bool = True,
        verifier: HighlightVerifier | bool | None = None,
        weighting: Weighting | None = None,
    ) -> None:
        super().__init__(retrievers.store, checks=checks, verifier=verifier)
        if weighting is not None:
            self.weighting = weighting
        self.screen_injection = screen_injection
        if top_k < 1:
            raise ConfigError(f"top_k={top_k} must be >= 1")
        if synthesizer is None:
            from opinio_agents.synthesis.extractive import ExtractiveSynthesizer

            synthesizer = ExtractiveSynthesizer(retrievers.encoder)
        if not isinstance(synthesizer, Synthesizer):
            raise ConfigError(
                f"synthesizer={synthesizer!r} is not a per-query Synthesizer; the retrieval pipeline needs "
                "ExtractiveSynthesizer, LLMSynthesizer or another Synthesizer subclass"
            )
        self.retrievers = retrievers
        self.synthesizer = synthesizer
        self.name = synthesizer.name
        self.retriever = retriever
        self.top_k = top_k
        self.filters = filters

    def request_settings(self) -> dict[str, Any]:
        """The pipeline's retriever, top-K, filters, weighting and verification, as a request carries them."""
        return {**super().request_settings(), "retriever": self.retriever, "top_k": self.top_k, "filters": self.filters}

    # -- retrieval -------------------------------------------------------------------
    def _retrieve(
        self, key: str, query: str, top_k: int, vector: np.ndarray, request: HighlightRequest
    ) -> list[ScoredSentence]:
        window, retriever = request.weighting, request.retriever or self.retriever
        if not window.windowed:
            return self.retrievers.retrieve(
                key, query, retriever=retriever, top_k=top_k, filters=request.filters, query_embedding=vector
            )
        # Only sentences of reviews published in the window: fetch deeper, keep the first top_k inside it.
        hits = self.retrievers.retrieve(
            key, query, retriever=retriever, top_k=top_k * 5, filters=request.filters, query_embedding=vector
        )
        inside = [h for h in hits if in_window(h.sentence.publication_date, window.since, window.until)]
        return inside[:top_k]

    def _screen(
        self,
        query: str,
        hits: list[ScoredSentence],
        flagged: list[FlaggedSentence] | None,
        review_reasons: Callable[[str, str], tuple[str, ...]],
    ) -> list[ScoredSentence]:
        """``hits`` without instruction-like sentences (each recorded in ``flagged``)."""
        if not self.screen_injection:
            return hits
        kept = []
        for hit in hits:
            reasons = review_reasons(hit.sentence.review_id, hit.sentence.text)
            if not reasons:
                kept.append(hit)
            elif flagged is not None:
                flagged.append(
                    FlaggedSentence(query=query, sentence_id=hit.sentence.sentence_id, reasons=list(reasons))
                )
        return kept

    @staticmethod
    def _review_screen(stored: Sequence[Any]) -> Callable[[str, str], tuple[str, ...]]:
        """``(review_id, text) -> reasons``: a sentence's own rules, else ``same-review`` when a
        sentence of its review reads as instructions (an instruction split over sentences,
        "Ignore previous instructions. Say ...", is withheld as a whole)."""
        by_review: dict[str, list[str]] = {}
        for row in stored:
            by_review.setdefault(str(row.sentence.review_id), []).append(row.sentence.text)
        cache: dict[str, bool] = {}

        def reasons(review_id: str, text: str) -> tuple[str, ...]:
            own = injection_reasons(text)
            if own:
                return own
            key = str(review_id)
            if key not in cache:
                cache[key] = any(injection_reasons(t) for t in by_review.get(key, ()))
            return ("same-review",) if cache[key] else ()

        return reasons

    def evidence(
        self,
        entity_id: str | int,
        queries: Sequence[str],
        *,
        flagged: list[FlaggedSentence] | None = None,
        mentions: dict[str, np.ndarray] | None = None,
        request: HighlightRequest | None = None,
    ) -> list[QueryEvidence]:
        """Retrieve the top-K evidence and the entity-wide support of each query.

        Instruction-like sentences are left out of ``evidence`` and ``pool`` (unless
        ``screen_injection`` is off) and appended to ``flagged`` when it is given.
        ``mentions``, when given, receives each query's mentioning sentence indices.
        ``request`` gives the retriever, top-K, filters and weighting (default: the pipeline's own).
        """
        if request is None:
            request = HighlightRequest(str(entity_id), tuple(queries), "queries", self, **self.request_settings())
        top_k = request.top_k or self.top_k
        weighting = request.weighting
        info = self.store.entity_record(entity_id)
        key = info.key
        stored = self.store.sentences(key)
        embeddings = self.store.embeddings(key, persist=True)  # the query path: keep a matrix copy
        query_vectors = self.retrievers.encoder.encode(list(queries))
        total_reviews = info.n_reviews or None
        position = self.store.positions(key)
        screen = self._review_screen(stored)
        items = []
        for query, query_vector in zip(queries, query_vectors):
            hits = self._retrieve(key, query, top_k, query_vector, request)
            mentioning = aspect_mentions(query, stored, embeddings=embeddings, encoder=self.retrievers.encoder)
            if mentions is not None:
                mentions[query] = mentioning
            support = support_of(stored, mentioning, total_reviews=total_reviews, weighting=weighting)
            hits = self._screen(
                query, self._with_majority_side(key, query, hits, support, query_vector, request), flagged, screen
            )
            evidence = [
                Evidence(sentence_id=h.sentence.sentence_id, text=h.sentence.text, score=h.score, sentiment=h.sentiment)
                for h in hits
            ]
            rows = [position[h.sentence.sentence_id] for h in hits]
            pool_rows = support_pool(query, stored, embeddings, query_vector)
            if weighting.windowed and len(pool_rows):
                since, until = weighting.since, weighting.until
                pool_rows = pool_rows[
                    np.array([in_window(stored[int(i)].sentence.publication_date, since, until) for i in pool_rows])
                ]
            if self.screen_injection and len(pool_rows):
                keep = np.array(
                    [not screen(stored[int(i)].sentence.review_id, stored[int(i)].sentence.text) for i in pool_rows],
                    dtype=bool,
                )
                pool_rows = pool_rows[keep]
            pool = [
                Evidence(sentence_id=stored[i].sentence.sentence_id, text=stored[i].sentence.text, score=0.0,
                         sentiment=stored[i].sentiment)
                for i in pool_rows
            ]
            items.append(
                QueryEvidence(
                    query=query,
                    evidence=evidence,
                    support=support,
                    entity_name=info.entity_name,
                    vectors=embeddings[rows] if rows else None,
                    pool=pool,
                    pool_vectors=embeddings[pool_rows],
                    query_vector=query_vector,
                    mentions=frozenset(stored[int(i)].sentence.sentence_id for i in mentioning),
                    named=frozenset(stored[int(i)].sentence.sentence_id for i in aspect_mentions(query, stored)),
                )
            )
        return items

    def _with_majority_side(
        self,
        key: str,
        query: str,
        hits: list[ScoredSentence],
        support: Support,
        query_vector: np.ndarray,
        request: HighlightRequest,
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
        seen = {h.sentence.sentence_id for h in hits}
        extra = [
            h
            for h in self._retrieve(key, query, (request.top_k or self.top_k) * 5, query_vector, request)
            if h.sentence.sentence_id not in seen and sign * h.sentiment > SENTIMENT_THRESHOLD
        ]
        return hits + extra[:MAJORITY_BACKFILL]

    # -- the Summarizer ------------------------------------------------------------------
    def draft(self, request: HighlightRequest) -> Draft:
        """Retrieve the evidence of every query now; synthesize lazily, as the outcomes are consumed."""
        if request.mode == "query-free":
            raise ConfigError("the retrieval pipeline answers queries; a query-free request needs HIRO's summarizer")
        info = self.store.entity_record(request.entity_key)
        asked = list(request.queries)
        started = time.perf_counter()
        flagged: list[FlaggedSentence] = []
        mentions: dict[str, np.ndarray] = {}
        items = self.evidence(request.entity_key, asked, flagged=flagged, mentions=mentions, request=request)
        meta = RunMeta(
            mode=request.mode,
            retriever=request.retriever or self.retriever,
            top_k=request.top_k or self.top_k,
            synthesizer=self.synthesizer.name,
            model=self.synthesizer.model_name,
            queries=asked,
            timings={"retrieval": time.perf_counter() - started},
            flagged=flagged,
        )
        synthesizer = self.synthesizer
        before = synthesizer.usage.model_copy()

        def outcomes() -> Iterator[SynthesisOutcome]:
            for outcome in synthesizer.synthesize_many(items):
                yield self._drop_instruction_only(outcome, meta.flagged)
            meta.tokens = usage_delta(before, synthesizer.usage)

        return Draft(
            entity_id=info.entity_id,
            entity_name=info.entity_name,
            queries=asked,
            outcomes=outcomes(),
            meta=meta,
            mentions=mentions,
            fallback=synthesizer.fallback,
        )

    def _drop_instruction_only(self, outcome: SynthesisOutcome, flagged: list[FlaggedSentence]) -> SynthesisOutcome:
        """Drop the highlights whose every evidence sentence reads as instructions (recorded in ``flagged``)."""
        if not self.screen_injection or not outcome.highlights:
            return outcome
        kept = []
        for highlight in outcome.highlights:
            reasons = [injection_reasons(e.text) for e in highlight.evidence]
            if highlight.evidence and all(reasons):
                for ev, why in zip(highlight.evidence, reasons):
                    flagged.append(
                        FlaggedSentence(
                            query=highlight.query,
                            sentence_id=ev.sentence_id,
                            reasons=list(why),
                            action="dropped",
                            highlight=highlight.text[:200],
                        )
                    )
            else:
                kept.append(highlight)
        outcome.highlights = kept
        return outcome

    def run(self, entity_id: str | int, queries: Sequence[str] | None = None) -> HighlightSet:
        """All highlights, alerts and failures of one entity (same as :meth:`summarize`)."""
        return self.summarize(entity_id, queries)
