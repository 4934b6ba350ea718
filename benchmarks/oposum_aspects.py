"""Are query highlights about their aspect? OpoSum's human aspect labels of review segments as the check.

OpoSum (``../shared/data/real-reviews/oposum.json``, README there) labels every review segment
(a clause or short sentence) with 1-2 of its domain's aspects. For each product and each labelled
aspect, the extractive highlights (PROS and CONS joined) are compared with those segments:

* ``on aspect``: share of the highlight's content words found in the segments labelled with its aspect;
* ``other only``: share found only in segments labelled with the product's other aspects;
* ``gap``: the two apart (higher: the highlight's words come from what people read as that aspect).

Rows, in the same run: the shipped extractive synthesizer, the same without clause-level relevance
(``clause_margin=None``: whole sentences) and the BM25 top-2 sentences for the aspect.

Usage:
    python benchmarks/oposum_aspects.py [--store-root DIR] [--entities N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from data_paths import real_reviews_dir  # noqa: E402


def shares(text: str, own: list[str], others: list[str]) -> tuple[float, float] | None:
    """(on aspect, other only) shares of ``text``'s content words; None without content words."""
    from opinio_agents.synthesis.selection import content_tokens

    tokens = content_tokens(text)
    if not tokens:
        return None
    mine = set(content_tokens(" ".join(own)))
    rest = set(content_tokens(" ".join(others))) - mine
    return sum(t in mine for t in tokens) / len(tokens), sum(t in rest for t in tokens) / len(tokens)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store-root", type=Path, default=Path(tempfile.gettempdir()) / "opinio-real-reviews-store")
    parser.add_argument("--entities", type=int, default=None, help="Only the first N products.")
    parser.add_argument("--records", type=Path, default=None, help="Write every query's texts and shares here (JSONL).")
    args = parser.parse_args()
    folder = real_reviews_dir()
    if folder is None or not (folder / "oposum.json").is_file():
        print("no oposum.json in the real-reviews folder (set OPINIO_REAL_REVIEWS); nothing to run")
        return 0

    from opinio_agents.api import OpinioRAG
    from opinio_agents.evaluation.human import highlight_texts
    from opinio_agents.io.loaders import iter_entities
    from opinio_agents.synthesis.extractive import ExtractiveSynthesizer

    refs = json.loads((folder / "oposum.refs.json").read_text(encoding="utf-8"))
    entities = [e for e in iter_entities(folder / "oposum.json") if e.key in refs]
    if args.entities:
        entities = entities[: args.entities]
    rag = OpinioRAG(store_dir=args.store_root / "oposum")
    rag.index(entities, show_progress=False)
    whole = ExtractiveSynthesizer(rag.retrievers.encoder, clause_margin=None)

    def bm25(key: str, aspects: list[str]) -> dict[str, str]:
        return {a: " ".join(h.sentence.text for h in rag.retrieve(key, a, top_k=2, retriever="bm25")) for a in aspects}

    def system(synth: object) -> Callable[[str, list[str]], dict[str, str]]:
        def run(key: str, aspects: list[str]) -> dict[str, str]:
            result = rag.highlights(key, aspects, synthesizer=synth)  # type: ignore[arg-type]
            return {a: highlight_texts(result, a) for a in aspects}

        return run

    runs = {"opinio": system("extractive"), "opinio, whole sentences": system(whole), "bm25-top2": bm25}
    rows: dict[str, list[tuple[float, float, int]]] = {name: [] for name in runs}
    records: list[dict[str, object]] = []
    labelled = 0
    unanswered: Counter[str] = Counter()
    for entity in entities:
        segments = refs[entity.key]["aspect_segments"]
        aspects = list(segments)
        texts = {name: run(entity.key, aspects) for name, run in runs.items()}
        for aspect in aspects:
            own = [s["text"] for s in segments[aspect]]
            others = [s["text"] for a, v in segments.items() if a != aspect for s in v]
            if not own or not others:
                continue
            got = {name: shares(texts[name].get(aspect, ""), own, others) for name in runs}
            labelled += 1
            for name, value in got.items():
                unanswered[name] += value is None
            records.append(
                {
                    "entity": entity.key,
                    "aspect": aspect,
                    "texts": {n: texts[n].get(aspect, "") for n in runs},
                    "shares": {n: got[n] for n in runs},
                }
            )
            if any(v is None for v in got.values()):  # only the queries every row answers
                continue
            for name, value in got.items():
                assert value is not None
                rows[name].append((*value, len(texts[name][aspect].split())))
    if args.records is not None:
        args.records.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    print(
        f"{labelled} labelled queries; left without a highlight (no sentence mentions the aspect): "
        + ", ".join(f"{name} {unanswered[name]}" for name in runs)
    )
    print("| System | Queries | On aspect | Other only | Gap | Words |\n|---|---|---|---|---|---|")
    for name, values in rows.items():
        if not values:
            continue
        on = 100 * statistics.mean(v[0] for v in values)
        off = 100 * statistics.mean(v[1] for v in values)
        words = statistics.mean(v[2] for v in values)
        print(f"| {name} | {len(values)} | {on:.1f} | {off:.1f} | {on - off:.1f} | {words:.1f} |")
    rag.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
