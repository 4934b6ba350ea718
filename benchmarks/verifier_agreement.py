"""Verifier agreement: how often the highlight verifier's verdict is the one a person wrote down.

Run:
    python benchmarks/verifier_agreement.py            # the 51 checked highlights (sample + SPACE dev)
    python benchmarks/verifier_agreement.py --sets sample
    python benchmarks/verifier_agreement.py --rounds 1  # only the first 30

The checked set is ``tests/data/verifier_checked.json``: highlights written by the pipeline,
each with the verdict (``supported`` / ``weak`` / ``contradicted``) and a one-line reason,
written down by reading the highlight and its quotes *before* the verifier was run on them.
Round 1 (no ``round`` field, 30 entries): extractive highlights, 20 from the shipped sample's
entities 101 and 202, 10 from two SPACE dev hotels. Round 2 (21 entries, ``picked`` says how):
16 drawn at random (seed 20261203) from every highlight the default pipeline showed with
verification on (query-free and aspect queries) on SPACE dev and the sample, and the 5 known
misreads (their verdicts were known before labelling): SPACE hotels 188745 'rooms', 182519 and
1029276 and 1064610 (query-free), the sample's "so-called free wi-fi" CON.
Sample highlights keep their text; SPACE ones keep only sentence ids and stored sentiments, and
their text is rebuilt at run time from ``../shared/data/real-reviews/space_dev.json`` (or
``$OPINIO_REAL_REVIEWS``): the first ``text_from`` cited sentences, or ``text_parts``
(``[sentence id, start, end]`` character spans of cited sentences, each written as a sentence):
research data stays out of the repository. SPACE entries are skipped, and said so, when the file
is absent.

It prints the agreement (verdicts equal / highlights checked) for each round and in all, the
confusion counts and every disagreement with the verifier's reason, so a reason contradicting its
evidence is visible.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from data_paths import real_reviews_file  # noqa: E402  # this folder's module

from opinio_agents.models import Evidence, Highlight, Polarity, Support, Verification  # noqa: E402

CHECKED = ROOT / "tests" / "data" / "verifier_checked.json"
SPACE = real_reviews_file("space_dev.json")


def _texts(sets: set[str]) -> dict[str, str]:
    """Sentence id -> text for the entities of the checked set (segmented as the indexer does)."""
    from opinio_agents.datasets import load_sample
    from opinio_agents.io.loaders import load_entities
    from opinio_agents.text.segment import segment_entity

    entities = list(load_sample()) if "sample" in sets else []
    if "space_dev" in sets and SPACE.exists():
        entities += load_entities(SPACE)
    return {s.sentence_id: s.text for e in entities for s in segment_entity(e)}


def _as_sentence(piece: str) -> str:
    """A span of a cited sentence written as a sentence (capital first, final stop), as key points are."""
    piece = piece.strip()
    piece = piece[:1].upper() + piece[1:]
    return piece if piece.endswith((".", "!", "?")) else piece + "."


def round_of(entry: dict[str, Any]) -> int:
    """The labelling round of a checked entry (1: the first 30)."""
    return int(entry.get("round", 1))


def checked_highlights(sets: set[str] | None = None) -> tuple[list[dict[str, Any]], list[Highlight]]:
    """The checked entries that can be built here and their highlights (SPACE ones need ``../shared``)."""
    entries = [e for e in json.loads(CHECKED.read_text()) if sets is None or e["set"] in sets]
    texts = _texts({e["set"] for e in entries})
    kept, highlights = [], []
    for entry in entries:
        if not all(sid in texts for sid, _ in entry["evidence"]):
            continue
        if not all(sid in texts for sid, _, _ in entry.get("text_parts", [])):
            continue
        evidence = [Evidence(sentence_id=sid, text=texts[sid], score=0.0, sentiment=s) for sid, s in entry["evidence"]]
        if "text_parts" in entry:
            text = " ".join(_as_sentence(texts[sid][start:end]) for sid, start, end in entry["text_parts"])
        else:
            text = entry.get("text") or " ".join(e.text for e in evidence[: entry["text_from"]])
        highlights.append(
            Highlight(
                query=entry["query"],
                polarity=Polarity(entry["polarity"]),
                text=text,
                evidence=evidence,
                support=Support(),
            )
        )
        kept.append(entry)
    return kept, highlights


def agreement(sets: set[str] | None = None) -> tuple[list[dict[str, Any]], list[Verification]]:
    """The checked entries and the verifier's verification of each."""
    from opinio_agents.synthesis.verification import HighlightVerifier

    entries, highlights = checked_highlights(sets)
    return entries, HighlightVerifier().verify(highlights)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", default="sample,space_dev", help="comma-separated: sample, space_dev")
    parser.add_argument("--rounds", default=None, help="comma-separated labelling rounds (default: all)")
    args = parser.parse_args(argv)
    sets = {s.strip() for s in args.sets.split(",") if s.strip()}
    if "space_dev" in sets and not SPACE.exists():
        print(f"SPACE dev not found at {SPACE}: its entries are skipped")
    entries, found = agreement(sets)
    if args.rounds:
        wanted = {int(r) for r in args.rounds.split(",") if r.strip()}
        pairs = [(e, v) for e, v in zip(entries, found, strict=True) if round_of(e) in wanted]
        entries, found = [e for e, _ in pairs], [v for _, v in pairs]
    for number in sorted({round_of(e) for e in entries}):
        mine = [e["verdict"] == v.verdict for e, v in zip(entries, found, strict=True) if round_of(e) == number]
        print(f"round {number}: {sum(mine)}/{len(mine)} = {sum(mine) / max(len(mine), 1):.0%}")
    same = sum(e["verdict"] == v.verdict for e, v in zip(entries, found, strict=True))
    print(f"agreement: {same}/{len(entries)} = {same / max(len(entries), 1):.0%}")
    confusion = Counter((e["verdict"], v.verdict) for e, v in zip(entries, found, strict=True))
    print("written -> verifier: " + ", ".join(f"{a}->{b} {n}" for (a, b), n in sorted(confusion.items())))
    for entry, v in zip(entries, found, strict=True):
        flag = "  " if entry["verdict"] == v.verdict else "XX"
        print(
            f"{flag} r{round_of(entry)} {entry['set']}/{entry['entity_id']} {entry['query']} {entry['polarity']}: "
            f"written "
            f"{entry['verdict']}, verifier {v.verdict} (AR {v.aspect_relevance}): {v.reason}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
