"""Whether a key point complains: the complaint reading of CON and PRO key points.

Its own module so that both :mod:`~opinio_agents.synthesis.selection` (a CON must complain, a PRO may not only
complain) and :mod:`~opinio_agents.synthesis.keypoint` (the clause of a mixed sentence on a key point's side) read
a complaint the same way, without importing each other.

Example:
    >>> states_complaint("The rooms are small."), uses_complaint_word("Internet wasn't free.")
    (True, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from opinio_agents.text.preprocess import plain_apostrophes
from opinio_agents.text.wordlists import word_alternation, word_set

__all__ = [
    "states_complaint", "uses_complaint_word", "uses_praise_word", "negates_praise", "names_problem",
    "praises_nothing", "NEGATION", "ComplaintSettings",
    "COMPLAINT_SETTINGS",
]


@dataclass(frozen=True)
class ComplaintSettings:
    """The settings of the complaint reading (the values shipped; figures in ``benchmarks/README.md``).

    Attributes:
        complaint_valence: :func:`states_complaint`: how negative the lexicon must read a word alone for it
            to complain ("rude" -0.51, "lack" -0.32; "stop" -0.30 and "blocks" -0.23, of "a few blocks away",
            do not).
        negation_window: :func:`uses_complaint_word` and :func:`states_complaint`: how many words before a complaint
            word a negator negates it (the review lexicon's own reach, VADER's three words), through the
            ``negation_reach`` words only; a negated complaint ("no problem", "weren't expensive", "never a problem",
            "not noisy at all", "nothing to complain about") complains of nothing, unless its negation complains too
            (``negation_complains``: "not hot", "not cheap"; "not loud enough"). 0 reads every negation as a
            complaint, as before. Issue 21 item 1 (helper kp9, Dec 4): the CON "It wasn´t loud at all." (a noise
            CON of 197424 at HIRO seeds 0, 2 and 3; at seed 3 "Noise was not a factor." takes its place) goes; on the
            query path two sound minority PROs come back ("As they weren't expensive (purchased on Cyber Monday).",
            "Not very expensive, supposedly spill proof, good 104 key layout."). SPACE dev general over HIRO seeds
            0-3 28.90 (margin 3.65) and its summaries unchanged; OpoSum aspect-label gap 60.3 -> 60.6 (100 of 438
            unanswered both), side agreement 96.0% (120/125) -> 96.0% (121/126); SPACE dev aspect, OpoSum and FewSum
            val general unchanged.
        deny_problems: A negator that reaches a ``denied_problems`` noun ("factor", "concern", "bother", "deal")
            denies a problem, as one that reaches a complaint word does ("Noise was not a factor.", "Parking was
            never a concern.", "Not a big deal."): it complains of nothing. Without it, such a negation complained by
            itself, like "No air conditioning.", and "Noise was not a factor." was a noise CON of 197424 at HIRO
            seed 3 (issue 21 items 2-3, helper asp10, Dec 4: gone; with the closed key points of the same session 2 of
            the 162 query-free highlights of that seed change, its summaries none). SPACE dev aspect and topics
            answers, OpoSum aspect labels and side agreement (96.1%, 122/127) unchanged.
        bare_price: :func:`states_complaint`: a price complains by itself. Off, a price complains only with a
            ``price_complaints`` word ("Valet parking was over $25", "we had to pay $20") or a complaint word
            ("expensive", "charge", "fee", "extra"): "Parking is available for $15.00 a day." and "Weekend hotel
            parking is CN$25 per day, weekday at 40." (SPACE dev 185237's parking CON at HIRO seed 0) state a fact
            (issue 21, helper trust12, Dec 4; figures in ``benchmarks/README.md``).
        fears_complain: :func:`states_complaint`: the complaint words of an expectation clause (an
            ``expectation_verbs`` verb, then "would", "might", "could", "will" or "to" within three words: "I thought
            it would be noisy at night") complain. Off they do not, up to a mark or "but"; after its "but" a negator
            denies the fear ("... but we ... did not hear a thing": SPACE dev 1176198's noise CON).
        conditions_complain: :func:`states_complaint`: a negator at most two words after a ``negated_conditions``
            word ("in case you don't want the very affordable breakfast buffet", SPACE dev 182002's food CON; "if
            you don't have a car") complains. Off it states a condition, not a complaint.
        fear_clause: With ``fears_complain`` off, an expectation clause also ends at "and" before a clause of its
            own (a verb of being, ``being``, within three words): "We expected it to be clean and it was filthy"
            complains of "filthy". Off, the fear reached past "and" to the next mark or "but" and swallowed the
            complaint (issue 21, helper neg13, Dec 4).
        problem_praise: A ``problem_intensifiers`` word ("terrific") that judges a ``problem_nouns`` word ("the noise
            is terrific until around three in the morning", "terrific noise") praises, as the lexicon reads it. Off,
            it measures the nuisance: a complaint word (:func:`uses_complaint_word`) and no praise
            (:func:`uses_praise_word`). SPACE dev 1176198's noise PRO at HIRO seeds 1-3 goes (issue 21, helper
            neg13, Dec 4; figures in ``benchmarks/README.md``).
        stay_complaints: :func:`states_complaint`: a complaint word between a ``first_person`` word and a
            ``stay_nouns`` word ("my horrific experience", "our worst stay") complains. Off, it judges the
            reviewer's whole stay, not the aspect a key point is shown under: "All I got for my horrific
            experience was free breakfast at the restaurant downstairs." (a breakfast CON of SPACE dev 185237 at
            HIRO seeds 0-3) states no complaint about the breakfast (issue 21, helper neg13, Dec 4). Without the
            ``first_person`` word it also took "This was one of the worst experiences I have ever with a hotel room
            that cost $160 a night." (182002's only price CON point at seed 2), a complaint about what the money
            bought.
        hedges_praise: :func:`uses_praise_word`: the words of a ``hedges`` phrase ("to be honest") praise, as the
            lexicon reads "honest". Off they do not: "The room had a spare sofa bed and to be honest was tiny for
            three people." (SPACE dev 197424's bed PRO at HIRO seed 3) praises nothing (issue 21, helper neg13).
    """

    complaint_valence: float = 0.3
    negation_window: int = 3
    deny_problems: bool = True
    bare_price: bool = False
    fears_complain: bool = False
    conditions_complain: bool = False
    fear_clause: bool = True
    problem_praise: bool = False
    stay_complaints: bool = False
    hedges_praise: bool = False


#: The settings the complaint reading uses.
COMPLAINT_SETTINGS = ComplaintSettings()

#: A negation ("not", "no", "never", "wasn't" ...).
NEGATION = re.compile(r"\b(?:not|no|never|nothing|none|nor|without)\b|n't\b", re.IGNORECASE)
_MONEY = re.compile(r"[$\u00a3\u20ac]\s?\d|\d\s?(?:euros?|dollars?|usd|eur|gbp)\b", re.IGNORECASE)


def states_complaint(text: str) -> bool:
    """Whether a key point complains: what a CON must do, whatever the stored sentiment of its sentence says.

    It does with a word the sentiment lexicon reads clearly negative (at most
    ``-ComplaintSettings.complaint_valence`` alone: "rude", "disappointing"; not "stop" or "blocks"), a ``complaint``
    word the lexicon misses or misreads ("small", "expensive", "noisy", "too"), a negation ("not free",
    "no air conditioning", "wasn't included") or a price with a ``price_complaints`` word ("Valet parking was
    over $25"; not a bare price: "Parking is available for $15.00 a day."). "The beach is a short walk away" and
    "The noise was muted", stored negative, do not; nor does a negated complaint
    (:func:`uses_complaint_word`: "no problem", "weren't expensive", "not noisy at all"), whose negation negates
    the complaint, not the thing, nor a feared one ("I thought it would be noisy but did not hear a thing"), a
    negated condition ("in case you don't want the buffet") or one that judges the reviewer's whole stay ("my
    horrific experience", ``ComplaintSettings.stay_complaints``).

    Example:
        >>> states_complaint("The rooms are small."), states_complaint("Internet wasn't free.")
        (True, True)
        >>> states_complaint("Parking is $15 a day."), states_complaint("Parking was over $25 a day.")
        (False, True)
        >>> states_complaint("The beach is a short walk away."), states_complaint("The noise was muted.")
        (False, False)
        >>> states_complaint("No problem with the noise."), states_complaint("The shower was not hot.")
        (False, True)
    """
    text = plain_apostrophes(text)
    if _MONEY.search(text) and (COMPLAINT_SETTINGS.bare_price or _price_cue().search(text)):
        return True
    complaints, negators = _complaint_reading(text)
    if complaints and not COMPLAINT_SETTINGS.stay_complaints:
        complaints = [k for k in complaints if not _judges_stay(_READING_TOKEN.findall(text.lower()), k)]
    return bool(complaints or negators)


def _judges_stay(tokens: list[str], k: int) -> bool:
    """Whether the complaint word at ``k`` judges the reviewer's whole stay: a ``first_person`` word right before it
    and a ``stay_nouns`` word right after it, or after an ``entity_nouns`` word right after it ("my horrific
    experience", "our worst hotel stay"; not "one of the worst experiences ... that cost $160 a night", which
    judges what the money bought)."""
    if k == 0 or tokens[k - 1] not in word_set("selection", "first_person"):
        return False
    stay = word_set("selection", "stay_nouns")
    after = tokens[k + 1 : k + 3]
    if after[:1] and after[0] in word_set("selection", "entity_nouns"):
        after = after[1:]
    return bool(after) and after[0] in stay


def uses_complaint_word(text: str) -> bool:
    """Whether ``text`` uses a word that complains by itself: a ``complaint`` word ("small", "noisy") or one the
    sentiment lexicon reads clearly negative alone (at most ``-ComplaintSettings.complaint_valence``: "rude").

    A complaint word that a negator ("not", "no", "never", "nothing", "n't" ...) negates does not complain ("no
    problem", "weren't expensive", "never a problem", "not noisy at all", "nothing to complain about"): the negator is
    at most ``ComplaintSettings.negation_window`` words before it, with only ``selection.json``'s ``negation_reach``
    words (degree words, articles, be and have) or words in -ly between them, as in the review lexicon's own
    reading of a negation (VADER's three words), unless the negation complains too (``negation_complains``: "not
    hot", "not cheap"; and any "not ... enough": "not loud enough").

    Example:
        >>> uses_complaint_word("The rooms are small."), uses_complaint_word("Internet wasn't free.")
        (True, False)
        >>> uses_complaint_word("The street was not noisy at all."), uses_complaint_word("It was not small but dirty.")
        (False, True)
    """
    return bool(_complaint_reading(plain_apostrophes(text))[0])


@cache
def _price_cue() -> re.Pattern[str]:
    """A ``price_complaints`` word: what makes a price a complaint."""
    return re.compile(rf"\b(?:{word_alternation('selection', 'price_complaints')})\b", re.IGNORECASE)


#: The words after an ``expectation_verbs`` verb that make it expect ("thought it would be", "expected it to be").
_EXPECTING = frozenset({"would", "might", "could", "will", "to"})
#: The marks that end a clause (and the reach of a negator before them).
_MARKS = frozenset(".,;:!?()\u2013\u2014-")


def _fears_and_conditions(tokens: list[str]) -> tuple[set[int], set[int]]:
    """The positions of ``tokens`` in an expectation clause (its verb too), and those of the negators that deny
    the fear after its "but" or state a condition (``ComplaintSettings.fears_complain``, ``conditions_complain``)."""
    feared: set[int] = set()
    moot: set[int] = set()
    if not COMPLAINT_SETTINGS.fears_complain:
        verbs = word_set("selection", "expectation_verbs")
        for k, word in enumerate(tokens):
            if word not in verbs:
                continue
            ahead = tokens[k + 1 : k + 5]
            start = next((m for m, w in enumerate(ahead) if w in _EXPECTING or w in _MARKS), None)
            if start is None or ahead[start] in _MARKS:
                continue
            end = k + 2 + start
            while end < len(tokens) and tokens[end] not in _MARKS and tokens[end] != "but":
                if tokens[end] == "and" and COMPLAINT_SETTINGS.fear_clause and _opens_clause(tokens, end + 1):
                    break
                end += 1
            feared.update(range(k, end))
            if end < len(tokens) and tokens[end] == "but":
                after = end + 1
                while after < len(tokens) and tokens[after] not in ".;!?":
                    moot.add(after)
                    after += 1
    if not COMPLAINT_SETTINGS.conditions_complain:
        openers = word_set("selection", "negated_conditions")
        for k, word in enumerate(tokens):
            if word in openers:
                moot.update(range(k + 1, min(len(tokens), k + 4)))
    return feared, moot


def _opens_clause(tokens: list[str], start: int) -> bool:
    """Whether a clause with a verb of its own (``being``, within three words, before a mark) opens at ``start``
    ("and it was filthy"; not "and dirty")."""
    being = word_set("selection", "being")
    for word in tokens[start : start + 3]:
        if word in _MARKS:
            return False
        if word in being:
            return True
    return False


def uses_praise_word(text: str) -> bool:
    """Whether ``text`` uses a word the sentiment lexicon reads clearly positive alone (at least
    ``ComplaintSettings.complaint_valence``: "lovely", "comfortable", "nice"), whatever else it says.

    Example:
        >>> uses_praise_word("The room was small but lovely."), uses_praise_word("The first room was very small.")
        (True, False)
    """
    from opinio_agents.text.sentiment import default_sentiment_scorer

    scorer = default_sentiment_scorer()
    lexicon = scorer.opinion_words()
    valence = COMPLAINT_SETTINGS.complaint_valence
    text = plain_apostrophes(text).lower()
    if not COMPLAINT_SETTINGS.hedges_praise:
        text = _hedge_pattern().sub(" ", text)
    words = _READING_TOKEN.findall(text)
    measures = _intensified_problems(words)
    return any(
        w in lexicon and scorer.score_one(w) >= valence and k not in measures for k, w in enumerate(words)
    )


@cache
def _hedge_pattern() -> re.Pattern[str]:
    """A ``hedges`` phrase ("to be honest"): candour, not praise (``ComplaintSettings.hedges_praise``)."""
    return re.compile(rf"\b(?:{word_alternation('selection', 'hedges')})\b")


def _intensified_problems(tokens: list[str]) -> set[int]:
    """The positions of the ``problem_intensifiers`` words of ``tokens`` that judge a ``problem_nouns`` word: right
    before it ("terrific noise") or after it, a verb of being and degree words ("the noise is terrific", "the noise
    was truly terrific"); none with ``ComplaintSettings.problem_praise``."""
    if COMPLAINT_SETTINGS.problem_praise:
        return set()
    words = word_set("selection", "problem_intensifiers")
    nouns = word_set("selection", "problem_nouns")
    reach = word_set("selection", "negation_reach")
    being = word_set("selection", "being")
    found: set[int] = set()
    for k, word in enumerate(tokens):
        if word not in words:
            continue
        if tokens[k + 1 : k + 2] and tokens[k + 1] in nouns:
            found.add(k)
            continue
        j = k - 1
        while j >= 0 and (tokens[j] in reach or tokens[j].endswith("ly")) and tokens[j] not in being:
            j -= 1
        if j >= 1 and tokens[j] in being and tokens[j - 1] in nouns:
            found.add(k)
    return found


def negates_praise(text: str) -> bool:
    """Whether every praise word of ``text`` is negated, and one is: a word the lexicon reads clearly positive (at
    least ``ComplaintSettings.complaint_valence``, as in :func:`uses_praise_word`) or a ``negated_praise`` word it
    misses ("large", "worth"), that a negator reaches as it reaches a complaint word (:func:`uses_complaint_word`)
    while it negates no complaint word ("not too far", "no problems" negate the complaint). Such a text complains
    by negating praise ("Bathroom was not large.", "Not worth the money.", "No free wifi."): what a PRO may not do
    (``SelectionSettings.pro_praise_unnegated``). A negated ``negation_praises`` comparative praises ("couldn't have
    been better"), and a negator before an ``additive_negations`` word adds ("not only clean but spacious").

    Example:
        >>> negates_praise("Bathroom was not large."), negates_praise("The rooms were not big, but very clean.")
        (True, False)
        >>> negates_praise("Couldn't have been better."), negates_praise("Not too far from the station.")
        (False, False)
    """
    negated, plain = _praise_counts(plain_apostrophes(text))
    return bool(negated) and not plain


def _praise_counts(text: str) -> tuple[int, int]:
    """How many praise words of ``text`` (lexicon or ``negated_praise``; see :func:`negates_praise`) a negator
    negates, and how many it does not."""
    from opinio_agents.text.sentiment import default_sentiment_scorer

    tokens = _READING_TOKEN.findall(text.lower())
    free = set(_complaint_reading(text)[1])  # the negators that negate no complaint word
    scorer = default_sentiment_scorer()
    lexicon = scorer.opinion_words()
    valence = COMPLAINT_SETTINGS.complaint_valence
    extra = word_set("selection", "negated_praise")
    holds = word_set("selection", "negation_praises")
    additive = word_set("selection", "additive_negations")
    negators = {k for k in free if tokens[k + 1 : k + 2] == [] or tokens[k + 1] not in additive}
    measures = _intensified_problems(tokens)
    negated = plain = 0
    for k, word in enumerate(tokens):
        if k in measures or not (word in extra or (word in lexicon and scorer.score_one(word) >= valence)):
            continue
        negator = None if word in holds else _negator_of(tokens, k, negators)
        if negator is None:
            plain += 1
        else:
            negated += 1
    return negated, plain


def names_problem(text: str) -> bool:
    """Whether ``text`` names a nuisance no negator denies: a ``problem_nouns`` word ("noise", "smell") with no
    negator within ``ComplaintSettings.negation_window`` words before or after it in its clause ("no street
    noise", "noise was never a problem" deny it). A PRO that names one must praise something
    (``SelectionSettings.pro_problem_praises``): "The noise from the club next door will rock your world until about
    2:30 AM." praises nothing.

    Example:
        >>> names_problem("The noise from the club will rock your world."), names_problem("No street noise at all.")
        (True, False)
        >>> names_problem("Noise was never a problem."), names_problem("The room was quiet.")
        (False, False)
    """
    tokens = _READING_TOKEN.findall(plain_apostrophes(text).lower())
    nouns = word_set("selection", "problem_nouns")
    window = COMPLAINT_SETTINGS.negation_window
    for k, word in enumerate(tokens):
        if word not in nouns:
            continue
        start, end = k, k + 1
        while start > 0 and k - start < window and tokens[start - 1] not in _MARKS:
            start -= 1
        while end < len(tokens) and end - k <= window and tokens[end] not in _MARKS:
            end += 1
        if not any(w in _NEGATORS or w.endswith("n't") for w in tokens[start:end]):
            return True
    return False


def praises_nothing(text: str) -> bool:
    """Whether ``text`` uses no praise word that no negator negates: none the lexicon reads clearly positive and
    no ``negated_praise`` word ("quiet", which the lexicon reads +0.30, just under the praise valence; see
    :func:`negates_praise`).

    Example:
        >>> praises_nothing("The noise from the club will rock your world."), praises_nothing("We got a quiet room.")
        (True, False)
    """
    return not _praise_counts(plain_apostrophes(text))[1]


def _negator_of(tokens: list[str], k: int, negators: set[int]) -> int | None:
    """The negator of ``negators`` that negates the word at ``k``: at most ``ComplaintSettings.negation_window``
    words before it, with only ``negation_reach`` words or words in -ly between them."""
    reach = word_set("selection", "negation_reach")
    for j in range(k - 1, max(-1, k - 1 - COMPLAINT_SETTINGS.negation_window), -1):
        if j in negators:
            return j
        if tokens[j] not in reach and not tokens[j].endswith("ly"):
            return None
    return None


#: A word, or a mark (which ends the reach of a negator before it).
_READING_TOKEN = re.compile(r"[a-z0-9']+|[.,;:!?()\u2013\u2014-]")
_NEGATORS = frozenset({"not", "no", "never", "nothing", "none", "nor", "without", "cannot"})


def _complaint_reading(text: str) -> tuple[list[int], list[int]]:
    """The positions (in :data:`_READING_TOKEN` tokens of the lower-cased ``text``) of its complaint words that no
    negator negates, and of its negators that negate no complaint word (see :func:`uses_complaint_word`)."""
    from opinio_agents.text.sentiment import default_sentiment_scorer

    tokens = _READING_TOKEN.findall(text.lower())
    complaint = word_set("selection", "complaint")
    still = word_set("selection", "negation_complains")
    scorer = default_sentiment_scorer()
    lexicon = scorer.opinion_words()
    valence = COMPLAINT_SETTINGS.complaint_valence
    feared, moot = _fears_and_conditions(tokens)
    negators = {k for k, w in enumerate(tokens) if w in _NEGATORS or w.endswith("n't")}
    complaints: list[int] = []
    spent: set[int] = set()
    denied = word_set("selection", "denied_problems") if COMPLAINT_SETTINGS.deny_problems else frozenset()
    neutral = word_set("selection", "lexicon_non_complaints")

    def negator_of(k: int) -> int | None:
        """The negator that negates the word at ``k``, if one reaches it."""
        return _negator_of(tokens, k, negators)

    measures = _intensified_problems(tokens)  # "the noise is terrific": a complaint word
    for k, word in enumerate(tokens):
        if word in denied:  # "not a factor", "never a concern": the negation denies a problem
            negator = negator_of(k)
            if negator is not None:
                spent.add(negator)
            continue
        if k in feared or word in neutral:  # a feared complaint, or a word that complains of nothing
            continue
        negative = word in lexicon and scorer.score_one(word) <= -valence
        if word not in complaint and k not in measures and not negative:
            continue
        negator = None
        if word not in still and tokens[k + 1 : k + 2] != ["enough"]:  # "not loud enough" still complains
            negator = negator_of(k)
        if negator is None:
            complaints.append(k)
        else:
            spent.add(negator)
    return complaints, sorted(negators - spent - moot)
