"""Every chat answer sentence checked before anyone sees it: citations, evidence, repetition.

A chat model, small ones above all, cites nothing, cites excerpts that do not exist,
says the opposite of what it cites, repeats one sentence until its token budget runs
out, or answers a question the reviews do not cover. :class:`AnswerGuard` reads the
model's text as it streams, cuts it into sentences and lets a sentence through only
when it holds:

1. **Citations.** Markers such as ``[S1]``, ``[S1, S3]``, ``[s2]`` or ``[2]`` are
   read and resolved to the turn's excerpts (a number outside them is invalid and
   removed); shown sentences carry canonical ``[S1]`` markers. A sentence that
   states something (everything but a short connective or a statement that the
   reviews do not cover the question) and cites nothing valid is *repaired once*:
   it gets the citation of the excerpt it paraphrases (cosine of the shared sentence
   encoder at least :data:`ATTRIBUTION_SIMILARITY`), else it is dropped or, with
   ``unsupported="mark"``, shown behind :data:`UNVERIFIED_MARK` (never as fact).
2. **Evidence.** A cited sentence is checked against what it cites with the
   project's highlight verification (:func:`~opinio_agents.synthesis.verification.judge`
   on AOS triplets, the sentence's stance from the same triplets and the indexer's
   sentiment stage): ``contradicted`` (it takes the other side of its excerpts,
   says the opposite, or names an aspect none of them discusses) is dropped or
   marked with :data:`CONTRADICTED_MARK`.
3. **Repetition.** A sentence equal or nearly equal (word-set Jaccard at least
   :data:`REPEAT_JACCARD`) to one already written is dropped, a sentence that loops
   on itself (one word 4-gram three times) too; after :attr:`AnswerGuard.max_repeats`
   repeats, :attr:`AnswerGuard.max_sentences` shown sentences or three sentences more
   than that written, the guard asks the caller to stop generating
   (:attr:`AnswerGuard.done`), so a looping or rambling model costs no more tokens.

Nothing here calls a model: the guard judges text, which keeps it the same for every
model size and every surface (``ReviewChat``, ``opinio chat``, the HTTP route, the
agent tools and MCP all answer through ``ReviewChat``).

Example:
    >>> guard = AnswerGuard(["The wifi kept dropping.", "Breakfast was great."], verify=False)
    >>> guard.feed("Wi-fi drops a lot [S1]. Wi-fi drops a lot [S1]. I think it is fine.")
    ['Wi-fi drops a lot [S1].']
    >>> guard.close()
    []
    >>> [(c.action, c.issue) for c in guard.checks]
    [('shown', None), ('dropped', 'repeated'), ('dropped', 'no-citation')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, Field

from opinio_agents.errors import ConfigError
from opinio_agents.kinds import Verdict
from opinio_agents.models import Polarity

if TYPE_CHECKING:
    from opinio_agents.embeddings import Encoder
    from opinio_agents.indexing.stages import SentimentStage
    from opinio_agents.synthesis.verification import HighlightVerifier

__all__ = [
    "AnswerGuard",
    "SentenceCheck",
    "GuardReport",
    "Unsupported",
    "ATTRIBUTION_SIMILARITY",
    "REPEAT_JACCARD",
    "UNVERIFIED_MARK",
    "CONTRADICTED_MARK",
    "is_coverage_statement",
    "citation_numbers",
    "split_sentences",
]

#: An uncited sentence is attributed to an excerpt at least this similar (cosine of the
#: shared MiniLM encoder). Measured on SmolLM2-135M's chat answers about the sample:
#: paraphrases of an excerpt 0.73-0.90 ("Breakfast was amazing, especially the pancakes."
#: 0.90), filler that only shares the topic word 0.50-0.66 ("Thank you for bringing
#: attention to the importance of the breakfast during the trip." 0.66), the opposite
#: claim 0.54 ("The wifi was fast and reliable." against "Wi-fi only worked in the corridor").
ATTRIBUTION_SIMILARITY = 0.7
#: Two sentences sharing at least this share of their words (Jaccard) repeat each other.
REPEAT_JACCARD = 0.8
#: Prefix of a shown sentence that no excerpt backs (``unsupported="mark"``).
UNVERIFIED_MARK = "[unverified: no review excerpt backs this]"
#: Prefix of a shown sentence its own excerpts contradict (``unsupported="mark"``).
CONTRADICTED_MARK = "[contradicted by the excerpts it cites]"

#: What happens to a sentence that fails a check: removed, or shown behind a visible mark.
Unsupported = Literal["drop", "mark"]
Issue = Literal["no-citation", "contradicted", "repeated"]

# A bracket group that holds only citation numbers: [S1], [s2], [3], [S1, S2], [S1; 4].
_GROUP = re.compile(r"\[\s*((?:S\s*)?\d{1,3}(?:\s*[,;]\s*(?:S\s*)?\d{1,3})*)\s*\]", re.IGNORECASE)
_NUMBER = re.compile(r"\d{1,3}")
# A sentence ends at . ! ? (then optional closing quotes and citation groups) before whitespace, or at a newline.
_END = re.compile(r"[.!?…][\"')\]]*(?:\s*\[[^\]\n]{1,40}\])*(?=\s)|\n")
_WORD = re.compile(r"[a-z0-9']+")
_COVERAGE = re.compile(
    r"\b(?:reviews?|reviewers|guests|excerpts?)\b[^.]{0,40}?\b(?:do|does|did)\s*(?:not|n't)\s+"
    r"(?:cover|mention|discuss|say|talk|address|answer|describe|include)"
    r"|\bno\s+(?:review|reviewer|guest|excerpt|information|mention)s?\b"
    r"|\b(?:not|never|isn't|aren't|wasn't)\s+(?:mentioned|covered|discussed|addressed)\b"
    r"|\b(?:could|can|cannot|can't|couldn't)\s*(?:not|n't)?\s+(?:find|tell|say)\b"
    r"|\bnone\s+of\s+the\s+(?:reviews|reviewers|guests|excerpts)\b",
    re.IGNORECASE,
)
# Words without content: a list opener ("Here is what guests say:") or a pleasantry.
_CONNECTIVE = re.compile(
    r"^(?:sure|okay|ok|hello|hi|thanks?(?: you)?|i hope this helps|let me know[^.]*|"
    r"here(?:'s| is| are)[^.]{0,60}:|[^.]{0,60}:)[.!]?$",
    re.IGNORECASE,
)
_LIST_NUMBER = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*\u2022])\s*$")
_MAX_SENTENCE_CHARS = 400


def citation_numbers(text: str) -> list[int]:
    """The excerpt numbers ``text`` cites, in order, each once.

    Example:
        >>> citation_numbers("Slow wifi [S2][s1], see [3; S2] and [note].")
        [2, 1, 3]
    """
    found: list[int] = []
    for group in _GROUP.finditer(text):
        found.extend(int(n) for n in _NUMBER.findall(group.group(1)))
    return list(dict.fromkeys(found))


def _strip_citations(text: str) -> str:
    return " ".join(_GROUP.sub(" ", text).split()).replace(" .", ".").replace(" ,", ",")


def _canonical(text: str, markers: Sequence[int]) -> str:
    """``text`` with its citation groups replaced by ``[S1] [S2]`` before the final punctuation."""
    plain = _strip_citations(text)
    if not markers:
        return plain
    tags = " ".join(f"[S{n}]" for n in markers)
    body, end = (plain[:-1].rstrip(), plain[-1]) if plain and plain[-1] in ".!?…" else (plain, ".")
    return f"{body} {tags}{end}"


def split_sentences(text: str) -> tuple[list[str], str]:
    """Complete sentences of ``text`` (each with its trailing citations) and the unfinished rest.

    A sentence is complete only when the next one has begun (a word after the break), so
    citations that stream in after the full stop stay with their sentence.

    Example:
        >>> split_sentences("Slow wifi. [S1] Good breakfast [S2]. And the po")
        (['Slow wifi. [S1]', 'Good breakfast [S2].'], 'And the po')
    """
    out: list[str] = []
    start = 0
    for match in _END.finditer(text):
        rest = text[match.end() :]
        if not rest.strip() or rest.lstrip().startswith("["):
            break  # the next sentence has not begun: more citations may follow
        piece = text[start : match.end()].strip()
        if _LIST_NUMBER.match(piece):
            continue  # "1." opens a list item: the sentence goes on
        if piece:
            out.append(piece)
        start = match.end()
    return out, text[start:].lstrip()


def is_coverage_statement(text: str) -> bool:
    """Whether ``text`` says that the reviews do not cover something (needs no citation).

    Example:
        >>> is_coverage_statement("The reviews do not mention a casino.")
        True
        >>> is_coverage_statement("The casino is open all night.")
        False
    """
    return bool(_COVERAGE.search(text))


def _words(text: str) -> list[str]:
    return _WORD.findall(_strip_citations(text).lower())


def _loops(words: Sequence[str]) -> bool:
    """Whether one word 4-gram occurs three times (a sentence that repeats itself)."""
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - 3):
        gram = tuple(words[i : i + 4])
        counts[gram] = counts.get(gram, 0) + 1
        if counts[gram] >= 3:
            return True
    return False


class SentenceCheck(BaseModel):
    """What the guard found in one sentence of the model's answer and what it did."""

    text: str = Field(description="The sentence as the model wrote it.")
    shown: str = Field(default="", description="What the user sees ('' when dropped).")
    citations: list[str] = Field(default_factory=list, description="Valid markers (S1, ...) after repair.")
    invalid: list[str] = Field(default_factory=list, description="Markers naming no excerpt of this turn.")
    verdict: Verdict | None = Field(
        default=None, description="Verification against the cited excerpts (None: not checked)."
    )
    issue: Issue | None = None
    action: Literal["shown", "repaired", "dropped", "marked"]
    reason: str = ""


