"""The Python façade: index reviews, retrieve evidence, write highlights.

:class:`OpinioRAG` mirrors the CLI (``opinio index`` / ``opinio highlight``)
and wires the store, the retrievers and a synthesizer together.

Example:
    >>> from opinio_agents import OpinioRAG
    >>> from opinio_agents.datasets import sample_path
    >>> rag = OpinioRAG(store_dir="/tmp/opinio-demo")                # doctest: +SKIP
    >>> rag.index(sample_path())                                     # doctest: +SKIP
    >>> result = rag.highlights("1", ["wi-fi", "breakfast"])         # doctest: +SKIP
    >>> print(result.cons[0].text, "-", result.cons[0].support.describe())  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from opinio_agents.embeddings import get_encoder
from opinio_agents.errors import ConfigError
from opinio_agents.indexing import Indexer, IndexStats
from opinio_agents.models import Entity, HighlightSet, Support
from opinio_agents.retrieval.factory import RetrieverFactory, RetrieverKind, ScoredSentence
from opinio_agents.stores.sentence_store import DEFAULT_STORE, SentenceStore
from opinio_agents.synthesis.base import SynthesisOutcome, Synthesizer

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from llama_index.core.vector_stores.types import MetadataFilters

    from opinio_agents.pipeline import HighlightPipeline

__all__ = ["OpinioRAG", "SynthesizerKind"]

SynthesizerKind = Literal["extractive", "llm", "long-context"]
SYNTHESIZERS: tuple[str, ...] = ("extractive", "llm", "long-context")


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
        synthesizer: ``extractive``, ``llm`` or ``long-context``; defaults to ``llm``
            when an LLM is given, else ``extractive``.
        llm_options: Extra keyword arguments for the LLM synthesizer
            (``max_concurrency``, ``timeout``, ``max_retries``, ``cache_path`` ...).
        chroma_host: Use a Chroma server instead of the embedded store.
        chroma_port: Port of that server.
        embedding_model: Path of a local sentence-transformers model (MiniLM by default).
    """

    def __init__(
        self,
        store_dir: str | Path = DEFAULT_STORE,
        *,
        retriever: RetrieverKind = "hybrid",
        top_k: int = 10,
        llm: BaseChatModel | str | None = None,
        base_url: str | None = None,
        synthesizer: SynthesizerKind | Synthesizer | None = None,
        llm_options: dict[str, Any] | None = None,
        chroma_host: str | None = None,
        chroma_port: int | None = None,
        embedding_model: str | Path | None = None,
    ) -> None:
        if top_k < 1:
            raise ConfigError(f"top_k={top_k} must be >= 1")
        if isinstance(synthesizer, str) and synthesizer not in SYNTHESIZERS:
            raise ConfigError(f"synthesizer={synthesizer!r} is not one of {', '.join(SYNTHESIZERS)}")
        self.store = SentenceStore(store_dir, chroma_host=chroma_host, chroma_port=chroma_port)
        self.encoder = get_encoder(embedding_model)
        self.indexer = Indexer(self.store, self.encoder)
        self.retrievers = RetrieverFactory(self.store, self.encoder, tokenizer=self.indexer.tokenizer)
        self.retriever = retriever
        self.top_k = top_k
        self.llm_spec = llm
        self.base_url = base_url
        self.llm_options = dict(llm_options or {})
        self.synthesizer_kind: SynthesizerKind | Synthesizer = synthesizer or (
            "llm" if llm is not None else "extractive"
        )
        if self.synthesizer_kind in ("llm", "long-context") and llm is None:
            raise ConfigError(
                f"synthesizer={self.synthesizer_kind!r} needs an LLM: pass llm='openai:gpt-4o-mini' "
                "(or a LangChain chat model, or --llm on the CLI)"
            )
        self._llm: BaseChatModel | None = None

    # -- indexing ---------------------------------------------------------------
    def index(
        self,
        data: str | Path | Entity | Iterable[Entity],
        *,
        skip_invalid: bool = False,
        show_progress: bool = False,
    ) -> list[IndexStats]:
        """Index a dataset file, one entity or an iterable of entities.

        A file is validated completely before anything is indexed, so a file
        with an error leaves the store untouched (unless ``skip_invalid``).
        """
        if isinstance(data, Entity):
            entities: Iterable[Entity] = [data]
        elif isinstance(data, (str, Path)):
            from opinio_agents.io.loaders import iter_entities, validate_file

            if not skip_invalid:
                validate_file(data)
            entities = iter_entities(data, skip_invalid=skip_invalid)
        else:
            entities = data
        return self.indexer.index_entities(entities, show_progress=show_progress)

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

    def support(self, entity_id: str | int, query: str) -> Support:
        """How many of the entity's reviews mention ``query``, and their stance."""
        from opinio_agents.synthesis.support import count_support

        info = self.store.entity_record(entity_id)
        return count_support(
            query,
            self.store.sentences(info.key),
            total_reviews=info.n_reviews,
            embeddings=self.store.embeddings(info.key),
            query_embedding=self.encoder.encode([query])[0],
            encoder=self.encoder,
        )

    # -- synthesis -----------------------------------------------------------------
    @property
    def llm(self) -> BaseChatModel | None:
        """The resolved chat model (None when no LLM is configured)."""
        if self._llm is None and self.llm_spec is not None:
            from opinio_agents.llm.providers import resolve_chat_model

            self._llm = resolve_chat_model(self.llm_spec, base_url=self.base_url)
        return self._llm

    def _synthesizer(self, kind: SynthesizerKind | Synthesizer) -> Synthesizer:
        if isinstance(kind, Synthesizer):
            return kind
        if kind == "extractive":
            from opinio_agents.synthesis.extractive import ExtractiveSynthesizer

            return ExtractiveSynthesizer(self.encoder)
        if self.llm is None:
            raise ConfigError(f"synthesizer={kind!r} needs an LLM; pass llm=... to OpinioRAG")
        from opinio_agents.synthesis.llm import LLMSynthesizer

        options = {"cache_path": self.store.store_dir / "llm_cache.sqlite", **self.llm_options}
        return LLMSynthesizer(self.llm, **options)

    def pipeline(
        self,
        *,
        top_k: int | None = None,
        retriever: RetrieverKind | None = None,
        synthesizer: SynthesizerKind | Synthesizer | None = None,
        filters: MetadataFilters | None = None,
    ) -> HighlightPipeline:
        """The :class:`~opinio_agents.pipeline.HighlightPipeline` for these settings."""
        from opinio_agents.pipeline import HighlightPipeline

        kind = synthesizer or self.synthesizer_kind
        if kind == "long-context":
            raise ConfigError("the long-context baseline does not use the retrieval pipeline; call highlights()")
        return HighlightPipeline(
            self.retrievers,
            self._synthesizer(kind),
            retriever=retriever or self.retriever,
            top_k=top_k or self.top_k,
            filters=filters,
        )

    def highlights(
        self,
        entity_id: str | int,
        queries: Sequence[str] | None = None,
        *,
        top_k: int | None = None,
        retriever: RetrieverKind | None = None,
        synthesizer: SynthesizerKind | Synthesizer | None = None,
        filters: MetadataFilters | None = None,
    ) -> HighlightSet:
        """PROS/CONS highlights for ``queries`` (default: the entity's expert-review queries)."""
        kind = synthesizer or self.synthesizer_kind
        if kind == "long-context":
            return self._long_context(entity_id, queries)
        return self.pipeline(top_k=top_k, retriever=retriever, synthesizer=kind, filters=filters).run(
            entity_id, queries
        )

    def stream_highlights(
        self,
        entity_id: str | int,
        queries: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> Iterator[SynthesisOutcome]:
        """Yield each query's highlights (or failure) as soon as it completes."""
        yield from self.pipeline(**kwargs).stream(entity_id, queries)

    def _long_context(self, entity_id: str | int, queries: Sequence[str] | None) -> HighlightSet:
        from opinio_agents.pipeline import resolve_queries
        from opinio_agents.synthesis.alerts import detect_alerts
        from opinio_agents.synthesis.long_context import LongContextSynthesizer

        key = self.store.require_entity(entity_id)
        asked = resolve_queries(self.store, key, queries)
        options: dict[str, Any] = {"cache_path": self.store.store_dir / "llm_cache.sqlite"}
        options.update({k: v for k, v in self.llm_options.items() if k in ("cache_path", "context_window_tokens")})
        # Pass the spec, not the resolved model: the baseline resolves its own with max_tokens=512 (App. B.3).
        synth = LongContextSynthesizer(self.llm_spec, base_url=self.base_url, **options)  # type: ignore[arg-type]
        entity = self.store.entity(key)
        expected = None if entity.expert_review is not None else len(asked)
        result = synth.run(entity, asked, n_pros=expected, n_cons=expected)
        stored = self.store.sentences(key)
        result.alerts = detect_alerts([s.sentence for s in stored], [s.sentiment for s in stored])
        return result

    def query_free_highlights(self, entity_id: str | int, *, top_k: int = 8, alpha: float = 6.0) -> HighlightSet:
        """Highlights without any query: HIRO's popular and entity-specific clusters, plus alerts."""
        from opinio_agents.hiro import query_free_highlights
        from opinio_agents.synthesis.alerts import detect_alerts

        key = self.store.require_entity(entity_id)
        result = query_free_highlights(self.store, key, top_k=top_k, alpha=alpha)
        stored = self.store.sentences(key)
        result.alerts = detect_alerts([s.sentence for s in stored], [s.sentiment for s in stored])
        return result

    def aspects(self, entity_id: str | int, *, top_k: int = 10) -> list[Any]:
        """HIRO aspect discovery: the entity's most discussed and most distinctive aspects."""
        from opinio_agents.hiro import discover_aspects

        return discover_aspects(self.store, self.store.require_entity(entity_id), top_k=top_k)

    def entities(self) -> list[str]:
        """Ids of the indexed entities."""
        return self.store.entity_keys()

    def close(self) -> None:
        """Release the store."""
        self.store.close()
