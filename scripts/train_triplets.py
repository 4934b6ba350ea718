"""Train the embedded AOS triplet head shipped in opinio_agents/triplets/weights.

Usage:
    python scripts/train_triplets.py --seed 13 --epochs 10 --out opinio_agents/triplets/weights

Trains on the union of the ASTE v2 train splits (14lap, 14res, 15res, 16res)
minus a held-out slice (``--holdout``, by sentence hash) on which the epoch is
selected and the decoding calibrated; the dev splits are only scored. With
``--seeds A B C`` one head per seed is trained and shipped as an ensemble
(probabilities averaged). Writes the weights + ``config.json`` into ``--out``.
Frozen encoder features are cached under ``--cache-dir`` (default: the system
temp directory), never in the repository.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from opinio_agents.triplets.features import load_encoder
from opinio_agents.triplets.head import HeadConfig
from opinio_agents.triplets.training import TrainConfig, save_head, train_ensemble


def main() -> None:
    """Parse arguments, train, save."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/aste-v2"
    )
    parser.add_argument("--out", type=Path, default=Path("opinio_agents/triplets/weights"))
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=None,
        help="train one head per seed and ship them as an ensemble (overrides --seed)",
    )
    parser.add_argument(
        "--holdout", type=float, default=0.1,
        help="share of train sentences held out for epoch selection + calibration (0 = use dev)",
    )
    parser.add_argument(
        "--extra-span-threshold", type=float, default=1.01,
        help="near-miss spans of this marginal probability become pair negatives (>1 = off)",
    )
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--lstm-layers", type=int, default=1, help="BiLSTM layers after the convolutions")
    parser.add_argument("--none-weight", type=float, default=1.0, help="loss weight of pair class none")
    parser.add_argument("--outside-weight", type=float, default=1.0, help="loss weight of tag O")
    parser.add_argument("--dropout", type=float, default=0.3)
    parser.add_argument(
        "--finetune-layers", type=int, default=0, help="top encoder layers trained with the head (0 = frozen)"
    )
    parser.add_argument("--encoder-lr", type=float, default=5e-5, help="peak lr of the fine-tuned layers")
    parser.add_argument("--hidden", type=int, default=256, help="head width")
    parser.add_argument(
        "--refit", action="store_true",
        help="after calibrating on the held-out slice, retrain on all train sentences (needs --epoch-selection last)",
    )
    parser.add_argument(
        "--epoch-selection", choices=("best", "last"), default="best",
        help="keep the best epoch on the held-out slice, or the last one",
    )
    parser.add_argument(
        "--extra-layers", type=int, nargs="*", default=[],
        help="second group of encoder hidden states concatenated to layers 3-6 (e.g. 0)",
    )
    parser.add_argument(
        "--calibration-seeds", type=int, nargs="+", default=None,
        help="with --refit: the seeds trained on the held-out split and calibrated as an ensemble "
        "(default: all --seeds); the refit trains every seed with that calibration",
    )
    parser.add_argument(
        "--encoder", default=None,
        help="local HF model directory of the frozen encoder (default: the shipped all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--layers", type=int, nargs="+", default=[3, 4, 5, 6],
        help="encoder hidden states averaged into the first feature group (0 = embeddings)",
    )
    parser.add_argument("--no-calibrate", action="store_true", help="skip the dev calibration")
    parser.add_argument("--dry-run", action="store_true", help="train and report but do not save")
    args = parser.parse_args()
    encoder = load_encoder(args.encoder)
    config = TrainConfig(
        seed=args.seed,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        threads=args.threads,
        none_weight=args.none_weight,
        outside_weight=args.outside_weight,
        calibrate=not args.no_calibrate,
        holdout_fraction=args.holdout,
        extra_span_threshold=args.extra_span_threshold,
        epoch_selection=args.epoch_selection,
        refit=args.refit,
        finetune_layers=args.finetune_layers,
        encoder_lr=args.encoder_lr,
        head=HeadConfig(
            lstm_layers=args.lstm_layers, dropout=args.dropout, hidden=args.hidden,
            extra_layers=tuple(args.extra_layers), encoder_layers=tuple(args.layers), enc_dim=encoder.dim,
        ),
    )
    seeds = args.seeds or [args.seed]
    heads, report = train_ensemble(
        args.data_dir, config, seeds, encoder=encoder, cache_dir=args.cache_dir,
        calibration_seeds=args.calibration_seeds,
    )
    n_params = sum(p.numel() for h in heads for p in h.parameters())
    report["n_parameters"] = n_params
    print(json.dumps(
        {k: v for k, v in report.items() if k not in ("history", "train", "encoder_top", "members", "before_refit")},
        indent=2,
    ))
    if not args.dry_run:
        save_head(heads, report, args.out, encoder=args.encoder)
        print(f"saved to {args.out}")


if __name__ == "__main__":
    main()