class GuardReport(BaseModel):
    """Counts over one answer's sentences (``ChatAnswer.guard``)."""

    sentences: int = Field(description="Sentences the model wrote (before any check).")
    shown: int = Field(description="Sentences shown as fact (each with a valid citation, or a coverage statement).")
    repaired: int = Field(description="Uncited sentences shown after attribution to the excerpt they paraphrase.")
    marked: int = Field(description="Sentences shown behind a visible 'unverified' or 'contradicted' mark.")
    dropped: int = Field(description="Sentences removed.")
    uncited: int = Field(description="Sentences stating something without a valid citation (before repair).")
    contradicted: int = Field(description="Sentences their cited excerpts contradict.")
    repeated: int = Field(description="Sentences repeating an earlier one.")
    stopped: bool = Field(default=False, description="Generation was cut short (repetition or sentence limit).")


class AnswerGuard:
    """Check a streamed answer sentence by sentence against the turn's excerpts.

    Args:
        evidence: The excerpt texts, in marker order (``[S1]`` is ``evidence[0]``).
        sentiments: The stored sentiment of each excerpt (None when unknown).
        verify: Check cited sentences against their excerpts (needs ``verifier``).
        verifier: The project's highlight verifier (triplets, similarity, cache).
        encoder: Sentence encoder for attribution; ``None`` turns attribution off.
        sentiment: The indexer's sentiment stage, scoring the answer sentences the way
            the excerpts were scored; ``None`` leaves the stance to the triplets.
        unsupported: ``drop`` removes a failing sentence, ``mark`` shows it behind a mark.
        max_sentences: Shown sentences after which :attr:`done` asks to stop generating.
        max_repeats: Repeated sentences after which :attr:`done` asks to stop generating.
        query: The turn's search query (named in verification reasons).
    """

    def __init__(
        self,
        evidence: Sequence[str],
        sentiments: Sequence[float | None] | None = None,
        *,
        verify: bool = True,
        verifier: HighlightVerifier | None = None,
        encoder: Encoder | None = None,
        sentiment: SentimentStage | None = None,
        unsupported: Unsupported = "drop",
        max_sentences: int = 6,
        max_repeats: int = 2,
        query: str = "",
    ) -> None:
        if unsupported not in ("drop", "mark"):
            raise ConfigError(f"unsupported={unsupported!r} must be 'drop' or 'mark'")
        if max_sentences < 1 or max_repeats < 1:
            raise ConfigError(f"max_sentences={max_sentences} and max_repeats={max_repeats} must be >= 1")
        if verify and verifier is None:
            raise ConfigError("verify=True needs a verifier (OpinioRAG.verifier(True))")
        self.evidence = list(evidence)
        self.sentiments = list(sentiments) if sentiments is not None else [None] * len(self.evidence)
        if len(self.sentiments) != len(self.evidence):
            raise ConfigError(f"{len(self.sentiments)} sentiments for {len(self.evidence)} excerpts; give one each")
        self.verify = verify
        self.verifier = verifier
        self.encoder = encoder
        self.sentiment = sentiment
        self.unsupported: Unsupported = unsupported
        self.max_sentences = max_sentences
        self.max_repeats = max_repeats
        self.query = query
        self.checks: list[SentenceCheck] = []
        self._buffer = ""
        self._seen: list[set[str]] = []
        self._evidence_vectors: np.ndarray | None = None
        self.stopped = False

    # -- streaming -------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """Whether the caller should stop generating (looping, or enough has been said)."""
        repeats = sum(1 for c in self.checks if c.issue == "repeated")
        shown = sum(1 for c in self.checks if c.shown)
        written = len(self.checks)
        return repeats >= self.max_repeats or shown >= self.max_sentences or written >= self.max_sentences + 3

    def feed(self, text: str) -> list[str]:
        """Add streamed text; return the sentences (with their citations) that may be shown now."""
        self._buffer += text
        complete, self._buffer = split_sentences(self._buffer)
        if len(self._buffer) > _MAX_SENTENCE_CHARS:  # a sentence that never ends: judge it as it is
            complete.append(self._buffer)
            self._buffer = ""
        return self._judge_all(complete)

    def close(self) -> list[str]:
        """The end of the answer: judge the unfinished rest; return what may be shown."""
        rest, self._buffer = self._buffer.strip(), ""
        return self._judge_all([rest] if rest else [])

    def stop(self) -> None:
        """Record that generation was cut short on the guard's request."""
        self.stopped = True

    def report(self) -> GuardReport:
        """Counts over the sentences judged so far."""
        return GuardReport(
            sentences=len(self.checks),
            shown=sum(1 for c in self.checks if c.action in ("shown", "repaired")),
            repaired=sum(1 for c in self.checks if c.action == "repaired"),
            marked=sum(1 for c in self.checks if c.action == "marked"),
            dropped=sum(1 for c in self.checks if c.action == "dropped"),
            uncited=sum(1 for c in self.checks if c.issue == "no-citation" or c.action == "repaired"),
            contradicted=sum(1 for c in self.checks if c.issue == "contradicted"),
            repeated=sum(1 for c in self.checks if c.issue == "repeated"),
            stopped=self.stopped,
        )

    def cited_markers(self) -> list[str]:
        """The markers the sentences shown as fact cite, each once, in first-cited order (marked ones excluded)."""
        return list(dict.fromkeys(m for c in self.checks if c.action in ("shown", "repaired") for m in c.citations))

    # -- judging ---------------------------------------------------------------------------
    def _judge_all(self, sentences: Sequence[str]) -> list[str]:
        out = []
        for sentence in sentences:
            if self.done:
                break
            check = self._judge(sentence)
            self.checks.append(check)
            if check.shown:
                out.append(check.shown)
        return out

    def _judge(self, sentence: str) -> SentenceCheck:
        words = _words(sentence)
        numbers = citation_numbers(sentence)
        valid = [n for n in numbers if 1 <= n <= len(self.evidence)]
        invalid = [f"S{n}" for n in numbers if n not in valid]
        base: dict[str, object] = {"text": sentence, "invalid": invalid}
        if not words:
            return SentenceCheck(**base, action="dropped", reason="no words (stray markup or citations)")
        if _loops(words) or self._repeats(set(words)):
            return SentenceCheck(**base, issue="repeated", action="dropped", reason="repeats what was already said")
        self._seen.append(set(words))
        if not valid:
            if is_coverage_statement(sentence) or _CONNECTIVE.match(_strip_citations(sentence)):
                return SentenceCheck(
                    **base, shown=_canonical(sentence, []), action="shown",
                    reason="states what the reviews do not cover" if is_coverage_statement(sentence) else "connective",
                )
            valid = self._attribute(sentence)
            if not valid:
                why = f"cites {', '.join(invalid)}, which this turn does not have" if invalid else "cites no excerpt"
                return self._fail(base, "no-citation", f"{why}, and no excerpt says it")
            repaired = True
        else:
            repaired = False
        markers = [f"S{n}" for n in valid]
        verdict, reason = self._verify(sentence, valid)
        if verdict == "contradicted":
            return self._fail({**base, "citations": markers, "verdict": verdict}, "contradicted", reason)
        if repaired:
            reason = f"cited nothing; attributed to {', '.join(markers)}, the excerpt it paraphrases" + (
                f" ({reason})" if reason else ""
            )
        return SentenceCheck(
            **base, shown=_canonical(sentence, valid), citations=markers, verdict=verdict,
            action="repaired" if repaired else "shown", reason=reason,
        )

    def _fail(self, base: dict[str, object], issue: Issue, reason: str) -> SentenceCheck:
        if self.unsupported == "drop":
            return SentenceCheck(**base, issue=issue, action="dropped", reason=reason)  # type: ignore[arg-type]
        mark = CONTRADICTED_MARK if issue == "contradicted" else UNVERIFIED_MARK
        shown = f"{mark} {_strip_citations(str(base['text']))}"
        return SentenceCheck(**base, shown=shown, issue=issue, action="marked", reason=reason)  # type: ignore[arg-type]

    def _repeats(self, words: set[str]) -> bool:
        for seen in self._seen:
            union = words | seen
            if union and len(words & seen) / len(union) >= REPEAT_JACCARD:
                return True
        return False

    def _attribute(self, sentence: str) -> list[int]:
        """The excerpt (1-based) ``sentence`` paraphrases, when one is similar enough; else none."""
        if self.encoder is None or not self.evidence:
            return []
        if self._evidence_vectors is None:
            self._evidence_vectors = _unit(np.asarray(self.encoder.encode(self.evidence), dtype=np.float32))
        mine = _unit(np.asarray(self.encoder.encode([_strip_citations(sentence)]), dtype=np.float32))[0]
        scores = self._evidence_vectors @ mine
        best = int(np.argmax(scores))
        return [best + 1] if float(scores[best]) >= ATTRIBUTION_SIMILARITY else []

    def _verify(self, sentence: str, numbers: Sequence[int]) -> tuple[Verdict | None, str]:
        """The verification verdict of ``sentence`` against the excerpts it cites, and why."""
        if not self.verify or self.verifier is None:
            return None, ""
        from opinio_agents.synthesis.verification import judge, sentence_stance

        plain = _strip_citations(sentence)
        texts = [self.evidence[n - 1] for n in numbers]
        sentiments = [self.sentiments[n - 1] for n in numbers]
        mine, *cited = self.verifier.triplets([plain, *texts])
        own = self._own_sentiment(plain)
        stance = sentence_stance(mine, [], own)
        if stance == 0:  # a neutral sentence takes the side of its excerpts: only aspect and wording can fail
            lean = sum(sentence_stance(t, [], s) for t, s in zip(cited, sentiments, strict=True))
            stance = -1 if lean < 0 else 1
        side = Polarity.PROS if stance > 0 else Polarity.CONS
        result = judge(
            side, mine, cited, sentiments, self.verifier.similarity,
            evidence_texts=texts, query=self.query, highlight_text=plain,
        )
        return result.verdict, result.reason

    def _own_sentiment(self, text: str) -> float | None:
        if self.sentiment is None:
            return None
        vectors = np.asarray(self.encoder.encode([text]), dtype=np.float32) if self.encoder is not None else None
        return float(self.sentiment.score([text], vectors)[0])


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)

