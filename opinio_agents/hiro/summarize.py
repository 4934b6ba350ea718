"""One call from an indexed entity to a HIRO summary (extractive, HIRO_sent or HIRO_doc).

Example:
    >>> summary = hiro_summary(index, "101", method="extractive")     # doctest: +SKIP
    >>> summary.sentences[0].text, summary.sentences[0].evidence[0].sentence_id  # doctest: +SKIP
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from opinio_agents.errors import ConfigError
from opinio_agents.hiro.generators import GeneratedSentence, HiroDocGenerator, HiroSentGenerator, extractive_summary
from opinio_agents.hiro.retriever import DEFAULT_ALPHA, DEFAULT_TOP_K, HiroCluster, retrieve_clusters
from opinio_agents.hiro.store import HiroIndex, as_hiro_index
from opinio_agents.stores.sentence_store import SentenceStore

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["HiroSummary", "hiro_summary", "HiroMethod"]

HiroMethod = Literal["extractive", "sent", "doc"]


@dataclass
class HiroSummary:
    """A HIRO summary: its sentences (each with evidence) and the clusters used."""

    entity_id: str
    method: str
    sentences: list[GeneratedSentence] = field(default_factory=list)
    clusters: list[HiroCluster] = field(default_factory=list)
    cluster_texts: list[list[str]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The summary as one paragraph."""
        return " ".join(s.text for s in self.sentences)


def hiro_summary(
    index: SentenceStore | HiroIndex,
    entity_id: str | int,
    *,
    method: HiroMethod = "extractive",
    llm: BaseChatModel | str | None = None,
    base_url: str | None = None,
    top_k: int = DEFAULT_TOP_K,
    alpha: float = DEFAULT_ALPHA,
) -> HiroSummary:
    """Retrieve the entity's clusters and generate a summary with ``method``.

    Raises:
        ConfigError: Unknown method, or an LLM method without ``llm``.
    """
    if method not in ("extractive", "sent", "doc"):
        raise ConfigError(f"method={method!r} must be 'extractive', 'sent' or 'doc'")
    if method != "extractive" and llm is None:
        raise ConfigError(f"method={method!r} needs an LLM: pass llm='openai:gpt-4o-mini' or a chat model")
    hiro = as_hiro_index(index)
    key = hiro.index.require_entity(entity_id)
    stored = hiro.index.sentences(key)
    clusters = retrieve_clusters(hiro, key, top_k=top_k, alpha=alpha)
    texts = [[stored[i].sentence.text for i in c.indices] for c in clusters]
    ids = [list(c.sentence_ids) for c in clusters]
    name = hiro.index.entity_record(key).entity_name or "entity"
    if method == "extractive":
        sentences = extractive_summary(texts, ids)
    elif method == "sent":
        sentences = HiroSentGenerator(llm, base_url=base_url).generate(texts, entity_name=name, ids=ids)  # type: ignore[arg-type]
    else:
        sentences = HiroDocGenerator(llm, base_url=base_url).generate(texts, entity_name=name, ids=ids)  # type: ignore[arg-type]
    return HiroSummary(key, method, sentences, clusters, texts)
