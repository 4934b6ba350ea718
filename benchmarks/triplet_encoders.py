"""CPU cost of candidate frozen encoders for the embedded triplet extractor, in one run.

For each encoder (a local HF model directory; the shipped all-MiniLM-L6-v2 always
first, as the baseline), the word features the triplet head reads are computed
(:func:`~opinio_agents.triplets.features.encode_words`: every hidden state, word-piece
pooling) for the ASTE dev sentences of ``../shared/data/aste-v2`` in batches of 16 on
one torch thread. The encoders run interleaved, ``--repeats`` times, and the fastest
pass of each is kept (the machine is shared: compare within the run, by the ratio
to the baseline). Also printed: parameters and the size of the model's weight files.

With ``--extractors``, the whole extractors are timed instead (encoders, heads and decoding:
``get_triplet_extractor(NAME).extract_tokens`` on the same sentences, default runtime,
``$OPINIO_ENCODER_THREADS`` / one torch thread), e.g. the default ``embedded`` against the
opt-in ``accurate`` (all-MiniLM-L6-v2 + all-mpnet-base-v2).

Usage:
    nice -n 10 python benchmarks/triplet_encoders.py --encoders /path/to/all-mpnet-base-v2
    OPINIO_ENCODER_THREADS=1 nice -n 10 python benchmarks/triplet_encoders.py --extractors embedded accurate
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from data_paths import SHARED_DATA  # this folder's module (the script runs from here)


def main() -> int:
    """Print a markdown table: encoder, layers, parameters, weights MB, ms/sentence, ratio."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoders", nargs="*", default=[], help="extra local HF model directories")
    parser.add_argument("--sentences", type=int, default=160, help="dev sentences encoded per pass")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--extractors", nargs="*", default=[], help="time these extractors instead (first = baseline)")
    parser.add_argument(
        "--data-dir", type=Path, default=SHARED_DATA / "aste-v2"
    )
    args = parser.parse_args()
    if not args.data_dir.is_dir():
        print(f"no ASTE data at {args.data_dir}; nothing to run")
        return 0
    import torch

    from opinio_agents.triplets.aste import read_aste_file
    from opinio_agents.triplets.features import default_encoder_path, encode_words, load_encoder
    from opinio_agents.triplets.training import DATASETS

    torch.set_num_threads(1)
    per_set = max(1, args.sentences // len(DATASETS))
    sentences = [
        e.tokens for name in DATASETS for e in read_aste_file(args.data_dir / name / "dev_triplets.txt")[:per_set]
    ]
    if args.extractors:
        return _time_extractors(args.extractors, sentences, args.repeats)
    paths = [default_encoder_path(), *args.encoders]
    encoders = [load_encoder(p) for p in paths]
    for encoder in encoders:  # warm-up (first-call allocations)
        encode_words(encoder, sentences[:16], layers=tuple(range(1, encoder.n_layers)))
    best = [float("inf")] * len(encoders)
    for _ in range(args.repeats):
        for i, encoder in enumerate(encoders):
            layers = tuple(range(1, encoder.n_layers))
            started = time.perf_counter()
            for start in range(0, len(sentences), 16):
                encode_words(encoder, sentences[start : start + 16], layers=layers)
            best[i] = min(best[i], time.perf_counter() - started)
    print(f"{len(sentences)} ASTE dev sentences, batches of 16, 1 torch thread, best of {args.repeats}\n")
    print("| encoder | layers | parameters | weights MB | ms/sentence | vs MiniLM |")
    print("|---|---|---|---|---|---|")
    for path, encoder, seconds in zip(paths, encoders, best, strict=True):
        n_params = sum(p.numel() for p in encoder.model.parameters())
        size = sum(f.stat().st_size for f in Path(path).glob("*.safetensors")) or sum(
            f.stat().st_size for f in Path(path).glob("*.bin")
        )
        ms = 1000 * seconds / len(sentences)
        name = "/".join(Path(path).parts[-2:])
        print(
            f"| {name} | {encoder.n_layers - 1} | {n_params / 1e6:.1f}M | {size / 1e6:.0f} | "
            f"{ms:.1f} | {seconds / best[0]:.2f}x |"
        )
    return 0


def _time_extractors(names: list[str], sentences: list[list[str]], repeats: int) -> int:
    """Print a markdown table: extractor, members, ms/sentence, ratio to the first (interleaved, best pass)."""
    from opinio_agents.triplets.factory import get_triplet_extractor

    extractors = [get_triplet_extractor(name, batch_size=16) for name in names]
    for extractor in extractors:  # warm-up: loads, exports once per machine, first-call allocations
        extractor.extract_tokens(sentences[:16])  # type: ignore[attr-defined]
    best = [float("inf")] * len(extractors)
    for _ in range(repeats):
        for i, extractor in enumerate(extractors):
            started = time.perf_counter()
            extractor.extract_tokens(sentences)  # type: ignore[attr-defined]
            best[i] = min(best[i], time.perf_counter() - started)
    print(f"{len(sentences)} ASTE dev sentences, extract_tokens in batches of 16, best of {repeats}\n")
    print("| extractor | runtime | ms/sentence | vs first |")
    print("|---|---|---|---|")
    for name, extractor, seconds in zip(names, extractors, best, strict=True):
        runtime = getattr(extractor, "runtime", "-")
        print(f"| {name} | {runtime} | {1000 * seconds / len(sentences):.1f} | {seconds / best[0]:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
