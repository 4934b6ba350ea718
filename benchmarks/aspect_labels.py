"""Aspect-label benchmark: are discovered aspects named the way people would name them?

Run:
    python benchmarks/aspect_labels.py                       # synthetic + SPACE dev
    python benchmarks/aspect_labels.py --store /tmp/al       # keep the indexes between runs
    python benchmarks/aspect_labels.py --reviews 300         # smaller synthetic main entity

Both figures are computed for the earlier c-TF-IDF namer (*before*) and the
noun-phrase namer (*after*, the default) in the same run, on the same HIRO
clusters:

1. **Synthetic** (:mod:`opinio_agents.datasets.synthetic`, seed 7: one entity of
   ``--reviews`` reviews and three of 300, as in ``benchmarks/hiro.py``; 25
   planted aspects): share of planted aspects *named* among the top 15 aspects.
   A label names a planted aspect when it contains, as whole words (plural
   insensitive), the planted name or one of its phrase-bank terms
   (``coffee maker``/``coffee machine``/``kettle``; ``staff`` for ``front desk
   staff``). The stricter *head word* figure asks for the last word of the
   planted name (``maker``, ``beach``, ``staff``).
2. **SPACE dev** (``../shared/data/real-reviews/space_dev.json``, 19 hotels;
   skipped when absent): share of the 6 annotated aspects (building,
   cleanliness, food, location, rooms, service) *covered* by the top 10 labels
   of each hotel. A label covers an aspect when its whole phrase or its head
   word (last word, lemmatized) is in the aspect's lexicon (:data:`LEXICON`,
   hyponyms and synonyms such as ``breakfast`` -> food, ``front desk`` ->
   service); the table also shows lexicon *or* MiniLM cosine(label, aspect
   name) >= 0.6.

Needs nothing but the package; SPACE is read from ``../shared`` when present.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from ctfidf_namer import CtfidfNamer  # this folder's modules (the script runs from here)
from data_paths import real_reviews_file

from opinio_agents.datasets import phrases
from opinio_agents.datasets.synthetic import generate_entity
from opinio_agents.embeddings import get_encoder
from opinio_agents.hiro import HiroIndex, discover_aspects
from opinio_agents.hiro.labels import PhraseNamer
from opinio_agents.indexing import Indexer
from opinio_agents.models import Entity
from opinio_agents.stores.sentence_store import SentenceStore
from opinio_agents.text.preprocess import tokenize_for_bm25

SPACE = real_reviews_file("space_dev.json")

#: What counts as naming each SPACE aspect (lower-case phrases and head words, lemmatized).
LEXICON: dict[str, frozenset[str]] = {
    "building": frozenset(
        """building hotel property architecture lobby decor design facade elevator lift facility pool gym spa
        floor hallway corridor courtyard garden terrace rooftop roof renovation furniture furnishing interior
        exterior atrium entrance style ambiance ambience atmosphere swimming pool fitness center""".split()
    )
    | {"fitness center", "swimming pool", "roof top"},
    "cleanliness": frozenset(
        "cleanliness clean housekeeping maid cleaning dirt dust stain hygiene cleaner".split()
    ),
    "food": frozenset(
        """food breakfast buffet restaurant dinner lunch meal bar coffee menu cuisine dining drink wine fruit egg
        pastry brunch snack cafe cocktail tea""".split()
    )
    | {"room service", "breakfast buffet", "continental breakfast"},
    "location": frozenset(
        """location area neighborhood neighbourhood street station metro subway train bus walk distance beach
        downtown shop shopping attraction sight square city airport park district market waterfront transport
        transportation tube block""".split()
    )
    | {"walking distance", "public transport", "times square"},
    "rooms": frozenset(
        """room bed bathroom shower view suite balcony tv television mattress pillow closet minibar fridge window
        size bedroom tub bath toilet sheet linen towel carpet desk""".split()
    )
    | {"room size", "air conditioning"},
    "service": frozenset(
        """service staff desk reception receptionist concierge manager doorman bellman checkin checkout valet
        employee personnel member host management""".split()
    )
    | {"front desk", "front desk staff", "check-in", "check in", "customer service"},
}
EMBEDDING_THRESHOLD = 0.6
_WORDS = re.compile(r"[a-z0-9]+(?:['\-/][a-z0-9]+)*")


def lemmas(text: str) -> list[str]:
    """Lemmatized words of a label (``elevators`` -> ``elevator``)."""
    out = []
    for word in _WORDS.findall(text.lower()):
        tokens = tokenize_for_bm25(word, drop_stopwords=False)
        out.append(tokens[0] if len(tokens) == 1 else word)
    return out


def _contains(label: str, phrase: str) -> bool:
    a, b = lemmas(label), lemmas(phrase)
    return bool(b) and any(a[i : i + len(b)] == b for i in range(len(a) - len(b) + 1))


def names_planted(label: str, aspect: str, *, strict: bool = False) -> bool:
    """Whether ``label`` names the planted ``aspect`` (see the module docstring)."""
    if strict:
        return _contains(label, aspect.replace("-", " ").split()[-1]) or _contains(label, aspect)
    return any(_contains(label, term) for term in phrases.ASPECTS[aspect].terms)


def covers_by_lexicon(label: str, aspect: str) -> bool:
    """Whether the label's phrase or head word is in the aspect's lexicon."""
    words = lemmas(label)
    if not words:
        return False
    lexicon = LEXICON[aspect]
    return label.lower() in lexicon or " ".join(words) in lexicon or words[-1] in lexicon


def _build(store: Path, entities: list[Entity], encoder) -> tuple[SentenceStore, HiroIndex]:
    index = SentenceStore(store)
    todo = [e for e in entities if not index.has_entity(e.key)]
    if todo:
        t0 = time.perf_counter()
        Indexer(index, encoder).index_entities(todo)
        print(f"_indexed {len(todo)} entities in {time.perf_counter() - t0:.0f} s_", file=sys.stderr)
    hiro = HiroIndex(index, depth=3)
    hiro.fit()
    return index, hiro


def synthetic_section(store: Path, encoder, reviews: int, namers: dict) -> list[str]:
    records = [generate_entity(0, reviews, seed=7)] + [generate_entity(i, 300, seed=7) for i in (1, 2, 3)]
    entities = [Entity.model_validate(r) for r, _ in records]
    planted = {e.key: [p.aspect for p in pl] for e, (_, pl) in zip(entities, records, strict=True)}
    _, hiro = _build(store, entities, encoder)
    lines = [
        f"### Synthetic entities (seed 7; {reviews} + 3 x 300 reviews): planted aspects named among the top 15",
        "",
        "| namer | planted | named (name or term) | named (head word) | missed | top-15 labels of entity 1 "
        "| discovery s, entity 1 (cold namer) | discovery s, all entities |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, namer in namers.items():
        total = named = strict = 0
        missed: list[str] = []
        first: list[str] = []
        cold = spent = 0.0
        for entity in entities:
            t0 = time.perf_counter()
            names = [a.aspect for a in discover_aspects(hiro, entity.key, top_k=15, namer=namer)]
            spent += time.perf_counter() - t0
            if entity is entities[0]:
                first = names
                cold = spent
            for aspect in planted[entity.key]:
                total += 1
                hit = any(names_planted(n, aspect) for n in names)
                named += hit
                strict += any(names_planted(n, aspect, strict=True) for n in names)
                if not hit:
                    missed.append(aspect)
        lines.append(
            f"| {label} | {total} | {named} ({named / total:.0%}) | {strict} ({strict / total:.0%}) | "
            f"{', '.join(missed) or '-'} | {', '.join(first)} | {cold:.1f} | {spent:.1f} |"
        )
    lines.append("")
    lines.append(f"_entity 1 has {len(hiro.index.sentences(entities[0].key))} sentences; discovery includes the namer_")
    return lines


def names_any_aspect(label: str) -> bool:
    """Whether ``label`` names any phrase-bank aspect (planted in the entity or not)."""
    return any(names_planted(label, aspect) for aspect in phrases.ASPECTS)


def seeds_section(store: Path, encoder, seeds: list[int], namers: dict, reviews: int = 300) -> list[str]:
    """Unseen seeds: 4 entities x ``reviews`` each per seed; planted aspects named in the top 15, and
    the top-10 labels that name no phrase-bank aspect at all (a verb, a pronoun, a generic noun)."""
    lines = [
        f"### Synthetic seeds {', '.join(map(str, seeds))} (4 x {reviews} reviews each): planted aspects named "
        "in the top 15; top-10 labels that name no aspect",
        "",
        "| namer | seed | planted | named (name or term) | missed | top-10 labels naming no aspect |",
        "|---|---|---|---|---|---|",
    ]
    for seed in seeds:
        records = [generate_entity(i, reviews, seed=seed) for i in range(4)]
        entities = [Entity.model_validate(r) for r, _ in records]
        planted = {e.key: [p.aspect for p in pl] for e, (_, pl) in zip(entities, records, strict=True)}
        _, hiro = _build(store / f"seed-{seed}-{reviews}", entities, encoder)
        for label, namer in namers.items():
            total = named = 0
            missed: list[str] = []
            junk: list[str] = []
            for entity in entities:
                names = [a.aspect for a in discover_aspects(hiro, entity.key, top_k=15, namer=namer)]
                junk += [n for n in names[:10] if not names_any_aspect(n)]
                for aspect in planted[entity.key]:
                    total += 1
                    hit = any(names_planted(n, aspect) for n in names)
                    named += hit
                    if not hit:
                        missed.append(aspect)
            lines.append(
                f"| {label} | {seed} | {total} | {named} ({named / total:.0%}) | {', '.join(missed) or '-'} | "
                f"{', '.join(junk) or '-'} ({len(junk)}) |"
            )
    return lines


def space_section(store: Path, encoder, namers: dict) -> list[str]:
    if not SPACE.is_file():
        return [f"_SPACE dev not found at {SPACE}: skipped_"]
    entities = [Entity.model_validate(r) for r in json.loads(SPACE.read_text(encoding="utf-8"))]
    _, hiro = _build(store, entities, encoder)
    aspects = list(LEXICON)
    names_vec = encoder.encode(aspects)
    lines = [
        f"### SPACE dev ({len(entities)} hotels): annotated aspects covered by the top 10 labels",
        "",
        "| namer | criterion | covered (of " + str(6 * len(entities)) + ") | hotels with all 6 | "
        + " | ".join(aspects)
        + " |",
        "|---|---|---|---|" + "---|" * len(aspects),
    ]
    examples: dict[str, list[str]] = {}
    details: list[str] = []
    timings: list[str] = []
    for label, namer in namers.items():
        per_hotel = []
        spent = 0.0
        for entity in entities:
            t0 = time.perf_counter()
            found = [a.aspect for a in discover_aspects(hiro, entity.key, top_k=10, namer=namer)]
            spent += time.perf_counter() - t0
            examples.setdefault(label, found) if entity is entities[0] else None
            vec = encoder.encode(found) if found else np.zeros((0, names_vec.shape[1]))
            sims = vec @ names_vec.T
            lex = [any(covers_by_lexicon(f, a) for f in found) for a in aspects]
            emb = [lex[j] or bool(len(found) and sims[:, j].max() >= EMBEDDING_THRESHOLD) for j in range(len(aspects))]
            per_hotel.append((lex, emb))
            missed = [a for a, hit in zip(aspects, lex, strict=True) if not hit]
            details.append(f"| {label} | {entity.key} | {', '.join(missed) or '-'} | {', '.join(found)} |")
        timings.append(f"- {label}: discovery {spent:.1f} s for {len(entities)} hotels (namer included)")
        for criterion, k in (("lexicon", 0), (f"lexicon or cosine >= {EMBEDDING_THRESHOLD}", 1)):
            matrix = np.array([row[k] for row in per_hotel], dtype=bool)
            per_aspect = " | ".join(f"{matrix[:, j].mean():.0%}" for j in range(len(aspects)))
            lines.append(
                f"| {label} | {criterion} | {int(matrix.sum())} ({matrix.mean():.0%}) | "
                f"{int(matrix.all(axis=1).sum())} of {len(entities)} | {per_aspect} |"
            )
    lines.append("")
    lines += timings
    for label, found in examples.items():
        lines.append(f"- {label}, hotel {entities[0].key}: {', '.join(found)}")
    lines += ["", "Per hotel (lexicon criterion):", ""]
    lines += ["| namer | hotel | missed | top-10 labels |", "|---|---|---|---|"]
    return lines + details


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, default=1500, help="reviews of the main synthetic entity")
    parser.add_argument("--store", type=Path, default=None, help="keep the indexes here (default: temporary)")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--skip-space", action="store_true")
    parser.add_argument(
        "--seeds", default="", help="comma-separated unseen seeds: 4 x 300 reviews each (see seeds_section)"
    )
    parser.add_argument("--namers", default="before,after", help="which namers to score (before, after)")
    args = parser.parse_args()
    encoder = get_encoder()
    chosen = set(args.namers.split(","))
    namers = {
        name: namer
        for key, name, namer in (
            ("before", "before (c-TF-IDF)", CtfidfNamer()),
            ("after", "after (noun phrases)", PhraseNamer()),
        )
        if key in chosen
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = args.store or Path(tmp)
        if args.seeds:
            seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
            print("\n".join(seeds_section(root, encoder, seeds, namers)))
            print(flush=True)
        if not args.skip_synthetic:
            print("\n".join(synthetic_section(root / f"synth-{args.reviews}", encoder, args.reviews, namers)))
            print(flush=True)
        if not args.skip_space:
            print("\n".join(space_section(root / "space-dev", encoder, namers)))


if __name__ == "__main__":
    main()
