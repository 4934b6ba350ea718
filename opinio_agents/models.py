"""Data model: the pydantic types at every boundary of the library.

The input side mirrors the OpinioBank JSON format (OpinioRAG paper, App. A.1):
an :class:`Entity` with an optional :class:`ExpertReview` and its
:class:`Review` list. The output side is a :class:`HighlightSet` of
:class:`Highlight` objects, each backed by :class:`Evidence` sentences and a
:class:`Support` count over the whole entity.

Example:
    >>> from opinio_agents.models import Entity
    >>> entity = Entity.model_validate({
    ...     "entity_id": 1, "entity_name": "Harbor Inn",
    ...     "user_reviews": [{"review_id": 1, "text": "Great wi-fi. Noisy street."}],
    ... })
    >>> entity.user_reviews[0].text
    'Great wi-fi. Noisy street.'
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

from opinio_agents.kinds import Granularity, PolarityName, QueryMode, Verdict

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "EntityId",
    "Review",
    "ExpertReview",
    "Entity",
    "Sentence",
    "Polarity",
    "Sentiment",
    "SENTIMENT_THRESHOLD",
    "SENTIMENT_NAMES",
    "Evidence",
    "Support",
    "TrendPoint",
    "Trend",
    "QueryEvidence",
    "Verification",
    "Highlight",
    "Alert",
    "QueryFailure",
    "LLMOutcomes",
    "TokenUsage",
    "RunMeta",
    "FlaggedSentence",
    "HighlightSet",
    "REVIEW_METADATA_FIELDS",
    "RATING_RANGE",
    "ID_SEPARATOR",
]

EntityId = str | int

#: Review metadata copied onto every sentence (and into the vector store).
REVIEW_METADATA_FIELDS: tuple[str, ...] = (
    "rating",
    "helpful_votes",
    "publication_date",
    "user_reviews_posted",
    "user_cities_visited",
    "user_helpful_votes",
)


#: The ratings a review may carry: finite numbers from 0 to 10 inclusive (1-5 stars, 1-10
#: scores). ``NaN``, ``Infinity`` and numbers outside the range are refused.
RATING_RANGE: tuple[float, float] = (0.0, 10.0)
#: Separator of the parts of a sentence id (see :meth:`Sentence.make_id`).
ID_SEPARATOR = ":"


def _valid_unicode(value: str) -> str:
    """``value`` unchanged, or a ValueError when it holds a lone surrogate (e.g. from ``"\\ud800"`` in JSON).

    Lone surrogates are rejected, not replaced: they are not characters, cannot be
    stored as UTF-8, and replacing them would change the review silently.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        raise ValueError(
            f"contains a lone surrogate \\u{code:04x} at character {exc.start}, which is not valid Unicode; "
            "fix the \\u escape in the input (a surrogate must come in a high+low pair)"
        ) from None
    return value


