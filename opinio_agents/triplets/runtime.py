"""Torch-free inference for the embedded triplet extractor (runtime ``onnx``, the default).

Verification (:mod:`opinio_agents.synthesis.verification`) extracts the triplets of a few
dozen sentences per entity. The torch runtime pays the torch import and model load in every
new process (seconds) and torch's per-call overhead on small batches; this runtime gives the
same triplets without importing torch:

* **features** (:class:`OnnxWordFeatures`) - the frozen MiniLM exported to ONNX with one
  output, the word-piece states the head reads (the mean of its ``encoder_layers`` hidden
  states, concatenated with the mean of its ``extra_layers``), pooled into words in NumPy as
  :func:`~opinio_agents.triplets.features.encode_words` does;
* **heads** (:class:`OnnxHeads`) - one graph runs every ensemble member's projection,
  convolutions and packed bidirectional LSTM (ONNX ``LSTM`` with per-row lengths) and the
  ensemble-mean tag log-probabilities; the span and pair classifiers (small, and shaped by the
  candidate spans) run in NumPy on the weights read with ``safetensors.numpy``, once per
  distinct span; decoding is :func:`~opinio_agents.triplets.decode.decode_batch`, the one the
  torch runtime uses.

Both graphs are exported from the local weights at first use and cached like the sentence
encoder's (:func:`~opinio_agents.embeddings.onnx.cache_dir`; ``<cache>/onnx/triplet-features-...``
keyed by the model fingerprint and layers, ``<cache>/onnx/triplet-heads-...`` by a digest of the
head files), each written to a temporary name and renamed; exporting needs torch and ``onnx``
once per machine. ONNX Runtime threads do not busy-wait, and BLAS runs one thread on the
small NumPy matrices. On the ASTE dev sets and the hotel check the triplets are those of the
torch runtime (dev micro F1 65.7 both; ``python scripts/eval_triplets.py --threads 1``), at
about twice its sentences per second.

Example:
    >>> from opinio_agents.triplets.embedded import EmbeddedTripletExtractor
    >>> EmbeddedTripletExtractor(runtime="onnx").extract_one("The staff was friendly.")  # doctest: +SKIP
    [Triplet(aspect='staff', opinion='friendly', sentiment=1)]
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import uuid
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.triplets.decode import DecodeSettings, SpanPrediction, decode_batch
from opinio_agents.triplets.headconfig import RUNTIME_ENV, HeadConfig, files_digest, pair_geometry

if TYPE_CHECKING:  # pragma: no cover
    import onnxruntime
    from tokenizers import Tokenizer

__all__ = [
    "FEATURES_VERSION",
    "OnnxHeads",
    "OnnxWordFeatures",
    "one_blas_thread",
    "prepare_features_onnx",
    "prepare_heads_onnx",
]

#: Bumped whenever the feature export changes, so an older cached file is never used.
FEATURES_VERSION = 1
_LOCK = threading.Lock()
_CONTROLLER: Any = None
_SQRT_HALF = np.float32(np.sqrt(0.5))


def prepare_features_onnx(
    model_path: str | Path, layers: Sequence[int], extra_layers: Sequence[int] = (), *, root: Path | None = None
) -> Path:
    """The cached ONNX file of ``model_path`` returning the head's word-piece states (exported when missing).

    Args:
        model_path: The HF model directory (the shipped all-MiniLM-L6-v2 by default in callers).
        layers: Hidden states averaged into the first group (0 = embeddings).
        extra_layers: Hidden states averaged into a second group, concatenated (empty: none).
        root: Cache root (default :func:`~opinio_agents.embeddings.onnx.cache_dir`).

    Raises:
        MissingDependencyError: When the file must be made and ``onnx`` is missing.
        ConfigError: When the export fails.
    """
    from opinio_agents.embeddings.local import model_fingerprint
    from opinio_agents.embeddings.onnx import _writable, cache_dir

    model_path = Path(model_path)
    tag = "L" + "".join(map(str, layers)) + ("-E" + "".join(map(str, extra_layers)) if extra_layers else "")
    name = f"triplet-features-{model_path.name[:40]}-{model_fingerprint(model_path)}-{tag}-v{FEATURES_VERSION}"
    target = (root or cache_dir()) / "onnx" / name / "features.onnx"
    if target.is_file():
        return target
    with _LOCK:  # one export per process; racing processes each rename a whole file
        folder = _writable(target.parent)
        target = folder / "features.onnx"
        if not target.is_file():
            _export_features(model_path, tuple(layers), tuple(extra_layers), target)
            (folder / "source.json").write_text(
                json.dumps({"model": str(model_path), "layers": list(layers), "extra_layers": list(extra_layers),
                            "version": FEATURES_VERSION}),
                "utf-8",
            )
    return target


def _export(module: Any, args: tuple[Any, ...], target: Path, names: tuple[list[str], list[str]],
            axes: dict[str, dict[int, str]], what: str) -> None:
    """``torch.onnx.export`` of ``module`` to ``target``, written to a temporary name and renamed."""
    import torch

    from opinio_agents.embeddings.onnx import _OPSET

    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                module, args, str(tmp), input_names=names[0], output_names=names[1], dynamic_axes=axes,
                opset_version=_OPSET, dynamo=False,
            )
        os.replace(tmp, target)
    except Exception as exc:
        raise ConfigError(
            f"exporting {what} to ONNX failed ({type(exc).__name__}: {exc}); "
            f"use EmbeddedTripletExtractor(runtime='torch') (${RUNTIME_ENV}=torch)"
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)


def _need_onnx(what: str) -> None:
    try:
        import onnx  # noqa: F401  (torch.onnx needs it to write the file)
    except ImportError as exc:
        raise MissingDependencyError("onnx", purpose=f"exporting {what} to ONNX") from exc
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _export_features(model_path: Path, layers: tuple[int, ...], extra: tuple[int, ...], target: Path) -> None:
    _need_onnx("the triplet encoder")
    import torch
    from transformers import AutoModel

    from opinio_agents.embeddings.local import quiet_transformers

    quiet_transformers()
    model = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()

    class States(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            out = self.inner(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=torch.zeros_like(input_ids),
                output_hidden_states=True,
            )
            hidden = torch.stack([out.hidden_states[i] for i in layers], dim=0).mean(0)
            if extra:
                more = torch.stack([out.hidden_states[i] for i in extra], dim=0).mean(0)
                hidden = torch.cat([hidden, more], dim=-1)
            return hidden

    ids = torch.ones((2, 8), dtype=torch.long)
    _export(
        States(model), (ids, torch.ones_like(ids)), target, (["input_ids", "attention_mask"], ["states"]),
        {"input_ids": {0: "batch", 1: "pieces"}, "attention_mask": {0: "batch", 1: "pieces"},
         "states": {0: "batch", 1: "pieces"}},
        f"the triplet encoder {model_path}",
    )


def prepare_heads_onnx(weights_dir: Path, torch_heads: Callable[[], list[Any]], *, root: Path | None = None) -> Path:
    """The cached ONNX file of the head ensemble's word states and tag log-probabilities (exported when missing).

    One graph runs every member's projection, convolutions and packed bidirectional LSTM
    (ONNX ``LSTM`` with per-row lengths) and the ensemble-mean tag log-probabilities; the
    key is a digest of the weight files. ``torch_heads`` loads the torch heads to export (called only then).

    Raises:
        MissingDependencyError: When the file must be made and ``onnx`` is missing.
        ConfigError: When the export fails.
    """
    from opinio_agents.embeddings.onnx import _writable, cache_dir
    name = f"triplet-heads-{files_digest(weights_dir)}-v{FEATURES_VERSION}"
    target = (root or cache_dir()) / "onnx" / name / "heads.onnx"
    if target.is_file():
        return target
    with _LOCK:
        folder = _writable(target.parent)
        target = folder / "heads.onnx"
        if not target.is_file():
            _export_heads(weights_dir, torch_heads(), target)
    return target


def _export_heads(weights_dir: Path, heads: list[Any], target: Path) -> None:
    _need_onnx("the triplet heads")
    import torch

    from opinio_agents.triplets.decode import _mean_log_probs
    from opinio_agents.triplets.head import TripletHead

    class Heads(torch.nn.Module):
        def __init__(self, heads: list[Any]) -> None:
            super().__init__()
            self.heads = torch.nn.ModuleList(heads)

        def forward(self, feats: Any, mask: Any) -> Any:
            states, aspect, opinion = [], [], []
            for head in self.heads:
                assert isinstance(head, TripletHead)
                word_states = head.encode(feats, mask)
                a, o = head.tag_logits(word_states)
                states.append(word_states)
                aspect.append(a)
                opinion.append(o)
            return torch.stack(states), _mean_log_probs(aspect), _mean_log_probs(opinion)

    width = heads[0].proj.in_features
    mask = torch.tensor([[True] * 8, [True] * 5 + [False] * 3])
    _export(
        Heads(heads).eval(), (torch.zeros(2, 8, width), mask), target,
        (["feats", "mask"], ["states", "aspect_log_probs", "opinion_log_probs"]),
        {"feats": {0: "batch", 1: "words"}, "mask": {0: "batch", 1: "words"}, "states": {1: "batch", 2: "words"},
         "aspect_log_probs": {0: "batch", 1: "words"}, "opinion_log_probs": {0: "batch", 1: "words"}},
        f"the triplet heads of {weights_dir}",
    )


def _session(path: Path, threads: int | None) -> onnxruntime.InferenceSession:
    """An ONNX Runtime CPU session (threads: ``threads``, else ``$OPINIO_ENCODER_THREADS``; no busy-waiting)."""
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise MissingDependencyError("onnxruntime", purpose="the onnx triplet runtime") from exc
    from opinio_agents.embeddings.onnx import _env_threads

    options = ort.SessionOptions()
    threads = threads if threads is not None else _env_threads()
    if threads:
        options.intra_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


class OnnxWordFeatures:
    """Per-word features of pre-tokenized sentences from the exported encoder (see the module doc).

    Args:
        model_path: The HF model directory (with ``tokenizer.json``).
        layers: The head's ``encoder_layers``.
        extra_layers: The head's ``extra_layers``.
        threads: ONNX Runtime intra-op threads (None: ``$OPINIO_ENCODER_THREADS``, else its choice).
    """

    def __init__(
        self, model_path: str | Path, layers: Sequence[int], extra_layers: Sequence[int] = (),
        *, threads: int | None = None,
    ) -> None:
        self.path = Path(model_path)
        if not (self.path / "tokenizer.json").is_file():
            raise ConfigError(f"{self.path} has no tokenizer.json, which the onnx triplet runtime needs; "
                              "use runtime='torch'")
        self.layers = tuple(layers)
        self.extra_layers = tuple(extra_layers)
        self.threads = threads
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[onnxruntime.InferenceSession, Tokenizer]:
        with self._lock:
            if self._session is None or self._tokenizer is None:
                from tokenizers import Tokenizer

                from opinio_agents.triplets.features import MAX_PIECES

                path = prepare_features_onnx(self.path, self.layers, self.extra_layers)
                self._session = _session(path, self.threads)
                tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
                tokenizer.enable_truncation(max_length=MAX_PIECES)
                pad_id = tokenizer.token_to_id("[PAD]")
                tokenizer.enable_padding(pad_id=pad_id if pad_id is not None else 0, pad_token="[PAD]")
                self._tokenizer = tokenizer
            return self._session, self._tokenizer

    def encode_words(self, sentences: Sequence[Sequence[str]], *, max_words: int = 200) -> list[np.ndarray]:
        """One float32 ``(n_words, dim)`` array per sentence (longer sentences in chunks of ``max_words`` words)."""
        from opinio_agents.triplets.features import split_chunks

        session, tokenizer = self._load()
        chunks, owners = split_chunks(sentences, max_words)
        encodings = tokenizer.encode_batch([list(c) for c in chunks], is_pretokenized=True)
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]  # (B, P, D)
        parts: list[list[np.ndarray]] = [[] for _ in sentences]
        with one_blas_thread():
            for row, (chunk, owner) in enumerate(zip(chunks, owners, strict=True)):
                words = np.asarray([-1 if w is None else w for w in encodings[row].word_ids])
                pool = (np.arange(len(chunk))[:, None] == words[None, :]).astype(np.float32)  # (W, P)
                pool /= np.maximum(pool.sum(-1, keepdims=True), 1.0)
                parts[owner].append(pool @ hidden[row])
        return [p[0] if len(p) == 1 else np.concatenate(p, axis=0) for p in parts]


def one_blas_thread() -> contextlib.AbstractContextManager[Any]:
    """BLAS limited to one thread while the head runs (threadpoolctl; a no-op without it).

    The head's matrices are small (tens of rows): OpenBLAS's threads cost more than they
    save there, and on a busy machine their waiting made the head ten times slower. The limit
    is process-wide while it lasts (threadpoolctl has no per-thread one).
    """
    global _CONTROLLER
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # pragma: no cover - a core dependency
        return contextlib.nullcontext()
    with _LOCK:
        if _CONTROLLER is None:
            _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def _matmul(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """``x @ weight`` over the last axis as one 2-D BLAS call (NumPy's stacked matmul is slow on slices)."""
    flat = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
    return (flat @ weight).reshape(*x.shape[:-1], weight.shape[1])


def _gelu(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf  # imported when the heads load (0.2 s), not on the first sentence

    return (0.5 * x * (1.0 + erf(x * _SQRT_HALF))).astype(np.float32, copy=False)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _prefix(states: np.ndarray) -> np.ndarray:
    """``(B, T + 1, D)`` prefix sums of word states over words (for range means)."""
    return np.concatenate([np.zeros_like(states[:, :1]), np.cumsum(states, axis=1, dtype=np.float32)], axis=1)


def _range_mean(prefix: np.ndarray, rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Mean of the word states ``lo:hi`` of each row (zeros for empty ranges), from :func:`_prefix`."""
    total = prefix[rows, hi] - prefix[rows, lo]
    return total / np.maximum(hi - lo, 1)[:, None].astype(np.float32)


class _Spans:
    """Distinct ``(row, span)`` items of a batch's candidate pairs and where each pair's items are."""

    def __init__(self, rows: Sequence[int], spans: Sequence[tuple[int, int]]) -> None:
        index: dict[tuple[int, tuple[int, int]], int] = {}
        self.of_pair = np.asarray([index.setdefault((r, sp), len(index)) for r, sp in zip(rows, spans, strict=True)])
        self.rows = np.asarray([r for r, _ in index])
        self.first = np.asarray([sp[0] for _, sp in index])
        self.last = np.asarray([sp[1] for _, sp in index])


class _Head:
    """One head's span and pair classifiers (float32), as :class:`~opinio_agents.triplets.head.TripletHead` has them."""

    def __init__(self, config: HeadConfig, weights: dict[str, np.ndarray]) -> None:
        self.config = config
        self.w = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in weights.items()}
        for key in [k for k in self.w if self.w[k].ndim == 2]:
            self.w[key + ".T"] = np.ascontiguousarray(self.w[key].T)

    def _linear(self, name: str, x: np.ndarray) -> np.ndarray:
        return _matmul(x, self.w[f"{name}.weight.T"]) + self.w[f"{name}.bias"]

    def spans(self, name: str, states: np.ndarray, prefix: np.ndarray, items: _Spans) -> np.ndarray:
        """Span representations of the distinct items (``aspect_span`` or ``opinion_span``)."""
        r, first, last = items.rows, items.first, items.last
        vectors = np.concatenate([states[r, first], states[r, last], _range_mean(prefix, r, first, last + 1)], -1)
        return _gelu(self._linear(f"{name}.0", vectors))

    def pair_logits(
        self, states: np.ndarray, prefix: np.ndarray, aspects: _Spans, opinions: _Spans, geometry: _Geometry
    ) -> np.ndarray:
        """``(N, 4)`` pair-class logits (``TripletHead.pair_logits``)."""
        a = self.spans("aspect_span", states, prefix, aspects)[aspects.of_pair]
        o = self.spans("opinion_span", states, prefix, opinions)[opinions.of_pair]
        between = _range_mean(prefix, geometry.rows, geometry.lo, geometry.hi)
        feats = np.concatenate(
            [
                a,
                o,
                a * o,
                self._linear("between", between),
                self.w["dist_emb.weight"][geometry.dists],
                self.w["order_emb.weight"][geometry.orders],
            ],
            -1,
        )
        return self._linear("pair_mlp.3", _gelu(self._linear("pair_mlp.0", feats)))

    def opinion_polarity_logits(self, states: np.ndarray, prefix: np.ndarray, opinions: _Spans) -> np.ndarray:
        """``(N, 3)`` opinion sentiment logits."""
        vectors = self.spans("opinion_span", states, prefix, opinions)[opinions.of_pair]
        return self._linear("opinion_polarity", vectors)


class _Geometry:
    """Words between each pair's aspect and opinion, their distance bucket and order (as ``TripletHead``)."""

    def __init__(self, rows: Sequence[int], aspects: Sequence[tuple[int, int]], opinions: Sequence[tuple[int, int]]):
        lo, hi, dists, orders = pair_geometry(aspects, opinions)
        self.rows, self.lo, self.hi = np.asarray(rows), np.asarray(lo), np.asarray(hi)
        self.dists, self.orders = np.asarray(dists), np.asarray(orders)


class OnnxHeads:
    """The head ensemble without torch: word states and tags on ONNX Runtime, span pairs in NumPy.

    Args:
        config: The heads' shared config.
        members: One state dict (name -> array, as ``TripletHead.state_dict`` saves it) per head.
        graph: The file of :func:`prepare_heads_onnx` for these heads.
        threads: ONNX Runtime intra-op threads (None: ``$OPINIO_ENCODER_THREADS``, else its choice).

    Raises:
        ConfigError: For heads with fine-tuned encoder layers (the torch runtime runs those).
    """

    def __init__(
        self, config: HeadConfig, members: Sequence[dict[str, np.ndarray]], graph: Path, *, threads: int | None = None
    ) -> None:
        if config.finetuned_layers:
            raise ConfigError("heads with fine-tuned encoder layers need runtime='torch'")
        if not members:
            raise ConfigError("an ensemble needs at least one triplet head")
        self.config = config
        self.heads = [_Head(config, m) for m in members]
        self.session = _session(graph, threads)

    @classmethod
    def load(
        cls, directory: Path, config: HeadConfig, files: Sequence[str], *, torch_heads: Callable[[], list[Any]]
    ) -> OnnxHeads:
        """Read the member files of ``directory`` (``safetensors.numpy``) and the cached graph.

        ``torch_heads`` loads the torch heads, called only when the graph must be exported.
        """
        import scipy.special  # noqa: F401  (for _gelu: part of loading, not of the first extraction)
        from safetensors.numpy import load_file

        members = [load_file(str(directory / name)) for name in files]
        return cls(config, members, prepare_heads_onnx(directory, torch_heads))

    def predict(
        self, feats: Sequence[np.ndarray], *, implicit_aspects: bool = True, max_spans: int = 16
    ) -> list[list[SpanPrediction]]:
        """Span triplets of each sentence's ``(n_words, dim)`` features (as ``decode.predict_spans``)."""
        if not feats:
            return []
        lengths = [int(f.shape[0]) for f in feats]
        batch = np.zeros((len(feats), max(lengths), feats[0].shape[-1]), dtype=np.float32)
        mask = np.zeros((len(feats), max(lengths)), dtype=bool)
        for i, f in enumerate(feats):
            batch[i, : lengths[i]] = f
            mask[i, : lengths[i]] = True
        states, aspect, opinion = self.session.run(None, {"feats": batch, "mask": mask})

        members = list(zip(self.heads, states, [_prefix(s) for s in states], strict=True))

        def averaged(probs: list[np.ndarray]) -> np.ndarray:
            return probs[0] if len(probs) == 1 else np.asarray(np.mean(probs, axis=0, dtype=np.float32))

        def pairs(rows: list[int], a: list[tuple[int, int]], o: list[tuple[int, int]]) -> np.ndarray:
            spans_a, spans_o, geometry = _Spans(rows, a), _Spans(rows, o), _Geometry(rows, a, o)
            return averaged([_softmax(h.pair_logits(s, p, spans_a, spans_o, geometry)) for h, s, p in members])

        def polarity(rows: list[int], o: list[tuple[int, int]]) -> np.ndarray:
            spans_o = _Spans(rows, o)
            return averaged([_softmax(h.opinion_polarity_logits(s, p, spans_o)) for h, s, p in members])

        with one_blas_thread():
            return decode_batch(
                aspect,
                opinion,
                lengths,
                pairs,
                polarity,
                DecodeSettings.from_config(self.config),
                implicit_aspects=implicit_aspects,
                max_spans=max_spans,
            )
