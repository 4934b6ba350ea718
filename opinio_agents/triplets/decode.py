"""Turn triplet-head outputs into span triplets.

Pipeline (:func:`decode_batch`, shared by the torch head, :func:`predict_spans`, and the
torch-free runtime, :mod:`opinio_agents.triplets.runtime`):

1. tag probabilities: each head's aspect and opinion BIO distributions
   (averaged over the heads of an ensemble);
2. candidate spans: the BIO decoding of the (biased) tags, plus, when
   ``span_threshold`` <= 1, every other span of at most ``max_span_words``
   words whose *marginal* probability ``P(B_i) * prod P(I_k) * (1 - P(I_{j+1}))``
   reaches the threshold (overlapping alternatives the argmax missed);
3. every (aspect, opinion) candidate pair is classified (probabilities averaged
   over the heads); a pair is kept when its probability of "none" is below
   ``pair_threshold``, with its most likely sentiment;
4. overlap resolution: a kept pair whose aspect *and* opinion overlap those of a
   more probable kept pair is dropped (two readings of the same triplet);
5. opinions left without an aspect become implicit-aspect triplets (aspect
   ``None``) whose sentiment comes from the opinion-polarity classifier.

The decoding settings (:class:`DecodeSettings`) come from the head's config,
where training stores them after calibrating on held-out training sentences.
The decoding itself works on NumPy arrays (torch tensors are accepted and read as
arrays); only :func:`pad_features`, :func:`score_batch`, :func:`pair_probabilities`
and :func:`predict_spans` need torch, and import it when called.

Example:
    >>> import torch
    >>> from opinio_agents.triplets.head import HeadConfig, TripletHead
    >>> head = TripletHead(HeadConfig()).eval()
    >>> out = predict_spans(head, [torch.zeros(3, 384)])
    >>> len(out)
    1
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from opinio_agents.errors import ConfigError
from opinio_agents.triplets.headconfig import PAIR_LABELS, HeadConfig
from opinio_agents.triplets.spans import B, I, decode_bio

if TYPE_CHECKING:  # pragma: no cover
    import torch

    from opinio_agents.triplets.head import TripletHead

__all__ = [
    "SpanPrediction",
    "DecodeSettings",
    "BatchScores",
    "as_heads",
    "pad_features",
    "marginal_spans",
    "candidate_spans",
    "resolve_overlaps",
    "select_pairs",
    "score_batch",
    "pair_probabilities",
    "predict_spans",
    "decode_batch",
]

#: (aspect span or None when implicit, opinion span, sentiment)
SpanPrediction = tuple[tuple[int, int] | None, tuple[int, int], int]
Span = tuple[int, int]


@dataclass(frozen=True)
class DecodeSettings:
    """Decoding decisions (calibrated after training and stored in the head's config).

    Attributes:
        aspect_bias: Added to the B and I log-probabilities of the aspect tagger
            (> 0 favours spans, i.e. recall).
        opinion_bias: The same for the opinion tagger.
        pair_threshold: A pair is kept when its probability of "none" is below this.
        span_threshold: Extra candidate spans need this marginal probability
            (values above 1 disable them: plain BIO decoding).
        max_span_words: Longest extra candidate span, in words.

    Example:
        >>> DecodeSettings.from_config(HeadConfig()).pair_threshold
        0.5
    """

    aspect_bias: float = 0.0
    opinion_bias: float = 0.0
    pair_threshold: float = 0.5
    span_threshold: float = 1.01
    max_span_words: int = 6

    @classmethod
    def from_config(cls, config: HeadConfig) -> DecodeSettings:
        """The settings stored in a head's config."""
        return cls(
            aspect_bias=config.aspect_bias,
            opinion_bias=config.opinion_bias,
            pair_threshold=config.pair_threshold,
            span_threshold=config.span_threshold,
            max_span_words=config.max_span_words,
        )


def as_heads(head: TripletHead | Sequence[TripletHead]) -> list[TripletHead]:
    """One head or an ensemble of heads, as a non-empty list.

    Raises:
        ConfigError: For an empty sequence.
    """
    from opinio_agents.triplets.head import TripletHead

    heads = [head] if isinstance(head, TripletHead) else list(head)
    if not heads:
        raise ConfigError("an ensemble needs at least one triplet head")
    return heads


def pad_features(feats: Sequence[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack ``(T_i, D)`` tensors into ``(B, T_max, D)`` plus a ``(B, T_max)`` mask."""
    import torch

    dim = feats[0].shape[-1]
    t_max = max(f.shape[0] for f in feats)
    batch = torch.zeros(len(feats), t_max, dim)
    mask = torch.zeros(len(feats), t_max, dtype=torch.bool)
    for i, f in enumerate(feats):
        batch[i, : f.shape[0]] = f
        mask[i, : f.shape[0]] = True
    return batch, mask


def _as_array(values: Any) -> np.ndarray:
    """A float32 array of an array or a torch tensor (detached and on the CPU first)."""
    detach = getattr(values, "detach", None)
    return np.asarray(detach().cpu() if callable(detach) else values, dtype=np.float32)


def marginal_spans(
    log_probs: Any, *, threshold: float, max_words: int = 6
) -> list[tuple[Span, float]]:
    """Spans whose marginal probability under independent BIO tags reaches ``threshold``.

    The probability of span ``i..j`` is ``P(B_i) * P(I_{i+1}) ... P(I_j) *
    (1 - P(I_{j+1}))`` (the next word does not continue it).

    Args:
        log_probs: ``(n_words, 3)`` float32 log-probabilities over (O, B, I) (an array or a CPU tensor).
        threshold: Minimum span probability (> 1 returns nothing).
        max_words: Longest span considered.

    Returns:
        ``((first, last), probability)`` pairs, most probable first.

    Example:
        >>> lp = np.log(np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.5, 0.1, 0.4]], dtype=np.float32))
        >>> [(s, round(p, 2)) for s, p in marginal_spans(lp, threshold=0.3)]
        [((1, 1), 0.48), ((1, 2), 0.32)]
    """
    lp = _as_array(log_probs)
    n = lp.shape[0]
    if threshold > 1.0 or n == 0 or max_words < 1:
        return []
    log_b = lp[:, B]
    log_i = lp[:, I]
    # log(1 - P(I)) of the word after each span end (1 for the sentence end).
    not_i = np.log1p(-np.minimum(np.exp(log_i), np.float32(1.0 - 1e-6)))
    end = np.concatenate([not_i[1:], np.zeros(1, np.float32)])
    cum_i = np.concatenate([np.zeros(1, np.float32), np.cumsum(log_i, dtype=np.float32)])
    floor = np.float32(math.log(max(threshold, 1e-12)))
    found: list[tuple[Span, float]] = []
    for length in range(1, min(max_words, n) + 1):
        first = np.arange(0, n - length + 1)
        last = first + length - 1
        score = log_b[first] + (cum_i[last + 1] - cum_i[first + 1]) + end[last]
        for k in np.flatnonzero(score >= floor).tolist():
            found.append(((int(first[k]), int(last[k])), float(np.exp(score[k]))))
    found.sort(key=lambda item: (-item[1], item[0]))
    return found


def _biased_tags(log_probs: np.ndarray, bias: float) -> list[int]:
    """The argmax BIO tags after adding ``bias`` to the B and I log-probabilities."""
    return (log_probs + np.array([0.0, bias, bias], dtype=np.float32)).argmax(-1).tolist()


def candidate_spans(
    log_probs: Any,
    *,
    bias: float = 0.0,
    span_threshold: float = 1.01,
    max_words: int = 6,
    max_spans: int = 16,
) -> list[Span]:
    """Candidate spans of one sentence: the biased BIO decoding, then marginal extras.

    Args:
        log_probs: ``(n_words, 3)`` float32 tag log-probabilities over (O, B, I) (an array or a CPU tensor).
        bias: Added to the B and I log-probabilities before the argmax.
        span_threshold: Marginal probability of an extra span (see :func:`marginal_spans`).
        max_words: Longest extra span.
        max_spans: At most this many spans (BIO spans first).

    Example:
        >>> lp = np.log(np.array([[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.5, 0.1, 0.4]], dtype=np.float32))
        >>> candidate_spans(lp), candidate_spans(lp, span_threshold=0.3)
        ([(1, 1)], [(1, 1), (1, 2)])
    """
    lp = _as_array(log_probs)
    spans = decode_bio(_biased_tags(lp, bias))[:max_spans]
    if span_threshold <= 1.0 and len(spans) < max_spans:
        seen = set(spans)
        for span, _ in marginal_spans(lp, threshold=span_threshold, max_words=max_words):
            if span not in seen:
                seen.add(span)
                spans.append(span)
                if len(spans) >= max_spans:
                    break
    return spans


def _overlaps(x: Span, y: Span) -> bool:
    return x[0] <= y[1] and y[0] <= x[1]


def resolve_overlaps(
    pairs: Sequence[tuple[Span, Span, int, float]],
) -> list[tuple[Span, Span, int, float]]:
    """Keep the most probable reading when kept pairs overlap in both aspect and opinion.

    Args:
        pairs: ``(aspect, opinion, sentiment, probability)`` of one sentence.

    Returns:
        The surviving pairs, most probable first.

    Example:
        >>> resolve_overlaps([((0, 0), (2, 2), 1, 0.6), ((0, 1), (2, 2), 1, 0.9), ((4, 4), (2, 2), 1, 0.7)])
        [((0, 1), (2, 2), 1, 0.9), ((4, 4), (2, 2), 1, 0.7)]
    """
    kept: list[tuple[Span, Span, int, float]] = []
    for pair in sorted(pairs, key=lambda p: (-p[3], p[0], p[1])):
        if not any(_overlaps(pair[0], k[0]) and _overlaps(pair[1], k[1]) for k in kept):
            kept.append(pair)
    return kept


@dataclass
class BatchScores:
    """What the heads say about one padded batch.

    Attributes:
        states: Per head, ``(B, T, hidden)`` word states.
        aspect_log_probs: ``(B, T, 3)`` aspect tag log-probabilities (ensemble mean).
        opinion_log_probs: ``(B, T, 3)`` opinion tag log-probabilities (ensemble mean).
    """

    states: list[torch.Tensor]
    aspect_log_probs: torch.Tensor
    opinion_log_probs: torch.Tensor


def _mean_log_probs(logits: Sequence[torch.Tensor]) -> torch.Tensor:
    import torch

    if len(logits) == 1:
        return logits[0].log_softmax(-1)
    return torch.stack([x.softmax(-1) for x in logits]).mean(0).clamp(min=1e-12).log()


def score_batch(heads: Sequence[TripletHead], feats: Sequence[torch.Tensor]) -> BatchScores:
    """Word states and ensemble-mean tag log-probabilities of a batch of sentences."""
    batch, mask = pad_features(feats)
    states, a_logits, o_logits = [], [], []
    for head in heads:
        s = head.encode(batch, mask)
        a, o = head.tag_logits(s)
        states.append(s)
        a_logits.append(a)
        o_logits.append(o)
    return BatchScores(states, _mean_log_probs(a_logits), _mean_log_probs(o_logits))


def pair_probabilities(
    heads: Sequence[TripletHead],
    states: Sequence[torch.Tensor],
    rows: list[int],
    aspects: list[Span],
    opinions: list[Span],
) -> torch.Tensor:
    """``(N, 4)`` pair-class probabilities (none, NEG, NEU, POS), averaged over the heads."""
    import torch

    probs = [
        h.pair_logits(s, rows, aspects, opinions).softmax(-1)
        for h, s in zip(heads, states, strict=True)
    ]
    return probs[0] if len(probs) == 1 else torch.stack(probs).mean(0)


def _opinion_polarity(
    heads: Sequence[TripletHead], states: Sequence[torch.Tensor], rows: list[int], opinions: list[Span]
) -> torch.Tensor:
    import torch

    probs = [
        h.opinion_polarity_logits(s, rows, opinions).softmax(-1)
        for h, s in zip(heads, states, strict=True)
    ]
    return probs[0] if len(probs) == 1 else torch.stack(probs).mean(0)


def select_pairs(
    rows: Sequence[int],
    aspects: Sequence[Span],
    opinions: Sequence[Span],
    probs: Any,
    n_sentences: int,
    pair_threshold: float,
) -> list[list[tuple[Span, Span, int, float]]]:
    """Per sentence, the kept ``(aspect, opinion, sentiment, probability)`` pairs.

    A pair is kept when ``P(none) < pair_threshold``; its sentiment is the most
    likely of NEG/NEU/POS; overlapping readings are resolved with
    :func:`resolve_overlaps`. ``probs`` is an ``(N, 4)`` array (or CPU tensor).

    Example:
        >>> p = np.array([[0.2, 0.1, 0.1, 0.6], [0.7, 0.1, 0.1, 0.1]], dtype=np.float32)
        >>> select_pairs([0, 0], [(0, 0), (0, 0)], [(2, 2), (3, 3)], p, 1, 0.5)
        [[((0, 0), (2, 2), 1, 0.8)]]
    """
    found: list[list[tuple[Span, Span, int, float]]] = [[] for _ in range(n_sentences)]
    if not rows:
        return found
    p = _as_array(probs)
    none = p[:, 0].tolist()
    classes = (p[:, 1:].argmax(-1) + 1).tolist()
    for k, i in enumerate(rows):
        label = PAIR_LABELS[classes[k]]
        if none[k] < pair_threshold and label is not None:
            found[i].append((aspects[k], opinions[k], label, round(1.0 - none[k], 6)))
    return [resolve_overlaps(f) if len(f) > 1 else f for f in found]


def decode_batch(
    aspect_log_probs: np.ndarray,
    opinion_log_probs: np.ndarray,
    lengths: Sequence[int],
    pair_probs: Callable[[list[int], list[Span], list[Span]], np.ndarray],
    opinion_polarity: Callable[[list[int], list[Span]], np.ndarray],
    settings: DecodeSettings,
    *,
    implicit_aspects: bool = True,
    max_spans: int = 16,
) -> list[list[SpanPrediction]]:
    """Span triplets of a batch from its ensemble-mean tag log-probabilities (steps 2-5 of the module doc).

    Args:
        aspect_log_probs: ``(B, T, 3)`` float32 aspect tag log-probabilities.
        opinion_log_probs: ``(B, T, 3)`` float32 opinion tag log-probabilities.
        lengths: Words of each sentence.
        pair_probs: ``(rows, aspect spans, opinion spans) -> (N, 4)`` pair-class probabilities.
        opinion_polarity: ``(rows, opinion spans) -> (N, 3)`` (NEG, NEU, POS) probabilities.
        settings: The decoding settings.
        implicit_aspects: Emit opinions that pair with no aspect as implicit triplets.
        max_spans: Keep at most this many aspect (and opinion) spans per sentence.

    Returns:
        Per sentence, a list of ``(aspect_span | None, opinion_span, sentiment)``.
    """
    s = settings
    opinions: list[list[Span]] = []
    rows: list[int] = []
    pair_a: list[Span] = []
    pair_o: list[Span] = []
    for i, n in enumerate(lengths):
        asp = candidate_spans(
            aspect_log_probs[i, :n],
            bias=s.aspect_bias,
            span_threshold=s.span_threshold,
            max_words=s.max_span_words,
            max_spans=max_spans,
        )
        ops = candidate_spans(
            opinion_log_probs[i, :n],
            bias=s.opinion_bias,
            span_threshold=s.span_threshold,
            max_words=s.max_span_words,
            max_spans=max_spans,
        )
        opinions.append(ops)
        for a in asp:
            for o in ops:
                rows.append(i)
                pair_a.append(a)
                pair_o.append(o)
    probs = pair_probs(rows, pair_a, pair_o) if rows else np.zeros((0, 4), dtype=np.float32)
    kept = select_pairs(rows, pair_a, pair_o, probs, len(lengths), s.pair_threshold)
    results: list[list[SpanPrediction]] = [[(a, o, c) for a, o, c, _ in k] for k in kept]
    if implicit_aspects:
        lone = []
        for i, ops in enumerate(opinions):
            used = [o for _, o, _, _ in kept[i]]
            # Extra (marginal) candidates only count when paired: alone they are
            # alternative readings of BIO spans, not opinions of their own.
            bio = set(decode_bio(_biased_tags(opinion_log_probs[i, : lengths[i]], s.opinion_bias)))
            for o in ops:
                if o in bio and not any(_overlaps(o, u) for u in used):
                    lone.append((i, o))
        if lone:
            pol = np.asarray(opinion_polarity([i for i, _ in lone], [o for _, o in lone]))
            for (i, o), c in zip(lone, pol.argmax(-1).tolist(), strict=True):
                results[i].append((None, o, c - 1))
    for r in results:
        r.sort(key=lambda t: (t[1][0], -1 if t[0] is None else t[0][0]))
    return results


def predict_spans(
    head: TripletHead | Sequence[TripletHead],
    feats: Sequence[torch.Tensor],
    *,
    implicit_aspects: bool = True,
    max_spans: int = 16,
    settings: DecodeSettings | None = None,
) -> list[list[SpanPrediction]]:
    """Predict span triplets for a batch of sentences with torch heads.

    Args:
        head: A trained head in eval mode, or an ensemble of heads (probabilities
            are averaged; the first head's config gives the settings).
        feats: Per-sentence ``(n_words, dim)`` features.
        implicit_aspects: Emit opinions that pair with no aspect as implicit triplets.
        max_spans: Keep at most this many aspect (and opinion) spans per sentence.
        settings: Decoding settings; default: those stored in the (first) head's config.

    Returns:
        Per sentence, a list of ``(aspect_span | None, opinion_span, sentiment)``.
    """
    if not feats:
        return []
    import torch

    heads = as_heads(head)
    with torch.inference_mode():
        scores = score_batch(heads, feats)
        return decode_batch(
            scores.aspect_log_probs.numpy(),
            scores.opinion_log_probs.numpy(),
            [int(f.shape[0]) for f in feats],
            lambda rows, a, o: pair_probabilities(heads, scores.states, rows, a, o).numpy(),
            lambda rows, o: _opinion_polarity(heads, scores.states, rows, o).numpy(),
            settings or DecodeSettings.from_config(heads[0].config),
            implicit_aspects=implicit_aspects,
            max_spans=max_spans,
        )