class Review(BaseModel):
    """One user review (OpinioBank ``user_reviews[*]``); all metadata is optional.

    ``user_reviews_posted`` also accepts the dataset's spelling ``user_review_posted``.
    ``rating`` must be finite and within :data:`RATING_RANGE` (0 to 10); counts must be >= 0.
    Text and ids must be valid Unicode: a lone surrogate (``"\\ud800"``) is refused.
    """

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    review_id: str | int
    text: str
    rating: float | None = None
    helpful_votes: int | None = None
    publication_date: dt.date | None = None
    user_reviews_posted: int | None = Field(
        default=None, validation_alias=AliasChoices("user_reviews_posted", "user_review_posted")
    )
    user_cities_visited: int | None = None
    user_helpful_votes: int | None = None

    @field_validator("text")
    @classmethod
    def _text_not_blank(cls, value: str) -> str:
        _valid_unicode(value)
        if not value.strip():
            raise ValueError("review text is empty; remove the review or fill in its text")
        return value

    @field_validator("review_id")
    @classmethod
    def _id_not_blank(cls, value: str | int) -> str | int:
        if isinstance(value, str) and not value.strip():
            raise ValueError("review_id is empty")
        if isinstance(value, str):
            _valid_unicode(value)
        return value

    @field_validator("rating")
    @classmethod
    def _rating_in_range(cls, value: float | None) -> float | None:
        low, high = RATING_RANGE
        if value is not None and not (math.isfinite(value) and low <= value <= high):
            raise ValueError(f"rating must be a finite number from {low:g} to {high:g}")
        return value

    @field_validator("publication_date", mode="before")
    @classmethod
    def _parse_date(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip()
            if not value:
                return None
            # Accept full ISO timestamps as well as YYYY-MM-DD.
            return value[:10]
        return value


class ExpertReview(BaseModel):
    """Expert PROS and CONS keyed by user-centric query (``{query: sentence}``)."""

    model_config = ConfigDict(extra="ignore")

    pros: dict[str, str] = Field(default_factory=dict)
    cons: dict[str, str] = Field(default_factory=dict)

    @field_validator("pros", "cons")
    @classmethod
    def _unicode(cls, value: dict[str, str]) -> dict[str, str]:
        for query, text in value.items():
            _valid_unicode(query)
            _valid_unicode(text)
        return value

    @property
    def queries(self) -> list[str]:
        """All annotated queries, PROS first, without duplicates, in order."""
        return list(dict.fromkeys([*self.pros, *self.cons]))


class Entity(BaseModel):
    """One entity (hotel, restaurant, product) with its reviews."""

    model_config = ConfigDict(extra="ignore")

    entity_id: str | int
    entity_name: str = ""
    expert_review: ExpertReview | None = None
    user_reviews: list[Review] = Field(default_factory=list)

    @field_validator("entity_id")
    @classmethod
    def _entity_id_not_blank(cls, value: str | int) -> str | int:
        if isinstance(value, str) and not value.strip():
            raise ValueError("entity_id is empty")
        if isinstance(value, str):
            _valid_unicode(value)
        return value

    @field_validator("entity_name")
    @classmethod
    def _name_unicode(cls, value: str) -> str:
        return _valid_unicode(value)

    @model_validator(mode="after")
    def _unique_review_ids(self) -> Entity:
        seen: set[str] = set()
        for review in self.user_reviews:
            key = str(review.review_id)
            if key in seen:
                raise ValueError(
                    f"duplicate review_id {review.review_id!r}; review ids must be unique within an entity"
                )
            seen.add(key)
        return self

    @property
    def key(self) -> str:
        """The entity id as a string (the form used in sentence ids and store names)."""
        return str(self.entity_id)

    @property
    def queries(self) -> list[str]:
        """The expert-review queries, or an empty list when there is no expert review."""
        return self.expert_review.queries if self.expert_review else []


class Sentence(BaseModel):
    """A review sentence: the unit of retrieval and of evidence.

    ``sentence_id`` is stable across runs: ``"{entity_id}:{review_id}:{index}"``
    with ``index`` the 0-based position of the sentence in its review, and with
    ``%`` and ``:`` inside the two ids percent-escaped (see :meth:`make_id`), so that
    no two sentences share an id whatever characters their ids contain.
    ``start``/``end`` are character offsets into the original review text.
    """

    model_config = ConfigDict(frozen=True)

    sentence_id: str
    entity_id: str
    review_id: str
    index: int
    text: str
    start: int
    end: int
    rating: float | None = None
    helpful_votes: int | None = None
    publication_date: dt.date | None = None
    user_reviews_posted: int | None = None
    user_cities_visited: int | None = None
    user_helpful_votes: int | None = None

    @staticmethod
    def make_id(entity_id: EntityId, review_id: EntityId, index: int) -> str:
        """Build the stable, unambiguous ``sentence_id`` of a sentence.

        ``%`` becomes ``%25`` and ``:`` becomes ``%3A`` inside each id, so the two
        separators are the only two ``:`` in the result and distinct (entity, review,
        index) triples never share an id. Plain ids (no ``:`` or ``%``) are unchanged.

        Example:
            >>> Sentence.make_id(101, 1010160, 2)
            '101:1010160:2'
            >>> Sentence.make_id("a:b", "c", 0), Sentence.make_id("a", "b:c", 0)
            ('a%3Ab:c:0', 'a:b%3Ac:0')
        """
        return f"{_escape_id(entity_id)}{ID_SEPARATOR}{_escape_id(review_id)}{ID_SEPARATOR}{index}"

    def metadata(self) -> dict[str, Any]:
        """Flat, store-friendly metadata (no ``None`` values; dates as ISO strings)."""
        data: dict[str, Any] = {
            "sentence_id": self.sentence_id,
            "entity_id": self.entity_id,
            "review_id": self.review_id,
            "index": self.index,
            "start": self.start,
            "end": self.end,
        }
        for name in REVIEW_METADATA_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            data[name] = value.isoformat() if isinstance(value, dt.date) else value
        return data


def _escape_id(value: EntityId) -> str:
    return str(value).replace("%", "%25").replace(ID_SEPARATOR, "%3A")


class Polarity(str, Enum):
    """A highlight's polarity: PROS or CONS (the one name for this, in code, JSON and the CLI)."""

    PROS = "pros"
    CONS = "cons"


#: The sentiment of an opinion: -1 negative, 0 neutral, 1 positive (triplets, datasets, labels).
Sentiment = Literal[-1, 0, 1]
#: Name of each :data:`Sentiment` value (how the phrase bank and reports spell it).
SENTIMENT_NAMES: dict[int, str] = {1: "positive", 0: "neutral", -1: "negative"}
#: The one neutral band of sentiment scores in [-1, 1]: |score| <= this is neutral
#: (VADER's customary +-0.05). Everything that splits scores into positive / neutral /
#: negative imports it from here.
SENTIMENT_THRESHOLD = 0.05


class Evidence(BaseModel):
    """A retrieved sentence cited by a highlight."""

    sentence_id: str
    text: str
    score: float = 0.0
    sentiment: float | None = Field(
        default=None, description="Sentiment of the sentence in [-1, 1] (VADER compound by default)."
    )


class Support(BaseModel):
    """How many of the entity's reviews discuss a query, and with which sentiment.

    Counted over the whole entity (every review that mentions the query), not
    only over the top-K evidence. By default the numbers are plain review counts
    (``weighting == "count"``); a run may count only the reviews published within
    ``since``/``until`` and may weight each review by recency or by helpful votes,
    and then the numbers are sums of those weights and ``weighting`` says which
    (``"recency half-life 365 d"``, ``"helpful votes"``, or both joined by ``" x "``).

    Example:
        >>> Support(reviews=4, positive=3, negative=1, total_reviews=10).describe()
        'mentioned in 4 of 10 reviews, 75% positive'
        >>> Support(reviews=2.5, positive=2.0, negative=0.5, total_reviews=6.25,
        ...         weighting="recency half-life 365 d").describe()
        'mentioned in 2.5 of 6.2 reviews (weighted by recency half-life 365 d), 80% positive'
    """

    reviews: int | float = 0
    positive: int | float = 0
    negative: int | float = 0
    neutral: int | float = 0
    total_reviews: int | float = 0
    weighting: str = Field(
        default="count",
        description='What the numbers mean: "count" (reviews), or the weights summed ("recency half-life 365 d").',
    )
    since: dt.date | None = Field(default=None, description="Only reviews published on or after this date count.")
    until: dt.date | None = Field(default=None, description="Only reviews published on or before this date count.")

    @property
    def share_positive(self) -> float:
        """Fraction of the mentioning reviews that are positive (0 when none mention it)."""
        return self.positive / self.reviews if self.reviews else 0.0

    @property
    def share_negative(self) -> float:
        """Fraction of the mentioning reviews that are negative (0 when none mention it)."""
        return self.negative / self.reviews if self.reviews else 0.0

    def window(self) -> str:
        """The publication window in words (``"since 2022-01-01"``), or ``""`` for all reviews."""
        if self.since and self.until:
            return f"from {self.since.isoformat()} to {self.until.isoformat()}"
        if self.since:
            return f"since {self.since.isoformat()}"
        if self.until:
            return f"until {self.until.isoformat()}"
        return ""

    def describe(self) -> str:
        """Human summary, e.g. ``'mentioned in 143 of 1500 reviews, 81% negative'``.

        It names the window and the weighting when they are not the defaults.
        """
        window = self.window()
        where = f" {window}" if window else ""
        if not self.reviews:
            return f"not mentioned in any review{where}"
        of_total = f" of {_number(self.total_reviews)}" if self.total_reviews else ""
        if self.positive == self.negative == 0:
            lean = "no clear sentiment"
        elif self.negative > self.positive:
            lean = f"{round(100 * self.share_negative)}% negative"
        else:
            lean = f"{round(100 * self.share_positive)}% positive"
        noun = "review" if (self.total_reviews or self.reviews) == 1 else "reviews"
        weighted = f" (weighted by {self.weighting})" if self.weighting != "count" else ""
        return f"mentioned in {_number(self.reviews)}{of_total} {noun}{where}{weighted}, {lean}"


def _number(value: int | float) -> str:
    """A count as written: ``12``, or a weighted sum with one decimal (``12.4``)."""
    if isinstance(value, int) or float(value).is_integer():
        return str(int(value))
    return f"{value:.1f}"


class TrendPoint(BaseModel):
    """One period of a :class:`Trend`: how often an aspect came up, and how.

    Attributes:
        period: ``"2019"`` (year) or ``"2019-Q3"`` (quarter).
        mentions: Reviews of the period that mention the aspect.
        share: ``mentions`` over all reviews of the period (0 when the period has none).
        positive: Mentioning reviews with a positive stance.
        negative: Mentioning reviews with a negative stance.
    """

    period: str
    mentions: int
    share: float
    positive: int
    negative: int


class Trend(BaseModel):
    """How what reviewers say about a highlight's aspect changed over time.

    Computed from the publication dates of every review that mentions the aspect
    (not only the cited evidence); see :mod:`opinio_agents.trends`.

    Attributes:
        granularity: ``"year"``, or ``"quarter"`` when there are enough dated mentions.
        points: One point per period, oldest first.
        label: ``improving`` / ``worsening`` (a significant change in the stance of the
            mentions), ``stable`` (none), or ``insufficient`` (too few dated mentions to tell).
        test: The test that gave the label, with its statistic (e.g. ``"Mann-Kendall tau=-0.41, n=57"``).
        p_value: Its two-sided p-value (None when no test ran).
        summary: One readable sentence, e.g. "complaints about wi-fi fell from 40% of
            mentions in 2015-2019 to 8% in 2020-2024".
        change_period: Where the change happened (Pettitt's change point): the first
            period of the new regime; None unless the label is improving or worsening.

    Example:
        >>> Trend(granularity="year", points=[], label="insufficient", test="none",
        ...       summary="too few dated mentions of wi-fi to tell a trend").label
        'insufficient'
    """

    granularity: Granularity
    points: list[TrendPoint] = Field(default_factory=list)
    label: Literal["improving", "worsening", "stable", "insufficient"]
    test: str
    p_value: float | None = None
    summary: str
    change_period: str | None = None


@dataclass
class QueryEvidence:
    """What a synthesizer gets for one query: the hand-off from retrieval to synthesis.

    Attributes:
        query: The user-centric query, e.g. ``"wi-fi"``.
        evidence: The top-K retrieved sentences (score > 0), best first.
        support: Review counts for the query over the whole entity.
        entity_name: Name of the entity, for prompts.
        vectors: Optional stored embeddings of ``evidence`` (one row each), so
            synthesizers need not encode them again.
        pool: Optional entity-wide support set: every sentence about the query
            (see :func:`~opinio_agents.synthesis.selection.support_pool`), for
            selection by centrality beyond the top-K.
        pool_vectors: Embeddings of ``pool`` (one row each).
        query_vector: The query's embedding.
        mentions: Sentence ids of the entity's sentences that mention the query, as
            ``support`` counts them (:func:`~opinio_agents.synthesis.support.aspect_mentions`);
            quotes come from these when a side has enough of them.
        named: The ids among ``mentions`` that name the query by a word (its own words or a word that
            also names it, :func:`~opinio_agents.synthesis.support.aspect_mentions` without embeddings),
            not only by an embedding's closeness: key points come from these when a side has enough of them.
    """

    query: str
    evidence: list[Evidence]
    support: Support = field(default_factory=Support)
    entity_name: str = ""
    vectors: np.ndarray | None = None
    pool: list[Evidence] | None = None
    pool_vectors: np.ndarray | None = None
    query_vector: np.ndarray | None = None
    mentions: frozenset[str] | None = None
    named: frozenset[str] | None = None



class Verification(BaseModel):
    """How well a highlight is backed by its own cited evidence (OpinioRAG's AOS checks, per highlight).

    The scores are the paper's AR, SF and OF (Sec. 4.1) computed from the AOS
    triplets of the highlight and of its cited sentences only; ``None`` where a
    score is undefined (no explicit aspect in the evidence, no polar opinion).

    Attributes:
        aspect_relevance: AR: 1.0 when the highlight names the evidence's most frequent aspect.
        sentiment_factuality: SF: 1.0 when its sentiment is the evidence's dominant one for that aspect.
        opinion_faithfulness: OF: mean similarity of its opinion to the evidence's opinions, in [0, 1].
        verdict: ``supported``, ``weak`` (partly backed) or ``contradicted`` (its side or its
            aspect disagrees with its evidence).
        reason: The verdict in words, e.g. ``"PRO, but its 3 cited sentences are negative about wifi"``.
        action: What was done with the highlight: ``kept``, ``rewritten`` from its evidence (the
            reason says what it was) or ``dropped`` (listed in ``RunMeta.dropped``).

    Example:
        >>> Verification(aspect_relevance=1.0, sentiment_factuality=1.0, opinion_faithfulness=0.9,
        ...              verdict="supported", reason="backed by 2 of 2 cited sentences").action
        'kept'
    """

    aspect_relevance: float | None = None
    sentiment_factuality: float | None = None
    opinion_faithfulness: float | None = None
    verdict: Verdict
    reason: str
    action: Literal["kept", "rewritten", "dropped"] = "kept"

    def describe(self) -> str:
        """The verification in one line: verdict (and action), AR/SF/OF, reason.

        Example:
            >>> Verification(aspect_relevance=1.0, sentiment_factuality=None, opinion_faithfulness=0.84,
            ...              verdict="supported", reason="backed by 5 of its 5 cited sentences").describe()
            'supported (AR 1.00, SF n/a, OF 0.84): backed by 5 of its 5 cited sentences'
        """
        head = self.verdict if self.action == "kept" else f"{self.action}, now {self.verdict}"
        scores = ", ".join(
            f"{name} {'n/a' if value is None else f'{value:.2f}'}"
            for name, value in (
                ("AR", self.aspect_relevance),
                ("SF", self.sentiment_factuality),
                ("OF", self.opinion_faithfulness),
            )
        )
        return f"{head} ({scores}): {self.reason}"


class Highlight(BaseModel):
    """One key-point highlight: a PRO or a CON about one query, with its evidence."""

    query: str
    polarity: Polarity
    text: str = Field(max_length=600)
    evidence: list[Evidence] = Field(default_factory=list)
    support: Support = Field(default_factory=Support)
    evidence_polarity: Polarity | None = Field(
        default=None,
        description="The side the cited evidence leans to, by its own sentiment; None when balanced.",
    )
    polarity_agrees: bool | None = Field(
        default=None,
        description="False when the synthesizer's side disagrees with the evidence's own polarity.",
    )
    notes: list[str] = Field(default_factory=list)
    verification: Verification | None = Field(
        default=None, description="AR/SF/OF against its own evidence and the verdict; None when not verified."
    )
    trend: Trend | None = Field(
        default=None, description="Mention share and stance of the aspect per period, with a trend label."
    )
    origin: Literal["llm", "extractive-fallback"] | None = Field(
        default=None,
        description="On the LLM path: 'llm' when the model wrote the text, 'extractive-fallback' when its answer "
        "was unusable or contradicted by the evidence and the extractive highlight stands in; None elsewhere.",
    )

    @property
    def sentence_ids(self) -> list[str]:
        """The cited evidence ids, in order."""
        return [item.sentence_id for item in self.evidence]


class Alert(BaseModel):
    """A critical complaint (safety, hygiene, bed bugs, ...) found in the entity's reviews."""

    category: str
    description: str
    support: int = Field(description="Number of distinct reviews reporting it.")
    evidence: list[Evidence] = Field(default_factory=list)


class QueryFailure(BaseModel):
    """A query that could not be answered; reported instead of failing the whole run."""

    query: str
    error: str
    attempts: int = 1


class TokenUsage(BaseModel):
    """Tokens sent to and received from a language model."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: TokenUsage) -> TokenUsage:
        """Return the sum of two usages."""
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            calls=self.calls + other.calls,
            cached_calls=self.cached_calls + other.cached_calls,
        )


class FlaggedSentence(BaseModel):
    """A review sentence that reads as instructions to an AI assistant (prompt injection).

    It was kept out of the evidence a synthesizer saw (``action="withheld"``), or a
    highlight whose only evidence it was got dropped (``action="dropped"``). The
    sentence still counts as a review sentence for support and alerts.
    """

    query: str
    sentence_id: str
    reasons: list[str] = Field(default_factory=list, description="Rules tripped (opinio_agents.text.injection).")
    action: Literal["withheld", "dropped"] = "withheld"
    highlight: str | None = Field(default=None, description="The dropped highlight's text (action='dropped').")


class RunMeta(BaseModel):
    """How a HighlightSet was produced.

    ``mode`` says where the queries came from: ``"queries"`` (given by the caller),
    ``"expert-queries"`` (the entity's expert review) or ``"query-free"`` (HIRO
    discovered the aspects; no query was asked).
    """

    model_config = ConfigDict(extra="allow")

    mode: QueryMode | None = None
    retriever: str | None = None
    top_k: int | None = None
    synthesizer: str = "extractive"
    model: str | None = None
    queries: list[str] = Field(default_factory=list)
    timings: dict[str, float] = Field(default_factory=dict)
    tokens: TokenUsage = Field(default_factory=TokenUsage)
    flagged: list[FlaggedSentence] = Field(
        default_factory=list,
        description="Instruction-like review sentences kept out of the evidence, and highlights dropped for them.",
    )
    dropped: list[Highlight] = Field(
        default_factory=list,
        description="Highlights that verification dropped (contradicted by their evidence); never shown as highlights.",
    )
    llm: LLMOutcomes | None = Field(
        default=None, description="Per-query outcome counts of the model's answers; None when no model wrote text."
    )


class LLMOutcomes(BaseModel):
    """How the model's answers went, one count per query of an LLM run (``RunMeta.llm``).

    ``answered + repaired + fallback + failed`` is the number of queries.

    Attributes:
        answered: Valid the first time (schema and citations) and shown.
        repaired: Valid after the one repair turn and shown.
        fallback: The extractive highlight was shown instead (``Highlight.origin ==
            "extractive-fallback"``): the answer was unusable after the repair, empty although
            there was evidence, or contradicted by verification (those are also in ``contradicted``).
        failed: Nothing to show: no evidence, or neither the model nor the extractive path had an answer.
        contradicted: Of ``fallback``, the queries whose answer was schema-valid but contradicted
            by its evidence.
    """

    answered: int = 0
    repaired: int = 0
    fallback: int = 0
    failed: int = 0
    contradicted: int = 0

    @property
    def queries(self) -> int:
        """The queries counted."""
        return self.answered + self.repaired + self.fallback + self.failed

    @property
    def schema_valid_rate(self) -> float | None:
        """Share of queries whose model answer was schema-valid (first time, repaired, or valid but
        contradicted); None without any query."""
        total = self.queries
        return None if total == 0 else (self.answered + self.repaired + self.contradicted) / total


class HighlightSet(BaseModel):
    """All highlights of one entity: PROS, CONS, critical alerts and failures."""

    entity_id: str | int
    entity_name: str = ""
    pros: list[Highlight] = Field(default_factory=list)
    cons: list[Highlight] = Field(default_factory=list)
    alerts: list[Alert] = Field(default_factory=list)
    failures: list[QueryFailure] = Field(default_factory=list)
    meta: RunMeta = Field(default_factory=RunMeta)
    summary: str | None = Field(
        default=None,
        description="The highlights as one readable paragraph, ordered by aspect (query-free mode).",
    )

    @property
    def highlights(self) -> list[Highlight]:
        """PROS then CONS."""
        return [*self.pros, *self.cons]

    @computed_field(  # type: ignore[prop-decorator]
        description="Queries asked that got no highlight, did not fail and lost none to verification: no "
        "review sentence about them takes a side."
    )
    @property
    def unanswered(self) -> list[str]:
        """The queries of ``meta.queries`` with no highlight, no failure and none dropped by verification
        (``meta.dropped``, reported on its own), in the order asked.

        Every surface says so rather than leaving the query out: "parking" for a restaurant no review
        mentions parking at has nothing to show, which is an answer too.

        Example:
            >>> result = HighlightSet(entity_id=1, meta=RunMeta(queries=["wifi", "parking"]))
            >>> result.add(Highlight(query="wifi", polarity=Polarity.PROS, text="Fast wifi."))
            >>> result.unanswered
            ['parking']
        """
        shown = {h.query for h in [*self.highlights, *self.meta.dropped]} | {f.query for f in self.failures}
        return [q for q in dict.fromkeys(self.meta.queries) if q not in shown]

    def add(self, highlight: Highlight) -> None:
        """Append a highlight to the side given by its polarity."""
        (self.pros if highlight.polarity is Polarity.PROS else self.cons).append(highlight)

    def to_opiniobank(self) -> dict[PolarityName, dict[str, str]]:
        """The paper's ``{"pros": {query: text}, "cons": {query: text}}`` form.

        When one query yields several highlights on a side, their texts are joined.
        """
        out: dict[PolarityName, dict[str, str]] = {"pros": {}, "cons": {}}
        for side, items in (("pros", self.pros), ("cons", self.cons)):
            for item in items:
                bucket = out[side]  # type: ignore[index]
                bucket[item.query] = f"{bucket[item.query]} {item.text}" if item.query in bucket else item.text
        return out
