"""Retrieval-only ablation (Sec. 5): the top-K retrieved sentences of each query, merged.

For every expert query on each side, the store's retriever (BM25, dense or
hybrid) returns its top-K sentences (score > 0); each becomes a highlight of
that query on that side, so the side's text is the merged top-K evidence.
No synthesizer runs. Candidates for the other baselines are read from the
same store (:func:`candidates_from_index`).

Example:
    >>> from opinio_agents.api import OpinioRAG                          # doctest: +SKIP
    >>> rag = OpinioRAG(store_dir="/tmp/opinio-demo")                     # doctest: +SKIP
    >>> baseline = RetrievalOnlyBaseline(rag.retrievers, "bm25", top_k=5)  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opinio_agents.errors import ConfigError
from opinio_agents.evaluation.baselines.base import MAX_TEXT, Baseline, BaselineInput, Candidate
from opinio_agents.models import Evidence, Highlight, HighlightSet, Polarity, RunMeta

if TYPE_CHECKING:
    from opinio_agents.evaluation.reference import SentimentClassifier
    from opinio_agents.retrieval.factory import RetrieverFactory, RetrieverKind
    from opinio_agents.stores.sentence_store import SentenceStore

__all__ = ["RetrievalOnlyBaseline", "candidates_from_index"]


def candidates_from_index(
    index: SentenceStore, entity_id: str | int, classifier: SentimentClassifier | None = None
) -> list[Candidate]:
    """Every stored sentence of an entity as a :class:`Candidate`.

    Labels come from ``classifier`` when given, else from the sentiment stored
    at indexing time (review-tuned VADER, +-0.05).
    """
    from opinio_agents.text.sentiment import sentiment_label

    stored = index.sentences(entity_id)
    if classifier is not None:
        labels = classifier([s.sentence.text for s in stored])
    else:
        labels = [sentiment_label(s.sentiment) for s in stored]
    return [
        Candidate(s.sentence.sentence_id, s.sentence.text, int(label), s.sentiment)
        for s, label in zip(stored, labels, strict=True)
    ]


class RetrievalOnlyBaseline(Baseline):
    """Merged top-K retrieved sentences per query, without synthesis.

    Args:
        retrievers: The retriever factory over the store the entity is indexed in.
        retriever: ``bm25``, ``dense`` or ``hybrid``.
        top_k: Sentences per query.
    """

    name = "retrieval"

    def __init__(
        self, retrievers: RetrieverFactory, retriever: RetrieverKind = "bm25", *, top_k: int = 10
    ) -> None:
        if top_k < 1:
            raise ConfigError(f"top_k={top_k} must be >= 1")
        self.retrievers = retrievers
        self.retriever = retriever
        self.top_k = top_k

    def run(self, data: BaselineInput) -> HighlightSet:
        """Retrieve for each expert query and keep the sentences as highlights."""
        result = HighlightSet(
            entity_id=data.entity_id,
            entity_name=data.entity_name,
            meta=RunMeta(
                retriever=self.retriever,
                top_k=self.top_k,
                synthesizer=self.name,
                queries=data.expert.queries,
            ),
        )
        for polarity, queries in (
            (Polarity.PROS, data.expert.pros),
            (Polarity.CONS, data.expert.cons),
        ):
            for query in queries:
                hits = self.retrievers.retrieve(
                    data.entity_id, query, retriever=self.retriever, top_k=self.top_k
                )
                for hit in hits:
                    ev = Evidence(
                        sentence_id=hit.sentence.sentence_id,
                        text=hit.sentence.text,
                        score=hit.score,
                        sentiment=hit.sentiment,
                    )
                    result.add(
                        Highlight(
                            query=query,
                            polarity=polarity,
                            text=hit.sentence.text[:MAX_TEXT],
                            evidence=[ev],
                        )
                    )
        return result
