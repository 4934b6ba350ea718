"""Verification of every highlight against its own cited evidence, at generation time.

OpinioRAG's AOS metrics (Sec. 4.1: aspect relevance AR, sentiment factuality SF,
opinion faithfulness OF, :mod:`opinio_agents.triplets.aos`) are computed for each
highlight from the AOS triplets of the highlight text and of the sentences it
cites, and nothing else, so the cost stays proportional to what is shown. The
:class:`HighlightVerifier` is the second half of the post-processing step that
every :class:`~opinio_agents.synthesis.summarizer.Summarizer` runs once per
result (after the critical-complaint guard), so the extractive and the LLM
pipelines, the long-context baseline and HIRO's query-free highlights all get it.

The verdict (:func:`judge`) reads, besides AR/SF/OF, the *stance* of each cited
sentence towards the highlight's subject: the sum of the sentiments of its
triplets about the focus aspect (see :func:`~opinio_agents.triplets.aos.focus_triplet`),
else the sentence's stored sentiment score. Only the writer's own opinions are read
(:func:`own_opinions`): "the so-called free wi-fi", "they advertise a free shuttle" and a
"free" offer that its sentence limits ("only on the ground floor") are not praise.

* ``contradicted`` - the highlight's side disagrees with its evidence (a PRO none
  of whose cited sentences is positive about the subject while some are
  negative, or the reverse for a CON), or its text says the opposite of the
  evidence (SF = 0, no cited sentence leans the text's way, none states the text's
  opinion itself, and a second, sentence-level signal - the index's sentiment model - reads
  the text that way too), or it names an aspect that no
  cited sentence discusses (no triplet aspect matches, the words do not occur,
  and no evidence aspect is similar enough).
* ``weak`` - partly backed: more cited sentences disagree with its side than
  agree, or two or more and at least ``VerificationSettings.mixed_share`` of them do (each read a second time,
  :func:`second_reading`), part of its own text reads the other way about its subject (an
  opinion whose sentence the second signal reads on the highlight's side does not count:
  "a bit pricey but very good" in a PRO), it does not mention the evidence's main aspect
  (AR = 0 and the words are absent; when its text spells that aspect out, or names the query
  that half its cited sentences name, the reported AR is 1.0, so a score never contradicts the
  verdict), the evidence holds no polar opinion about it (SF undefined), no reviewer's
  opinion is close to its wording (best similarity below ``VerificationSettings.weak_of``, unless a cited
  sentence uses the very words; the reported OF is the paper's mean), the extractor
  finds no opinion in it, or it cites no evidence at all (the long-context baseline).
* ``supported`` - everything else.

A contradicted highlight is never shown as it is (:meth:`HighlightVerifier.apply`):
it is rewritten from its evidence (the extractive key points of the cited
sentences on the evidence's side, :func:`~opinio_agents.synthesis.keypoint.to_key_point`)
and checked again, or dropped when nothing on one side remains, when the
rewrite is still contradicted, or when the query already has a highlight on
that side. Highlights the critical-complaint guard added are never dropped or
flipped (a contradiction is reported as ``weak`` with the reason).

Example:
    >>> from opinio_agents.models import Evidence, Highlight, Polarity
    >>> from opinio_agents.triplets.base import Triplet as T
    >>> v = judge(Polarity.PROS, [T(aspect="wifi", opinion="great", sentiment=1)],
    ...           [[T(aspect="wifi", opinion="slow", sentiment=-1)]], [-0.6],
    ...           lambda a, bs: [0.0] * len(bs), evidence_texts=["The wifi was slow."])
    >>> v.verdict, v.reason
    ('contradicted', 'a PRO, but none of its 1 cited sentence is positive about wifi (1 negative)')
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from opinio_agents.errors import ConfigError
from opinio_agents.models import SENTIMENT_THRESHOLD, Evidence, Highlight, Polarity, QueryEvidence, Verification
from opinio_agents.synthesis.alerts import GUARD_NOTE, CriticalComplaintCheck, find_critical
from opinio_agents.synthesis.base import SynthesisOutcome
from opinio_agents.synthesis.keypoint import to_key_point
from opinio_agents.synthesis.support import aspect_forms
from opinio_agents.text.preprocess import tokenize_for_bm25
from opinio_agents.triplets.aos import (
    OpinionSimilarity,
    aspect_relevance,
    dominant_aspects,
    dominant_sentiments,
    focus_triplet,
    opinion_faithfulness,
    same_opinion,
    sentiment_factuality,
)
from opinio_agents.triplets.aspects import aspect_words, aspects_match
from opinio_agents.triplets.base import Triplet, TripletExtractor

if TYPE_CHECKING:
    from opinio_agents.embeddings import Encoder
    from opinio_agents.text.sentiment import SentimentScorer

#: ``reading(text)`` -> the sentence-level sentiment of one highlight sentence, in [-1, 1].
SentenceReading = Callable[[str], float]

__all__ = [
    "HighlightVerifier",
    "judge",
    "sentence_stance",
    "second_reading",
    "own_opinions",
    "checked_texts",
    "verify_outcome",
    "VerificationSettings",
    "VERIFICATION_SETTINGS",
    "VERIFY_NOTE",
    "KEPT_NOTE",
]

@dataclass(frozen=True)
class VerificationSettings:
    """The settings of highlight verification in one place (the values shipped; ``benchmarks/verification.py``
    and ``benchmarks/verifier_agreement.py`` measure them, the figures are in ``benchmarks/README.md``).

    Attributes:
        verify_by_default: Whether summarizers verify when nobody says (``opinio highlight
            --verify/--no-verify``, the API, the service, MCP and the agent tools); on, since on the
            default (extractive) path an entity's first verification now waits about 1.0x its
            synthesis time on the shipped sample and 0.4x on SPACE dev hotels (medians of 3; a default
            may cost 1.5x; counting the synthesis its background extraction slows, 0.7-1.5x and
            0.1-0.25x), under a tenth once its triplets are cached (``benchmarks/README.md``).
        weak_of: Opinion faithfulness below this makes a highlight ``weak`` (its wording drifts from
            the reviewers').
        aspect_similarity: An aspect of the highlight at least this similar to an evidence aspect
            counts as discussed.
        mixed_share: Share of its cited sentences (two at least) that, read the other way, make a
            highlight ``weak``: a PRO shown over 3 praises and 2 complaints is mixed, not supported.
        prefetch: Extract a query's triplets in a background thread while the next query is
            synthesized (:meth:`HighlightVerifier.prefetch`): the extractor's native forward pass
            runs beside the Python synthesis; off, verification runs after each query, in turn.
    """

    verify_by_default: bool = True
    weak_of: float = 0.5
    aspect_similarity: float = 0.6
    mixed_share: float = 0.4
    prefetch: bool = True


#: The settings verification uses unless a caller passes others.
VERIFICATION_SETTINGS = VerificationSettings()
#: Prefix of the notes verification adds to a rewritten highlight.
VERIFY_NOTE = "verification"
#: Note on a highlight of the reviews' own sentences shown although verification contradicts it.
KEPT_NOTE = "shown although verification contradicts it: the reviews' own words"

_SIDE_SIGN = {Polarity.PROS: 1, Polarity.CONS: -1}
_WORD = re.compile(r"[a-z0-9']+")
_SIDE_NAME = {Polarity.PROS: "PRO", Polarity.CONS: "CON"}
_SIGN_WORD = {1: "positive", -1: "negative"}
_PREFETCH: tuple[int, ThreadPoolExecutor] | None = None  # (pid, executor)
_PREFETCH_LOCK = threading.Lock()


def _prefetcher() -> ThreadPoolExecutor:
    """The one background thread that extracts triplets ahead of verification (started on first use).

    One thread per process: the extractor's ONNX/torch run already uses every core, and its
    native code releases the GIL, so it runs beside the (Python) synthesis of the next query.
    A forked child (whose copy of the executor has no thread) starts its own.
    """
    global _PREFETCH
    pid = os.getpid()
    with _PREFETCH_LOCK:
        if _PREFETCH is None or _PREFETCH[0] != pid:
            _PREFETCH = (pid, ThreadPoolExecutor(max_workers=1, thread_name_prefix="opinio-triplets"))
        return _PREFETCH[1]


def checked_texts(highlights: Sequence[Highlight]) -> list[str]:
    """The texts whose triplets verifying ``highlights`` reads: each highlight's text and its cited sentences.

    Example:
        >>> h = Highlight(query="wifi", polarity=Polarity.CONS, text="Slow wifi.",
        ...               evidence=[Evidence(sentence_id="1:1:0", text="The wifi was slow.")])
        >>> checked_texts([h, h])
        ['Slow wifi.', 'The wifi was slow.']
    """
    return list(dict.fromkeys(s for h in highlights for s in (h.text, *(e.text for e in h.evidence))))


def _sign(value: float, threshold: float = 0.0) -> int:
    return 1 if value > threshold else -1 if value < -threshold else 0


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def second_reading(evidence: Sequence[Evidence]) -> list[float | None]:
    """Each cited sentence's sentiment as the verifier reads it: the stored one, read a second time.

    The stored score blends the review lexicon with the embedding head
    (:mod:`~opinio_agents.text.sentiment_head`); where the review lexicon alone
    (:func:`~opinio_agents.text.sentiment.default_sentiment_scorer`, no model) reads the sentence
    on the other side, its reading is taken instead: the lexicon knows complaint phrases the head
    misses ("Check-in took over an hour" is stored at +0.19), so a PRO quoting such a sentence is
    no longer counted as backed by it.

    Example:
        >>> second_reading([Evidence(sentence_id="1:1:0", text="Check-in took over an hour.", sentiment=0.19)])[0] < 0
        True
    """
    from opinio_agents.text.sentiment import default_sentiment_scorer

    stored = [e.sentiment for e in evidence]
    known = [i for i, s in enumerate(stored) if s is not None and abs(s) > SENTIMENT_THRESHOLD]
    if not known:
        return stored
    lexicon = default_sentiment_scorer().score([evidence[i].text for i in known])
    out = list(stored)
    for i, score in zip(known, lexicon, strict=True):
        if _sign(score, SENTIMENT_THRESHOLD) == -_sign(stored[i] or 0.0, SENTIMENT_THRESHOLD):
            out[i] = score
    return out


_TOKEN = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
#: Words allowed between a quote cue and the opinion it marks ("they advertise *a* free shuttle").
_CUE_GAP = 1


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _positions(words: Sequence[str], tokens: Sequence[str]) -> list[int]:
    """Where ``words`` occur, in a row, in ``tokens``."""
    n = len(words)
    return [i for i in range(len(tokens) - n + 1) if list(tokens[i : i + n]) == list(words)] if n else []


def _quote_cued(tokens: Sequence[str], at: int) -> bool:
    """Whether a quote cue ("so-called", "supposedly", "advertised") stands just before ``tokens[at]``."""
    from opinio_agents.text.wordlists import word_set

    before = tokens[:at]
    for cue in word_set("verification", "quote_cues"):
        words = _tokens(cue)
        if any(at - (p + len(words)) <= _CUE_GAP for p in _positions(words, before)):
            return True
    return False


def _limited(tokens: Sequence[str]) -> bool:
    """Whether a sentence limits an offer ("only on the ground floor", "you have to buy", "isn't")."""
    from opinio_agents.text.wordlists import word_set

    cues = word_set("verification", "limit_cues")
    return any(t in cues or t.endswith("n't") for t in tokens)


def own_opinions(triplets: Sequence[Triplet], text: str) -> list[Triplet]:
    """The triplets of ``text`` that state its writer's own opinion (the verifier reads only these).

    The extractor reads the words of an opinion, not who holds it: "the so-called free wi-fi
    was limited to one device" gives (wi-fi, free, positive). A triplet is left out when, in
    every sentence of ``text`` that uses its opinion words, a quote cue stands just before them
    ("so-called", "supposedly", "they advertise": word list ``verification/quote_cues``), or
    the opinion only names an offer ("free", "complimentary") in a sentence that limits it
    ("only on the ground floor", "you have to buy": ``offer_words``, ``limit_cues``). Without
    such triplets a sentence's stance falls back to its stored sentiment (:func:`sentence_stance`),
    and a highlight with none states no opinion of its own.

    Example:
        >>> from opinio_agents.triplets.base import Triplet as T
        >>> own_opinions([T(aspect="wi-fi", opinion="free", sentiment=1)],
        ...              "The so-called free wi-fi was limited to one device per room.")
        []
        >>> own_opinions([T(aspect="wi-fi", opinion="free", sentiment=1)], "Free wi-fi, fast and reliable.")
        [Triplet(aspect='wi-fi', opinion='free', sentiment=1)]
    """
    if not triplets:
        return []
    from opinio_agents.text.segment import split_sentences
    from opinio_agents.text.wordlists import word_set

    sentences = [_tokens(text[a:b]) for a, b in split_sentences(text)] or [_tokens(text)]
    offers = word_set("verification", "offer_words")

    def hedged(t: Triplet) -> bool:
        words = _tokens(t.opinion)
        uses = [(toks, at) for toks in sentences for at in _positions(words, toks)]
        if not uses:
            return False
        offer = bool(words) and set(words) <= offers
        return all(_quote_cued(toks, at) or (offer and _limited(toks)) for toks, at in uses)

    return [t for t in triplets if not hedged(t)]


def sentence_stance(triplets: Sequence[Triplet], subject: Sequence[str], sentiment: float | None) -> int:
    """+1 / -1 / 0: how one cited sentence leans about the highlight's subject.

    The sign of the summed sentiments of its triplets whose aspect matches one of
    ``subject`` (all its triplets when ``subject`` is empty). The sentence's stored
    ``sentiment`` (neutral band :data:`~opinio_agents.models.SENTIMENT_THRESHOLD`)
    decides instead when no triplet is about the subject or they cancel out, and
    when it says the opposite while the sentence names no other aspect: then the
    sentence is about the subject alone and the triplet's polarity is the likelier
    error (the extractor reads "dated decor" as positive, "low noise" as negative).

    Example:
        >>> from opinio_agents.triplets.base import Triplet as T
        >>> sentence_stance([T(aspect="room", opinion="clean", sentiment=1),
        ...                  T(aspect="wifi", opinion="slow", sentiment=-1)], ["wi-fi"], 0.3)
        -1
        >>> sentence_stance([], ["pool"], -0.4)
        -1
        >>> sentence_stance([T(aspect="decor", opinion="dated", sentiment=1)], ["decor"], -0.2)
        -1
    """
    about = [t for t in triplets if not subject or any(aspects_match(t.aspect, a) for a in subject)]
    lean = _sign(sum(t.sentiment for t in about))
    stored = 0 if sentiment is None else _sign(sentiment, SENTIMENT_THRESHOLD)
    if lean == 0:
        return stored
    others = [t for t in triplets if not t.is_implicit and t not in about]
    if stored == -lean and not others:
        return stored
    return lean


def _discussed(
    aspect: str,
    evidence: Sequence[Triplet],
    words: set[str],
    similarity: OpinionSimilarity,
    texts: tuple[str, ...] = (),
) -> bool:
    """Whether the evidence discusses ``aspect``: a matching triplet aspect, its words, or a similar aspect.

    The evidence's ``texts`` also count by the words that name the aspect in every count of its mentions
    (:func:`~opinio_agents.synthesis.support.aspect_forms`, over their App. D tokens, tokenized only when the
    triplets and the aspect's own words do not settle it): "Quiet and relaxing." discusses noise, "Free
    wi-fi either in the hotel or your room." the internet.
    """
    if any(aspects_match(aspect, t.aspect) for t in evidence):
        return True
    mine = aspect_words(aspect)
    if mine and set(mine) <= words:
        return True
    if texts and any(set(form) <= _evidence_tokens(texts) for form in aspect_forms(aspect)):
        return True
    others = list(dict.fromkeys(t.aspect for t in evidence if not t.is_implicit))
    return bool(others) and max(float(s) for s in similarity(aspect, others)) >= VERIFICATION_SETTINGS.aspect_similarity


@lru_cache(maxsize=256)
def _evidence_tokens(texts: tuple[str, ...]) -> frozenset[str]:
    """The App. D tokens of a highlight's evidence texts (read once per evidence set for its named aspects)."""
    return frozenset(tokenize_for_bm25(" ".join(texts)))


def _quoted(opinion: str, texts: Sequence[str]) -> bool:
    """Whether a cited sentence itself uses every word of ``opinion`` ("ridiculous" in "... just ridiculous")."""
    words = set(_WORD.findall(opinion.lower()))
    return bool(words) and any(words <= set(_WORD.findall(text.lower())) for text in texts)


def _stated(focus: Triplet, evidence: Sequence[Sequence[Triplet]]) -> bool:
    """Whether a cited sentence itself states ``focus``: its opinion words, same sentiment, same aspect.

    "The rooms are quite small." as a rooms PRO quotes the reservation of "The rooms are quite
    small, but beautifully decorated": a reviewer's words, not the opposite of what they say.
    """
    for found in evidence:
        for t in found:
            if t.sentiment != focus.sentiment:
                continue
            if not focus.is_implicit and not aspects_match(t.aspect, focus.aspect):
                continue
            if same_opinion(focus.opinion, t.opinion) or _quoted(focus.opinion, [t.opinion]):
                return True
    return False


def _about_query(query: str, own_words: set[str], evidence_texts: Sequence[str]) -> bool:
    """Whether the highlight names ``query`` and at least half of its cited sentences do too.

    "Big thumbs up: loved the swimming pool area." as a pool PRO over quotes that all name the
    pool is about its evidence, whatever aspect the extractor found most often in it ('towels').
    """
    wanted = set(aspect_words(query)) if query else set()
    if not wanted or not wanted <= own_words or not evidence_texts:
        return False
    naming = sum(1 for text in evidence_texts if wanted <= set(aspect_words(text)))
    return 2 * naming >= len(evidence_texts)


def _sentences_with(text: str, opinion: str) -> list[str]:
    """The sentences of ``text`` that use every word of ``opinion``."""
    from opinio_agents.text.segment import split_sentences

    words = set(_WORD.findall(opinion.lower()))
    sentences = [text[a:b] for a, b in split_sentences(text)] or [text]
    return [s for s in sentences if words and words <= set(_WORD.findall(s.lower()))]


def _reads(reading: SentenceReading | None, text: str, sign: int) -> bool:
    """Whether the second signal reads ``text`` (as a whole) on the ``sign`` side; True without one."""
    if reading is None or not text:
        return True
    return _sign(reading(text), SENTIMENT_THRESHOLD) == sign


def _overruled(reading: SentenceReading | None, text: str, opinion: str, sign: int) -> bool:
    """Whether every sentence of ``text`` that holds ``opinion`` reads on the ``sign`` side (second signal).

    "The breakfast is a bit pricey but very good." holds a negative triplet ('pricey') in a PRO's
    text, but the sentence reads positive: the reservation is the reviewer's, the sentence praises.
    """
    if reading is None or not text:
        return False
    holding = _sentences_with(text, opinion)
    return bool(holding) and all(_sign(reading(s), SENTIMENT_THRESHOLD) == sign for s in holding)


def _closest_opinion(
    evidence: Sequence[Triplet], focus: Triplet, dominant: Sequence[str], similarity: OpinionSimilarity
) -> tuple[str, float] | None:
    """The evidence opinion (same aspect and sentiment as ``focus``) closest to ``focus.opinion``, and how close."""
    if focus.is_implicit:
        about = [t for t in evidence if not dominant or any(aspects_match(t.aspect, a) for a in dominant)]
    else:
        about = [t for t in evidence if aspects_match(t.aspect, focus.aspect)]
    opinions = list(dict.fromkeys(t.opinion for t in about if t.sentiment == focus.sentiment))
    if not opinions:
        return None
    for opinion in opinions:
        if same_opinion(focus.opinion, opinion):
            return opinion, 1.0
    scores = [float(x) for x in similarity(focus.opinion, opinions)]
    best = max(range(len(opinions)), key=lambda i: scores[i])
    return opinions[best], scores[best]


def judge(
    side: Polarity,
    highlight: Sequence[Triplet],
    evidence: Sequence[Sequence[Triplet]],
    sentiments: Sequence[float | None],
    similarity: OpinionSimilarity,
    *,
    evidence_texts: Sequence[str] = (),
    query: str = "",
    highlight_text: str = "",
    reading: SentenceReading | None = None,
) -> Verification:
    """The :class:`~opinio_agents.models.Verification` of one highlight (verdict rules in the module doc).

    Args:
        side: The highlight's polarity (PROS / CONS).
        highlight: Triplets of the highlight text.
        evidence: Triplets of each cited sentence, in citation order.
        sentiments: Stored sentiment score of each cited sentence (None when unknown).
        similarity: ``similarity(phrase, others)`` -> cosine-like scores (OF and aspect similarity).
        evidence_texts: The cited sentences' texts (their words count as discussing an aspect).
        query: The query, named in reasons when the highlight has no explicit aspect.
        highlight_text: The highlight's text (an evidence aspect it spells out counts as named,
            even when the extractor missed it).
        reading: The second, sentence-level signal: ``reading(sentence)`` -> the sentiment of one
            sentence of ``highlight_text`` in [-1, 1] (the index's sentiment model,
            :class:`~opinio_agents.text.sentiment_head.BlendedSentimentScorer`, in
            :class:`HighlightVerifier`). With it, the text says the opposite of its evidence only
            when its sentences read that way too and no cited sentence states the same opinion
            (then it only quotes a reservation: ``weak``), and an opinion of the text against its
            side counts only when its sentence does not read the side's way ("a bit pricey but very
            good"). Without it (None), the triplets alone decide.

    Raises:
        ConfigError: When ``evidence`` and ``sentiments`` differ in length.

    Example:
        >>> from opinio_agents.triplets.base import Triplet as T
        >>> judge(Polarity.CONS, [T(aspect="parking", opinion="expensive", sentiment=-1)],
        ...       [[T(aspect="parking", opinion="expensive", sentiment=-1)]], [-0.5],
        ...       lambda a, bs: [0.0] * len(bs)).verdict
        'supported'
    """
    if len(evidence) != len(sentiments):
        raise ConfigError(f"{len(evidence)} evidence triplet lists for {len(sentiments)} sentiments; give one each")
    n = len(evidence)
    if n == 0:
        return Verification(verdict="weak", reason="cites no evidence, so it cannot be checked against reviews")
    flat = [t for found in evidence for t in found]
    ar = aspect_relevance(flat, highlight)
    sf = sentiment_factuality(flat, highlight)
    of = opinion_faithfulness(flat, highlight, similarity)
    scores = {"aspect_relevance": ar, "sentiment_factuality": sf, "opinion_faithfulness": of}
    dominant = dominant_aspects(flat)
    focus = focus_triplet(highlight, dominant)
    subject = [focus.aspect] if focus is not None and not focus.is_implicit else list(dominant)
    name = subject[0] if subject else (query or "it")
    sign = _SIDE_SIGN[side]
    stances = [sentence_stance(found, subject, s) for found, s in zip(evidence, sentiments, strict=True)]
    agree = sum(1 for s in stances if s == sign)
    disagree = sum(1 for s in stances if s == -sign)
    cited = _plural(n, "cited sentence")

    def verdict(kind: str, reason: str) -> Verification:
        return Verification(verdict=kind, reason=reason, **scores)  # type: ignore[arg-type]

    if disagree and not agree:
        return verdict(
            "contradicted",
            f"a {_SIDE_NAME[side]}, but none of its {cited} is {_SIGN_WORD[sign]} about {name} "
            f"({disagree} {_SIGN_WORD[-sign]})",
        )
    if focus is not None and sf == 0.0 and focus.sentiment != 0 and focus.sentiment not in stances:
        stars = dominant_sentiments(
            [t for t in flat if aspects_match(t.aspect, focus.aspect)] if not focus.is_implicit else flat
        )
        opposite = stars == [-focus.sentiment] and not _stated(focus, evidence)
        if opposite and _reads(reading, highlight_text, focus.sentiment):
            return verdict(
                "contradicted",
                f"says {focus.opinion!r} ({_SIGN_WORD[focus.sentiment]}) about {name}, "
                f"but its evidence is {_SIGN_WORD[stars[0]]} about it",
            )
    words = set(aspect_words(" ".join(evidence_texts))) if evidence_texts else set()
    named = list(dict.fromkeys(t.aspect for t in highlight if not t.is_implicit))
    if named and not any(_discussed(a, flat, words, similarity, tuple(evidence_texts or ())) for a in named):
        return verdict(
            "contradicted",
            f"names {', '.join(repr(a) for a in named)}, which none of its {cited} discusses",
        )
    if not highlight:
        return verdict("weak", f"the triplet extractor finds no opinion in it to check against its {cited}")
    if disagree > agree or (disagree >= 2 and disagree >= VERIFICATION_SETTINGS.mixed_share * n):
        return verdict(
            "weak",
            f"mixed evidence: {agree} of its {cited} {'is' if agree == 1 else 'are'} {_SIGN_WORD[sign]} "
            f"about {name}, {disagree} {_SIGN_WORD[-sign]}",
        )
    against = [
        t
        for t in highlight
        if t.sentiment == -sign
        and any(aspects_match(t.aspect, a) for a in subject)
        and not _overruled(reading, highlight_text, t.opinion, sign)
    ]
    if against:
        return verdict(
            "weak",
            f"part of this {_SIDE_NAME[side]} reads {_SIGN_WORD[-sign]} about {name} ({against[0].opinion!r})",
        )
    own_words = set(aspect_words(highlight_text)) if highlight_text else set()
    if ar == 0.0:
        spelled = any(set(aspect_words(a)) <= own_words for a in dominant)
        if not spelled and not _about_query(query, own_words, evidence_texts):
            return verdict("weak", f"its evidence is mostly about {' / '.join(dominant)}, which it does not mention")
        # It spells out the evidence's main aspect, or the query that half its quotes name (the
        # extractor read another aspect as the main one): relevant.
        scores["aspect_relevance"] = 1.0
    if sf is None:
        return verdict("weak", f"its {cited} hold no clear positive or negative opinion about {name}")
    closest = _closest_opinion(flat, focus, dominant, similarity) if focus is not None else None
    weak = VERIFICATION_SETTINGS.weak_of
    if closest is not None and closest[1] < weak and not _quoted(focus.opinion, evidence_texts):  # type: ignore[union-attr]
        return verdict(
            "weak",
            f"its wording ({focus.opinion!r}) is far from what reviewers say "  # type: ignore[union-attr]
            f"(closest: {closest[0]!r}, similarity {closest[1]:.2f})",
        )
    return verdict("supported", f"backed by {agree} of its {cited} ({_SIGN_WORD[sign]} about {name})")


class HighlightVerifier:
    """Verify highlights against their own evidence and rewrite or drop the contradicted ones.

    Args:
        extractor: The AOS triplet extractor; the embedded default (MiniLM + the shipped
            head, loaded on first use) when ``None``.
        similarity: OF (and aspect) similarity; cosine under ``encoder`` when ``None``.
        encoder: The sentence encoder of that default similarity (the shared MiniLM when ``None``).
        cache_size: Sentences whose triplets are remembered (repeated evidence is extracted once).
        prefetch: Let :meth:`prefetch` extract in the background (``VerificationSettings.prefetch``
            when ``None``); off, it does nothing and each query is verified as soon as it is written.
        sentiment: The second, sentence-level signal :func:`judge` reads beside the triplets (one
            score per sentence of a highlight's text, asked only when a verdict depends on it); the
            index's sentiment model (MiniLM head blended with VADER, on ``encoder`` when that is MiniLM)
            when ``None``.

    Thread-safe: one verifier may serve the threads of a server.

    Example:
        >>> from opinio_agents.models import Evidence
        >>> from opinio_agents.triplets.base import TripletExtractor
        >>> class Words(TripletExtractor):
        ...     def extract(self, sentences):
        ...         return [[Triplet(aspect="wifi", opinion="slow", sentiment=-1)] for _ in sentences]
        >>> verifier = HighlightVerifier(Words(), similarity=lambda a, bs: [0.0] * len(bs))
        >>> h = Highlight(query="wifi", polarity=Polarity.CONS, text="Slow wifi.",
        ...               evidence=[Evidence(sentence_id="1:1:0", text="The wifi was slow.", sentiment=-0.4)])
        >>> verifier.verify([h])[0].verdict
        'supported'
    """

    def __init__(
        self,
        extractor: TripletExtractor | None = None,
        *,
        similarity: OpinionSimilarity | None = None,
        encoder: Encoder | None = None,
        cache_size: int = 50_000,
        prefetch: bool | None = None,
        sentiment: SentimentScorer | None = None,
    ) -> None:
        if cache_size < 0:
            raise ConfigError(f"cache_size={cache_size} must be >= 0")
        self.prefetching = VERIFICATION_SETTINGS.prefetch if prefetch is None else bool(prefetch)
        self._extractor = extractor
        self._similarity = similarity
        self._encoder = encoder
        self.cache_size = cache_size
        self._cache: OrderedDict[str, list[Triplet]] = OrderedDict()
        self._sentiment = sentiment
        self._scores: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def extractor(self) -> TripletExtractor:
        """The triplet extractor (built on first use)."""
        with self._lock:
            if self._extractor is None:
                from opinio_agents.triplets.factory import get_triplet_extractor

                self._extractor = get_triplet_extractor("embedded")
            return self._extractor

    @property
    def similarity(self) -> OpinionSimilarity:
        """The phrase similarity (built on first use)."""
        with self._lock:
            if self._similarity is None:
                from opinio_agents.triplets.verifier import EmbeddingOpinionSimilarity

                self._similarity = EmbeddingOpinionSimilarity(self._encoder)  # type: ignore[arg-type]
            return self._similarity

    def sentence_sentiment(self, text: str) -> float:
        """The second signal's sentiment of ``text`` (one highlight sentence), remembered like triplets."""
        with self._lock:
            if text in self._scores:
                self._scores.move_to_end(text)
                return self._scores[text]
            if self._sentiment is None:
                from opinio_agents.embeddings import DEFAULT_MODEL_NAME
                from opinio_agents.text.sentiment_head import BlendedSentimentScorer

                # The head fits MiniLM vectors: reuse the verifier's encoder when it is that model.
                mine = self._encoder if getattr(self._encoder, "name", None) == DEFAULT_MODEL_NAME else None
                self._sentiment = BlendedSentimentScorer(mine)
            scorer = self._sentiment
        score = float(scorer.score([text])[0])
        with self._lock:
            self._scores[text] = score
            while len(self._scores) > self.cache_size:
                self._scores.popitem(last=False)
        return score

    def readings(self, texts: Sequence[str]) -> list[list[Triplet]]:
        """The triplets of each text that state its writer's own opinion (:func:`own_opinions`)."""
        return [own_opinions(found, text) for found, text in zip(self.triplets(texts), texts, strict=True)]

    def triplets(self, texts: Sequence[str]) -> list[list[Triplet]]:
        """Triplets of each text; one extractor call for the texts not seen before."""
        with self._lock:
            known: dict[str, list[Triplet]] = {}
            for text in dict.fromkeys(texts):
                if text in self._cache:
                    known[text] = self._cache[text]
                    self._cache.move_to_end(text)
        todo = [t for t in dict.fromkeys(texts) if t not in known]
        if todo:
            found = dict(zip(todo, (list(x) for x in self.extractor.extract(todo)), strict=True))
            known.update(found)
            with self._lock:
                self._cache.update(found)
                while len(self._cache) > self.cache_size:
                    self._cache.popitem(last=False)
        return [known[t] for t in texts]

    def prefetch(self, highlights: Sequence[Highlight]) -> Future[list[list[Triplet]]] | None:
        """Start extracting the triplets that verifying ``highlights`` reads, in a background thread.

        :meth:`Summarizer.stream <opinio_agents.synthesis.summarizer.Summarizer.stream>` calls it
        as soon as a query's extractive highlights are written and verifies them after the next
        query's synthesis, so the extractor's forward pass runs beside that synthesis instead of
        after it. Returns the future (its result is also in this verifier's cache), or None when
        every text is already cached or prefetching is off. Waiting on it is optional: :meth:`verify`
        extracts whatever is still missing itself, and an extraction error is raised there, in the
        caller's thread.
        """
        if not self.prefetching:
            return None
        texts = checked_texts(highlights)
        with self._lock:
            if all(t in self._cache for t in texts):
                return None
        return _prefetcher().submit(self.triplets, texts)

    def verify(self, highlights: Sequence[Highlight]) -> list[Verification]:
        """The verification of each highlight against its own cited evidence (nothing is changed)."""
        self.triplets(checked_texts(highlights))
        out = []
        for h in highlights:
            mine, *cited = self.readings([h.text, *(e.text for e in h.evidence)])
            out.append(
                judge(
                    h.polarity,
                    mine,
                    cited,
                    second_reading(h.evidence),
                    self.similarity,
                    evidence_texts=[e.text for e in h.evidence],
                    query=h.query,
                    highlight_text=h.text,
                    reading=self.sentence_sentiment,
                )
            )
        return out

    def _rewrite(self, h: Highlight, why: Verification) -> Highlight | None:
        """``h`` written again from its evidence, on the side its evidence takes; None when none does."""
        mine = self.readings([h.text])[0]
        cited = self.readings([e.text for e in h.evidence])
        flat = [t for found in cited for t in found]
        focus = focus_triplet(mine, dominant_aspects(flat))
        subject = [focus.aspect] if focus is not None and not focus.is_implicit else dominant_aspects(flat)
        readings = second_reading(h.evidence)
        stances = [sentence_stance(f, subject, r) for f, r in zip(cited, readings, strict=True)]
        lean = _sign(sum(stances))
        if lean == 0:
            return None
        side = Polarity.PROS if lean > 0 else Polarity.CONS
        chosen = [e for e, s in zip(h.evidence, stances, strict=True) if s == lean]
        if side is Polarity.PROS:
            chosen = [e for e in chosen if not find_critical(e.text)]
        if not chosen:
            return None
        text = " ".join(dict.fromkeys(to_key_point(e.text, h.query, sign=lean) for e in chosen[:2]))
        was = f"was a {_SIDE_NAME[h.polarity]}: {h.text[:160]!r}"
        return h.model_copy(
            update={
                "polarity": side,
                "text": text[:600],
                "evidence": [e.model_copy() for e in chosen],
                "evidence_polarity": side,
                "polarity_agrees": True,
                "notes": [*h.notes, f"{VERIFY_NOTE}: rewritten from its evidence ({why.reason}); {was}"],
                "verification": None,
            },
            deep=True,
        )

    def apply(self, highlights: Sequence[Highlight]) -> tuple[list[Highlight], list[Highlight]]:
        """Verify ``highlights`` (one query's); return ``(shown, dropped)``.

        Each shown highlight carries its :class:`~opinio_agents.models.Verification`;
        contradicted ones are rewritten from their evidence (``action="rewritten"``, the
        reason says what they were) or moved to ``dropped`` (``action="dropped"``).
        Inputs are not modified.
        """
        checks = self.verify(highlights)
        shown: list[Highlight] = []
        pending: list[tuple[Highlight, Verification]] = []
        dropped: list[Highlight] = []
        for h, check in zip(highlights, checks, strict=True):
            guarded = any(note.startswith(GUARD_NOTE) and "added because" in note for note in h.notes)
            if check.verdict == "contradicted" and guarded:
                check = check.model_copy(
                    update={"verdict": "weak", "reason": f"kept by the critical-complaint guard: {check.reason}"}
                )
            if check.verdict == "contradicted":
                pending.append((h, check))
            else:
                shown.append(h.model_copy(update={"verification": check}, deep=True))
        rewrites = [(h, check, self._rewrite(h, check)) for h, check in pending]
        again = self.verify([r for _, _, r in rewrites if r is not None])
        checked = iter(again)
        for h, check, rewritten in rewrites:
            second = next(checked) if rewritten is not None else None
            taken = {(s.polarity, s.query) for s in shown}
            if rewritten is None or second is None or second.verdict == "contradicted":
                why = "its evidence takes no clear side" if second is None else f"its rewrite: {second.reason}"
                reason = f"{check.reason}; dropped ({why})"
            elif (rewritten.polarity, rewritten.query) in taken:
                side = _SIDE_NAME[rewritten.polarity]
                reason = f"{check.reason}; dropped (the query already has a {side} saying what its evidence says)"
            else:
                shown.append(
                    rewritten.model_copy(
                        update={
                            "verification": second.model_copy(
                                update={
                                    "action": "rewritten",
                                    "reason": f"rewritten from its evidence ({check.reason}); now {second.reason}",
                                }
                            )
                        }
                    )
                )
                continue
            dropped.append(
                h.model_copy(update={"verification": check.model_copy(update={"action": "dropped", "reason": reason})})
            )
        return shown, dropped


def verify_outcome(
    verifier: HighlightVerifier, checks: CriticalComplaintCheck, outcome: SynthesisOutcome
) -> tuple[SynthesisOutcome, list[Highlight]]:
    """One query's outcome verified, with the guard's promises kept; returns it and the dropped highlights.

    After verification the critical-complaint guard runs again (it is idempotent), so
    a rewrite or a drop can never leave a critical complaint uncited by a CON or cited
    by a PRO; a CON the guard adds then is verified too (and never dropped). A query whose
    every highlight would be dropped keeps those that are the reviews' own sentences (not
    written by a model), with their verdict, action ``kept`` and :data:`KEPT_NOTE`: the
    verifier can read a side wrong (SPACE hotel 188745's "The rooms are quite small." was
    called contradicted before that verdict needed two signals), and a query the reviews
    discuss must not end empty.

    Example:
        >>> from opinio_agents.triplets.base import TripletExtractor
        >>> class Nothing(TripletExtractor):
        ...     def extract(self, sentences):
        ...         return [[] for _ in sentences]
        >>> item = QueryEvidence(query="room", evidence=[])
        >>> verify_outcome(HighlightVerifier(Nothing()), CriticalComplaintCheck(),
        ...                SynthesisOutcome(item=item))[1]
        []
    """
    if outcome.failure is not None or not outcome.highlights:
        return outcome, []
    item: QueryEvidence = outcome.item
    shown, dropped = verifier.apply(outcome.highlights)
    guarded = checks.guard(SynthesisOutcome(item=item, highlights=shown))
    fresh = [h for h in guarded.highlights if h.verification is None]
    if fresh:
        more, lost = verifier.apply(fresh)
        kept = [h for h in guarded.highlights if h.verification is not None]
        guarded = SynthesisOutcome(item=item, highlights=kept + more)
        dropped += lost
    own = [h for h in dropped if h.origin != "llm"]
    if not guarded.highlights and own:
        # Never nothing: highlights made of the reviews' own sentences are what the unverified path
        # shows, and a query with reviews must not end empty; they stay, with the verdict on them.
        for highlight in own:
            if highlight.verification is not None:
                highlight.verification = highlight.verification.model_copy(update={"action": "kept"})
            highlight.notes.append(KEPT_NOTE)
        guarded = replace(guarded, highlights=own)
        dropped = [h for h in dropped if h.origin == "llm"]
    return guarded, dropped

