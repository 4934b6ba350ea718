"""Extractive synthesizer: the default when no LLM is configured.

This is the paper's retrieval-only ablation done carefully. For each query:

1. **Side.** The entity-wide :class:`~opinio_agents.models.Support` decides
   which side the opinion falls on (share of positive vs negative reviews that
   mention the query); the top-K evidence decides when support is empty. When
   reviews split (the minority side holds at least ``split_threshold`` of the
   reviews that mention the query, :func:`~opinio_agents.synthesis.support.shown_sides`,
   and has at least ``min_side_evidence`` evidence sentences) the query yields a PRO *and* a CON.
2. **Sentence.** Among the evidence on that side, pick the one that best states
   the majority opinion: central (mean cosine similarity to the other evidence
   on that side), clearly opinionated (|sentiment|), on topic (mentions the
   query), short and stated generally. Each candidate is scored as the key point
   it becomes (step 3), so the trimmed clause is what gets judged.
3. **Key point.** Trim it to key-point style (:func:`to_key_point`). Clause-level relevance:
   a sentence that talks about several aspects ("Great hotel, friendly staff, and nice
   central location") keeps only its pieces about the query (:func:`aspect_segments`,
   :func:`focused_text`), so "location" reads "Nice central location."; the best candidates are
   cut before the key points are chosen, so the cut point is what gets scored. The quotes stay
   the reviews' whole sentences.

Example:
    >>> synth = ExtractiveSynthesizer()                          # doctest: +SKIP
    >>> [h.text for h in synth.synthesize(query_evidence)]       # doctest: +SKIP
    ['Free, fast wi-fi throughout the hotel.']
"""

from __future__ import annotations

import numpy as np

from opinio_agents.embeddings import Encoder, get_encoder
from opinio_agents.errors import ConfigError
from opinio_agents.models import SENTIMENT_THRESHOLD, Evidence, Highlight, Polarity, QueryEvidence, Support
from opinio_agents.synthesis.base import Synthesizer
from opinio_agents.synthesis.keypoint import (
    KEY_POINT_SETTINGS,
    aspect_segments,
    focused_text,
    to_key_point,
)
from opinio_agents.synthesis.selection import (
    SELECTION_SETTINGS,
    SelectionWeights,
    adding_points,
    agreeing_points,
    is_narrative,
    lead_scores,
    minority_points,
    opinion_points,
    score_candidates,
    select_points,
    supported_points,
)
from opinio_agents.synthesis.support import SIDE_SHARE, aspect_forms, aspect_parts, shown_sides, uses_any
from opinio_agents.text.duplicates import distinct_indices
from opinio_agents.text.polarity import evidence_polarity

__all__ = ["ExtractiveSynthesizer", "evidence_polarity"]

#: How far past its budget a highlight's words may run for a further point (``select_points``' default).
_OVERSHOOT = 1.25

