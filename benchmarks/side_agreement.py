"""Side agreement on OpoSum: does a highlight's side (PROS/CONS) match its human-labelled evidence?

Run:
    nice -n 10 python benchmarks/side_agreement.py
    nice -n 10 python benchmarks/side_agreement.py --examples 5   # also print disagreeing highlights

Data: ``../shared/data/real-reviews/oposum.json`` + ``oposum.refs.json`` (60 Amazon
products, 6 domains). Prints a note and exits 0 when either file is absent.

What it does. The products are indexed once into ``--store`` (default
``/tmp/opinio-real-reviews-store/oposum``, the store ``benchmarks/real_reviews.py``
builds; reused when complete). For every product, the default offline highlights
(extractive synthesizer, hybrid retriever, top-k 10) are asked for every labelled
aspect of ``aspect_segments``. Each highlight's evidence sentences are matched to the
human-labelled segments of the same review by character-span overlap (at least half
of the shorter span shared; see :mod:`opinio_agents.evaluation.side`), and the
human side of the highlight is the majority sign over its matched evidence sentences
(each sentence: mean polarity of its matched segments; ``|p| < 0.2`` and ties left
out). Reported: highlights with >= 1 human-labelled evidence sentence, how many of
them have a decided human side, and the share of those whose side agrees with it,
overall and per domain, beside two baselines over the very same highlights: the
majority sign of the *stored* sentiment of the same labelled evidence sentences
(ties -> no call, counted as wrong), and a random side (seeded coin).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from data_paths import real_reviews_file  # this folder's module (the script runs from here)

from opinio_agents.evaluation.side import (
    MIN_OVERLAP,
    NEUTRAL_BAND,
    Segment,
    human_side,
    locate,
    matched_segments,
    sentence_polarity,
)
from opinio_agents.models import Polarity

DATA = real_reviews_file("oposum.json").parent
STORE = Path("/tmp/opinio-real-reviews-store/oposum")


@dataclass
class Row:
    """One highlight with a decided human side."""

    domain: str
    entity: str
    aspect: str
    side: Polarity
    human: Polarity
    stored: Polarity | None
    coin: Polarity
    text: str
    evidence: list[tuple[str, float, float]]  # (text, human polarity, stored sentiment)


def review_segments(entity: dict, refs: dict) -> dict[str, list[Segment]]:
    """review_id -> distinct labelled segments (with a polarity) located in that review's text."""
    texts = {str(r["review_id"]): r["text"] for r in entity["user_reviews"]}
    seen: dict[tuple[str, str], float] = {}
    for segments in refs.get("aspect_segments", {}).values():
        for seg in segments:
            if seg.get("polarity") is not None:
                seen.setdefault((str(seg["review_id"]), seg["text"]), float(seg["polarity"]))
    out: dict[str, list[Segment]] = defaultdict(list)
    for (rid, text), polarity in seen.items():
        span = locate(text, texts.get(rid, ""))
        if span is not None:
            out[rid].append(Segment(span, polarity))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--store", type=Path, default=STORE)
    parser.add_argument("--min-overlap", type=float, default=MIN_OVERLAP)
    parser.add_argument("--examples", type=int, default=0, help="print this many disagreeing highlights")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    data, refs_path = args.data / "oposum.json", args.data / "oposum.refs.json"
    if not (data.is_file() and refs_path.is_file()):
        print(f"OpoSum not found under {args.data}: nothing to do")
        return 0
    from opinio_agents.api import OpinioRAG

    entities = {str(e["entity_id"]): e for e in json.loads(data.read_text(encoding="utf-8"))}
    refs = json.loads(refs_path.read_text(encoding="utf-8"))
    rag = OpinioRAG(store_dir=args.store)
    rag.index(data, wait=True)  # a no-op on a complete store
    coin = random.Random(args.seed)
    rows: list[Row] = []
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # highlights, with labelled evidence, decided
    for key, entity in entities.items():
        ref = refs.get(key)
        if ref is None:
            continue
        domain = ref.get("domain", "?")
        segments = review_segments(entity, ref)
        stored = {s.sentence.sentence_id: s for s in rag.store.catalog.sentences(rag.store.require_entity(key))}
        aspects = list(ref.get("aspect_segments", {}))
        result = rag.highlights(key, aspects)
        for h in result.highlights:
            counts[domain][0] += 1
            human: list[float | None] = []
            machine: list[float | None] = []
            shown: list[tuple[str, float, float]] = []
            for ev in h.evidence:
                record = stored.get(ev.sentence_id)
                if record is None:
                    continue
                sent = record.sentence
                matches = matched_segments(
                    (sent.start, sent.end), segments.get(sent.review_id, []), min_overlap=args.min_overlap
                )
                p = sentence_polarity(matches)
                if p is None:
                    continue
                human.append(p)
                machine.append(record.sentiment)
                shown.append((sent.text, p, record.sentiment))
            if not human:
                continue
            counts[domain][1] += 1
            side = human_side(human, band=NEUTRAL_BAND)
            if side is None:
                continue
            counts[domain][2] += 1
            rows.append(
                Row(
                    domain,
                    key,
                    h.query,
                    h.polarity,
                    side,
                    human_side(machine, band=0.05),
                    coin.choice([Polarity.PROS, Polarity.CONS]),
                    h.text,
                    shown,
                )
            )
    rag.close()
    print(
        f"\n### OpoSum side agreement ({len(entities)} products; match: same review, character-span overlap "
        f">= {args.min_overlap:.0%} of the shorter span; human side = majority sign over matched evidence "
        f"sentences, |polarity| < {NEUTRAL_BAND} and ties excluded)\n"
    )
    print(
        "| domain | highlights | with human-labelled evidence | decided human side | "
        "highlight side agrees | stored-sentiment majority agrees | random side agrees |"
    )
    print("|---|---|---|---|---|---|---|")

    def line(name: str, subset: list[Row], total: list[int]) -> None:
        n = len(subset)

        def pct(hits: int) -> str:
            return f"{100 * hits / n:.1f}" if n else "-"

        agree = sum(r.side == r.human for r in subset)
        base = sum(r.stored == r.human for r in subset)
        rand = sum(r.coin == r.human for r in subset)
        print(
            f"| {name} | {total[0]} | {total[1]} | {total[2]} | {pct(agree)} ({agree}/{n}) | "
            f"{pct(base)} | {pct(rand)} |"
        )

    for domain in sorted(counts):
        line(domain, [r for r in rows if r.domain == domain], counts[domain])
    line("**all**", rows, [sum(c[i] for c in counts.values()) for i in range(3)])
    print(
        "\nStored-sentiment baseline: majority sign of the stored sentence sentiment over the same labelled "
        "evidence sentences (|s| < 0.05 and ties give no side, counted as disagreeing). Random: seeded coin."
    )
    same = sum(r.side == r.stored for r in rows)
    print(f"Highlight side equals the stored-sentiment majority side in {same}/{len(rows)} highlights.")
    wrong = [r for r in rows if r.side != r.human]
    for r in wrong[: args.examples]:
        print(f"\n- [{r.domain} {r.entity} / {r.aspect}] side {r.side.value}, human {r.human.value}: {r.text!r}")
        for text, p, s in r.evidence:
            print(f"    human {p:+.2f} stored {s:+.2f}: {text!r}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
