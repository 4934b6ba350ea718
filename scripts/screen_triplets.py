"""Screen triplet-head ensembles whose members read different frozen encoders (dev only scored).

Two steps, so that members are trained once and recombined freely:

``train`` fits members of one feature group on the ASTE-V2 train files with the shipped
recipe (:class:`~opinio_agents.triplets.training.TrainConfig`: 10 epochs, last epoch kept,
two-layer BiLSTM, near-miss pair negatives) and saves each member's state dict under
``--members-dir``. Stage ``holdout`` trains on three quarters of the train sentences (the
quarter held out by text hash calibrates the decoding), stage ``refit`` on all of them.

``score`` loads members (``GROUP:SEED,SEED,...``), averages their probabilities (each
member reads its own columns of the concatenated word features), calibrates the decoding
on the held-out quarter with the ``holdout`` members and scores dev; ``--stage refit``
scores the refit members with that calibration (the shipped recipe). ``export`` writes refit
members, so calibrated, as the weights directory of the ``accurate`` extractor (every member a
head over both encoders' features; see :func:`export`).

Feature groups: ``minilm`` (the shipped all-MiniLM-L6-v2, layers 3-6 + 1-2), ``mpnet``
(``--mpnet DIR``, all-mpnet-base-v2: layers 5-12 + 1-4) and ``both`` (one head over the
two groups' features concatenated). Features are cached in the system temp directory.

Usage:
    nice -n 10 python scripts/screen_triplets.py train --group mpnet --mpnet DIR --stage holdout
    nice -n 10 python scripts/screen_triplets.py score --mpnet DIR minilm:13,14,15 mpnet:13,14,15
    nice -n 10 python scripts/screen_triplets.py --mpnet DIR export both:13,14,15,16,17 mpnet:13,14,15,16,17 \
        --out opinio_agents/triplets/weights/accurate
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch

from opinio_agents.triplets import training as tr
from opinio_agents.triplets.decode import DecodeSettings
from opinio_agents.triplets.features import load_encoder
from opinio_agents.triplets.head import HeadConfig, TripletHead

DATA_DIR = Path(__file__).resolve().parents[2] / "shared/data/aste-v2"
#: Feature group -> (encoder layers averaged, extra layers averaged); ``both`` concatenates.
GROUPS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "minilm": ((3, 4, 5, 6), (1, 2)),
    "mpnet": ((5, 6, 7, 8, 9, 10, 11, 12), (1, 2, 3, 4)),
}
ORDER = ("minilm", "mpnet")


def _config(group: str, seed: int, enc_dim: int) -> tr.TrainConfig:
    layers, extra = GROUPS["minilm" if group == "both" else group]
    return tr.TrainConfig(
        seed=seed, epochs=10, threads=1, holdout_fraction=0.25, extra_span_threshold=0.2,
        epoch_selection="last", calibrate=False, score_epochs=False,
        head=HeadConfig(lstm_layers=2, extra_layers=extra, encoder_layers=layers, enc_dim=enc_dim),
    )


def _cat(*lists: list) -> list:
    return [torch.cat(parts, -1) for parts in zip(*lists, strict=True)]


def _load(group: str, stage: str, mpnet: str | None) -> tuple[Any, int]:
    """The group's data (train, held-out quarter, dev) and its feature width per layer group."""
    if group == "both":
        (m, dm), (q, dq) = _load("minilm", stage, mpnet), _load("mpnet", stage, mpnet)
        return tr._Data(
            train_ex=m.train_ex, train_feats=_cat(m.train_feats, q.train_feats),
            held_ex=m.held_ex, held_feats=_cat(m.held_feats, q.held_feats),
            dev={k: (m.dev[k][0], _cat(m.dev[k][1], q.dev[k][1])) for k in m.dev},
            n_removed=m.n_removed,
        ), dm + dq
    if group == "mpnet" and not mpnet:
        raise SystemExit("give --mpnet DIR (the all-mpnet-base-v2 model directory)")
    encoder = load_encoder(mpnet if group == "mpnet" else None)
    data = tr._load_data(DATA_DIR, _config(group, 13, encoder.dim), encoder, None, None)
    if stage == "refit":
        data = tr._Data(
            train_ex=data.train_ex + data.held_ex, train_feats=data.train_feats + data.held_feats,
            held_ex=[], held_feats=[], dev=data.dev, n_removed=data.n_removed,
        )
    return data, encoder.dim


