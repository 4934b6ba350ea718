"""The entity-level seam: a :class:`Summarizer` turns one indexed entity into a HighlightSet.

Every way of writing highlights implements it:

* :class:`~opinio_agents.pipeline.HighlightPipeline` - retrieval + a per-query
  :class:`~opinio_agents.synthesis.base.Synthesizer` (extractive or LLM);
* :class:`~opinio_agents.summarizers.LongContextSummarizer` - the long-context
  LLM baseline (all reviews in one prompt);
* :class:`~opinio_agents.summarizers.QueryFreeSummarizer` - HIRO's query-free
  highlights.

A run answers one :class:`HighlightRequest`: the entity key, the resolved queries, the mode
(``queries``, ``expert-queries`` or ``query-free``) and the settings. :func:`plan_queries` is the
one place that decides where a run's queries come from: the queries given, else the entity's
expert-review queries, else -- only when asked for -- HIRO's query-free highlights. The façade
(:meth:`opinio_agents.api.OpinioRAG.plan`) calls it with what the CLI, the HTTP service, MCP and
the agent tools received; a summarizer used on its own plans through :meth:`Summarizer.request`.
Nothing below (the drafts, the post-processing, ``RunMeta``) decides again.

A subclass only writes :meth:`Summarizer.draft`: the queries it answers, the
per-query outcomes (a generator, consumed as they complete) and the run's
metadata. The base class owns what is common and runs it exactly once per
result: the critical-complaint guard on each outcome
(:class:`~opinio_agents.synthesis.alerts.CriticalComplaintCheck`), the verification of
each highlight against its own evidence when it is switched on
(:class:`~opinio_agents.synthesis.verification.HighlightVerifier`: contradicted
highlights are rewritten or dropped, the dropped ones listed in ``meta.dropped``), the
ordering of the queries, the entity-wide alerts and the timings (``verification`` is
timed apart from ``synthesis``). So
:meth:`Summarizer.stream` and :meth:`Summarizer.summarize` always agree: the
stream yields each query's outcome as it completes and ends with a
:class:`SummaryDone` holding the very HighlightSet ``summarize`` returns.

Example:
    >>> summarizer = HighlightPipeline(factory)                        # doctest: +SKIP
    >>> for event in summarizer.stream(summarizer.request("101", ["wi-fi", "pool"])):  # doctest: +SKIP
    ...     if isinstance(event, SummaryDone):
    ...         print(len(event.result.alerts), event.result.meta.mode)
    ...     else:
    ...         print(event.item.query, [h.text for h in event.highlights])
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from opinio_agents.errors import ConfigError, OpinioError
from opinio_agents.kinds import QueryMode, RetrieverKind
from opinio_agents.models import Highlight, HighlightSet, LLMOutcomes, QueryEvidence, RunMeta, TokenUsage
from opinio_agents.synthesis.alerts import CriticalComplaintCheck
from opinio_agents.synthesis.base import SynthesisOutcome
from opinio_agents.synthesis.verification import VERIFICATION_SETTINGS, HighlightVerifier, verify_outcome
from opinio_agents.trends import Weighting

if TYPE_CHECKING:
    import numpy as np
    from llama_index.core.vector_stores.types import MetadataFilters

    from opinio_agents.stores.catalog import StoredSentence
    from opinio_agents.stores.sentence_store import SentenceStore
    from opinio_agents.synthesis.selection import SummaryLayout

__all__ = [
    "Summarizer",
    "Draft",
    "HighlightRequest",
    "QueryFree",
    "plan_queries",
    "plan_request",
    "resolve_queries",
    "SummaryDone",
    "SummaryEvent",
    "QueryMode",
    "usage_delta",
    "resolve_verifier",
]


#: ``query_free=`` values: False (queries or expert queries, else an error), True (HIRO), "auto".
QueryFree = bool | Literal["auto"]


@dataclass(frozen=True, eq=False)
class HighlightRequest:
    """What one highlight run answers and how, decided once before any work starts.

    Attributes:
        entity_key: The store's key of the entity (checked to be indexed).
        queries: The queries answered, cleaned and deduplicated (given or expert); empty in
            query-free mode, where HIRO discovers the aspects.
        mode: ``"queries"``, ``"expert-queries"`` or ``"query-free"`` (``RunMeta.mode``).
        summarizer: The :class:`~opinio_agents.synthesis.summarizer.Summarizer` that runs it
            (``request.summarizer.stream(request)``).
        retriever: The retriever of the retrieval pipeline (None for summarizers that retrieve nothing).
        top_k: Evidence sentences per query, or aspects in query-free mode (None: the summarizer's own).
        weighting: Publication window and review weights of the support counts and trends.
        verify: Whether every highlight is verified against its own evidence.
        filters: Metadata filters of the retrieval pipeline.
    """

    entity_key: str
    queries: tuple[str, ...]
    mode: QueryMode
    summarizer: Summarizer
    retriever: RetrieverKind | None = None
    top_k: int | None = None
    weighting: Weighting = field(default_factory=Weighting)
    verify: bool = False
    filters: MetadataFilters | None = None


def resolve_queries(store: SentenceStore, entity_key: str, queries: Sequence[str] | None) -> tuple[str, ...]:
    """The queries to answer: the given ones (stripped, deduplicated), else the entity's expert-review queries.

    Raises:
        ConfigError: When every given query is blank, or none is given and the
            entity has no expert review (nothing switches to query-free mode silently).
    """
    if queries:
        cleaned = [q.strip() for q in queries if q and q.strip()]
        if not cleaned:
            raise ConfigError("every query given is empty; pass queries such as --query wi-fi")
        return tuple(dict.fromkeys(cleaned))
    asked = store.entity_record(entity_key).queries
    if asked:
        return tuple(asked)
    raise _no_queries(entity_key)


def _no_queries(entity_key: str) -> ConfigError:
    return ConfigError(
        f"entity {entity_key!r} has no expert-review queries; pass queries explicitly "
        "(CLI: --query 'wi-fi' --query 'breakfast'), or ask for HIRO's query-free highlights "
        "(OpinioRAG.highlights(..., query_free=True))"
    )


def plan_queries(
    store: SentenceStore, entity_id: str | int, queries: Sequence[str] | None, *, query_free: QueryFree = False
) -> tuple[str, tuple[str, ...], QueryMode]:
    """The entity key, the queries and the mode of a run: the one place the mode is decided.

    Raises:
        StoreError: When the entity is not indexed.
        ConfigError: When there are no queries to answer (and ``query_free`` is False), when
            ``query_free=True`` comes with queries, or on an invalid ``query_free``.
    """
    if query_free not in (True, False, "auto"):
        raise ConfigError(f"query_free={query_free!r} must be True, False or 'auto'")
    key = store.require_entity(entity_id)
    if query_free is True:
        if queries:
            raise ConfigError("query_free=True takes no queries; drop the queries or query_free=True")
        return key, (), "query-free"
    if queries:
        return key, resolve_queries(store, key, queries), "queries"
    expert = store.entity_record(key).queries
    if expert:
        return key, tuple(expert), "expert-queries"
    if query_free == "auto":
        return key, (), "query-free"
    raise _no_queries(key)


def plan_request(
    summarizer: Summarizer,
    entity_id: str | int,
    queries: Sequence[str] | None = None,
    *,
    query_free: QueryFree = False,
    retriever: RetrieverKind | None = None,
    top_k: int | None = None,
    weighting: Weighting | None = None,
    verify: bool = False,
    filters: MetadataFilters | None = None,
) -> HighlightRequest:
    """A :class:`HighlightRequest` for ``summarizer`` over its store (see :func:`plan_queries`).

    A summarizer that finds its own aspects (``Summarizer.query_free``) always runs in
    query-free mode and takes no queries.
    """
    if summarizer.query_free:
        if queries:
            raise ConfigError(
                f"the query-free {type(summarizer).__name__} takes no queries; drop the queries, or use the "
                "retrieval summarizer to answer them"
            )
        query_free = True
    key, asked, mode = plan_queries(summarizer.store, entity_id, queries, query_free=query_free)
    return HighlightRequest(
        entity_key=key,
        queries=asked,
        mode=mode,
        summarizer=summarizer,
        retriever=retriever,
        top_k=top_k,
        weighting=weighting or Weighting(),
        verify=verify,
        filters=filters,
    )


@dataclass
class SummaryDone:
    """The last event of :meth:`Summarizer.stream`: the complete result, alerts and meta included."""

    result: HighlightSet


#: What :meth:`Summarizer.stream` yields: one outcome per query, then one :class:`SummaryDone`.
SummaryEvent = SynthesisOutcome | SummaryDone


@dataclass
class Draft:
    """What a summarizer produces for one entity before post-processing.

    Attributes:
        entity_id: The entity's id as given in the dataset.
        entity_name: Its name.
        queries: The queries answered, in the order the result lists them.
        outcomes: One outcome per query, in completion order (a generator is
            consumed lazily, so the stream shows each as soon as it exists).
        meta: The run's metadata; the generator may complete it (tokens) once
            it is exhausted, or replace it.
        summary_words: When set, the result gets a ``summary`` paragraph of
            about this many words, composed from the final (post-processed)
            highlights (:func:`~opinio_agents.synthesis.selection.summary_of`).
        summary_layout: Aspect order and weights of that paragraph
            (:class:`~opinio_agents.synthesis.selection.SummaryLayout`); None: by mentions.
        mentions: ``{query: indices into the entity's stored sentences}``: the sentences
            that mention each query (what its support counted), for the trends; a query
            missing here gets its lexical mentions.
        fallback: The highlights to show for a query whose model-written highlights
            verification contradicts (the synthesizer's
            :meth:`~opinio_agents.synthesis.base.Synthesizer.fallback`); None: none.
    """

    entity_id: str | int
    entity_name: str
    queries: list[str]
    outcomes: Iterable[SynthesisOutcome]
    meta: RunMeta = field(default_factory=RunMeta)
    summary_words: int | None = None
    summary_layout: SummaryLayout | None = None
    mentions: dict[str, np.ndarray] = field(default_factory=dict)
    fallback: Callable[[QueryEvidence], list[Highlight]] | None = None


def usage_delta(before: TokenUsage, after: TokenUsage) -> TokenUsage:
    """Tokens spent between two snapshots of a usage meter."""
    return TokenUsage(
        prompt_tokens=after.prompt_tokens - before.prompt_tokens,
        completion_tokens=after.completion_tokens - before.completion_tokens,
        calls=after.calls - before.calls,
        cached_calls=after.cached_calls - before.cached_calls,
    )


def resolve_verifier(verify: bool | HighlightVerifier | None) -> HighlightVerifier | None:
    """The verifier a ``verify=`` setting asks for: None (off), a new default one, or the one given.

    ``None`` follows ``VERIFICATION_SETTINGS.verify_by_default``.

    Example:
        >>> resolve_verifier(False) is None
        True
        >>> type(resolve_verifier(True)).__name__
        'HighlightVerifier'
    """
    if isinstance(verify, HighlightVerifier):
        return verify
    if verify is None:
        verify = VERIFICATION_SETTINGS.verify_by_default
    if not isinstance(verify, bool):
        raise ConfigError(f"verify={verify!r} must be True, False, None or a HighlightVerifier")
    return HighlightVerifier() if verify else None


def _count(outcomes: LLMOutcomes, status: str) -> None:
    """Add one query's model status to the run's counts (``contradicted`` is also a ``fallback``)."""
    if status == "contradicted":
        outcomes.contradicted += 1
        status = "fallback"
    setattr(outcomes, status, getattr(outcomes, status) + 1)


def _replace_contradicted(
    outcome: SynthesisOutcome,
    lost: list[Highlight],
    fallback: Callable[[QueryEvidence], list[Highlight]] | None,
    verifier: HighlightVerifier,
    checks: CriticalComplaintCheck,
) -> tuple[SynthesisOutcome, list[Highlight]]:
    """A verified outcome of model-written highlights, with what verification contradicted replaced.

    Rewritten highlights (their text now comes from their evidence) are marked
    ``origin="extractive-fallback"``; a query left with no highlight at all gets the
    synthesizer's fallback (verified too; shown with its verdict even when that contradicts it,
    since it is the reviews' own sentences and the query must not end empty). A model-written
    highlight that is ``weak`` and off its aspect (aspect relevance 0: it does not discuss what its
    evidence is about, as a small model's "A free unlimited Wi-Fi can help save lives!" under
    "parking") is not shown either: it goes to ``lost`` like a dropped one. The status becomes ``contradicted`` when any
    model-written highlight was rewritten or dropped.
    """
    rewritten = [
        h for h in outcome.highlights
        if h.origin == "llm" and h.verification is not None and h.verification.action == "rewritten"
    ]
    off_aspect = [
        h for h in outcome.highlights
        if h.origin == "llm" and h.verification is not None
        and h.verification.verdict == "weak" and h.verification.aspect_relevance == 0.0
    ]
    if off_aspect:
        for highlight in off_aspect:
            highlight.notes.append("not shown: a weak model highlight that does not discuss its evidence's aspect")
        kept = [h for h in outcome.highlights if not any(h is o for o in off_aspect)]
        outcome = SynthesisOutcome(item=outcome.item, highlights=kept, failure=outcome.failure, llm=outcome.llm)
        lost = [*lost, *off_aspect]
    if not rewritten and not any(h.origin == "llm" for h in lost):
        return outcome, lost
    for highlight in rewritten:
        highlight.origin = "extractive-fallback"
    # After a contradiction only the model's *supported* claims stay; without one, the fallback answers.
    supported = [
        h for h in outcome.highlights
        if h.origin == "llm" and h.verification is not None and h.verification.verdict == "supported"
    ]
    others = [h for h in outcome.highlights if h.origin != "llm"]
    if not supported and fallback is not None:
        shown = fallback(outcome.item)
        if shown:
            for highlight in shown:
                highlight.notes.append("extractive fallback: verification contradicted the model's highlight")
            # Never nothing: verify_outcome keeps a fallback it contradicts (the reviews' own sentences).
            checked, more = verify_outcome(verifier, checks, SynthesisOutcome(item=outcome.item, highlights=shown))
            lost = [*lost, *more]
            sides = {h.polarity for h in checked.highlights}
            outcome = SynthesisOutcome(
                item=outcome.item,
                highlights=[*checked.highlights, *[h for h in others if h.polarity not in sides]],
            )
    outcome.llm = "contradicted"
    return outcome, lost


class Summarizer(ABC):
    """Base class: implement :meth:`draft`; :meth:`summarize` and :meth:`stream` come for free.

    A run answers one :class:`~opinio_agents.synthesis.summarizer.HighlightRequest` (entity key,
    resolved queries, mode, settings), planned once by the façade (``OpinioRAG.plan``) or by
    :meth:`request`; the draft and the post-processing read it and decide nothing again.

    Args:
        store: The store holding the entities.
        checks: The post-processing step (guard + alerts); the default checks everything.
        verifier: Verify every highlight against its own evidence: a
            :class:`~opinio_agents.synthesis.verification.HighlightVerifier`, True (a
            default one), False (off), or None (``VERIFICATION_SETTINGS.verify_by_default``).
    """

    #: Short name recorded in ``HighlightSet.meta.synthesizer``.
    name: str = "summarizer"
    #: The publication window and weights of support counts (and the window of the trends).
    weighting: Weighting = Weighting()
    #: Whether each highlight gets the trend of its aspect (:mod:`opinio_agents.synthesis.timeline`).
    trends: bool = True
    #: True for a summarizer that discovers its own aspects (HIRO): its requests are query-free.
    query_free: ClassVar[bool] = False

    def __init__(
        self,
        store: SentenceStore,
        *,
        checks: CriticalComplaintCheck | None = None,
        verifier: HighlightVerifier | bool | None = None,
    ) -> None:
        self.store = store
        self.checks = checks or CriticalComplaintCheck()
        self.verifier = resolve_verifier(verifier)

    def request(
        self, entity_id: str | int, queries: Sequence[str] | None = None, *, query_free: QueryFree = False
    ) -> HighlightRequest:
        """The request this summarizer runs for an entity and queries, with its own settings.

        Raises:
            StoreError: When the entity is not indexed.
            ConfigError: When there are no queries to answer (see
                :func:`~opinio_agents.synthesis.summarizer.plan_queries`).
        """
        return plan_request(
            self, entity_id, queries, query_free=query_free, **self.request_settings()
        )

    def request_settings(self) -> dict[str, Any]:
        """The settings a request of this summarizer carries (``retriever``, ``top_k`` ...): its own."""
        return {"weighting": self.weighting, "verify": self.verifier is not None}

    @abstractmethod
    def draft(self, request: HighlightRequest) -> Draft:
        """The (lazy) per-query outcomes and the metadata of one request.

        Raises:
            ConfigError: When this summarizer cannot answer the request.
        """

    def stream(
        self, request: HighlightRequest | str | int, queries: Sequence[str] | None = None
    ) -> Iterator[SummaryEvent]:
        """Yield each query's guarded outcome as it completes, then one :class:`SummaryDone`.

        When verifying, an outcome of extractive highlights is yielded once the next query is
        synthesized: its triplets are extracted in the background meanwhile
        (:meth:`~opinio_agents.synthesis.verification.HighlightVerifier.prefetch`). Outcomes come
        in the order of the draft either way.

        Args:
            request: A planned request, or an entity id (planned here by :meth:`request`).
            queries: With an entity id: its queries (None: the expert-review ones).

        The final result carries the same highlights, failures, alerts and meta
        as :meth:`summarize` would return.
        """
        started = time.perf_counter()
        request = self._planned(request, queries)
        key = request.entity_key
        draft = self.draft(request)
        prepared = time.perf_counter() - started
        t0 = time.perf_counter()
        by_query: dict[str, list[SynthesisOutcome]] = {}
        verifier = (self.verifier or resolve_verifier(True)) if request.verify else None
        verifying = 0.0
        dropped = []
        stored: list[StoredSentence] | None = None
        trends = 0.0
        llm: LLMOutcomes | None = None

        def finish(raw: SynthesisOutcome, outcome: SynthesisOutcome, ahead: Future[Any] | None) -> SynthesisOutcome:
            """One guarded outcome verified (its triplets maybe extracted ahead), counted and filed."""
            nonlocal verifying, stored, trends, llm, dropped
            if verifier is not None:
                v0 = time.perf_counter()
                if ahead is not None:
                    wait([ahead])  # its error, if any, is raised by verify_outcome in this thread
                outcome, lost = verify_outcome(verifier, self.checks, outcome)
                if raw.llm in ("answered", "repaired"):
                    outcome, lost = _replace_contradicted(outcome, lost, draft.fallback, verifier, self.checks)
                dropped += lost
                verifying += time.perf_counter() - v0
            status = outcome.llm if outcome.llm is not None else raw.llm
            outcome.llm = status
            if status is not None:
                llm = llm or LLMOutcomes()
                _count(llm, status)
            if self.trends and outcome.highlights:  # each streamed outcome already carries its trends
                from opinio_agents.synthesis.timeline import attach_trends

                r0 = time.perf_counter()
                stored = stored if stored is not None else self.store.sentences(key)
                attach_trends(outcome.highlights, stored, draft.mentions, weighting=request.weighting)
                trends += time.perf_counter() - r0
            by_query.setdefault(outcome.item.query, []).append(outcome)
            return outcome

        # Extractive highlights are verified one query late: their triplets are extracted in the
        # background while the next query is synthesized (HighlightVerifier.prefetch). A model's
        # highlights are verified at once, so a slow model never delays what is streamed.
        held: tuple[SynthesisOutcome, SynthesisOutcome, Future[Any]] | None = None
        for raw in draft.outcomes:
            outcome = self.checks.guard(raw)
            ahead = None
            if verifier is not None and raw.llm is None and outcome.highlights:
                ahead = verifier.prefetch(outcome.highlights)
            if held is not None:
                yield finish(*held)
                held = None
            if ahead is not None:
                held = (raw, outcome, ahead)
            else:
                yield finish(raw, outcome, None)
        if held is not None:
            yield finish(*held)
        synthesis = time.perf_counter() - t0 - verifying - trends

        result = HighlightSet(entity_id=draft.entity_id, entity_name=draft.entity_name)
        order = list(dict.fromkeys([*draft.queries, *by_query]))  # asked order, then any extra ones
        for query in order:
            for outcome in by_query.get(query, []):
                if outcome.failure is not None:
                    result.failures.append(outcome.failure)
                else:
                    for highlight in outcome.highlights:
                        result.add(highlight)

        if draft.summary_words is not None:
            from opinio_agents.synthesis.selection import summary_of

            result.summary = summary_of(
                result.highlights, budget_words=draft.summary_words, layout=draft.summary_layout
            )
        t0 = time.perf_counter()
        stored = stored if stored is not None else self.store.sentences(key)
        result.alerts = self.checks.alerts([s.sentence for s in stored], [s.sentiment for s in stored])
        alerts = time.perf_counter() - t0

        meta = draft.meta
        timings = dict(meta.timings)
        timings.setdefault("prepare", prepared)
        timings.setdefault("synthesis", synthesis)
        if verifier is not None:
            timings["verification"] = verifying
        timings["alerts"] = alerts
        if self.trends:
            timings["trends"] = trends
        timings["total"] = time.perf_counter() - started
        meta.timings = {k: round(v, 4) for k, v in timings.items()}
        meta.mode = request.mode
        if not meta.queries:
            meta.queries = list(draft.queries)
        meta.dropped = [*meta.dropped, *dropped]
        if llm is not None:
            meta.llm = llm
        result.meta = meta
        yield SummaryDone(result)

    def _planned(self, request: HighlightRequest | str | int, queries: Sequence[str] | None) -> HighlightRequest:
        if isinstance(request, HighlightRequest):
            if queries is not None:
                raise ConfigError("a HighlightRequest carries its queries; plan them with it, not here")
            return request
        return self.request(request, queries)

    def summarize(self, request: HighlightRequest | str | int, queries: Sequence[str] | None = None) -> HighlightSet:
        """All highlights, failures, alerts and meta of one request (or of an entity and its queries)."""
        result: HighlightSet | None = None
        for event in self.stream(request, queries):
            if isinstance(event, SummaryDone):
                result = event.result
        if result is None:  # pragma: no cover - stream() always ends with a SummaryDone
            raise OpinioError(f"{type(self).__name__}.stream ended without a result")
        return result
