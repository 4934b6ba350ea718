"""Offline sentence segmentation for noisy review text.

Why a rule-based splitter and not ``pysbd``: ``pysbd`` is accurate on edited
prose but segments only ~2K sentences/s, which would dominate indexing of a
10K-sentence entity, and it returns no offsets into text that contains HTML
remnants. Reviews need a different set of rules anyway (missing spaces after
periods, all-lowercase writing, emoji used as full stops, bullet lists, ``<br/>``
line breaks). This module is a small, single-pass splitter tuned for that noise
that runs at tens of thousands of sentences per second and always returns
character spans into the ORIGINAL text.

Rules, in order:

* Hard boundaries: blank lines (paragraph breaks), block HTML tags (``<br/>``,
  ``<p>``, ``<li>`` ...), bullet-list items (``-``, ``*``, ``•``, ``1.``, ``1)``)
  and single line breaks whose next line does not start with a lowercase letter
  (a lowercase start is taken as a hard-wrapped continuation).
* ``!``, ``?``, ``…`` runs (``!!!``, ``?!``) end a sentence when followed by
  whitespace, or directly by an uppercase letter (``great!Staff``).
* ``.`` ends a sentence when followed by whitespace (whatever the case of the
  next word: many reviews are written all lowercase), or directly by an
  uppercase letter (``clean.Staff``), except after known abbreviations
  (``Mr.``, ``St.``, ``e.g.``, ``approx.``; ``a.m.``/``etc.`` only end a sentence
  before a capitalised word; ``No.``/``Rm.`` never before a number), single
  initials (``J. Smith``), a spaced three-dot ellipsis before a lowercase word,
  and inside URLs, e-mail addresses and file names (``hotels.com``,
  ``www.x.co.uk``, ``menu.pdf``). Informal full stops end a sentence before
  a lowercase word too: ``..``, ``....`` or dots with no space after them
  (``parking....coordination``, ``good food.worth it``), unless the next word
  carries the sentence on after two or more dots (``ok... but``, ``nice..and``).
  A single period glued to a lower-case word is a full stop that lost its space
  even before ``but``/``and``/``with`` (``arrives.but the taste``,
  ``terrace.with stunning views``, ``etc.the video chat``), except in names
  written with a dot (``eat.fit``) and after ``No.``-type abbreviations
  (``No.of items``). Decimals (``$4.50``, ``3.5 stars``), ``24/7`` and ``wi-fi``
  contain no boundary candidates.
* A run of emoji ends a sentence when followed by whitespace and a capital.
* Inline HTML tags and leading bullet markers are stripped from span edges, but
  stay inside a span (offsets are never shifted); entities such as ``&amp;``
  are kept as written.
* Run-on sentences longer than :data:`MAX_WORDS` words are split at ``;`` and
  then before a lowercase `` but `` — only where both parts keep at least
  :data:`MIN_PIECE_WORDS` words. Other long sentences are left whole.

Example:
    >>> text = "Room was clean.Staff rude!!! Dr. Lee said wi-fi is $4.50/day."
    >>> [text[s:e] for s, e in split_sentences(text)]
    ['Room was clean.', 'Staff rude!!!', 'Dr. Lee said wi-fi is $4.50/day.']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from opinio_agents.models import REVIEW_METADATA_FIELDS, Sentence
from opinio_agents.text.wordlists import word_set

if TYPE_CHECKING:
    from opinio_agents.models import Entity, EntityId, Review

__all__ = ["split_sentences", "segment_review", "segment_entity", "MAX_WORDS", "MIN_PIECE_WORDS"]

#: Sentences with more words than this are split at clause boundaries where possible.
MAX_WORDS = 60
#: A clause split is only made when both pieces keep at least this many words.
MIN_PIECE_WORDS = 4

# Abbreviation lists (never_end, end_before_capital, before_number) are package data:
# ``resources/words/segment.json``, read on first use.
_BLOCK_TAG = r"<\s*/?\s*(?:br|p|div|li|ul|ol|tr|td|th|table|h[1-6]|hr|blockquote)\b[^>]{0,200}>"
# Hard boundaries: paragraph breaks, block tags, and single line breaks (decided in code).
_HARD = re.compile(rf"(?:[ \t]*\r?\n){{2,}}[ \t]*|{_BLOCK_TAG}|\r?\n|\r", re.IGNORECASE)
_EMOJI = "\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d"
_TERMINAL = re.compile(rf"(?:[.!?\u2026]+|[{_EMOJI}]+)['\"\u201d\u2019)\]]*")
_WORD_BEFORE = re.compile(r"([A-Za-z](?:[A-Za-z.]*[A-Za-z])?)$")
_BULLET = re.compile(
    r"(?:[-*\u2022\u00b7\u2013\u2014\u25aa\u25cf>+]+|\(?\d{1,2}[.)])(?=\s)|[\u2022\u00b7\u25aa\u25cf]"
)


@functools.cache
def _url_pattern() -> re.Pattern[str]:
    """Web addresses, e-mails and file names: their dots are never full stops (``tlds``, ``file_extensions``)."""
    endings = word_set("segment", "tlds") | word_set("segment", "file_extensions")
    tlds = "|".join(sorted(endings, key=len, reverse=True))
    return re.compile(
        r"(?:https?://|www\.)[^\s<>\"]*[^\s<>\".,!?;:)\]']"
        r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
        rf"|\b[\w-]+(?:\.[\w-]+)*\.(?:{tlds})\b",
        re.IGNORECASE,
    )

_EDGE_JUNK_LEFT = re.compile(r"(?:\s|<[^>]{0,200}>|&nbsp;)+", re.IGNORECASE)
_EDGE_JUNK_RIGHT = re.compile(r"(?:\s|<[^>]{0,200}>|&nbsp;)+$", re.IGNORECASE)
_ALNUM = re.compile(r"[^\W_]")
_HAS_LETTER = re.compile(r"[^\W\d_]")
_ENTITY = re.compile(r"&#?\w{1,8};")
_SEMI = re.compile(r";\s+")
_BUT = re.compile(r"\s(?=but\s)")
_NEW_SENTENCE = re.compile(r"[.!?\u2026]+\s+\w")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Split review text into sentences.

    Args:
        text: Raw review text (may contain HTML remnants, emoji, bullets).

    Returns:
        ``(start, end)`` character spans into ``text``, in order; each
        ``text[start:end]`` is stripped of surrounding whitespace and tags, is
        non-empty and contains at least one letter or digit.

    Example:
        >>> split_sentences("Great stay!  Will return.")
        [(0, 11), (13, 25)]
    """
    spans: list[tuple[int, int]] = []
    for block_start, block_end in _blocks(text):
        for start, end in _split_block(text, block_start, block_end):
            trimmed = _trim(text, start, end)
            if trimmed is None:
                continue
            for piece in _split_run_on(text, *trimmed):
                spans.append(piece)
    return spans


