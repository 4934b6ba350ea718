"""Turn :class:`~opinio_agents.triplets.head.TripletHead` outputs into span triplets.

Pipeline: BIO-decode aspect and opinion spans (with the head's calibrated
span biases), classify every (aspect, opinion) pair, keep the pairs whose
probability of "none" is below the head's ``pair_threshold`` (0.5 for
uncalibrated heads) with their most likely sentiment; opinions left without
an aspect become implicit-aspect triplets (aspect ``None``) whose sentiment
comes from the opinion-polarity classifier.

Example:
    >>> import torch
    >>> from opinio_agents.triplets.head import HeadConfig, TripletHead
    >>> head = TripletHead(HeadConfig()).eval()
    >>> out = predict_spans(head, [torch.zeros(3, 384)])
    >>> len(out)
    1
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from opinio_agents.triplets.head import PAIR_LABELS, TripletHead
from opinio_agents.triplets.spans import decode_bio

__all__ = ["SpanPrediction", "pad_features", "predict_spans"]

#: (aspect span or None when implicit, opinion span, sentiment)
SpanPrediction = tuple[tuple[int, int] | None, tuple[int, int], int]


def pad_features(feats: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack ``(T_i, D)`` tensors into ``(B, T_max, D)`` plus a ``(B, T_max)`` mask."""
    dim = feats[0].shape[-1]
    t_max = max(f.shape[0] for f in feats)
    batch = torch.zeros(len(feats), t_max, dim)
    mask = torch.zeros(len(feats), t_max, dtype=torch.bool)
    for i, f in enumerate(feats):
        batch[i, : f.shape[0]] = f
        mask[i, : f.shape[0]] = True
    return batch, mask


def _span_bias(bias: float) -> torch.Tensor:
    """Added to (O, B, I) tag logits: ``bias`` > 0 favours spans (recall), < 0 precision."""
    return torch.tensor([0.0, bias, bias])


@torch.inference_mode()
def predict_spans(
    head: TripletHead,
    feats: Sequence[torch.Tensor],
    *,
    implicit_aspects: bool = True,
    max_spans: int = 16,
) -> list[list[SpanPrediction]]:
    """Predict span triplets for a batch of sentences.

    Args:
        head: A trained head in eval mode.
        feats: Per-sentence ``(n_words, dim)`` features.
        implicit_aspects: Emit opinions that pair with no aspect as implicit triplets.
        max_spans: Keep at most this many aspect (and opinion) spans per sentence.

    Returns:
        Per sentence, a list of ``(aspect_span | None, opinion_span, sentiment)``.
    """
    if not feats:
        return []
    batch, mask = pad_features(feats)
    states = head.encode(batch, mask)
    a_logits, o_logits = head.tag_logits(states)
    config = head.config
    a_tags = (a_logits + _span_bias(config.aspect_bias)).argmax(-1)
    o_tags = (o_logits + _span_bias(config.opinion_bias)).argmax(-1)
    aspects, opinions = [], []
    rows, pair_a, pair_o = [], [], []
    for i, f in enumerate(feats):
        n = f.shape[0]
        asp = decode_bio(a_tags[i, :n].tolist())[:max_spans]
        ops = decode_bio(o_tags[i, :n].tolist())[:max_spans]
        aspects.append(asp)
        opinions.append(ops)
        for a in asp:
            for o in ops:
                rows.append(i)
                pair_a.append(a)
                pair_o.append(o)
    results: list[list[SpanPrediction]] = [[] for _ in feats]
    paired: list[set[tuple[int, int]]] = [set() for _ in feats]
    if rows:
        probs = head.pair_logits(states, rows, pair_a, pair_o).softmax(-1)
        keep = (probs[:, 0] < config.pair_threshold).tolist()
        classes = (probs[:, 1:].argmax(-1) + 1).tolist()
        for i, a, o, c, k in zip(rows, pair_a, pair_o, classes, keep, strict=True):
            label = PAIR_LABELS[c]
            if k and label is not None:
                results[i].append((a, o, label))
                paired[i].add(o)
    if implicit_aspects:
        lone = [(i, o) for i, ops in enumerate(opinions) for o in ops if o not in paired[i]]
        if lone:
            logits = head.opinion_polarity_logits(
                states, [i for i, _ in lone], [o for _, o in lone]
            )
            for (i, o), c in zip(lone, logits.argmax(-1).tolist(), strict=True):
                results[i].append((None, o, c - 1))
    for r in results:
        r.sort(key=lambda t: (t[1][0], -1 if t[0] is None else t[0][0]))
    return results
