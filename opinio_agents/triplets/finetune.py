"""Fine-tuning the top transformer layers of the frozen encoder together with the triplet head.

The head of :mod:`opinio_agents.triplets.head` reads word features that average
selected hidden states of MiniLM (default layers 3-6). Training only the head
leaves the encoder frozen; this module lets the top ``k`` transformer layers
train as well, cheaply on CPU:

* :func:`piece_features` runs the frozen lower part once per sentence and keeps
  the word-piece states entering the first trained layer, plus the (already
  pooled) sum of the selected frozen layers;
* :class:`EncoderTop` holds trainable copies of the top layers and turns those
  cached states into the same word features :func:`~opinio_agents.triplets.features.encode_words`
  computes at inference (same layer average, same word-piece mean pooling);
* :func:`tuned_encoder` builds, for inference, a copy of the encoder whose top
  layers carry the fine-tuned weights (``encoder_top.safetensors``).

Import this module only when torch is wanted.

Example:
    >>> top_layer_indices(n_transformer_layers=6, k=2)
    (4, 5)
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from opinio_agents.errors import ConfigError
from opinio_agents.triplets.features import HFEncoder

__all__ = [
    "ENCODER_TOP_FILE",
    "PieceFeatures",
    "EncoderTop",
    "top_layer_indices",
    "piece_features",
    "tuned_encoder",
]

#: File (beside ``head.safetensors``) with the fine-tuned encoder layers.
ENCODER_TOP_FILE = "encoder_top.safetensors"


def top_layer_indices(n_transformer_layers: int, k: int) -> tuple[int, ...]:
    """0-based indices (into ``encoder.layer``) of the top ``k`` transformer layers.

    Raises:
        ConfigError: When ``k`` is not in ``[1, n_transformer_layers]``.
    """
    if not 1 <= k <= n_transformer_layers:
        raise ConfigError(
            f"finetune_layers must be in [1, {n_transformer_layers}], got {k}"
        )
    return tuple(range(n_transformer_layers - k, n_transformer_layers))


@dataclass
class PieceFeatures:
    """Cached frozen part of one sentence's encoding.

    Attributes:
        low: ``(n_words, dim)`` sum of the selected hidden states that the
            trained layers do not change, mean-pooled to words.
        pieces: ``(n_pieces, dim)`` hidden states entering the first trained layer.
        word_ids: ``(n_pieces,)`` word index of each piece, -1 for special pieces.
    """

    low: torch.Tensor
    pieces: torch.Tensor
    word_ids: torch.Tensor


def _pool_matrix(word_ids: torch.Tensor, n_words: int) -> torch.Tensor:
    """``(B, W, P)`` mean-pooling matrix from ``(B, P)`` word ids (-1 = ignore)."""
    shifted = (word_ids + 1).clamp(min=0)
    one_hot = nn.functional.one_hot(shifted, num_classes=n_words + 1)[..., 1:]  # (B, P, W)
    pool = one_hot.transpose(1, 2).to(torch.float32)
    return pool / pool.sum(-1, keepdim=True).clamp(min=1.0)


@torch.inference_mode()
def piece_features(
    encoder: HFEncoder,
    sentences: Sequence[Sequence[str]],
    *,
    layers: Sequence[int],
    first_trained: int,
) -> list[PieceFeatures]:
    """Frozen part of the encoding of pre-tokenized sentences (each non-empty, < 512 pieces).

    Args:
        encoder: The frozen encoder.
        sentences: One list of words per sentence.
        layers: Hidden-state indices averaged into the word features (0 = embeddings).
        first_trained: 0-based index of the first trained transformer layer; its
            input is hidden state ``first_trained``.
    """
    batch = encoder.tokenizer(
        [list(s) for s in sentences],
        is_split_into_words=True,
        truncation=True,
        max_length=512,
        padding=True,
        return_tensors="pt",
    )
    out = encoder.model(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        token_type_ids=batch.get("token_type_ids"),
        output_hidden_states=True,
    )
    frozen = [i for i in layers if i <= first_trained]
    n_words = max(len(s) for s in sentences)
    ids = torch.tensor(
        [[-1 if w is None else w for w in batch.word_ids(row)] for row in range(len(sentences))]
    )
    pool = _pool_matrix(ids, n_words)
    if frozen:
        low = torch.bmm(pool, torch.stack([out.hidden_states[i] for i in frozen]).sum(0))
    else:
        low = torch.zeros(len(sentences), n_words, encoder.dim)
    lengths = batch["attention_mask"].sum(1).tolist()
    return [
        PieceFeatures(
            low=low[row, : len(sentences[row])].clone(),
            pieces=out.hidden_states[first_trained][row, : lengths[row]].clone(),
            word_ids=ids[row, : lengths[row]].clone(),
        )
        for row in range(len(sentences))
    ]


class EncoderTop(nn.Module):
    """Trainable copies of the encoder's top layers, producing word features.

    Args:
        encoder: The frozen encoder (its layers are copied, not changed).
        trained: 0-based indices of the trained layers (consecutive, ending at the last).
        layers: Hidden-state indices averaged into the word features.
    """

    def __init__(self, encoder: HFEncoder, trained: Sequence[int], layers: Sequence[int]) -> None:
        super().__init__()
        n = len(encoder.model.encoder.layer)
        if list(trained) != list(range(n - len(trained), n)):
            raise ConfigError(f"trained layers must be the top ones of {n}, got {tuple(trained)}")
        self.trained = tuple(trained)
        self.layers = tuple(layers)
        self.config = encoder.model.config
        self.blocks = nn.ModuleList(copy.deepcopy(encoder.model.encoder.layer[i]) for i in trained)
        self.blocks.requires_grad_(True)

    def forward(self, items: Sequence[PieceFeatures]) -> tuple[torch.Tensor, torch.Tensor]:
        """Padded word features ``(B, W, dim)`` and the ``(B, W)`` word mask."""
        from transformers.masking_utils import create_bidirectional_mask

        dim = items[0].pieces.shape[-1]
        p_max = max(it.pieces.shape[0] for it in items)
        w_max = max(it.low.shape[0] for it in items)
        x = torch.zeros(len(items), p_max, dim)
        piece_mask = torch.zeros(len(items), p_max, dtype=torch.long)
        ids = torch.full((len(items), p_max), -1, dtype=torch.long)
        low = torch.zeros(len(items), w_max, dim)
        word_mask = torch.zeros(len(items), w_max, dtype=torch.bool)
        for row, it in enumerate(items):
            n = it.pieces.shape[0]
            x[row, :n] = it.pieces.float()
            piece_mask[row, :n] = 1
            ids[row, :n] = it.word_ids
            low[row, : it.low.shape[0]] = it.low.float()
            word_mask[row, : it.low.shape[0]] = True
        attention = create_bidirectional_mask(
            config=self.config, inputs_embeds=x, attention_mask=piece_mask
        )
        pool = _pool_matrix(ids, w_max)
        total = low
        hidden = x
        for index, block in zip(self.trained, self.blocks, strict=True):
            hidden = block(hidden, attention)
            if isinstance(hidden, tuple):  # older transformers return tuples
                hidden = hidden[0]
            if index + 1 in self.layers:
                total = total + torch.bmm(pool, hidden)
        return total / len(self.layers), word_mask

    def hf_state_dict(self) -> dict[str, torch.Tensor]:
        """The trained weights under the encoder's own parameter names."""
        out: dict[str, torch.Tensor] = {}
        for index, block in zip(self.trained, self.blocks, strict=True):
            for key, value in block.state_dict().items():
                out[f"encoder.layer.{index}.{key}"] = value
        return out


def tuned_encoder(encoder: HFEncoder, weights_file: Path, trained: Sequence[int]) -> HFEncoder:
    """A copy of ``encoder`` whose ``trained`` layers carry the weights in ``weights_file``.

    Raises:
        ConfigError: When the file is missing or does not match the encoder.
    """
    if not weights_file.is_file():
        raise ConfigError(
            f"fine-tuned encoder layers {str(weights_file)!r} not found; the head's config.json "
            "names fine-tuned layers, so ship the file written by scripts/train_triplets.py beside it"
        )
    from safetensors.torch import load_file

    state = {k: v.float() for k, v in load_file(str(weights_file)).items()}
    expected = {
        k for k in encoder.model.state_dict() if any(k.startswith(f"encoder.layer.{i}.") for i in trained)
    }
    if set(state) != expected:
        raise ConfigError(
            f"{str(weights_file)!r} does not match the encoder's layers {tuple(trained)}; "
            "retrain with scripts/train_triplets.py for this encoder"
        )
    model = copy.deepcopy(encoder.model)
    model.load_state_dict(state, strict=False)
    model.eval()
    return HFEncoder(path=encoder.path, tokenizer=encoder.tokenizer, model=model)
