"""The Python façade: index reviews, retrieve evidence, write highlights.

:class:`OpinioRAG` mirrors the CLI (``opinio index`` / ``opinio highlight``)
and owns the state a server needs to keep warm: the store, the resolved chat
model and one HIRO index per store (loaded, or fitted once by :meth:`OpinioRAG.index`).
Every way of writing highlights is a :class:`~opinio_agents.synthesis.summarizer.Summarizer`;
:meth:`OpinioRAG.summarizer` picks one and :meth:`OpinioRAG.highlights` runs it.
One instance may be shared by the threads of a server.

Example:
    >>> from opinio_agents import OpinioRAG
    >>> from opinio_agents.datasets import sample_path
    >>> rag = OpinioRAG(store_dir="/tmp/opinio-demo")                # doctest: +SKIP
    >>> rag.index(sample_path())                                     # doctest: +SKIP
    >>> result = rag.highlights("1", ["wi-fi", "breakfast"])         # doctest: +SKIP
    >>> print(result.cons[0].text, "-", result.cons[0].support.describe())  # doctest: +SKIP
    >>> rag.highlights("1", query_free=True).meta.mode               # doctest: +SKIP
    'query-free'
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opinio_agents.embeddings import DEFAULT_MODEL_NAME, ENCODER_BACKENDS, ENCODER_ENV, Encoder, get_encoder
from opinio_agents.errors import ConfigError, OpinioError, StoreError
from opinio_agents.hiro.retriever import DEFAULT_ALPHA, DEFAULT_TOP_K
from opinio_agents.indexing import Indexer, IndexStats
from opinio_agents.kinds import SYNTHESIZERS, QueryMode, RetrieverKind, SynthesizerKind
from opinio_agents.models import Entity, HighlightSet, Support
from opinio_agents.retrieval.factory import RetrieverFactory, ScoredSentence
from opinio_agents.stores.sentence_store import DEFAULT_STORE, SentenceStore
from opinio_agents.synthesis.base import Synthesizer
from opinio_agents.synthesis.selection import SELECTION_SETTINGS
from opinio_agents.synthesis.summarizer import HighlightRequest, QueryFree, Summarizer, SummaryEvent
from opinio_agents.synthesis.verification import VERIFICATION_SETTINGS, HighlightVerifier
from opinio_agents.trends import Weighting

if TYPE_CHECKING:
    import numpy as np
    from langchain_core.language_models import BaseChatModel
    from llama_index.core.vector_stores.types import MetadataFilters

    from opinio_agents.hiro.aspects import DiscoveredAspect
    from opinio_agents.hiro.compare import EntityComparison
    from opinio_agents.hiro.store import HiroIndex
    from opinio_agents.io.base import LoadReport
    from opinio_agents.pipeline import HighlightPipeline
    from opinio_agents.synthesis.long_context import LongContextSynthesizer

__all__ = ["OpinioRAG", "SynthesizerKind", "QueryFree", "HighlightRequest"]


class OpinioRAG:
    """Index reviews and produce evidence-backed PROS/CONS highlights.

    Args:
        store_dir: Where the index lives (``./.opinio`` by default).
        retriever: ``bm25``, ``dense`` or ``hybrid`` (default).
        top_k: Evidence sentences per query.
        llm: A LangChain chat model or a provider string (``"openai:gpt-4o-mini"``,
            ``"ollama:llama3.1"``, ``"hf:/path/to/model"``); ``None`` runs the
            extractive synthesizer (never a silent paid default).
        base_url: Base URL of an OpenAI-compatible server (vLLM, llama.cpp, Ollama's /v1).
        synthesizer: ``extractive``, ``llm`` or ``long-context`` (default: ``llm`` when an
            LLM is given, else ``extractive``), or an object: any
            :class:`~opinio_agents.synthesis.summarizer.Summarizer` is run exactly as
            given; a per-query :class:`~opinio_agents.synthesis.base.Synthesizer` runs
            inside the retrieval pipeline; a
            :class:`~opinio_agents.synthesis.long_context.LongContextSynthesizer` runs as
            the long-context baseline.
        llm_options: Extra keyword arguments for the LLM synthesizer
            (``max_concurrency``, ``timeout`` per request, ``deadline`` per query,
            ``max_retries``, ``cache_path`` ...).
        chroma_host: Use a Chroma server instead of the embedded store.
        chroma_port: Port of that server.
        embedding_model: Path of a local sentence-transformers model (MiniLM by default). A store
            records the model that built it and refuses another one.
        encoder: A sentence encoder object (instead of ``embedding_model``), or the backend that runs
            the model: ``"torch"``, ``"onnx"``, ``"onnx-int8"`` or ``"auto"``. By default the backend
            that built the store, else ``$OPINIO_ENCODER``'s, else ``onnx`` (fp32) for the shipped model
            when ONNX Runtime is installed (see :func:`opinio_agents.embeddings.resolve_backend`).
            Queries may use any backend of the store's model; writes only the store's own.
        hiro_options: Settings of a new HIRO fit (``n_codes``, ``depth``, ``seed``, ...;
            see :class:`~opinio_agents.hiro.store.HiroIndex`).
        verify: Verify every highlight against its own cited evidence (AR/SF/OF and a verdict in
            ``Highlight.verification``; contradicted highlights are rewritten or dropped). ``None``
            follows ``VERIFICATION_SETTINGS.verify_by_default``; a
            :class:`~opinio_agents.synthesis.verification.HighlightVerifier` is used as given.

    Query modes (``HighlightSet.meta.mode``): ``"queries"`` when queries are given,
    ``"expert-queries"`` when the entity's expert review supplies them, and
    ``"query-free"`` when HIRO discovers the aspects. Nothing switches mode
    silently: without queries and without an expert review, :meth:`highlights`
    raises unless ``query_free=True`` (or ``"auto"``) is passed.

    Attributes:
        store: The :class:`~opinio_agents.stores.SentenceStore` (catalog, vectors, BM25 data).
        encoder: The sentence encoder shared by indexing, retrieval and synthesis.
        indexer: The :class:`~opinio_agents.indexing.Indexer` writing into ``store``.
        retrievers: The :class:`~opinio_agents.retrieval.RetrieverFactory` (retrievers cached per entity).
    """

    def __init__(
        self,
        store_dir: str | Path = DEFAULT_STORE,
        *,
        retriever: RetrieverKind = "hybrid",
        top_k: int = 10,
        llm: BaseChatModel | str | None = None,
        base_url: str | None = None,
        synthesizer: SynthesizerKind | Synthesizer | Summarizer | LongContextSynthesizer | None = None,
        llm_options: dict[str, Any] | None = None,
        chroma_host: str | None = None,
        chroma_port: int | None = None,
        embedding_model: str | Path | None = None,
        encoder: Encoder | str | None = None,
        hiro_options: dict[str, Any] | None = None,
        verify: bool | HighlightVerifier | None = None,
    ) -> None:
        if top_k < 1:
            raise ConfigError(f"top_k={top_k} must be >= 1")
        if isinstance(synthesizer, str) and synthesizer not in SYNTHESIZERS:
            raise ConfigError(f"synthesizer={synthesizer!r} is not one of {', '.join(SYNTHESIZERS)}")
        if synthesizer is not None and not isinstance(synthesizer, str):
            _check_synthesizer_object(synthesizer)
        if encoder is not None and not isinstance(encoder, str) and embedding_model is not None:
            raise ConfigError("pass either encoder= or embedding_model=, not both")
        self.store = SentenceStore(store_dir, chroma_host=chroma_host, chroma_port=chroma_port)
        if encoder is None or isinstance(encoder, str):
            backend = encoder or self._store_backend(embedding_model)
            self.encoder: Encoder = get_encoder(embedding_model, backend=backend)
        else:
            self.encoder = encoder
        self.indexer = Indexer(self.store, self.encoder)
        self.retrievers = RetrieverFactory(self.store, self.encoder, tokenizer=self.indexer.tokenizer)
        self.retriever = retriever
        self.top_k = top_k
        self.llm_spec = llm
        self.base_url = base_url
        self.llm_options = dict(llm_options or {})
        self.hiro_options = dict(hiro_options or {})
        self.synthesizer_kind: SynthesizerKind | Synthesizer | Summarizer | LongContextSynthesizer = synthesizer or (
            "llm" if llm is not None else "extractive"
        )
        if self.synthesizer_kind in ("llm", "long-context") and llm is None:
            raise ConfigError(
                f"synthesizer={self.synthesizer_kind!r} needs an LLM: pass llm='openai:gpt-4o-mini' "
                "(or a LangChain chat model, or --llm on the CLI)"
            )
        self._llm: BaseChatModel | None = None
        self._hiro: HiroIndex | None = None
        self._lock = threading.RLock()
        if verify is not None and not isinstance(verify, (bool, HighlightVerifier)):
            raise ConfigError(f"verify={verify!r} must be True, False, None or a HighlightVerifier")
        # None: VERIFICATION_SETTINGS.verify_by_default, and on whenever a model writes the highlight text
        self.verify = verify
        self._verifier: HighlightVerifier | None = verify if isinstance(verify, HighlightVerifier) else None

    def verifier(
        self, verify: bool | HighlightVerifier | None = None, *, model_writes: bool = False
    ) -> HighlightVerifier | None:
        """The verifier a run uses: ``verify`` if given, else the façade's setting; None when off.

        With neither set, verification follows
        ``VERIFICATION_SETTINGS.verify_by_default``, and is on whenever a
        language model writes the highlight text (``model_writes``: the LLM synthesizer and
        the long-context baseline), so no model-written claim reaches a user unchecked.

        The façade keeps one :class:`~opinio_agents.synthesis.verification.HighlightVerifier`
        shared by every run and thread. Its triplets go through a
        :class:`~opinio_agents.triplets.cache.CachedTripletExtractor` whose rows live in the
        store (``triplets.sqlite``), and its phrase vectors through the retrievers' cached
        query encoder, so a sentence is extracted once across queries, runs and processes.

        Example:
            >>> OpinioRAG("/tmp/opinio-demo").verifier(False) is None      # doctest: +SKIP
            True
        """
        choice = self.verify if verify is None else verify
        if choice is None:
            choice = VERIFICATION_SETTINGS.verify_by_default or model_writes
        if isinstance(choice, HighlightVerifier):
            return choice
        if not isinstance(choice, bool):
            raise ConfigError(f"verify={choice!r} must be True, False, None or a HighlightVerifier")
        if not choice:
            return None
        with self._lock:
            if self._verifier is None:
                from opinio_agents.triplets.cache import CachedTripletExtractor

                self._verifier = HighlightVerifier(
                    CachedTripletExtractor(cache_dir=self.store.store_dir), encoder=self.retrievers.encoder
                )
            return self._verifier

    def _store_backend(self, embedding_model: str | Path | None) -> str | None:
        """The backend that built the store, when it recorded one for this model and none is set otherwise."""
        if os.environ.get(ENCODER_ENV):
            return None
        try:
            recorded = self.store.models().embedding
        except OpinioError:  # an unreadable store fails later, with its own message
            return None
        if recorded is None or recorded.backend not in ENCODER_BACKENDS:
            return None
        wanted = DEFAULT_MODEL_NAME if embedding_model is None else Path(embedding_model).name
        return recorded.backend if recorded.name == wanted else None

    # -- indexing ---------------------------------------------------------------
    def index(
        self,
        data: str | Path | Entity | Iterable[Entity],
        *,
        skip_invalid: bool = False,
        show_progress: bool = False,
        fit_hiro: bool = True,
        report: LoadReport | None = None,
        wait: bool = False,
        on_wait: Callable[[str], None] | None = None,
    ) -> list[IndexStats]:
        """Index a dataset file, one entity or an iterable of entities, then prepare HIRO.

        A file is validated completely before anything is indexed, so a file
        with an error leaves the store untouched (unless ``skip_invalid``).
        The whole run holds the store's writer lock, and each entity's completion
        marker is written last, after its catalog rows, vectors, BM25 index and
        HIRO paths, so that a run killed at any point is completed by the next one.

        Args:
            data: A dataset file, an entity, or entities.
            skip_invalid: Skip invalid records instead of refusing the file.
            show_progress: Show a progress bar while embedding.
            fit_hiro: Fit the store's HIRO hierarchy when it has none yet (and the
                store has enough sentences), then encode the indexed entities' paths,
                so that aspects and query-free highlights never fit or encode at query time.
            report: Filled in while a file is read (counts, skipped records).
            wait: When another process is writing to the store, wait for it instead of failing.
            on_wait: Called with a message when waiting starts (default: a line on stderr).

        Raises:
            opinio_agents.stores.lock.StoreLockedError: Another process writes to the store (without ``wait``).
        """
        if isinstance(data, Entity):
            if self.indexer.up_to_date(data):  # nothing to write: no lock, so readers such as highlight never wait
                key = data.key
                n = len(data.user_reviews)
                total = self.store.count_sentences(key)
                return [IndexStats(key, reviews_total=n, reviews_unchanged=n, sentences_total=total)]
            entities: Iterable[Entity] = [data]
        elif isinstance(data, (str, Path)):
            from opinio_agents.io.loaders import iter_valid_entities

            # "-" is standard input (read once, into a temporary copy, then validated and indexed).
            entities = iter_valid_entities(data, skip_invalid=skip_invalid, report=report)
        else:
            entities = data
        items = iter(entities)
        first = next(items, None)  # a file is validated completely here, before anything is written
        if first is None:
            return []
        if self.store.is_remote:
            self.store.connect()  # an unreachable server fails before the model is even loaded
        self.indexer.check()  # refuses other models before the lock file (or anything else) is written
        with self.store.writer_lock(wait=wait, on_wait=on_wait):
            stats = self.indexer.index_entities(
                itertools.chain([first], items), show_progress=show_progress, mark_complete=False
            )
            for item in stats:  # build and persist changed BM25 indexes now, so no query pays for them
                if (
                    item.changed
                    or not self.store.is_complete(item.entity_id)
                    or not self.store.bm25_dir(item.entity_id).exists()
                ):
                    started = time.perf_counter()
                    self.retrievers.prepare(item.entity_id)
                    item.timings["bm25"] = time.perf_counter() - started
            if fit_hiro:
                self._prepare_hiro([s.entity_id for s in stats])
            for item in stats:  # last: the entity now counts as indexed
                if not self.store.is_complete(item.entity_id):
                    self.store.mark_complete(item.entity_id)
        return stats

    # -- HIRO ---------------------------------------------------------------------
    @property
    def hiro(self) -> HiroIndex:
        """The store's HIRO index (one per façade, shared by every call; it never fits by itself)."""
        with self._lock:
            if self._hiro is None:
                from opinio_agents.hiro.store import HiroIndex

                self._hiro = HiroIndex(self.store, auto_fit=False, **self.hiro_options)
            return self._hiro

    @property
    def hiro_fitted(self) -> bool:
        """Whether the store has a HIRO hierarchy (aspects and query-free highlights need one)."""
        return self.hiro.fitted

    def fit_hiro(self, *, refit: bool = False) -> bool:
        """Fit the HIRO hierarchy over all indexed entities (once; ``refit=True`` fits again).

        Returns:
            True when a fit ran, False when a hierarchy already existed.

        Raises:
            StoreError: When the store has no indexed entity.
            ConfigError: When the store has fewer sentences than HIRO has codes per level.
        """
        with self._lock:
            hiro = self.hiro
            if hiro.fitted and not refit:
                return False
            hiro.fit()
            self.retrievers.invalidate()  # a large fit released the vector client: cached collections are stale
            return True

    def _prepare_hiro(self, keys: Sequence[str]) -> None:
        """Fit HIRO when the store has none and enough sentences; encode the given entities' paths."""
        from opinio_agents.hiro.indexer import ResidualKMeansIndexer

        with self._lock:
            hiro = self.hiro
            if not hiro.fitted:
                n_codes = int(self.hiro_options.get("n_codes", ResidualKMeansIndexer.n_codes))
                if self.store.count_sentences() < n_codes:
                    return  # too few sentences for a hierarchy yet; aspects() says so
                hiro.fit()
                self.retrievers.invalidate()  # a large fit released the vector client
            for key in keys:
                hiro.paths(key)

    def _require_hiro(self) -> HiroIndex:
        hiro = self.hiro
        if not hiro.fitted:
            n = self.store.count_sentences() if self.store.entity_keys() else 0
            raise StoreError(
                f"{str(self.store.store_dir)!r} has no HIRO hierarchy (the store holds {n} sentences); "
                "index more reviews with OpinioRAG.index() or `opinio index`, or call OpinioRAG.fit_hiro()"
            )
        return hiro

    def aspects(
        self, entity_id: str | int, *, top_k: int = 10, alpha: float = DEFAULT_ALPHA
    ) -> list[DiscoveredAspect]:
        """HIRO aspect discovery: the entity's most discussed aspects, weighed with how distinctive they are.

        Raises:
            StoreError: When the entity is not indexed or the store has no HIRO hierarchy.
        """
        from opinio_agents.hiro.aspects import discover_aspects

        key = self.store.require_entity(entity_id)
        return discover_aspects(self._require_hiro(), key, top_k=top_k, alpha=alpha, encoder=self.retrievers.encoder)

    def precompute_hiro(self, entity_ids: Sequence[str | int] | None = None) -> list[str]:
        """Compute and store the default aspects and query-free highlights of entities now.

        :meth:`aspects` and query-free :meth:`highlights` store their result with the HIRO
        hierarchy on first use, so only the first call pays for naming the clusters (seconds
        to tens of seconds on a paper-sized entity); this pays it ahead, e.g. right after
        ``opinio index --aspects``. A stored result stays valid until an entity of the store
        is re-indexed or added (the baseline changes) or the hierarchy is refitted.

        Args:
            entity_ids: The entities (default: every complete entity of the store).

        Returns:
            The keys of the entities prepared.

        Raises:
            StoreError: When the store has no HIRO hierarchy or an entity is not indexed.

        Example:
            >>> rag.precompute_hiro(["101"])                 # doctest: +SKIP
            ['101']
        """
        self._require_hiro()
        keys = [self.store.require_entity(e) for e in entity_ids] if entity_ids is not None else [
            k for k in self.store.entity_keys() if self.store.is_complete(k)
        ]
        for key in keys:
            self.aspects(key)
            self.highlights(key, query_free=True)  # stores the draft, and the whole run unless verifying
        return keys

    def compare(
        self, entity_id: str | int, *, top_k: int = DEFAULT_TOP_K, alpha: float = DEFAULT_ALPHA,
        since: dt.date | None = None,
    ) -> EntityComparison:
        """What sets the entity apart from the store's other entities (HIRO aspects and their lift).

        With ``since``, each aspect also says where the entity ranks against the others
        over the reviews since that date and over the year before it.

        Raises:
            StoreError: When the entity is not indexed or the store has no HIRO hierarchy.
            ConfigError: When ``since`` is given and no review carries a publication date.
        """
        from opinio_agents.hiro.compare import compare_entity

        key = self.store.require_entity(entity_id)
        return compare_entity(self._require_hiro(), key, top_k=top_k, alpha=alpha, since=since)

    # -- retrieval ---------------------------------------------------------------
    def retrieve(
        self,
        entity_id: str | int,
        query: str,
        *,
        top_k: int | None = None,
        retriever: RetrieverKind | None = None,
        filters: MetadataFilters | None = None,
    ) -> list[ScoredSentence]:
        """Top-K evidence sentences (score > 0) for one query."""
        return self.retrievers.retrieve(
            entity_id, query, retriever=retriever or self.retriever, top_k=top_k or self.top_k, filters=filters
        )

    def mentions(self, entity_id: str | int, query: str) -> frozenset[str]:
        """Ids of the entity's sentences that mention the aspect ``query`` asks about.

        The one definition (:func:`~opinio_agents.synthesis.support.aspect_mentions`):
        :meth:`support` counts the reviews of exactly these sentences, and the chat
        keeps its answers to them.
        """
        info = self.store.entity_record(entity_id)
        sentences = self.store.sentences(info.key)
        return frozenset(sentences[i].sentence.sentence_id for i in self._mention_indices(info.key, query))

    def support(self, entity_id: str | int, query: str, *, weighting: Weighting | None = None) -> Support:
        """How many of the entity's reviews mention ``query``, and their stance.

        ``weighting`` counts only a window of publication dates and/or weights reviews
        by recency or helpful votes (:class:`~opinio_agents.trends.Weighting`).
        """
        from opinio_agents.synthesis.support import support_of

        info = self.store.entity_record(entity_id)
        return support_of(
            self.store.sentences(info.key),
            self._mention_indices(info.key, query),
            total_reviews=info.n_reviews or None,
            weighting=weighting,
        )

    def _mention_indices(self, key: str, query: str) -> np.ndarray:
        from opinio_agents.synthesis.support import aspect_mentions

        return aspect_mentions(  # the one definition of a mention
            query,
            self.store.sentences(key),
            embeddings=self.store.embeddings(key, persist=True),
            encoder=self.retrievers.encoder,  # the query-vector cache: a query seen before loads no model
        )

    # -- synthesis -----------------------------------------------------------------
    @property
    def llm(self) -> BaseChatModel | None:
        """The resolved chat model (None when no LLM is configured); resolved once."""
        with self._lock:
            if self._llm is None and self.llm_spec is not None:
                from opinio_agents.llm.providers import resolve_chat_model
                from opinio_agents.synthesis.llm import DEFAULT_TIMEOUT

                timeout = float(self.llm_options.get("timeout", DEFAULT_TIMEOUT))
                self._llm = resolve_chat_model(self.llm_spec, base_url=self.base_url, timeout=timeout)
            return self._llm

    def _synthesizer(self, kind: SynthesizerKind | Synthesizer) -> Synthesizer:
        """A per-query synthesizer (a new one per run, so its token count is the run's)."""
        if isinstance(kind, Synthesizer):
            return kind
        if kind == "extractive":
            from opinio_agents.synthesis.extractive import ExtractiveSynthesizer

            # The cached encoder: the clause pieces it embeds are kept with the store, so a known query
            # is answered again by a new process without loading the model.
            return ExtractiveSynthesizer(self.retrievers.encoder)
        if kind != "llm":
            raise ConfigError(f"synthesizer={kind!r} is not a per-query synthesizer (extractive or llm)")
        if self.llm is None:
            raise ConfigError(f"synthesizer={kind!r} needs an LLM; pass llm=... to OpinioRAG")
        from opinio_agents.synthesis.llm import LLMSynthesizer

        options: dict[str, Any] = {"cache_path": self.store.store_dir / "llm_cache.sqlite", **self.llm_options}
        options["guard"] = False  # the summarizer's post-processing guards, exactly once
        options.setdefault("fallback", self._synthesizer("extractive"))  # never nothing where reviews answer
        return LLMSynthesizer(self.llm, **options)

    def _long_context(self) -> LongContextSynthesizer:
        from opinio_agents.synthesis.long_context import LongContextSynthesizer

        if self.llm_spec is None:
            raise ConfigError("synthesizer='long-context' needs an LLM; pass llm=... to OpinioRAG")
        options: dict[str, Any] = {"cache_path": self.store.store_dir / "llm_cache.sqlite"}
        shared = (
            "cache_path",
            "context_window_tokens",
            "deadline",
            "device",
            "domain",
            "max_retries",
            "structured_output",
            "timeout",
        )
        options.update({k: v for k, v in self.llm_options.items() if k in shared})
        # Pass the spec, not the resolved model: the baseline resolves its own with max_tokens=512 (App. B.3).
        return LongContextSynthesizer(self.llm_spec, base_url=self.base_url, **options)

    def summarizer(
        self,
        *,
        top_k: int | None = None,
        retriever: RetrieverKind | None = None,
        synthesizer: SynthesizerKind | Synthesizer | Summarizer | LongContextSynthesizer | None = None,
        filters: MetadataFilters | None = None,
        query_free: bool = False,
        verify: bool | HighlightVerifier | None = None,
        weighting: Weighting | None = None,
    ) -> Summarizer:
        """The :class:`Summarizer` these settings describe.

        Args:
            top_k: Evidence sentences per query (retrieval) or aspects (query-free).
            retriever: Retriever of the retrieval pipeline.
            synthesizer: Overrides the façade's synthesizer for this call.
            filters: Metadata filters of the retrieval pipeline.
            query_free: HIRO's query-free summarizer over the shared HIRO index.
            verify: Overrides the façade's ``verify`` for this call (a given Summarizer keeps its own).
            weighting: Publication window and review weights of the support counts
                (the retrieval pipeline only).

        Raises:
            ConfigError: On settings that the chosen summarizer cannot honour.
        """
        kind = synthesizer if synthesizer is not None else self.synthesizer_kind
        if weighting is not None and not weighting.is_default and (
            query_free or kind == "long-context" or isinstance(kind, Summarizer) or _is_long_context(kind)
        ):
            raise ConfigError(
                "since/until, a half-life and helpful-vote weighting apply to the retrieval pipeline "
                "(queries or expert queries), not to query-free or long-context highlights; drop them or ask queries"
            )
        if isinstance(kind, Summarizer) and (kind.query_free or not query_free):
            if top_k is not None or retriever is not None or filters is not None:
                raise ConfigError(
                    f"the {type(kind).__name__} given is run as it is; set top_k, retriever and filters on it "
                    "instead of passing them here"
                )
            return kind
        if query_free:
            if synthesizer is not None or retriever is not None or filters is not None:
                raise ConfigError(
                    "query_free=True uses HIRO's own summarizer; drop synthesizer=, retriever= and filters="
                )
            from opinio_agents.summarizers import QueryFreeSummarizer

            return QueryFreeSummarizer(
                self._require_hiro(), top_k=top_k or DEFAULT_TOP_K, verifier=self.verifier(verify) or False
            )
        if kind == "long-context" or _is_long_context(kind):
            if retriever is not None or filters is not None:
                raise ConfigError("the long-context baseline retrieves nothing; drop retriever= and filters=")
            from opinio_agents.summarizers import LongContextSummarizer

            synth = self._long_context() if isinstance(kind, str) else kind
            verifier = self.verifier(verify, model_writes=True) or False
            return LongContextSummarizer(self.store, synth, verifier=verifier)  # type: ignore[arg-type]
        return self.pipeline(
            top_k=top_k,
            retriever=retriever,
            synthesizer=kind,  # type: ignore[arg-type]
            filters=filters,
            verify=verify,
            weighting=weighting,
        )

    def pipeline(
        self,
        *,
        top_k: int | None = None,
        retriever: RetrieverKind | None = None,
        synthesizer: SynthesizerKind | Synthesizer | None = None,
        filters: MetadataFilters | None = None,
        verify: bool | HighlightVerifier | None = None,
        weighting: Weighting | None = None,
    ) -> HighlightPipeline:
        """The retrieval-based summarizer (:class:`~opinio_agents.pipeline.HighlightPipeline`) for these settings."""
        from opinio_agents.pipeline import HighlightPipeline

        kind = synthesizer if synthesizer is not None else self.synthesizer_kind
        if not isinstance(kind, (str, Synthesizer)):
            raise ConfigError(f"{type(kind).__name__} is not a per-query synthesizer; call summarizer() instead")
        if kind == "long-context":
            raise ConfigError("the long-context baseline does not use the retrieval pipeline; call highlights()")
        model_writes = kind == "llm" or getattr(kind, "name", None) == "llm"
        return HighlightPipeline(
            self.retrievers,
            self._synthesizer(kind),
            retriever=retriever or self.retriever,
            top_k=top_k or self.top_k,
            filters=filters,
            verifier=self.verifier(verify, model_writes=model_writes) or False,
            weighting=weighting,
        )

    def plan(
        self,
        entity_id: str | int,
        queries: Sequence[str] | None = None,
        *,
        top_k: int | None = None,
        retriever: RetrieverKind | None = None,
        synthesizer: SynthesizerKind | Synthesizer | Summarizer | LongContextSynthesizer | None = None,
        filters: MetadataFilters | None = None,
        query_free: QueryFree = False,
        verify: bool | HighlightVerifier | None = None,
        since: dt.date | None = None,
        until: dt.date | None = None,
        half_life_days: float | None = None,
        weight_helpful: bool = False,
    ) -> HighlightRequest:
        """The :class:`~opinio_agents.synthesis.summarizer.HighlightRequest` of a highlight run, resolved once.

        The one place where a run's entity key, queries and mode are decided (by
        :func:`~opinio_agents.synthesis.summarizer.plan_queries`) and its summarizer is chosen; the CLI,
        the HTTP service, MCP and the agent tools all come through here, and nothing below decides
        again. Nothing is computed: :meth:`run` (or ``request.summarizer.stream(request)``) does the work.
        The arguments are those of :meth:`highlights`.

        Raises:
            StoreError: When the entity is not indexed (or query-free mode finds no HIRO hierarchy).
            ConfigError: When there are no queries to answer, or on incompatible settings.

        Example:
            >>> request = rag.plan("101", query_free="auto")                 # doctest: +SKIP
            >>> request.mode, request.queries[:2]                            # doctest: +SKIP
            ('expert-queries', ('cleanliness', 'staff'))
        """
        from opinio_agents.synthesis.summarizer import plan_queries

        weighting = Weighting(since=since, until=until, half_life_days=half_life_days, helpful=weight_helpful)
        given = synthesizer if synthesizer is not None else self.synthesizer_kind
        if isinstance(given, Summarizer) and given.query_free and query_free is not True:
            if queries:  # a given HIRO summarizer discovers its own aspects
                raise ConfigError(
                    f"the query-free {type(given).__name__} takes no queries; drop the queries, or use the "
                    "retrieval summarizer to answer them"
                )
            query_free = True
        key, asked, mode = plan_queries(self.store, entity_id, queries, query_free=query_free)
        summarizer = self.summarizer(
            top_k=top_k,
            retriever=retriever,
            synthesizer=synthesizer,
            filters=filters,
            query_free=mode == "query-free",
            verify=verify,
            weighting=None if weighting.is_default else weighting,
        )
        return HighlightRequest(
            entity_key=key, queries=asked, mode=mode, summarizer=summarizer, **summarizer.request_settings()
        )

    def run(self, request: HighlightRequest) -> HighlightSet:
        """The highlights of a planned request (:meth:`plan`); ``result.meta`` is filled from it."""
        return request.summarizer.summarize(request)

    def stream(self, request: HighlightRequest) -> Iterator[SummaryEvent]:
        """A planned request's outcomes as they complete, then its ``SummaryDone`` (the streaming :meth:`run`)."""
        return request.summarizer.stream(request)

    def query_mode(
        self, entity_id: str | int, queries: Sequence[str] | None = None, *, query_free: QueryFree = False
    ) -> QueryMode:
        """The mode :meth:`highlights` would run with these arguments (nothing is computed).

        Returns ``"queries"``, ``"expert-queries"`` or ``"query-free"``, as
        :meth:`plan` decides it (``plan(...).mode``, without choosing a summarizer).

        Raises:
            ConfigError: Exactly when :meth:`highlights` would refuse the arguments for lack
                of queries, or for an invalid ``query_free``.

        Example:
            >>> rag.query_mode("plain", query_free="auto")      # doctest: +SKIP
            'query-free'
        """
        from opinio_agents.synthesis.summarizer import plan_queries

        return plan_queries(self.store, entity_id, queries, query_free=query_free)[2]

    def highlights(
        self,
        entity_id: str | int,
        queries: Sequence[str] | None = None,
        *,
        top_k: int | None = None,
        retriever: RetrieverKind | None = None,
        synthesizer: SynthesizerKind | Synthesizer | Summarizer | LongContextSynthesizer | None = None,
        filters: MetadataFilters | None = None,
        query_free: QueryFree = False,
        verify: bool | HighlightVerifier | None = None,
        since: dt.date | None = None,
        until: dt.date | None = None,
        half_life_days: float | None = None,
        weight_helpful: bool = False,
    ) -> HighlightSet:
        """PROS/CONS highlights of one entity, with alerts; ``result.meta.mode`` says which mode ran.

        Same as ``run(plan(...))``. Every highlight carries the ``trend`` of its aspect over time
        (mention share and stance per year or quarter, with an improving / worsening / stable label).

        Args:
            entity_id: An indexed entity.
            queries: The user-centric queries; ``None`` takes the entity's expert-review queries.
            top_k: Evidence sentences per query (default: the façade's).
            retriever: ``bm25``, ``dense`` or ``hybrid`` (default: the façade's).
            synthesizer: Overrides the façade's synthesizer (a kind, a Synthesizer or a Summarizer).
            filters: Metadata filters applied to retrieval.
            query_free: ``False`` (default): answer queries, raising ConfigError when there are
                none (no queries given, no expert review). ``True``: HIRO's query-free highlights
                (``meta.mode == "query-free"``). ``"auto"``: query-free only when there are no queries;
                callers should tell the user when ``result.meta.mode == "query-free"`` (or
                :meth:`plan` first and read ``request.mode``).
            verify: Verify each highlight against its own evidence (default: the façade's ``verify``).
            since: Count support (and take evidence and trends) only from reviews published
                on or after this date.
            until: ... on or before this date.
            half_life_days: Weight each review's support by recency, halving every this many
                days back from the newest review (``Support.weighting`` says so).
            weight_helpful: Weight each review's support by ``1 + helpful_votes``.

        Raises:
            ConfigError: When there are no queries to answer, or on incompatible settings
                (a window or weights with query-free or long-context highlights; dates asked
                of an entity whose reviews carry none).
            StoreError: When the entity is not indexed (or query-free mode finds no HIRO hierarchy).

        Example:
            >>> rag.highlights("101", ["wi-fi"], half_life_days=365).cons[0].support.weighting  # doctest: +SKIP
            'recency half-life 365 d'
        """
        return self.run(
            self.plan(
                entity_id,
                queries,
                top_k=top_k,
                retriever=retriever,
                synthesizer=synthesizer,
                filters=filters,
                query_free=query_free,
                verify=verify,
                since=since,
                until=until,
                half_life_days=half_life_days,
                weight_helpful=weight_helpful,
            )
        )

    def stream_highlights(
        self,
        entity_id: str | int,
        queries: Sequence[str] | None = None,
        *,
        query_free: QueryFree = False,
        **settings: Any,
    ) -> Iterator[SummaryEvent]:
        """Yield each query's outcome as soon as it completes, then a ``SummaryDone`` with the full result.

        Takes the same arguments as :meth:`highlights`; the final result equals what it returns
        (same highlights, failures, alerts and meta).
        """
        request = self.plan(entity_id, queries, query_free=query_free, **settings)
        yield from request.summarizer.stream(request)

    def query_free_highlights(
        self, entity_id: str | int, *, top_k: int = DEFAULT_TOP_K, alpha: float | None = None,
        summary_words: int = SELECTION_SETTINGS.summary_words,
    ) -> HighlightSet:
        """Highlights without any query: HIRO's popular and entity-specific clusters, plus alerts.

        Same as ``highlights(entity_id, query_free=True)`` with HIRO's ``alpha`` and the
        word budget of the ``summary`` paragraph.
        """
        from opinio_agents.summarizers import QueryFreeSummarizer

        summarizer = QueryFreeSummarizer(
            self._require_hiro(), top_k=top_k, alpha=alpha, summary_words=summary_words,
            verifier=self.verifier() or False,
        )
        return summarizer.summarize(summarizer.request(entity_id))

    def entities(self) -> list[str]:
        """Ids of the indexed entities."""
        return self.store.entity_keys()

    def close(self) -> None:
        """Release the store."""
        self.store.close()


def _is_long_context(obj: object) -> bool:
    if isinstance(obj, (str, Synthesizer, Summarizer)):
        return False
    from opinio_agents.synthesis.long_context import LongContextSynthesizer

    return isinstance(obj, LongContextSynthesizer)


def _check_synthesizer_object(obj: object) -> None:
    if not isinstance(obj, (Synthesizer, Summarizer)) and not _is_long_context(obj):
        raise ConfigError(
            f"synthesizer={obj!r} is neither a kind ({', '.join(SYNTHESIZERS)}), a Summarizer, a Synthesizer "
            "nor a LongContextSynthesizer"
        )
