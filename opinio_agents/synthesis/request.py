"""One highlight request, resolved once: the entity, the queries, the mode and the settings of a run.

:func:`plan_request` is the one place that decides where a run's queries come from (the
``mode``): the queries given, else the entity's expert-review queries, else -- only when asked
for -- HIRO's query-free highlights. It resolves the entity key and cleans the queries once.
The façade (:meth:`opinio_agents.api.OpinioRAG.plan`) calls it with what the CLI, the HTTP
service, MCP and the agent tools received; a :class:`~opinio_agents.synthesis.summarizer.Summarizer`
used on its own calls it through :meth:`~opinio_agents.synthesis.summarizer.Summarizer.request`.
Everything below (``Summarizer.stream``, the drafts, ``RunMeta``) reads the request and
decides nothing again.

Example:
    >>> request = rag.plan("101", ["wi-fi", " wi-fi ", "pool"])      # doctest: +SKIP
    >>> request.mode, request.queries                               # doctest: +SKIP
    ('queries', ('wi-fi', 'pool'))
    >>> rag.run(request).meta.mode                                   # doctest: +SKIP
    'queries'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from opinio_agents.errors import ConfigError
from opinio_agents.kinds import QueryMode, RetrieverKind
from opinio_agents.trends import Weighting

if TYPE_CHECKING:
    from llama_index.core.vector_stores.types import MetadataFilters

    from opinio_agents.stores.sentence_store import SentenceStore
    from opinio_agents.synthesis.summarizer import Summarizer

__all__ = ["HighlightRequest", "QueryFree", "plan_queries", "plan_request", "resolve_queries"]

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