class ExtractiveSynthesizer(Synthesizer):
    """Query-focused extractive PROS/CONS from retrieved evidence, no LLM needed.

    The defaults are :data:`~opinio_agents.synthesis.keypoint.KEY_POINT_SETTINGS` (``split_threshold``:
    :data:`~opinio_agents.synthesis.support.SIDE_SHARE`).

    Args:
        encoder: Sentence encoder for centrality (the shared MiniLM by default).
        split_threshold: Share of the reviews mentioning the query the other side needs to get
            a highlight too (:data:`~opinio_agents.synthesis.support.SIDE_SHARE`, the one rule of
            :func:`~opinio_agents.synthesis.support.shown_sides`).
        min_side_evidence: Evidence sentences a side needs to get a highlight.
        max_cited: Evidence sentences cited per highlight.
        max_words: Word cap of a key point (cut at a clause boundary).
        max_points: Key points of the majority side (the minority side gets one fewer).
        budget_words: Word budget of a query's key points.
        majority_share: Share of the budget the majority side gets when a query splits.
        mmr_lambda: MMR trade-off between score and novelty of a further point.
        max_pool: Support-set sentences a side chooses from at most.
        weights: Selection weights (``SelectionSettings.query_weights``),
            applied to the candidates as trimmed key points (:func:`to_key_point`).
        min_point_support: A further key point stays only when at least this share of the
            side's candidates is nearer to it than to the earlier points
            (:func:`~opinio_agents.synthesis.selection.supported_points`): a distinct,
            shared sub-opinion. 0 keeps every MMR point.
        agree_sentences: A third (or later) key point also needs this many candidates nearer to it
            than to the earlier points.
        clause_margin: A candidate key point that talks about several aspects (:func:`aspect_segments`)
            keeps the pieces whose cosine with the query is within this margin of its best piece's;
            None keeps whole points.
        clause_ratio: A piece also needs at least this share of the best piece's cosine.
        focus_candidates: How many of a side's best-scored candidates are cut that way.
        drop_narrative: Candidates that tell what the reviewer did
            (:func:`~opinio_agents.synthesis.selection.is_narrative`) are no key points while the side has
            another one (None: ``SelectionSettings.drop_narrative``); they can still be quoted.
        mentions_share: A side's key points come only from its candidates that mention the query
            (``item.mentions``) when those make at least this share of its distinct candidates and
            ``min_side_evidence`` of them (:meth:`_mentions_only`).
        named_share: Among those, only the candidates that name the query by a word (``item.named``) when
            they make at least this share of them (distinct statements) and ``min_side_evidence`` of them
            (:meth:`_named_only`); None: no such preference.
        must_judge: Key points state an opinion (:func:`~opinio_agents.synthesis.keypoint.is_opinion`) while
            the side has a candidate that does: no facts ("Check-in is at 2.").
            A side whose candidates are all bare phrases (:func:`~opinio_agents.synthesis.selection.says_nothing`:
            "Quantity.", "Waiting time.") gets no highlight.
        part_point: Where the majority side's key points name no part of the aspect
            (:func:`~opinio_agents.synthesis.support.aspect_parts`: the bed, the lobby, the station) and
            ``part_candidates`` of its other candidates do, the best-scored of those joins (:meth:`_with_part`).
        part_candidates: How many of the side's other candidates must name a part for ``part_point``.
        lead_voice: The majority side's first key point (the answer's first sentence) is chosen by its score plus
            this when it speaks of the thing in the third person
            (:func:`~opinio_agents.synthesis.selection.lead_scores`); 0 with ``lead_length`` 0: the best-scored
            point leads. The minority side's points follow the answer's opening and keep their MMR order.
        lead_length: Plus this times its share of ``lead_words`` words.
        lead_words: Words at which a lead point's length stops counting.
        lead_third_person: The ``lead_voice`` credit only for a point with no first-person word anywhere.
        aspect_clause: A key point keeps the clause that names the query by its words or by the words that also
            name it (:func:`~opinio_agents.synthesis.support.aspect_forms`), not only by the query's own words
            ("The room was tiny but the breakfast was excellent" under food: "The breakfast was excellent.").
    """

    name = "extractive"

    def __init__(
        self,
        encoder: Encoder | None = None,
        *,
        split_threshold: float = SIDE_SHARE,
        min_side_evidence: int = KEY_POINT_SETTINGS.min_side_evidence,
        max_cited: int = KEY_POINT_SETTINGS.max_cited,
        max_words: int = KEY_POINT_SETTINGS.query_max_words,
        max_points: int = KEY_POINT_SETTINGS.max_points,
        budget_words: int = KEY_POINT_SETTINGS.budget_words,
        majority_share: float = KEY_POINT_SETTINGS.majority_share,
        mmr_lambda: float = KEY_POINT_SETTINGS.mmr_lambda,
        max_pool: int = KEY_POINT_SETTINGS.max_pool,
        weights: SelectionWeights = SELECTION_SETTINGS.query_weights,
        min_point_support: float = KEY_POINT_SETTINGS.min_point_support,
        agree_sentences: int = KEY_POINT_SETTINGS.agree_sentences,
        clause_margin: float | None = KEY_POINT_SETTINGS.clause_margin,
        clause_ratio: float = KEY_POINT_SETTINGS.clause_ratio,
        focus_candidates: int = KEY_POINT_SETTINGS.focus_candidates,
        drop_narrative: bool | None = None,
        mentions_share: float = KEY_POINT_SETTINGS.mentions_share,
        named_share: float | None = KEY_POINT_SETTINGS.named_share,
        must_judge: bool = KEY_POINT_SETTINGS.must_judge,
        aspect_clause: bool = KEY_POINT_SETTINGS.aspect_clause,
        part_point: bool = KEY_POINT_SETTINGS.part_point,
        part_candidates: int = KEY_POINT_SETTINGS.part_candidates,
        lead_voice: float = KEY_POINT_SETTINGS.lead_voice,
        lead_length: float = KEY_POINT_SETTINGS.lead_length,
        lead_words: int = KEY_POINT_SETTINGS.lead_words,
        lead_third_person: bool = KEY_POINT_SETTINGS.lead_third_person,
    ) -> None:
        super().__init__()
        if not 0.0 < split_threshold <= 0.5:
            raise ConfigError(f"split_threshold={split_threshold} must be in (0, 0.5]")
        if min_side_evidence < 1 or max_cited < 1:
            raise ConfigError("min_side_evidence and max_cited must be >= 1")
        self._encoder = encoder
        self.split_threshold = split_threshold
        self.min_side_evidence = min_side_evidence
        self.max_cited = max_cited
        self.max_words = max_words
        if max_points < 1 or budget_words < 1 or max_pool < 2:
            raise ConfigError("max_points and budget_words must be >= 1, max_pool >= 2")
        if not 0.0 <= min_point_support < 1.0:
            raise ConfigError(f"min_point_support={min_point_support} must be in [0, 1)")
        if not 0.5 <= majority_share <= 1.0:
            raise ConfigError(f"majority_share={majority_share} must be in [0.5, 1]")
        self.max_points = max_points
        self.budget_words = budget_words
        self.majority_share = majority_share
        self.mmr_lambda = mmr_lambda
        self.max_pool = max_pool
        self.weights = weights
        self.min_point_support = min_point_support
        self.agree_sentences = agree_sentences
        if clause_margin is not None and clause_margin < 0:
            raise ConfigError(f"clause_margin={clause_margin} must be >= 0 (or None)")
        if focus_candidates < 0:
            raise ConfigError(f"focus_candidates={focus_candidates} must be >= 0")
        if not 0.0 <= clause_ratio <= 1.0:
            raise ConfigError(f"clause_ratio={clause_ratio} must be in [0, 1]")
        self.clause_margin = clause_margin
        self.clause_ratio = clause_ratio
        self.focus_candidates = focus_candidates
        self.drop_narrative = SELECTION_SETTINGS.drop_narrative if drop_narrative is None else drop_narrative
        if not 0.0 <= mentions_share <= 1.0:
            raise ConfigError(f"mentions_share={mentions_share} must be in [0, 1]")
        self.mentions_share = mentions_share
        if named_share is not None and not 0.0 <= named_share <= 1.0:
            raise ConfigError(f"named_share={named_share} must be in [0, 1] (or None)")
        self.named_share = named_share
        self.must_judge = must_judge
        self.aspect_clause = aspect_clause
        if part_candidates < 1:
            raise ConfigError(f"part_candidates={part_candidates} must be >= 1")
        self.part_point = part_point
        self.part_candidates = part_candidates
        if lead_words < 1:
            raise ConfigError(f"lead_words={lead_words} must be >= 1")
        self.lead_voice = lead_voice
        self.lead_length = lead_length
        self.lead_words = lead_words
        self.lead_third_person = lead_third_person

    @property
    def encoder(self) -> Encoder:
        """The sentence encoder (shared MiniLM unless one was given)."""
        if self._encoder is None:
            self._encoder = get_encoder()
        return self._encoder

    def sides(self, item: QueryEvidence) -> list[Polarity]:
        """Which side(s) the query's opinion falls on, majority first.

        The sides :func:`~opinio_agents.synthesis.support.shown_sides` gives the entity-wide
        support (the top-K evidence's own counts when support is empty), each kept when it has
        evidence to quote: the majority side any, the other side ``min_side_evidence`` sentences.
        """
        pos_ev = [e for e in item.evidence if (e.sentiment or 0.0) > SENTIMENT_THRESHOLD]
        neg_ev = [e for e in item.evidence if (e.sentiment or 0.0) < -SENTIMENT_THRESHOLD]
        support = item.support
        if not support.positive + support.negative:
            support = Support(reviews=len(pos_ev) + len(neg_ev), positive=len(pos_ev), negative=len(neg_ev))
        wanted = shown_sides(support, share=self.split_threshold)
        if not wanted:
            return []
        majority = wanted[0]
        minority = Polarity.CONS if majority is Polarity.PROS else Polarity.PROS
        count = {Polarity.PROS: len(pos_ev), Polarity.CONS: len(neg_ev)}
        if item.pool:  # the support set's sentences on each side count too, not only the top-K's
            pool = [e for e in item.pool if item.mentions is None or e.sentence_id in item.mentions]
            for side, sign in ((Polarity.PROS, 1), (Polarity.CONS, -1)):
                on_side = sum(sign * (e.sentiment or 0.0) > SENTIMENT_THRESHOLD for e in pool)
                count[side] = max(count[side], on_side)
        out = [majority] if count[majority] else []
        if minority in wanted and count[minority] >= self.min_side_evidence:
            out.append(minority)
        if not out and count[minority] >= self.min_side_evidence:
            # Support says one thing, but the retrieved evidence only shows the other side.
            out.append(minority)
        return out

    def synthesize(self, item: QueryEvidence) -> list[Highlight]:
        """Up to one PRO and one CON for the query, each citing its evidence.

        With the entity-wide support set (``item.pool``), a side's key points
        are chosen from every sentence about the query on that side
        (:mod:`~opinio_agents.synthesis.selection`); without it, from the top-K evidence.
        """
        highlights: list[Highlight] = []
        sides = self.sides(item)
        # The words that also name the aspect pick the clause about it (best_clause), as the query's own words do.
        terms = [" ".join(form) for form in aspect_forms(item.query)] if self.aspect_clause else []
        parts = aspect_parts(item.query) if self.part_point else ()
        for rank, side in enumerate(sides):
            sign = 1 if side is Polarity.PROS else -1
            candidates, vectors = self._side_candidates(item, sign)
            if not candidates:
                continue
            majority = rank == 0
            share = 1.0 if len(sides) == 1 else (self.majority_share if majority else 1.0 - self.majority_share)
            budget = max(1, round(self.budget_words * share))
            max_points = self.max_points if majority else max(1, self.max_points - 1)
            texts = [c.text for c in candidates]
            # Scored as the key points they become (trimmed clause, no filler): what the reader gets.
            points = [to_key_point(t, item.query, sign=sign, max_words=self.max_words, terms=terms) for t in texts]
            sentiments = [c.sentiment or 0.0 for c in candidates]
            scores = score_candidates(
                points, vectors, sentiments=sentiments, query_vector=item.query_vector, weights=self.weights
            )
            vectors = np.array(vectors, dtype=float)  # a copy: the cut points' rows are replaced
            if self._focus(points, vectors, scores, item):  # the cut points are what gets scored
                scores = score_candidates(
                    points, vectors, sentiments=sentiments, query_vector=item.query_vector, weights=self.weights
                )
            # The key point as shown must not read as the other side (its clause about the query can: "Taste
            # is good but the service was really poor" under a taste CON); a side without one says nothing.
            kept = agreeing_points(points, range(len(points)), sign, query=item.query, terms=terms)
            if not majority:  # a minority side's point needs a second signal besides the sentiment head
                kept = minority_points(points, kept, sign, [sign * v for v in sentiments])
            if not kept:
                continue
            # Opinions, not accounts of what a reviewer did (is_narrative), while the side has one.
            told = [i for i in kept if not (self.drop_narrative and is_narrative(points[i]))]
            told = told or kept
            if self.must_judge:  # opinions, not facts ("Check-in is at 2.", "They advertise a free shuttle.")
                told = opinion_points(points, told, item.query)
                if not told:  # only bare phrases ("Quantity.", "Waiting time."): nothing to say
                    continue
            told_points = [points[i] for i in told]
            lead = None
            if majority and (self.lead_voice or self.lead_length):  # the answer opens with a full statement
                lead = lead_scores(
                    told_points,
                    scores[told],
                    voice=self.lead_voice,
                    length=self.lead_length,
                    words=self.lead_words,
                    third_person=self.lead_third_person,
                )
            chosen = select_points(
                told_points,
                vectors[told],
                scores[told],
                max_points=max_points,
                budget_words=budget,
                mmr_lambda=self.mmr_lambda,
                lead=lead,
            )
            chosen = [told[j] for j in chosen]
            if SELECTION_SETTINGS.points_add:  # a further point that adds nothing is left out
                chosen = adding_points(points, chosen)
            if len(chosen) > 1 and self.min_point_support > 0:
                chosen = supported_points(
                    vectors, chosen, min_share=self.min_point_support, min_count=self.agree_sentences
                )
            chosen = [chosen[j] for j in distinct_indices([texts[i] for i in chosen])]  # no point said twice
            if majority and parts:  # a point about a part of the aspect where reviewers talk of one
                chosen = self._with_part(points, texts, told, chosen, scores, parts, budget)
            order = chosen + [int(i) for i in np.argsort(-scores, kind="stable") if int(i) not in chosen]
            # Quotes are what the reader checks the highlight against: beyond the key points' own
            # sentences, only mentions of the aspect (the one definition, ``item.mentions``) that
            # state the side clearly (not "Our room was on the fourth floor." stored at +0.12).
            order = [
                i
                for i in order
                if i in chosen
                or (
                    (item.mentions is None or candidates[i].sentence_id in item.mentions)
                    and sign * (candidates[i].sentiment or 0.0) >= KEY_POINT_SETTINGS.quote_sentiment
                )
            ]
            ranked = [_scored(candidates[i], float(scores[i])) for i in order]
            keep = distinct_indices(
                [e.text for e in ranked], limit=max(self.max_cited, len(chosen)), keep=range(len(chosen))
            )
            cited = [ranked[j] for j in keep]
            leaning = evidence_polarity(cited)
            text = " ".join(points[i] for i in chosen)
            highlights.append(
                Highlight(
                    query=item.query,
                    polarity=side,
                    text=text[:600],
                    evidence=cited,
                    support=item.support,
                    evidence_polarity=leaning,
                    polarity_agrees=leaning is None or leaning is side,
                )
            )
        return highlights

    def _with_part(
        self,
        points: list[str],
        texts: list[str],
        told: list[int],
        chosen: list[int],
        scores: np.ndarray,
        parts: tuple[tuple[str, ...], ...],
        budget: int,
    ) -> list[int]:
        """``chosen`` with a key point about a part of the aspect (``part_point``), where it names none.

        The side's candidates (``told``) that name one of ``parts`` besides the chosen ones must be at least
        ``part_candidates``; the best-scored of them follows the chosen points while they are fewer than
        ``max_points`` and their words fit the budget's overshoot (as
        :func:`~opinio_agents.synthesis.selection.select_points` allows a further point), else it takes the last
        point's place (the first point always stays): 2-3 sentences. A candidate whose sentence says what a chosen
        one's says (:func:`~opinio_agents.text.duplicates.distinct_indices`, over the review sentences ``texts``)
        is not taken.
        """
        if not chosen or any(uses_any(points[i], parts) for i in chosen):
            return chosen
        naming = [i for i in told if i not in chosen and uses_any(points[i], parts)]
        said = [texts[i] for i in chosen]
        fresh = [i for i in naming if len(distinct_indices([*said, texts[i]])) > len(said)]
        if len(naming) < self.part_candidates or not fresh:
            return chosen
        best = max(fresh, key=lambda i: (float(scores[i]), -i))
        words = sum(len(points[i].split()) for i in chosen) + len(points[best].split())
        if len(chosen) == 1 or (len(chosen) < self.max_points and words <= budget * _OVERSHOOT):
            return [*chosen, best]
        return [*chosen[:-1], best]

    def _focus(self, points: list[str], vectors: np.ndarray, scores: np.ndarray, item: QueryEvidence) -> bool:
        """Cut the best-scored points that talk about several aspects to their pieces about the query, in place.

        Clause-level relevance (``clause_margin``, ``clause_ratio``): the pieces of each of the
        ``focus_candidates`` best-scored points (:func:`aspect_segments`) are embedded and compared with
        the query; a point keeps the pieces near its best piece (:func:`focused_text`), and a cut
        point's row of ``vectors`` becomes the embedding of the cut text. Whether any point was cut.
        """
        if self.clause_margin is None or item.query_vector is None or not self.focus_candidates:
            return False
        top = [int(i) for i in np.argsort(-scores, kind="stable")[: self.focus_candidates]]
        pieces = {i: aspect_segments(points[i]) for i in top}
        pieces = {i: p for i, p in pieces.items() if len(p) > 1}
        if not pieces:
            return False
        flat = [p for parts in pieces.values() for p in parts]
        relevance = np.asarray(self.encoder.encode(flat), dtype=float) @ np.asarray(item.query_vector, dtype=float)
        cut: dict[int, str] = {}
        at = 0
        for i, parts in pieces.items():
            text = focused_text(
                parts, relevance[at : at + len(parts)].tolist(), margin=self.clause_margin, ratio=self.clause_ratio
            )
            at += len(parts)
            if text is not None:
                cut[i] = text
        if not cut:
            return False
        rows = list(cut)
        vectors[rows] = np.asarray(self.encoder.encode([cut[i] for i in rows]), dtype=vectors.dtype)
        for i in rows:
            points[i] = cut[i]
        return True

    def _side_candidates(self, item: QueryEvidence, sign: int) -> tuple[list[Evidence], np.ndarray]:
        """The sentences on one side to choose from, with their embeddings.

        The support set's sentences on that side when the pipeline passed one
        (plus any top-K evidence on that side it lacks), else the top-K evidence.
        """
        on_side = [e for e in item.evidence if sign * (e.sentiment or 0.0) > SENTIMENT_THRESHOLD]
        on_side = [e for e, ok in zip(on_side, _not_against([e.text for e in on_side], sign)) if ok]
        if item.pool and item.pool_vectors is not None and len(item.pool_vectors) == len(item.pool):
            rows = [i for i, e in enumerate(item.pool) if sign * (e.sentiment or 0.0) > SENTIMENT_THRESHOLD]
            if sign > 0:  # a critical complaint (bed bugs, theft...) never backs a PRO, whatever its score
                from opinio_agents.synthesis.alerts import find_critical

                rows = [i for i in rows if not find_critical(item.pool[i].text)]
            if len(rows) > self.max_pool:
                rows = self._nearest(item.pool_vectors, item.query_vector, rows)
            rows = [r for r, ok in zip(rows, _not_against([item.pool[i].text for i in rows], sign)) if ok]
            pool = [item.pool[i] for i in rows]
            known = {e.sentence_id for e in pool}
            retrieved = {e.sentence_id: e for e in item.evidence}
            pool = [retrieved.get(e.sentence_id, e) for e in pool]
            extra = [e for e in on_side if e.sentence_id not in known]
            vectors = item.pool_vectors[rows] if rows else np.zeros((0, item.pool_vectors.shape[1]))
            if extra:
                more = self._vectors_of(item, extra)
                vectors = np.vstack([vectors, more]) if len(vectors) else more
            if pool or extra:
                return self._mentions_only(item, pool + extra, vectors)
        if not on_side:
            return [], np.zeros((0, 1))
        return self._mentions_only(item, on_side, self._vectors_of(item, on_side))

    def _mentions_only(
        self, item: QueryEvidence, candidates: list[Evidence], vectors: np.ndarray
    ) -> tuple[list[Evidence], np.ndarray]:
        """The candidates that mention the query (``item.mentions``), when the side has enough of them.

        Counted as distinct statements (:func:`~opinio_agents.text.duplicates.distinct_indices`): on the
        sample, "There is a supermarket around the corner for snacks and water." stands in 20 reviews, so
        it counts once. A side keeps only its mentions when they make ``mentions_share`` of its distinct
        candidates and ``min_side_evidence`` of them; else it keeps its few mentions as they are (none: the
        side is dropped), never the sentences that do not mention the query.

        So every key point and quote of a highlight is about its aspect ("We were upgraded to a slightly
        larger room" is no room-decor PRO, "a supermarket around the corner" no breakfast-buffet quote).
        The rule once needed the mentions to be half of the candidates, since the mention match missed how
        broad aspects are talked about (filtering regardless cost SPACE dev aspect ROUGE-L 24.3 -> 22.7);
        with the words that also name an aspect counted
        (:func:`~opinio_agents.synthesis.support.aspect_forms`) it gains instead (figures in
        ``benchmarks/README.md``).

        Then the ones that name the query by a word (``item.named``, :meth:`_named_only`) when they say most
        of it: on the sample, "There is a supermarket around the corner for snacks and water." is a mention
        of "restaurant" only by its embedding (cosine 0.455), and most of the side's mentions say "restaurant".
        """
        if item.mentions is None:
            return candidates, vectors
        rows, enough = self._rows_in(candidates, item.mentions, self.mentions_share)
        if len(rows) == len(candidates):
            return self._named_only(item, candidates, vectors)
        if not enough:
            # Too few to choose among by name, but never a sentence that does not mention the query: on
            # a Zomato restaurant the "waiting time" PRO was "Had a great time here..." (no mention of a
            # wait); with no mention at all the side has nothing to say.
            return [candidates[i] for i in rows], vectors[rows]
        return self._named_only(item, [candidates[i] for i in rows], vectors[rows])

    def _rows_in(self, candidates: list[Evidence], ids: frozenset[str], share: float) -> tuple[list[int], bool]:
        """The rows of ``candidates`` whose sentence is in ``ids``, and whether they say enough: at least
        ``min_side_evidence`` distinct statements and ``share`` of what all the candidates say (counted as
        distinct statements: one guest's sentence copied into twenty reviews is one)."""
        rows = [i for i, e in enumerate(candidates) if e.sentence_id in ids]
        said = len(distinct_indices([e.text for e in candidates]))
        said_by_rows = len(distinct_indices([candidates[i].text for i in rows]))
        return rows, said_by_rows >= max(self.min_side_evidence, said * share)

    def _named_only(
        self, item: QueryEvidence, candidates: list[Evidence], vectors: np.ndarray
    ) -> tuple[list[Evidence], np.ndarray]:
        """The candidates that name the query by a word (``item.named``), when they say ``named_share`` of what
        the side's candidates say (distinct statements) and ``min_side_evidence`` of them."""
        if item.named is None or self.named_share is None:
            return candidates, vectors
        rows, enough = self._rows_in(candidates, item.named, self.named_share)
        if len(rows) == len(candidates) or not enough:
            return candidates, vectors
        return [candidates[i] for i in rows], vectors[rows]

    def _nearest(self, pool_vectors: np.ndarray, query_vector: np.ndarray | None, rows: list[int]) -> list[int]:
        """The ``max_pool`` rows of the support set nearest the query (the first ones without a query vector)."""
        if query_vector is None:
            return rows[: self.max_pool]
        sims = pool_vectors[rows] @ query_vector
        keep = np.argsort(-sims, kind="stable")[: self.max_pool]
        return sorted(rows[int(i)] for i in keep)

    def _vectors_of(self, item: QueryEvidence, candidates: list[Evidence]) -> np.ndarray:
        """Embeddings of ``candidates``: the stored ones when given, else freshly encoded."""
        if item.vectors is not None and len(item.vectors) == len(item.evidence):
            row = {id(e): i for i, e in enumerate(item.evidence)}
            return item.vectors[[row[id(c)] for c in candidates]]
        return self.encoder.encode([c.text for c in candidates])


def _not_against(texts: list[str], sign: int) -> list[bool]:
    """Whether the review lexicon (:mod:`~opinio_agents.text.sentiment`) does not read each text as the other side.

    The stored sentiment blends that lexicon with the embedding head; where the two disagree the
    blend can land on the wrong side ("The noise level was low even on a Saturday night, which we
    appreciated." stored at -0.07), and such a sentence is neither a key point nor a quote of a side.
    """
    if not texts:
        return []
    from opinio_agents.text.sentiment import default_sentiment_scorer

    return [sign * v >= -SENTIMENT_THRESHOLD for v in default_sentiment_scorer().score(texts)]


def _scored(evidence: Evidence, score: float) -> Evidence:
    """The evidence with a selection score where retrieval gave none (support-set sentences)."""
    if evidence.score:
        return evidence
    return evidence.model_copy(update={"score": round(score, 4)})
