"""The triplet head's configuration, pair labels and runtimes, importable without torch.

:class:`HeadConfig` is saved next to the weights (``config.json``); the torch head
(:mod:`opinio_agents.triplets.head`) and the torch-free runtime
(:mod:`opinio_agents.triplets.runtime`) both read it.

Example:
    >>> HeadConfig.from_dict({"hidden": 64, "unknown": 1}).hidden
    64
    >>> distance_bucket(0), distance_bucket(6), distance_bucket(100)
    (0, 5, 10)
    >>> pair_geometry([(4, 4)], [(0, 1)])
    ([2], [4], [2], [1])
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

__all__ = [
    "HeadConfig",
    "PAIR_LABELS",
    "RUNTIME_ENV",
    "RUNTIMES",
    "distance_bucket",
    "files_digest",
    "pair_geometry",
]

#: Environment variable choosing the embedded extractor's runtime when none is passed: ``onnx`` (default) or ``torch``.
RUNTIME_ENV = "OPINIO_TRIPLET_RUNTIME"
#: The runtimes: ``onnx`` (MiniLM and the heads on ONNX Runtime: no torch import once the exports
#: are cached, :mod:`opinio_agents.triplets.runtime`) and ``torch`` (the training runtime; the only
#: one for heads with fine-tuned encoder layers).
RUNTIMES = ("onnx", "torch")
#: Pair classes; index 0 means "not a triplet"; others map to sentiment -1/0/1.
PAIR_LABELS: tuple[int | None, ...] = (None, -1, 0, 1)
#: Lower edges of the word-distance buckets of the pair classifier.
_DIST_EDGES = (0, 1, 2, 3, 4, 5, 7, 10, 15, 20, 30)


def distance_bucket(distance: int) -> int:
    """Bucket a word distance (>= 0) into ``len(_DIST_EDGES)`` bins."""
    for i in range(len(_DIST_EDGES) - 1, -1, -1):
        if distance >= _DIST_EDGES[i]:
            return i
    return 0


def pair_geometry(
    aspects: Sequence[tuple[int, int]], opinions: Sequence[tuple[int, int]]
) -> tuple[list[int], list[int], list[int], list[int]]:
    """The pair classifier's geometry of aligned (aspect span, opinion span) pairs, spans inclusive.

    Returns ``(lo, hi, dists, orders)``: the words strictly between the two spans are
    ``lo:hi`` (empty, ``lo == hi``, when they touch or overlap), ``dists`` their
    :func:`distance_bucket` and ``orders`` 0 when the aspect starts first (or both start
    together), else 1. One definition for the torch head and the torch-free runtime.

    Example:
        >>> pair_geometry([(0, 0), (5, 6)], [(2, 3), (1, 1)])
        ([1, 2], [2, 5], [1, 3], [0, 1])
    """
    lo: list[int] = []
    hi: list[int] = []
    dists: list[int] = []
    orders: list[int] = []
    for (a0, a1), (o0, o1) in zip(aspects, opinions, strict=True):
        low, high = (a1 + 1, o0) if a1 < o0 else (o1 + 1, a0)
        high = max(high, low)
        lo.append(low)
        hi.append(high)
        dists.append(distance_bucket(high - low))
        orders.append(0 if a0 <= o0 else 1)
    return lo, hi, dists, orders


@dataclass
class HeadConfig:
    """Hyper-parameters of :class:`TripletHead` (saved next to the weights)."""

    encoder_layers: tuple[int, ...] = (3, 4, 5, 6)
    enc_dim: int = 384
    #: A second group of encoder hidden states, averaged like ``encoder_layers`` and
    #: concatenated to them (input width ``2 * enc_dim``); empty for one group. Lower
    #: layers (0 = the word-piece embeddings) keep lexical identity that the top layers of a
    #: sentence-similarity encoder blur (e.g. antonymous opinion words).
    extra_layers: tuple[int, ...] = ()
    hidden: int = 256
    conv_layers: int = 2
    kernel_size: int = 3
    span_dim: int = 256
    pair_hidden: int = 256
    dropout: float = 0.3
    #: Bidirectional LSTM layers after the convolutions (0 = none; older heads have none).
    lstm_layers: int = 0
    #: Transformer layers of the encoder (0-based indices into ``encoder.layer``) that were
    #: fine-tuned with the head; their weights ship beside the head (``encoder_top.safetensors``).
    #: Empty for heads trained on a frozen encoder.
    finetuned_layers: tuple[int, ...] = ()
    #: Decoding calibration (set on held-out training sentences after training): added to the
    #: B and I log-probabilities of the aspect / opinion taggers, and the pair probability of
    #: "none" below which a pair is kept.
    aspect_bias: float = 0.0
    opinion_bias: float = 0.0
    pair_threshold: float = 0.5
    #: Extra candidate spans of marginal probability >= this (> 1: plain BIO decoding),
    #: of at most ``max_span_words`` words (see :mod:`opinio_agents.triplets.decode`).
    span_threshold: float = 1.01
    max_span_words: int = 6

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HeadConfig:
        """Build from :meth:`to_dict` output, ignoring unknown keys."""
        names = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in names}
        for key in ("encoder_layers", "extra_layers", "finetuned_layers"):
            if key in kwargs:
                kwargs[key] = tuple(kwargs[key])
        return cls(**kwargs)


def files_digest(directory: Path) -> str:
    """A digest of the regular files directly in ``directory`` (names, sizes, contents)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        digest.update(f"{path.name}\x00{path.stat().st_size}\x00".encode())
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]
