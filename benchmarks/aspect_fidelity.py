"""Query-free highlights that are about their aspect: how many talk about something else?

For every query-free highlight (``OpinioRAG.query_free_highlights``, the default
offline path) of each SPACE dev hotel, two independent signals say whether its
text discusses the aspect it is shown under (its ``query``):

1. **verifier**: the aspect test of the per-highlight verifier
   (:mod:`opinio_agents.synthesis.verification`): a triplet of the text (embedded
   AOS extractor) whose aspect matches the highlight's aspect or is at least
   ``VerificationSettings.aspect_similarity`` similar to it (MiniLM), or the aspect's words in the text;
2. **mention**: the one definition of an aspect mention
   (:func:`opinio_agents.synthesis.support.mention_mask` with ``named``, as every count of an
   aspect): the aspect's most specific word (or most of its words) or a word that also names it
   (:func:`~opinio_agents.synthesis.support.aspect_forms`: "wi-fi" for internet) in the text, or
   MiniLM cosine with the aspect of at least 0.45 (and above its generic words).

3. **target** (a third, stricter signal): the aspect's name is an opinion target of the
   text for the triplet extractor aspect naming uses
   (:meth:`opinio_agents.hiro.labels.ClusterNamer.judged`; attribute nouns such as
   ``cleanliness`` always count).

4. **aside** (a fourth, lexical signal): the text is a first-person account that names the
   aspect only after a place preposition ("we spent more time in the room",
   :func:`opinio_agents.synthesis.selection.names_only_in_passing` with the aspect's mention forms).

A highlight is *off-aspect* for a signal when that signal finds no mention (or, for the aside, finds the aside); the
table gives the counts, the highlights off-aspect for both of the first two, and examples.

A second table reads the **quotes** (the cited review sentences a reader checks a highlight against): how many
do not mention the highlight's aspect (signal 2 over the entity's stored sentences), and how many are asides
(signal 4 with the aspect's mention forms).
Highlights of the ``overall`` aspect (small entities' sentences no aspect holds) are
not counted.

Usage:
    python benchmarks/aspect_fidelity.py                      # SPACE dev (../shared), store under /tmp
    python benchmarks/aspect_fidelity.py --entities 5 --store /tmp/x
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

import numpy as np
from data_paths import real_reviews_file  # this folder's module (the script runs from here)

SPACE = real_reviews_file("space_dev.json")


def text_mentions(
    query: str,
    text: str,
    stored: list,  # type: ignore[type-arg]
    *,
    vector: np.ndarray | None = None,
    embeddings: np.ndarray | None = None,
    query_vector: np.ndarray | None = None,
    generic_vectors: np.ndarray | None = None,
) -> bool:
    """The mention signal: whether ``text`` mentions the aspect ``query`` by the one definition.

    :func:`~opinio_agents.synthesis.support.mention_mask` with ``named`` (the words that also name the
    aspect count, as in every count of it), the text scored as one more of the entity's ``stored``
    sentences (the IDFs are theirs); dense too when the embeddings are given.
    """
    from opinio_agents.models import Sentence
    from opinio_agents.stores.catalog import StoredSentence
    from opinio_agents.synthesis.support import mention_mask
    from opinio_agents.text.preprocess import tokenize_for_bm25

    row = StoredSentence(
        Sentence(sentence_id="x:x:0", entity_id="x", review_id="x", index=0, text=text, start=0, end=len(text)),
        tuple(tokenize_for_bm25(text)),
        0.0,
    )
    matrix = None if embeddings is None or vector is None else np.vstack([embeddings, vector])
    mask = mention_mask(
        query, [*stored, row], embeddings=matrix, query_embedding=query_vector if matrix is not None else None,
        generic_embeddings=generic_vectors, named=True,
    )
    return bool(mask[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=SPACE)
    parser.add_argument("--store", type=Path, default=Path(tempfile.gettempdir()) / "opinio-aspect-fidelity")
    parser.add_argument("--entities", type=int, default=None, help="only the first N entities")
    parser.add_argument("--examples", type=int, default=8)
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"no data at {args.data}; nothing to run")
        return 0

    from opinio_agents.api import OpinioRAG
    from opinio_agents.hiro.aspects import discover_aspects, namer_for
    from opinio_agents.hiro.highlights import QUERY_FREE_SETTINGS, aspect_forms
    from opinio_agents.models import Entity, Polarity
    from opinio_agents.synthesis.selection import agreeing_points, is_first_person, names_only_in_passing
    from opinio_agents.synthesis.support import generic_terms, mention_mask
    from opinio_agents.synthesis.verification import HighlightVerifier, _discussed
    from opinio_agents.triplets.aspects import aspect_words

    entities = [Entity.model_validate(r) for r in json.loads(args.data.read_text(encoding="utf-8"))]
    if args.entities:
        entities = entities[: args.entities]
    rag = OpinioRAG(store_dir=args.store)
    rag.index(entities, show_progress=True)
    verifier = HighlightVerifier(encoder=rag.encoder)
    encoder = rag.encoder
    namer = namer_for(rag.store)
    total = off_verifier = off_mention = off_both = off_target = asides = 0
    quotes = quotes_off = quotes_aside = 0
    quote_examples: list[str] = []
    side_points = side_off = 0
    side_examples: list[str] = []
    examples: list[str] = []
    per_entity: list[str] = []
    for entity in entities:
        result = rag.query_free_highlights(entity.key)
        stored = rag.store.sentences(entity.key)
        shown = [h for h in [*result.pros, *result.cons] if h.query != "overall"]
        if not shown:
            continue
        forms = {
            a.aspect: aspect_forms(a)
            for a in discover_aspects(
                rag.hiro, entity.key, top_k=8, alpha=QUERY_FREE_SETTINGS.alpha,
                clusters_per_aspect=QUERY_FREE_SETTINGS.clusters_per_aspect,
                second_aspects=QUERY_FREE_SETTINGS.second_aspects,
            )
        }
        triplets = verifier.triplets([h.text for h in shown])
        vectors = np.asarray(encoder.encode([h.text for h in shown]))
        embeddings = rag.store.embeddings(entity.key)
        # per aspect query: its embedding and its generic words' (both loops below read them)
        encoded: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
        for query in dict.fromkeys(h.query for h in shown):
            generic = generic_terms(query, stored)
            encoded[query] = (
                np.asarray(encoder.encode([query]))[0],
                np.asarray(encoder.encode(generic)) if generic else None,
            )
        bad = 0
        for h, found, vector in zip(shown, triplets, vectors, strict=True):
            total += 1
            targeted = namer.judged([h.query], [h.text])
            not_target = targeted is not None and not targeted[0]
            off_target += not_target
            points = [p for p in h.text.replace("! ", ". ").split(". ") if p.strip()]
            aside = any(
                is_first_person(p) and names_only_in_passing(p, forms.get(h.query, [h.query])) for p in points
            )
            asides += aside
            words = set(aspect_words(h.text))
            by_verifier = _discussed(h.query, found, words, verifier.similarity, (h.text,))
            query_vector, generic_vectors = encoded[h.query]
            by_mention = text_mentions(
                h.query, h.text, stored, vector=vector, embeddings=embeddings, query_vector=query_vector,
                generic_vectors=generic_vectors,
            )
            off_verifier += not by_verifier
            off_mention += not by_mention
            if not by_verifier and not by_mention:
                off_both += 1
            if not by_verifier or not by_mention or not_target or aside:
                bad += 1
                if len(examples) < args.examples:
                    which = "verifier" if by_mention else ("mention" if by_verifier else "both")
                    which = which if not by_verifier or not by_mention else ("target" if not_target else "aside")
                    examples.append(f"- {entity.key} {h.query!r} {h.polarity.value} (off for {which}): {h.text!r}")
        row_of = {s.sentence.sentence_id: i for i, s in enumerate(stored)}
        masks = {
            query: mention_mask(
                query, stored, embeddings=embeddings, query_embedding=query_vector,
                generic_embeddings=generic_vectors, named=True,
            )
            for query, (query_vector, generic_vectors) in encoded.items()
        }
        for h in shown:
            mask = masks[h.query]
            for e in h.evidence:
                quotes += 1
                row = row_of.get(e.sentence_id)
                off = row is None or not bool(mask[row])
                aside = is_first_person(e.text) and names_only_in_passing(e.text, forms.get(h.query, [h.query]))
                quotes_off += off
                quotes_aside += aside
                if (off or aside) and len(quote_examples) < args.examples:
                    why = "no mention" if off else "aside"
                    quote_examples.append(f"- {entity.key} {h.query!r} {h.polarity.value} ({why}): {e.text!r}")
        for h in shown:  # each key point read by the review lexicon: a PRO that only complains, a CON that praises
            sign = 1 if h.polarity is Polarity.PROS else -1
            for point in (p for p in re.split(r"(?<=[.!?])\s+", h.text) if p.strip()):
                side_points += 1
                if not agreeing_points([point], [0], sign):
                    side_off += 1
                    if len(side_examples) < args.examples:
                        side_examples.append(f"- {entity.key} {h.query!r} {h.polarity.value}: {point!r}")
        per_entity.append(f"{entity.key}: {bad} of {len(shown)}")
    rag.close()
    print(f"### Query-free highlights about their aspect ({len(entities)} entities of {args.data.name})\n")
    print(
        "| highlights | off-aspect (verifier) | off-aspect (mention) | off for both | not an opinion target "
        "| first-person aside |"
    )
    print("|---|---|---|---|---|---|")
    share = lambda n: f"{n} ({n / total:.1%})" if total else "0"  # noqa: E731
    print(
        f"| {total} | {share(off_verifier)} | {share(off_mention)} | {share(off_both)} | {share(off_target)} "
        f"| {share(asides)} |\n"
    )
    print("\n".join(examples) or "- none")
    print("\nper entity (off for any signal): " + ", ".join(per_entity))
    print("\n### Their quotes\n")
    print("| quotes | not mentioning the aspect | first-person aside |")
    print("|---|---|---|")
    qshare = lambda n: f"{n} ({n / quotes:.1%})" if quotes else "0"  # noqa: E731
    print(f"| {quotes} | {qshare(quotes_off)} | {qshare(quotes_aside)} |\n")
    print("\n".join(quote_examples) or "- none")
    print(
        "\n### Their key points' sides (`selection.agreeing_points`: the lexicon reads the other side, "
        "or a PRO only complains)\n"
    )
    print("| key points | read as the other side |")
    print("|---|---|")
    print(f"| {side_points} | {side_off} ({side_off / side_points:.1%}) |\n" if side_points else "| 0 | 0 |\n")
    print("\n".join(side_examples) or "- none")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