def _blocks(text: str) -> Iterator[tuple[int, int]]:
    """Yield ranges between hard boundaries (paragraphs, block tags, bullet lines)."""
    pos = 0
    for match in _HARD.finditer(text):
        sep = match.group()
        if sep in ("\n", "\r\n", "\r"):
            # A single line break: a continuation when the next line starts lowercase.
            rest = text[match.end() : match.end() + 200].lstrip(" \t")
            if rest[:1].islower():
                continue
        yield pos, match.start()
        pos = match.end()
    yield pos, len(text)


def _url_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    chunk = text[start:end]
    if "://" not in chunk and "www." not in chunk.lower() and "@" not in chunk and "." not in chunk:
        return []
    return [(start + m.start(), start + m.end()) for m in _url_pattern().finditer(chunk)]


def _split_block(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    urls: list[tuple[int, int]] | None = None
    sent_start = start
    for match in _TERMINAL.finditer(text, start, end):
        cut = match.end()
        nxt = text[cut] if cut < end else ""
        after = text[cut:end].lstrip()
        first_after = after[:1]
        punct = match.group()
        if not nxt:
            continue  # End of block: the block end closes the sentence anyway.
        spaced = nxt.isspace()
        if _in_parenthesis(text, sent_start, match.start(), end):
            continue  # "(delicious breakfast! )", "(very nice!) helped us": the aside goes on
        if punct[0] in "!?\u2026":
            if punct[0] == "\u2026" and first_after.islower():
                continue
            if not (spaced or nxt.isupper()):
                continue
        elif punct[0] == ".":
            glued = nxt.islower()  # "ample parking....coordination", "the food was good.we loved it"
            if not (spaced or nxt.isupper() or glued):
                continue
            if (glued or punct.startswith("..")) and first_after.islower() and not _lower_start(
                text, match.start(), cut, end, dots=len(punct.rstrip("'\"\u201d\u2019)]"))
            ):
                continue  # "it was ok... but not great", "eat.fit", "e.g.the"
            if not _HAS_LETTER.search(text, sent_start, match.start()):
                continue  # "1." list numbers, stray dots: nothing to end yet.
            if len(punct.rstrip("'\"\u201d\u2019)]")) == 1 and not _period_may_end(
                text, sent_start, match.start(), first_after, glued=glued
            ):
                continue
            if urls is None:
                urls = _url_spans(text, start, end)
            if any(u0 <= match.start() < u1 for u0, u1 in urls):
                continue
        else:  # emoji
            if not (spaced and first_after[:1].isupper()):
                continue
        yield sent_start, cut
        sent_start = cut
    yield sent_start, end


#: How far after a terminator inside a parenthesis the closing one may come for the aside to go on.
_ASIDE_REACH = 40


def _in_parenthesis(text: str, sent_start: int, at: int, end: int) -> bool:
    """Whether the terminator at ``at`` stands inside a parenthesis opened in this sentence that closes within
    :data:`_ASIDE_REACH` characters, before any other terminator, and the sentence goes on after it in lower
    case ("We loved the staff (so kind!) and the pool"; not "(yum!) The pool ...").

    Example:
        >>> text = "The bar (great cocktails!) and the pool. Fine."
        >>> _in_parenthesis(text, 0, text.index("!"), len(text)), _in_parenthesis(text, 0, text.index(". "), len(text))
        (True, False)
    """
    if text.count("(", sent_start, at) <= text.count(")", sent_start, at):
        return False
    close = text.find(")", at, min(end, at + _ASIDE_REACH))
    if close == -1 or _NEW_SENTENCE.search(text, at, close) is not None:
        return False
    following = text[close + 1 : end].lstrip()[:1]
    return bool(following) and not (following.isupper() or following.isdigit())  # "(yum!) Next ..." ends


_GLUED_WORD_BEFORE = re.compile(r"(?<![\w./@-])[A-Za-z]{2,}$")
_WORDS_AFTER = re.compile(r"[a-z]+(?:'[a-z]+)?")


def _lower_start(text: str, dot: int, cut: int, end: int, *, dots: int) -> bool:
    """Whether a run of ``dots`` periods at ``dot`` ends a sentence although a lower-case word follows it.

    Informal reviews end sentences with "..", "...." or a period and no space ("ample parking....coordination
    has scope", "good food.worth the price"). Two dots or more end one unless the next word carries the sentence
    on (a ``continuations`` word: "it was ok... but not great", "nice..and clean"), or they are an ellipsis of
    three with a space after ("In hindsight... size isn't everything": a pause as often as a full stop). A
    single period with no space after it is a full stop that lost its space, whatever the next word ("food
    arrives.but the taste was good", "terrace.with stunning views"); it needs a word of two letters or more on
    each side, the next one not alone before the next terminator ("in.every.corner", "Great.product!"), the two
    not a ``dotted_names`` name ("eat.fit bc I can see the calories"), and no abbreviation ("e.g.the", "no.of":
    checked by the caller), web address, file name or number around it ("v1.2"). A spaced single period before
    a lower-case word already ends a sentence (many reviews are written all lower case).

    Example:
        >>> t = "Ample parking....coordination has scope. ok... but fine. calls for eat.fit.. good food.worth it"
        >>> [_lower_start(t, t.index(p), t.index(p) + n, len(t), dots=n) for p, n in
        ...  (("....c", 4), ("... b", 3), (".fit", 1), (".worth", 1))]
        [True, False, False, True]
        >>> u = "It arrives.but the taste was good. Order from eat.fit bc it is light"
        >>> [_lower_start(u, u.index(p), u.index(p) + 1, len(u), dots=1) for p in (".but", ".fit")]
        [True, False]
        >>> [t[s:e] for s, e in split_sentences(t)][:3]
        ['Ample parking....', 'coordination has scope.', 'ok... but fine.']
        >>> [t[s:e] for s, e in split_sentences(t)][3:]
        ['calls for eat.fit..', 'good food.', 'worth it']
    """
    after = text[cut:end].lstrip()
    words = _WORDS_AFTER.match(after)
    if words is None:
        return False
    if dots > 1:
        if words.group() in word_set("segment", "continuations"):
            return False  # "it was ok... but not great", "nice..and clean": a pause
        return dots != 3 or not text[cut : cut + 1].isspace()  # "In hindsight... size isn't everything"
    # One period glued to the next word: a full stop that lost its space, even before "but" or "and"
    # ("food arrives.but the taste was good"), unless it is part of a name written with a dot ("eat.fit").
    before = _GLUED_WORD_BEFORE.search(text, max(0, dot - 40), dot)
    if before is None or len(words.group()) < 2:
        return False
    if f"{before.group()}.{words.group()}".lower() in word_set("segment", "dotted_names"):
        return False
    rest = after[words.end() :]
    return rest[:1] in (" ", "\t") and _WORDS_AFTER.match(rest.lstrip()) is not None


def _period_may_end(text: str, sent_start: int, dot: int, first_after: str, *, glued: bool = False) -> bool:
    """Whether a single period at ``dot`` may end a sentence (abbreviation checks).

    Args:
        text: The review text.
        sent_start: Where the current sentence starts.
        dot: The period's offset.
        first_after: The first non-space character after the period ('' at the end).
        glued: Whether a lower-case letter follows the period with no space: then ``glued_end`` abbreviations
            end the sentence ("front door, etc.the video chat") and ``before_number`` ones never do ("No.of
            varieties", "there is no.proper menu").

    Example:
        >>> t = "Towels etc.the pool. No.of items"
        >>> [_period_may_end(t, 0, t.index(p), p[1], glued=True) for p in (".t", ".o")]
        [True, False]
    """
    word_match = _WORD_BEFORE.search(text, max(sent_start, dot - 12), dot)
    if word_match is None:
        return True
    word = word_match.group(1)
    before = text[word_match.start() - 1] if word_match.start() > 0 else " "
    if before.isalnum() or before in "/@":
        return True  # Part of a longer token such as "24/7." or "5pm."
    low = word.lower()
    if glued and low in word_set("segment", "glued_end"):
        return True  # "etc.the video chat": a full stop that lost its space
    if glued and low in word_set("segment", "before_number"):
        return False  # "No.of varieties", "no.proper details": never a sentence of its own
    if low in word_set("segment", "never_end"):
        return False
    if low in word_set("segment", "end_before_capital") or ("." in low and len(low) <= 7):
        return first_after[:1].isupper()
    if low in word_set("segment", "before_number") and first_after[:1].isdigit():
        return False
    if len(word) == 1 and word.isupper() and first_after[:1].isupper():
        return False  # An initial: "J. Smith".
    return True


def _trim(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Strip whitespace, tags and bullet markers from both ends; None if nothing is left."""
    while True:
        junk = _EDGE_JUNK_LEFT.match(text, start, end)
        if junk:
            start = junk.end()
        bullet = _BULLET.match(text, start, end)
        if bullet:
            start = bullet.end()
            continue
        if junk is None:
            break
    junk = _EDGE_JUNK_RIGHT.search(text, start, end)
    if junk:
        end = junk.start()
    if start >= end:
        return None
    chunk = text[start:end]
    if "&" in chunk:
        chunk = _ENTITY.sub(" ", chunk)
    if not _ALNUM.search(chunk):
        return None
    return start, end


def _split_run_on(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split an over-long sentence at ';' and then before ' but '; else keep it whole."""
    if text.count(" ", start, end) < MAX_WORDS:
        return [(start, end)]
    pieces = [(start, end)]
    for pattern in (_SEMI, _BUT):
        refined: list[tuple[int, int]] = []
        for p_start, p_end in pieces:
            if len(text[p_start:p_end].split()) <= MAX_WORDS:
                refined.append((p_start, p_end))
                continue
            refined.extend(_cut_at(text, p_start, p_end, pattern))
        pieces = refined
    return pieces


def _cut_at(text: str, start: int, end: int, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    cur = start
    for match in pattern.finditer(text, start, end):
        left = text[cur : match.start()]
        right = text[match.end() : end]
        if len(left.split()) >= MIN_PIECE_WORDS and len(right.split()) >= MIN_PIECE_WORDS:
            cut_end = match.start() + (1 if match.group().startswith(";") else 0)
            out.append((cur, cut_end))
            cur = match.end()
    out.append((cur, end))
    return [span for span in (_trim(text, s, e) for s, e in out) if span is not None]


def segment_review(entity_id: EntityId, review: Review) -> list[Sentence]:
    """Split one review into :class:`~opinio_agents.models.Sentence` objects.

    Args:
        entity_id: The id of the entity the review belongs to.
        review: The review.

    Returns:
        The review's sentences with stable ids ``"{entity_id}:{review_id}:{index}"``,
        their spans into ``review.text`` and the review's metadata.

    Example:
        >>> from opinio_agents.models import Review
        >>> [s.sentence_id for s in segment_review(7, Review(review_id=3, text="Nice. Quiet."))]
        ['7:3:0', '7:3:1']
    """
    meta = {name: getattr(review, name) for name in REVIEW_METADATA_FIELDS}
    text = review.text
    return [
        Sentence(
            sentence_id=Sentence.make_id(entity_id, review.review_id, index),
            entity_id=str(entity_id),
            review_id=str(review.review_id),
            index=index,
            text=text[start:end],
            start=start,
            end=end,
            **meta,
        )
        for index, (start, end) in enumerate(split_sentences(text))
    ]


def segment_entity(entity: Entity) -> list[Sentence]:
    """Split every user review of ``entity`` into sentences, in review order.

    Example:
        >>> from opinio_agents.models import Entity
        >>> e = Entity(entity_id=1, user_reviews=[{"review_id": 1, "text": "Good. Bad."}])
        >>> [s.text for s in segment_entity(e)]
        ['Good.', 'Bad.']
    """
    sentences: list[Sentence] = []
    for review in entity.user_reviews:
        sentences.extend(segment_review(entity.entity_id, review))
    return sentences
