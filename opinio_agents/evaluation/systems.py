"""Which systems an evaluation compares, and how each produces an entity's highlights.

System kinds:

* ``opiniorag`` - OpinioRAG with the extractive synthesizer (no LLM), per retriever and top-K;
* ``llm`` - OpinioRAG with the LLM synthesizer (needs an LLM), per retriever and top-K;
* ``retrieval`` - the retrieval-only ablation (merged top-K), per retriever and top-K;
* ``long-context`` - the long-context LLM baseline (needs an LLM);
* ``random``, ``oracle``, ``textrank``, ``lexrank`` - the App. F baselines.

Example:
    >>> [s.name for s in expand_systems(["opiniorag", "random"], ["bm25"], [5, 10])]
    ['opiniorag-bm25-k5', 'opiniorag-bm25-k10', 'random']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from opinio_agents.errors import ConfigError
from opinio_agents.kinds import RETRIEVERS, RetrieverKind

__all__ = [
    "SystemSpec",
    "SYSTEM_KINDS",
    "RAG_KINDS",
    "LLM_KINDS",
    "DEFAULT_SYSTEMS",
    "expand_systems",
]

#: Kinds that run per retriever and top-K.
RAG_KINDS: tuple[str, ...] = ("opiniorag", "llm", "retrieval")
#: Kinds that need an LLM.
LLM_KINDS: tuple[str, ...] = ("llm", "long-context")
SYSTEM_KINDS: tuple[str, ...] = (
    *RAG_KINDS,
    "long-context",
    "random",
    "oracle",
    "textrank",
    "lexrank",
)
#: What runs when no system is named (everything that needs no LLM).
DEFAULT_SYSTEMS: tuple[str, ...] = (
    "opiniorag",
    "retrieval",
    "random",
    "oracle",
    "textrank",
    "lexrank",
)


@dataclass(frozen=True)
class SystemSpec:
    """One system of the comparison.

    Attributes:
        kind: One of :data:`SYSTEM_KINDS`.
        retriever: Retriever of a RAG kind (None otherwise).
        top_k: Evidence per query of a RAG kind (None otherwise).
    """

    kind: str
    retriever: RetrieverKind | None = None
    top_k: int | None = None

    @property
    def name(self) -> str:
        """Stable name, used in tables and as the cache folder (``opiniorag-bm25-k10``)."""
        if self.kind in RAG_KINDS:
            return f"{self.kind}-{self.retriever}-k{self.top_k}"
        return self.kind

    @property
    def needs_llm(self) -> bool:
        """Whether the system calls an LLM."""
        return self.kind in LLM_KINDS

    @property
    def has_evidence(self) -> bool:
        """Whether its highlights are synthesised from retrieved evidence (AOS applies)."""
        return self.kind in ("opiniorag", "llm")


def expand_systems(
    kinds: Sequence[str], retrievers: Sequence[str], top_ks: Sequence[int]
) -> list[SystemSpec]:
    """The cross product of RAG kinds with retrievers and top-K values, plus the other kinds.

    Raises:
        ConfigError: For an unknown kind or retriever, or a top-K below 1.
    """
    for kind in kinds:
        if kind not in SYSTEM_KINDS:
            raise ConfigError(f"system {kind!r} is not one of {', '.join(SYSTEM_KINDS)}")
    for retriever in retrievers:
        if retriever not in RETRIEVERS:
            raise ConfigError(f"retriever {retriever!r} is not one of {', '.join(RETRIEVERS)}")
    for k in top_ks:
        if k < 1:
            raise ConfigError(f"top-k {k} must be >= 1")
    out: list[SystemSpec] = []
    for kind in dict.fromkeys(kinds):
        if kind in RAG_KINDS:
            out += [
                SystemSpec(kind, cast("RetrieverKind", r), k)
                for r in dict.fromkeys(retrievers)
                for k in dict.fromkeys(top_ks)
            ]
        else:
            out.append(SystemSpec(kind))
    return out