class _Member:
    """A head that reads columns ``[lo, hi)`` of the concatenated word features."""

    def __init__(self, head: TripletHead, lo: int, hi: int) -> None:
        self.head, self.lo, self.hi = head, lo, hi
        self.config = head.config

    def eval(self) -> _Member:
        self.head.eval()
        return self

    def encode(self, feats: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.head.encode(feats[..., self.lo : self.hi], mask)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.head, name)


def train(args: argparse.Namespace) -> None:
    """Fit and save the members of one group and stage (existing files are kept)."""
    torch.set_num_threads(1)
    args.members_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    data, dim = _load(args.group, args.stage, args.mpnet)
    for seed in args.seeds:
        dest = args.members_dir / f"{args.group}-{args.stage}-s{seed}.pt"
        if dest.exists():
            continue
        config = _config(args.group, seed, dim)
        head, _, _, _ = tr._fit(data, config, None, print, started)
        torch.save({"state": head.state_dict(), "head": config.head.to_dict()}, dest)
        print(f"saved {dest} ({time.perf_counter() - started:.0f}s)", flush=True)


def _scored(args: argparse.Namespace) -> tuple[list[Any], dict[str, Any], DecodeSettings, dict[str, Any]]:
    """Calibrate on the held-out quarter (holdout members), score dev with the ``--stage`` members.

    Returns the scored members, the calibration, its decode settings and the report.
    """
    torch.set_num_threads(1)
    groups = {spec.split(":")[0] for spec in args.members}
    encs = [g for g in ORDER if g in groups or "both" in groups]
    datas = {g: _load(g, "holdout", args.mpnet)[0] for g in encs}
    offsets: dict[str, tuple[int, int]] = {}
    lo = 0
    for g in encs:
        width = int(datas[g].held_feats[0].shape[-1])
        offsets[g], lo = (lo, lo + width), lo + width
    offsets["both"] = (0, lo)

    def members(stage: str) -> list[Any]:
        out = []
        for spec in args.members:
            group, seeds = spec.split(":")
            for seed in seeds.split(","):
                blob = torch.load(args.members_dir / f"{group}-{stage}-s{seed}.pt")
                head = TripletHead(HeadConfig.from_dict(blob["head"]))
                head.load_state_dict(blob["state"])
                out.append(_Member(head, *offsets[group]))
        return out

    first = datas[encs[0]]
    cal = tr.calibrate_decoding(members("holdout"), _cat(*(datas[g].held_feats for g in encs)), first.held_ex)
    settings = DecodeSettings(
        aspect_bias=cal["aspect_bias"], opinion_bias=cal["opinion_bias"],
        pair_threshold=cal["pair_threshold"], span_threshold=cal["span_threshold"],
    )
    heads = members(args.stage)
    report: dict[str, Any] = {"members": args.members, "stage": args.stage,
                              "held_out_f1": round(100 * cal["f1"], 1)}
    all_feats: list = []
    all_ex: list = []
    for name in tr.DATASETS:
        feats = _cat(*(datas[g].dev[name][1] for g in encs))
        all_feats += feats
        all_ex += first.dev[name][0]
        report[name] = round(100 * tr.evaluate_spans(heads, feats, first.dev[name][0], settings=settings).f1, 1)
    s = tr.evaluate_spans(heads, all_feats, all_ex, settings=settings)
    report |= {"micro": round(100 * s.f1, 1), "P": round(100 * s.precision, 1), "R": round(100 * s.recall, 1)}
    report["mean_14lap_14res_16res"] = round((report["14lap"] + report["14res"] + report["16res"]) / 3, 1)
    return heads, cal, settings, report


