"""The summarizers that do not retrieve per query: the long-context baseline and HIRO query-free.

Both implement :class:`~opinio_agents.synthesis.summarizer.Summarizer`, so they
go through the same post-processing as the retrieval pipeline
(:class:`~opinio_agents.pipeline.HighlightPipeline`): the critical-complaint
guard once per query, the entity's alerts once per result, the same stream.

* :class:`LongContextSummarizer` wraps a
  :class:`~opinio_agents.synthesis.long_context.LongContextSynthesizer`: one
  prompt with the entity's newest reviews (OpinioRAG App. B.2).
* :class:`QueryFreeSummarizer` wraps HIRO's
  :func:`~opinio_agents.hiro.highlights.query_free_highlights` over a fitted
  :class:`~opinio_agents.hiro.store.HiroIndex`: the aspects are discovered, not asked.
  Its complete result (post-processing included) is kept with the HIRO hierarchy, so a
  later run over an unchanged store -- in any process -- reads it back instead of
  naming, selecting, guarding and scanning again (see :meth:`QueryFreeSummarizer.stream`).

Example:
    >>> from opinio_agents.synthesis.long_context import LongContextSynthesizer
    >>> summarizer = LongContextSummarizer(store, LongContextSynthesizer(model))   # doctest: +SKIP
    >>> summarizer.summarize("101").meta.synthesizer                              # doctest: +SKIP
    'long-context'
    >>> QueryFreeSummarizer(hiro).summarize("101").meta.mode                      # doctest: +SKIP
    'query-free'
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.retriever import DEFAULT_TOP_K
from opinio_agents.models import Evidence, Highlight, HighlightSet, QueryEvidence, QueryFailure, RunMeta, Support
from opinio_agents.synthesis.alerts import CriticalComplaintCheck
from opinio_agents.synthesis.base import SynthesisOutcome
from opinio_agents.synthesis.keypoint import KEY_POINT_SETTINGS
from opinio_agents.synthesis.selection import SELECTION_SETTINGS
from opinio_agents.synthesis.summarizer import Draft, HighlightRequest, Summarizer, SummaryDone, SummaryEvent
from opinio_agents.synthesis.support import SIDE_SHARE

if TYPE_CHECKING:
    from opinio_agents.hiro.store import HiroIndex
    from opinio_agents.stores.sentence_store import SentenceStore
    from opinio_agents.synthesis.long_context import LongContextSynthesizer
    from opinio_agents.synthesis.verification import HighlightVerifier

__all__ = ["LongContextSummarizer", "QueryFreeSummarizer"]


def _group(highlights: Sequence[Highlight]) -> dict[str, list[Highlight]]:
    out: dict[str, list[Highlight]] = {}
    for highlight in highlights:
        out.setdefault(highlight.query, []).append(highlight)
    return out


class LongContextSummarizer(Summarizer):
    """The long-context LLM baseline as a :class:`Summarizer`.

    Args:
        store: The store holding the entities.
        synthesizer: The baseline (its model, context window and cache).
        checks: The post-processing step (guard + alerts).
        verifier: Verify each highlight against its own evidence (None: the default setting).

    The expected numbers of PROS and CONS come from the entity's expert review;
    without one, one of each per query is asked for.
    """

    name = "long-context"

    def __init__(
        self,
        store: SentenceStore,
        synthesizer: LongContextSynthesizer,
        *,
        checks: CriticalComplaintCheck | None = None,
        verifier: HighlightVerifier | bool | None = None,
    ) -> None:
        super().__init__(store, checks=checks, verifier=verifier)
        self.synthesizer = synthesizer

    def draft(self, request: HighlightRequest) -> Draft:
        """One model call for all the queries, run when the outcomes are consumed."""
        if request.mode == "query-free":
            raise ConfigError("the long-context baseline answers queries; a query-free request needs HIRO's summarizer")
        asked = list(request.queries)
        mode = request.mode
        entity = self.store.entity(request.entity_key)
        expected = None if entity.expert_review is not None else len(asked)
        draft = Draft(
            entity_id=entity.entity_id,
            entity_name=entity.entity_name,
            queries=asked,
            outcomes=(),
            meta=RunMeta(mode=mode, synthesizer=self.name, model=self.synthesizer.model_name, queries=asked),
        )

        def outcomes() -> Iterator[SynthesisOutcome]:
            # sentences=[]: the alerts are the summarizer's post-processing, computed from the store.
            result = self.synthesizer.run(entity, asked, n_pros=expected, n_cons=expected, sentences=[])
            draft.meta = result.meta.model_copy(update={"mode": mode})
            grouped = _group(result.highlights)
            failed = {f.query: f for f in result.failures}
            for query in dict.fromkeys([*asked, *grouped]):
                item = QueryEvidence(query=query, evidence=[], entity_name=entity.entity_name)
                if query in failed:
                    yield SynthesisOutcome(item=item, failure=failed[query])
                else:
                    yield SynthesisOutcome(item=item, highlights=grouped.get(query, []))

        draft.outcomes = outcomes()
        return draft


class QueryFreeSummarizer(Summarizer):
    """HIRO's query-free highlights as a :class:`Summarizer` (no query is asked).

    Args:
        hiro: The store's fitted HIRO index (shared; see :meth:`OpinioRAG.fit_hiro`).
        top_k: Aspects to turn into highlights (paper: 8 clusters).
        alpha: HIRO smoothing constant; None for the query-free default
            (:data:`~opinio_agents.hiro.highlights.QUERY_FREE_SETTINGS` ``.own_alpha``, 60, or ``.alpha``, 30,
            for a small entity beside others: popular aspects first; the paper's 6 favours entity-specific names).
        split_threshold: Share of the reviews mentioning the aspect the other side needs for a highlight
            (:func:`~opinio_agents.synthesis.support.shown_sides`, the rule of every surface).
        max_cited: Evidence sentences per highlight.
        checks: The post-processing step (guard + alerts).
        summary_words: Word budget of the result's ``summary`` paragraph.
        verifier: Verify each highlight against its own evidence (None: the default setting).

    Each discovered aspect is one "query" of the result; the guard checks the
    evidence its highlights cite.
    """

    name = "hiro-extractive"
    query_free = True

    def __init__(
        self,
        hiro: HiroIndex,
        *,
        top_k: int = DEFAULT_TOP_K,
        alpha: float | None = None,
        split_threshold: float = SIDE_SHARE,
        max_cited: int = KEY_POINT_SETTINGS.max_cited,
        checks: CriticalComplaintCheck | None = None,
        summary_words: int = SELECTION_SETTINGS.summary_words,
        verifier: HighlightVerifier | bool | None = None,
    ) -> None:
        super().__init__(hiro.index, checks=checks, verifier=verifier)
        if top_k < 1:
            raise ConfigError(f"top_k={top_k} must be >= 1")
        self.hiro = hiro
        self.top_k = top_k
        self.alpha = alpha
        self.split_threshold = split_threshold
        self.max_cited = max_cited
        self.summary_words = summary_words

    def request_settings(self) -> dict[str, Any]:
        """The number of aspects (``top_k``), the weighting and the verification, as a request carries them."""
        return {**super().request_settings(), "top_k": self.top_k}

    def stream(
        self, request: HighlightRequest | str | int, queries: Sequence[str] | None = None
    ) -> Iterator[SummaryEvent]:
        """The base class's stream, answered from the result stored with the HIRO hierarchy when current.

        With the default post-processing (the standard :class:`CriticalComplaintCheck`, no
        verifier), the run's outcomes and final result are stored under the entity's
        :meth:`~opinio_agents.hiro.store.HiroIndex.result_state`; a later run with the same
        settings yields the same outcomes and result (only ``meta.timings`` differ) until
        an entity is re-indexed or added, the hierarchy is refitted or the code changes.
        """
        started = time.perf_counter()
        request = self._planned(request, queries)
        params = self._result_params(request)
        if params is None:
            yield from super().stream(request)
            return
        key = request.entity_key
        state = self.hiro.result_state(key)
        stored = _events_from_record(self.hiro.load_result(key, "query-free-final", params, state=state))
        if stored is not None:
            outcomes, result = stored
            yield from outcomes
            elapsed = round(time.perf_counter() - started, 4)
            result.meta.timings = {"stored": elapsed, "total": elapsed}
            yield SummaryDone(result)
            return
        seen: list[SynthesisOutcome] = []
        for event in super().stream(request):
            if isinstance(event, SummaryDone):
                self.hiro.save_result(key, "query-free-final", params, _events_record(seen, event.result), state=state)
            else:
                seen.append(event)
            yield event

    def _result_params(self, request: HighlightRequest) -> dict[str, Any] | None:
        """The settings a stored result must match (None when this run cannot be stored)."""
        checks = self.checks
        if request.verify or request.queries or type(checks) is not CriticalComplaintCheck:
            return None
        return {
            "top_k": self._top_k(request),
            "alpha": self.alpha,
            "split_threshold": self.split_threshold,
            "max_cited": self.max_cited,
            "summary_words": self.summary_words,
            "checks": [checks.apply_guard, checks.apply_alerts, checks.min_support, checks.max_examples],
            "trends": self.trends,
            "weighting": {k: str(v) for k, v in dataclasses.asdict(request.weighting).items()},
            "name": self.name,
        }

    def _top_k(self, request: HighlightRequest) -> int:
        return request.top_k or self.top_k

    def draft(self, request: HighlightRequest) -> Draft:
        """Discover the entity's aspects and write their highlights."""
        from opinio_agents.hiro.highlights import query_free_result

        if request.queries or request.mode != "query-free":
            raise ConfigError(
                "the query-free (HIRO) summarizer takes no queries; drop the queries, or use the "
                "retrieval summarizer to answer them"
            )
        found = query_free_result(
            self.hiro,
            request.entity_key,
            top_k=self._top_k(request),
            alpha=self.alpha,
            split_threshold=self.split_threshold,
            max_cited=self.max_cited,
            summary_words=self.summary_words,
        )
        result = found.highlights
        meta = result.meta.model_copy(update={"mode": "query-free"})
        grouped = _group(result.highlights)
        items = []
        for aspect in dict.fromkeys([*meta.queries, *grouped]):
            cited = {e.sentence_id: e for h in grouped.get(aspect, []) for e in h.evidence}
            support = grouped[aspect][0].support if aspect in grouped else None
            item = QueryEvidence(query=aspect, evidence=list(cited.values()), entity_name=result.entity_name)
            if support is not None:
                item.support = support
            items.append(SynthesisOutcome(item=item, highlights=grouped.get(aspect, [])))
        return Draft(
            entity_id=result.entity_id,
            entity_name=result.entity_name,
            queries=list(meta.queries),
            outcomes=items,
            meta=meta,
            summary_words=self.summary_words,
            summary_layout=found.layout,
        )


def _events_record(outcomes: Sequence[SynthesisOutcome], result: HighlightSet) -> dict[str, Any]:
    """A query-free run as JSON: each outcome (query, evidence, support, highlights, failure) and the result."""
    items = []
    for outcome in outcomes:
        item = outcome.item
        if item.vectors is not None or item.pool is not None or item.query_vector is not None:
            raise ConfigError("a query-free outcome carries vectors; it cannot be stored")  # never: the draft sets none
        items.append(
            {
                "query": item.query,
                "evidence": [e.model_dump(mode="json") for e in item.evidence],
                "support": item.support.model_dump(mode="json"),
                "entity_name": item.entity_name,
                "highlights": [h.model_dump(mode="json") for h in outcome.highlights],
                "failure": None if outcome.failure is None else outcome.failure.model_dump(mode="json"),
            }
        )
    dumped = result.model_dump(mode="json")
    dumped["meta"]["timings"] = {}
    return {"outcomes": items, "result": dumped}


def _events_from_record(record: Any) -> tuple[list[SynthesisOutcome], HighlightSet] | None:
    if not isinstance(record, dict):
        return None
    try:
        outcomes = [
            SynthesisOutcome(
                item=QueryEvidence(
                    query=str(item["query"]),
                    evidence=[Evidence.model_validate(e) for e in item["evidence"]],
                    support=Support.model_validate(item["support"]),
                    entity_name=str(item["entity_name"]),
                ),
                highlights=[Highlight.model_validate(h) for h in item["highlights"]],
                failure=None if item["failure"] is None else QueryFailure.model_validate(item["failure"]),
            )
            for item in record["outcomes"]
        ]
        return outcomes, HighlightSet.model_validate(record["result"])
    except (KeyError, TypeError, ValueError):  # written by another version: run again
        return None
