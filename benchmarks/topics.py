"""Opinosis-style topics on dev data: short query-focused summaries of one feature's sentences.

Opinosis gives, per topic, a few hundred short and redundant review sentences
about one product feature (those that contain the topic's words), and asks for a
two-sentence summary of them. There is no such data set here, so this benchmark
builds the same shape from SPACE dev, whose human aspect summaries serve as the
references:

* a **topic** is one hotel and one of SPACE's six aspects;
* its input is every sentence of that hotel's reviews that names the aspect
  (a whole word or phrase of the aspect's lexicon in ``aspect_labels.LEXICON``,
  the lexicon the aspect-label benchmark scores against; not the system's own
  retrieval), each sentence given to the system as one "review", as Opinosis
  gives sentences rather than reviews;
* the system answers the topic's aspect as a query (the extractive synthesizer,
  PROS and CONS joined, as in the aspect task), and is scored with ROUGE against
  the hotel's three human summaries of that aspect, beside the random, BM25
  top-2, LexRank, centroid and oracle baselines run on the same sentences
  (:class:`~opinio_agents.evaluation.human.HumanReferenceEvaluator`, aspect task).

The topic stores are built once under ``--store-root`` (never the repository).

Usage:
    python benchmarks/topics.py --store-root /tmp/topics
    python benchmarks/topics.py --store-root /tmp/topics --hotels 5 --baselines none
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from aspect_labels import LEXICON, lemmas  # this folder's module (the script runs from here)
from data_paths import real_reviews_dir

from opinio_agents.evaluation.human import EntityReferences
from opinio_agents.io.base import as_written
from opinio_agents.models import Entity, Review
from opinio_agents.text.segment import split_sentences


def lexicon_phrases(lexicon: Iterable[str]) -> list[str]:
    """The lexicon's words and phrases in the form :func:`names_topic` matches (lemmatized, space-padded)."""
    return [f" {' '.join(lemmas(term))} " for term in lexicon]


def names_topic(words: list[str], phrases: list[str]) -> bool:
    """Whether a sentence's words contain one of the :func:`lexicon_phrases` (whole words)."""
    joined = f" {' '.join(words)} "
    return any(phrase in joined for phrase in phrases)


def topic_entities(
    space: list[dict], refs: dict[str, dict], min_sentences: int
) -> tuple[list[Entity], dict[str, EntityReferences]]:
    """One entity per (hotel, aspect) that has references and enough sentences naming the aspect."""
    entities: list[Entity] = []
    references: dict[str, EntityReferences] = {}
    for hotel in space:
        key = str(hotel["entity_id"])
        entry = refs.get(key)
        if not entry or entry.get("split") == "test":
            continue
        sentences: list[str] = []
        for review in hotel["user_reviews"]:
            text = as_written(review["text"])  # as the loaders give it (mojibake re-read, HTML decoded)
            sentences.extend(text[a:b] for a, b in split_sentences(text))
        words = [lemmas(s) for s in sentences]  # once per sentence, not once per aspect
        for aspect, summaries in sorted(entry.get("aspects", {}).items()):
            if aspect not in LEXICON or not summaries:
                continue
            phrases = lexicon_phrases(LEXICON[aspect])
            chosen = [s for s, w in zip(sentences, words) if names_topic(w, phrases)]
            if len(chosen) < min_sentences:
                continue
            topic = f"{key}:{aspect}"
            entities.append(
                Entity(
                    entity_id=topic,
                    entity_name=f"{hotel.get('entity_name') or key}: {aspect}",
                    user_reviews=[Review(review_id=f"{topic}-s{i:04d}", text=s) for i, s in enumerate(chosen)],
                )
            )
            references[topic] = EntityReferences(aspects={aspect: list(summaries)})
    return entities, references


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store-root", type=Path, default=Path(tempfile.gettempdir()) / "opinio-topics-store")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "opinio-topics-out")
    parser.add_argument("--hotels", type=int, default=None, help="Only the first N SPACE dev hotels.")
    parser.add_argument("--min-sentences", type=int, default=20, help="Topics with fewer sentences are skipped.")
    parser.add_argument("--baselines", default=None, help="Comma-separated baselines ('none': the system only).")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args()

    folder = real_reviews_dir()
    if folder is None or not (folder / "space_dev.json").is_file():
        print("no SPACE dev file found (set OPINIO_REAL_REVIEWS); nothing to run")
        return 0
    from opinio_agents.api import OpinioRAG
    from opinio_agents.evaluation.human import (
        HumanEvalConfig,
        HumanReferenceEvaluator,
        human_tables_markdown,
        write_human_tables,
    )

    space = json.loads((folder / "space_dev.json").read_text(encoding="utf-8"))
    refs = json.loads((folder / "space_dev.refs.json").read_text(encoding="utf-8"))
    if args.hotels:
        space = space[: args.hotels]
    entities, references = topic_entities(space, refs, args.min_sentences)
    sizes = sorted(len(e.user_reviews) for e in entities)
    print(
        f"{len(entities)} topics from {len(space)} hotels; sentences per topic: min {sizes[0]}, "
        f"median {sizes[len(sizes) // 2]}, max {sizes[-1]}",
        file=sys.stderr,
    )
    baselines = None if args.baselines is None else [b for b in args.baselines.split(",") if b and b != "none"]
    rag = OpinioRAG(store_dir=args.store_root / "space_dev_topics")
    try:
        rag.index(entities, show_progress=True)
        evaluator = HumanReferenceEvaluator(
            rag, references, HumanEvalConfig(tasks=("aspect",), baselines=baselines, show_progress=True)
        )
        records = evaluator.run([str(e.entity_id) for e in entities])
        summary = write_human_tables(
            records, args.out, label="space_dev_topics", plots=not args.no_plots, extra={"topics": len(entities)}
        )
        print(human_tables_markdown(summary["tables"], label="SPACE dev topics (Opinosis-style)") + "\n")
        for note in summary["notes"]:
            print(note, file=sys.stderr)
        print(f"wrote {args.out}", file=sys.stderr)
    finally:
        rag.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