def score(args: argparse.Namespace) -> None:
    """Calibrate on the held-out quarter (holdout members), score dev; print one JSON line."""
    print(json.dumps(_scored(args)[3]), flush=True)


def _widened(member: _Member, config: HeadConfig, width: int) -> TripletHead:
    """``member`` as a head over all ``width`` feature columns: its projection reads zeros elsewhere (same outputs)."""
    head = TripletHead(config)
    state = dict(member.head.state_dict())
    weight = state["proj.weight"]
    full = weight.new_zeros(weight.shape[0], width)
    full[:, member.lo : member.hi] = weight
    state["proj.weight"] = full
    head.load_state_dict(state)
    return head.eval()


def export(args: argparse.Namespace) -> None:
    """Write refit members, calibrated as an ensemble, as a weights directory of the extractor.

    Every member becomes a head over the concatenated features of both encoders (a member of
    one encoder gets zero projection weights on the other's columns, so its outputs do not
    change), so the ensemble is uniform. The float16 member files and ``config.json`` (the head
    with the calibrated decoding, the ``feature_groups`` the extractor encodes and concatenates,
    and the calibration and dev scores) go to ``--out``, e.g. ``opinio_agents/triplets/weights/accurate``.
    """
    args.stage = "refit"
    members, cal, settings, report = _scored(args)
    width = max(m.hi for m in members)
    layers, extra = GROUPS["minilm"]
    config = HeadConfig.from_dict(
        members[0].head.config.to_dict()
        | {"enc_dim": width // 2, "encoder_layers": layers, "extra_layers": extra,
           "aspect_bias": settings.aspect_bias, "opinion_bias": settings.opinion_bias,
           "span_threshold": settings.span_threshold, "pair_threshold": settings.pair_threshold}
    )
    heads = [_widened(m, config, width) for m in members]
    training = {
        "recipe": "scripts/screen_triplets.py train --group G --stage holdout, then --stage refit; "
        "export " + " ".join(args.members),
        "train": {k: v for k, v in asdict(_config("both", 13, config.enc_dim)).items() if k != "seed"},
        "members": [{"spec": spec} for spec in args.members],
        "calibration": cal | {"on": "held-out train slice (holdout members)"},
        "dev": {k: report[k] for k in (*tr.DATASETS, "micro", "P", "R", "mean_14lap_14res_16res")},
    }
    tr.save_head(heads, training, args.out, encoder="all-MiniLM-L6-v2 + all-mpnet-base-v2 (feature_groups)")
    path = args.out / "config.json"
    saved = json.loads(path.read_text(encoding="utf-8"))
    saved["feature_groups"] = [
        {"encoder": name, "layers": list(GROUPS[name][0]), "extra_layers": list(GROUPS[name][1])} for name in ORDER
    ]
    path.write_text(json.dumps(saved, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report), flush=True)
    print(f"saved to {args.out}")


def main() -> None:
    """Parse arguments and run a step."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--members-dir", type=Path, default=Path("/tmp/opinio_triplet_members"))
    parser.add_argument("--mpnet", default=None, help="all-mpnet-base-v2 model directory")
    sub = parser.add_subparsers(dest="step", required=True)
    t = sub.add_parser("train")
    t.add_argument("--group", choices=("minilm", "mpnet", "both"), required=True)
    t.add_argument("--stage", choices=("holdout", "refit"), required=True)
    t.add_argument("--seeds", type=int, nargs="+", default=[13, 14, 15])
    s = sub.add_parser("score")
    s.add_argument("members", nargs="+", help="GROUP:SEED,SEED,... (e.g. minilm:13,14,15)")
    s.add_argument("--stage", choices=("holdout", "refit"), default="holdout")
    e = sub.add_parser("export")
    e.add_argument(
        "members", nargs="+", help="GROUP:SEED,SEED,... (refit members; calibrated with their holdout twins)",
    )
    e.add_argument("--out", type=Path, required=True, help="weights directory to write")
    args = parser.parse_args()
    {"train": train, "score": score, "export": export}[args.step](args)


if __name__ == "__main__":
    main()
