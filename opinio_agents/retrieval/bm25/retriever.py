"""A LlamaIndex BM25 retriever with the OpinioRAG App. D preprocessing.

LlamaIndex's own ``BM25Retriever`` (bm25s + a Snowball stemmer) neither applies
App. D nor drops zero-score hits and fixes its filters at build time, so this
retriever is written the same way (``BaseRetriever`` with ``_retrieve``,
``from_defaults``, ``persist`` / ``from_persist_dir``) over
:class:`~opinio_agents.retrieval.bm25.scoring.BM25Index`, whose scores equal
``rank_bm25.BM25Okapi`` (the paper's library).

Example:
    >>> from llama_index.core.schema import TextNode
    >>> texts = ["The wi-fi was free.", "Nice pool.", "Friendly staff.", "Big rooms."]
    >>> nodes = [TextNode(id_=str(i), text=t) for i, t in enumerate(texts)]
    >>> retriever = OpinioBM25Retriever.from_defaults(nodes=nodes, similarity_top_k=5)
    >>> [hit.node.node_id for hit in retriever.retrieve("wifi")]
    ['0']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.vector_stores.types import MetadataFilters
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.retrieval.bm25.scoring import BM25Index, BM25Params
from opinio_agents.retrieval.bm25.selection import top_k_positive
from opinio_agents.text.preprocess import tokenize_for_bm25

__all__ = ["OpinioBM25Retriever"]

Tokenizer = Callable[[str], list[str]]
_NODES_FILE = "nodes.jsonl"
_CONFIG_FILE = "retriever.json"


class OpinioBM25Retriever(BaseRetriever):
    """BM25 Okapi over review sentences, App. D tokens, top-K with score > 0.

    Args:
        index: A built :class:`BM25Index` whose rows follow ``nodes``.
        nodes: The indexed nodes, in index row order.
        similarity_top_k: K, the maximum number of sentences returned.
        filters: LlamaIndex metadata filters applied at query time (may be changed later).
        tokenizer: Query tokenizer; must match the one used to build ``index``.
    """

    def __init__(
        self,
        index: BM25Index,
        nodes: Sequence[TextNode],
        *,
        similarity_top_k: int = 10,
        filters: MetadataFilters | None = None,
        tokenizer: Tokenizer = tokenize_for_bm25,
        **kwargs: Any,
    ) -> None:
        if index.num_docs != len(nodes):
            raise StoreError(
                f"BM25 index has {index.num_docs} rows but {len(nodes)} nodes were given; rebuild the index"
            )
        if similarity_top_k < 1:
            raise ConfigError(f"similarity_top_k={similarity_top_k} must be >= 1")
        self._index = index
        self._nodes = list(nodes)
        self.similarity_top_k = similarity_top_k
        self._tokenizer = tokenizer
        self._lookup: dict[str, dict[str, Any]] | None = None
        self._filters: MetadataFilters | None = None
        self._mask: np.ndarray | None = None
        self.filters = filters
        super().__init__(**kwargs)

    def with_options(
        self,
        *,
        top_k: int | None = None,
        filters: MetadataFilters | None = None,
        mask: np.ndarray | None = None,
    ) -> OpinioBM25Retriever:
        """A retriever sharing this one's index and nodes, with its own K and filters.

        Pass the ``mask`` of :meth:`filter_mask` for ``filters`` to skip recomputing it.
        """
        other = OpinioBM25Retriever(
            self._index, self._nodes, similarity_top_k=top_k or self.similarity_top_k, tokenizer=self._tokenizer
        )
        other._lookup = self._lookup
        if mask is not None:
            if mask.shape != (len(self._nodes),):
                raise ConfigError(f"mask has shape {mask.shape}; expected ({len(self._nodes)},)")
            other._filters, other._mask = filters, mask
        else:
            other.filters = filters
            self._lookup = other._lookup
        return other

    def filter_mask(self, filters: MetadataFilters | None) -> np.ndarray | None:
        """Which nodes pass ``filters`` (None: no filter), in index order."""
        if filters is None or not filters.filters:
            return None
        if self._lookup is None:
            self._lookup = {node.node_id: node.metadata for node in self._nodes}
        lookup = self._lookup
        keep = build_metadata_filter_fn(lambda node_id: lookup[node_id], filters)
        return np.fromiter((keep(n.node_id) for n in self._nodes), dtype=bool, count=len(self._nodes))

    # -- construction -------------------------------------------------------
    @classmethod
    def from_defaults(
        cls,
        nodes: Sequence[TextNode],
        *,
        tokens: Sequence[Sequence[str]] | None = None,
        similarity_top_k: int = 10,
        filters: MetadataFilters | None = None,
        tokenizer: Tokenizer = tokenize_for_bm25,
        params: BM25Params | None = None,
        **kwargs: Any,
    ) -> OpinioBM25Retriever:
        """Index ``nodes`` (pass precomputed App. D ``tokens`` to skip preprocessing)."""
        if tokens is None:
            tokens = [tokenizer(node.get_content()) for node in nodes]
        elif len(tokens) != len(nodes):
            raise ConfigError(f"tokens has {len(tokens)} entries but nodes has {len(nodes)}; pass one per node")
        index = BM25Index.build(tokens, params)
        return cls(index, nodes, similarity_top_k=similarity_top_k, filters=filters, tokenizer=tokenizer, **kwargs)

    def persist(self, path: str | Path) -> None:
        """Write the index, the nodes and the settings to ``path``."""
        directory = Path(path)
        directory.mkdir(parents=True, exist_ok=True)
        self._index.save(directory)
        tmp = directory / (_NODES_FILE + ".tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            for node in self._nodes:
                handle.write(json.dumps({"id": node.node_id, "text": node.text, "metadata": node.metadata}) + "\n")
        tmp.replace(directory / _NODES_FILE)
        (directory / _CONFIG_FILE).write_text(json.dumps({"similarity_top_k": self.similarity_top_k}), "utf-8")

    @classmethod
    def from_persist_dir(cls, path: str | Path, **kwargs: Any) -> OpinioBM25Retriever:
        """Load a retriever written by :meth:`persist` (keyword arguments override settings)."""
        directory = Path(path)
        try:
            config = json.loads((directory / _CONFIG_FILE).read_text("utf-8"))
            nodes = []
            with (directory / _NODES_FILE).open(encoding="utf-8") as handle:
                for line in handle:
                    row = json.loads(line)
                    keys = list(row["metadata"])
                    nodes.append(
                        TextNode(
                            id_=row["id"],
                            text=row["text"],
                            metadata=row["metadata"],
                            excluded_embed_metadata_keys=keys,
                            excluded_llm_metadata_keys=keys,
                        )
                    )
        except (OSError, ValueError, KeyError) as exc:
            raise StoreError(f"cannot load the BM25 retriever from {str(directory)!r}: {exc}") from exc
        config.update(kwargs)
        return cls(BM25Index.load(directory), nodes, **config)

    # -- filters ------------------------------------------------------------
    @property
    def filters(self) -> MetadataFilters | None:
        """Metadata filters applied to every query."""
        return self._filters

    @filters.setter
    def filters(self, value: MetadataFilters | None) -> None:
        self._mask = self.filter_mask(value)
        self._filters = value

    @property
    def nodes(self) -> list[TextNode]:
        """The indexed nodes, in index order."""
        return self._nodes

    # -- retrieval ----------------------------------------------------------
    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every node for ``query`` (filters applied: filtered-out nodes score 0)."""
        scores = self._index.scores(self._tokenizer(query))
        if self._mask is not None:
            scores = np.where(self._mask, scores, 0.0)
        return scores

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = top_k_positive(self.scores(query_bundle.query_str), self.similarity_top_k)
        return [NodeWithScore(node=self._nodes[i], score=score) for i, score in hits]
