"""Synthetic OpinioBank datasets of any size, with planted (known) opinions.

Each entity gets a random set of *planted* aspects, each with a polarity
(PRO or CON), a prevalence (the share of its reviews that mention it) and a
strength (the share of those mentions on the planted side; the rest dissent).
Reviews also carry background mentions of unplanted aspects with balanced or
neutral sentiment, plus narrative filler. The planted aspects are the ground
truth a highlight system should recover, and they are the entity's expert
review queries, so ``opinio highlight`` runs on the data without ``--query``.

A planted aspect can also carry a *trend* (:class:`PlantedTrend`): its mentions
lean one way in reviews published before a change date and the other way after
it (``improving``: negative, then positive). The truth then lists it under
``"trends"``, so a trend detector can be checked for the aspect, the side and the
date. Entities without a planted trend are generated exactly as before.

Generation is deterministic for a seed, and each entity depends only on
``(seed, entity index)``, so :func:`write_synthetic` streams entity by entity
and writes exactly what :func:`generate_dataset` returns.

Example:
    >>> from opinio_agents.datasets.synthetic import generate_dataset
    >>> data = generate_dataset(n_entities=1, reviews_per_entity=50, seed=3)
    >>> entity = data.entities[0]
    >>> len(entity.user_reviews)
    50
    >>> sorted(data.truth[entity.key]) == ["cons", "pros"]
    True
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from opinio_agents.datasets import phrases as bank
from opinio_agents.datasets.compose import Mention, ReviewComposer
from opinio_agents.errors import ConfigError
from opinio_agents.io.outputs import atomic_writer
from opinio_agents.kinds import PolarityName
from opinio_agents.models import Entity, Sentiment

__all__ = [
    "PlantedOpinion",
    "PlantedTrend",
    "parse_trend",
    "SyntheticDataset",
    "generate_entity",
    "iter_synthetic",
    "generate_dataset",
    "write_synthetic",
    "truth_path",
]

_NAME_FIRST = (
    "Harbor", "Grand", "Riverside", "Palm", "Old Town", "Skyline", "Maple", "Seabright",
    "Lakeview", "Royal", "Central", "Garden", "Cedar", "Bayfront", "Alpine", "Sunset",
)  # fmt: skip
_NAME_SECOND = ("Hotel", "Inn", "Resort", "Suites", "Lodge", "Boutique Hotel", "Plaza", "House")


@dataclass(frozen=True)
class PlantedOpinion:
    """An opinion deliberately planted in an entity's reviews.

    Attributes:
        aspect: The aspect (query) name, e.g. ``"wi-fi"``.
        polarity: ``"pros"`` or ``"cons"``: the side the majority takes.
        prevalence: Planted share of the entity's reviews that mention the aspect.
        strength: Planted share of the mentions that agree with ``polarity``.
        mentioned: Reviews that actually mention it.
        agreeing: Of those, reviews on the planted side.
    """

    aspect: str
    polarity: PolarityName
    prevalence: float
    strength: float
    mentioned: int = 0
    agreeing: int = 0


@dataclass(frozen=True)
class PlantedTrend:
    """A change of opinion planted at a date: the aspect's mentions turn from one side to the other.

    Attributes:
        aspect: An aspect of the phrase bank (it becomes a planted aspect of the entity).
        change: The date of the change: reviews published before it lean the old way,
            reviews on or after it the new way.
        direction: ``"improving"`` (negative, then positive) or ``"worsening"`` (the reverse).

    Example:
        >>> PlantedTrend("wi-fi", dt.date(2020, 1, 1)).to_dict()
        {'aspect': 'wi-fi', 'change': '2020-01-01', 'direction': 'improving'}
    """

    aspect: str
    change: dt.date
    direction: Literal["improving", "worsening"] = "improving"

    def __post_init__(self) -> None:
        bank.aspect(self.aspect)  # raises on an unknown aspect, naming the known ones
        if self.direction not in ("improving", "worsening"):
            raise ConfigError(f"direction={self.direction!r} must be 'improving' or 'worsening'")

    def to_dict(self) -> dict[str, str]:
        """The truth-file form."""
        return {"aspect": self.aspect, "change": self.change.isoformat(), "direction": self.direction}


def parse_trend(spec: str) -> PlantedTrend:
    """A :class:`PlantedTrend` from ``"ASPECT:YYYY-MM-DD[:improving|worsening]"`` (the ``opinio synth --trend`` form).

    Raises:
        ConfigError: On a malformed spec, an unknown aspect or a bad date.

    Example:
        >>> parse_trend("wi-fi:2019-07-01:worsening").direction
        'worsening'
    """
    parts = [part.strip() for part in spec.split(":")]
    if len(parts) not in (2, 3) or not parts[0]:
        raise ConfigError(
            f"trend {spec!r} is not ASPECT:DATE[:DIRECTION]; e.g. --trend 'wi-fi:2020-01-01:improving'"
        )
    try:
        change = dt.date.fromisoformat(parts[1])
    except ValueError:
        raise ConfigError(f"trend {spec!r}: {parts[1]!r} is not a date (YYYY-MM-DD)") from None
    direction = parts[2] if len(parts) == 3 else "improving"
    if direction not in ("improving", "worsening"):
        raise ConfigError(f"trend {spec!r}: direction {direction!r} must be 'improving' or 'worsening'")
    return PlantedTrend(parts[0], change, direction)  # type: ignore[arg-type]


@dataclass
class SyntheticDataset:
    """Generated entities plus their ground truth.

    Attributes:
        entities: The entities, validated by the data model.
        truth: ``{entity_id: {"pros": [aspect, ...], "cons": [aspect, ...]}}``, plus
            ``"trends": [{"aspect", "change", "direction"}, ...]`` for an entity with planted trends.
        planted: ``{entity_id: [PlantedOpinion, ...]}`` with prevalence and strength.
        trends: ``{entity_id: [PlantedTrend, ...]}`` (entities with planted trends only).
    """

    entities: list[Entity] = field(default_factory=list)
    truth: dict[str, dict[str, Any]] = field(default_factory=dict)
    planted: dict[str, list[PlantedOpinion]] = field(default_factory=dict)
    trends: dict[str, list[PlantedTrend]] = field(default_factory=dict)


def _check_range(name: str, value: tuple[float, float], low: float, high: float) -> None:
    if len(value) != 2 or not low <= value[0] <= value[1] <= high:
        raise ConfigError(f"{name}={value!r} is invalid; give (min, max) with {low} <= min <= max <= {high}")


def _truth_of(planted: list[PlantedOpinion], trends: Sequence[PlantedTrend] = ()) -> dict[str, Any]:
    truth: dict[str, Any] = {
        "pros": [p.aspect for p in planted if p.polarity == "pros"],
        "cons": [p.aspect for p in planted if p.polarity == "cons"],
    }
    if trends:
        truth["trends"] = [t.to_dict() for t in trends]
    return truth


#: Publication dates of synthetic reviews (the composer's default range).
DATE_RANGE: tuple[dt.date, dt.date] = (dt.date(2015, 1, 1), dt.date(2024, 12, 31))


def _random_trends(
    rng: random.Random, aspects: Sequence[str], count: int, date_range: tuple[dt.date, dt.date]
) -> list[PlantedTrend]:
    """``count`` trends on distinct aspects, each changing at a date in the middle 60% of the range."""
    if count > len(aspects):
        raise ConfigError(f"trends={count} is more than the {len(aspects)} planted aspects of the entity")
    days = (date_range[1] - date_range[0]).days
    out = []
    for name in rng.sample(list(aspects), count):
        change = date_range[0] + dt.timedelta(days=rng.randint(round(0.2 * days), round(0.8 * days)))
        out.append(PlantedTrend(name, change, rng.choice(("improving", "worsening"))))
    return out


def generate_entity(
    index: int,
    reviews_per_entity: int = 200,
    *,
    seed: int = 0,
    sentences_per_review: tuple[int, int] = (1, 25),
    mean_sentences: float = 7.0,
    aspects_per_entity: tuple[int, int] = (4, 8),
    prevalence: tuple[float, float] = (0.1, 0.5),
    strength: tuple[float, float] = (0.75, 0.9),
    noise_mentions: tuple[int, int] = (0, 2),
    trends: Sequence[PlantedTrend] | int = (),
    planted_trends: list[PlantedTrend] | None = None,
) -> tuple[dict[str, Any], list[PlantedOpinion]]:
    """Generate one entity as an OpinioBank record, with its planted opinions.

    The result depends only on ``seed`` and ``index`` (and the other arguments).
    Without ``trends`` it is exactly what it was before trends existed.

    Args:
        index: 0-based position of the entity; its ``entity_id`` is ``index + 1``.
        reviews_per_entity: Number of reviews.
        seed: Random seed.
        sentences_per_review: ``(min, max)`` sentences per review.
        mean_sentences: Target average sentences per review (the paper's corpus has about 7).
        aspects_per_entity: ``(min, max)`` number of planted aspects.
        prevalence: ``(min, max)`` share of reviews mentioning a planted aspect.
        strength: ``(min, max)`` share of mentions on the planted side.
        noise_mentions: ``(min, max)`` background mentions of unplanted aspects per review.
        trends: Trends to plant (:class:`PlantedTrend`; an aspect not drawn is added to
            the planted ones), or a number of trends to plant on randomly chosen planted
            aspects at random dates in the middle 60% of the date range.
        planted_trends: When given, receives the trends actually planted.

    Returns:
        ``(entity_record, planted)``; the record is a plain dict in OpinioBank form.

    Raises:
        ConfigError: On an out-of-range argument.

    Example:
        >>> record, planted = generate_entity(0, 20, seed=1)
        >>> record["entity_id"], len(record["user_reviews"])
        (1, 20)
    """
    if reviews_per_entity < 1:
        raise ConfigError(f"reviews_per_entity={reviews_per_entity!r} must be at least 1")
    if index < 0:
        raise ConfigError(f"index={index!r} must be >= 0")
    n_aspects = len(bank.ASPECTS)
    _check_range("aspects_per_entity", aspects_per_entity, 1, n_aspects - 1)
    _check_range("prevalence", prevalence, 0.0, 1.0)
    _check_range("strength", strength, 0.5, 1.0)
    _check_range("noise_mentions", noise_mentions, 0, n_aspects)

    rng = random.Random(f"opinio-synthetic:{seed}:{index}")
    names = sorted(bank.ASPECTS)
    chosen = rng.sample(names, rng.randint(*aspects_per_entity))
    # Trends draw from their own random source, so an entity without one is unchanged.
    trend_rng = random.Random(f"opinio-synthetic-trends:{seed}:{index}")
    if isinstance(trends, int):
        if trends < 0:
            raise ConfigError(f"trends={trends!r} must be >= 0")
        planted_now = _random_trends(trend_rng, chosen, trends, DATE_RANGE)
    else:
        planted_now = list(trends)
        if len({t.aspect for t in planted_now}) != len(planted_now):
            raise ConfigError("two trends name the same aspect; plant at most one trend per aspect")
    trend_of = {t.aspect: t for t in planted_now}
    chosen += [name for name in trend_of if name not in chosen]
    unplanted = [name for name in names if name not in chosen]
    dates: list[dt.date] | None = None
    if trend_of:
        span = (DATE_RANGE[1] - DATE_RANGE[0]).days
        dates = [DATE_RANGE[0] + dt.timedelta(days=trend_rng.randint(0, span)) for _ in range(reviews_per_entity)]

    # Exact, shuffled assignment: prevalence and strength are realised precisely.
    per_review: list[list[Mention]] = [[] for _ in range(reviews_per_entity)]
    planted: list[PlantedOpinion] = []
    for name in chosen:
        side: PolarityName = "pros" if rng.random() < 0.6 else "cons"
        share = round(rng.uniform(*prevalence), 3)
        agree = round(rng.uniform(*strength), 3)
        n_mention = max(1, round(share * reviews_per_entity))
        n_agree = round(agree * n_mention)
        majority: Sentiment = 1 if side == "pros" else -1
        minority: Sentiment = -1 if side == "pros" else 1
        trend = trend_of.get(name)
        if trend is None or dates is None:
            for k, review in enumerate(rng.sample(range(reviews_per_entity), n_mention)):
                per_review[review].append(Mention(name, majority if k < n_agree else minority))
            planted.append(PlantedOpinion(name, side, share, agree, n_mention, n_agree))
            continue
        # A trend: the side flips at the change date; each regime agrees with its side at `agree`.
        old: Sentiment = -1 if trend.direction == "improving" else 1
        sentiments: list[Sentiment] = []
        for review in rng.sample(range(reviews_per_entity), n_mention):
            lean: Sentiment = old if dates[review] < trend.change else -old  # type: ignore[assignment]
            said: Sentiment = lean if trend_rng.random() < agree else -lean  # type: ignore[assignment]
            per_review[review].append(Mention(name, said))
            sentiments.append(said)
        positive = sum(v == 1 for v in sentiments)
        side = "pros" if positive * 2 >= len(sentiments) else "cons"
        agreeing = positive if side == "pros" else len(sentiments) - positive
        planted.append(PlantedOpinion(name, side, share, agree, n_mention, agreeing))

    composer = ReviewComposer(
        rng, sentences_per_review=sentences_per_review, mean_sentences=mean_sentences
    )
    reviews = []
    for number, mentions in enumerate(per_review, start=1):
        for _ in range(rng.randint(*noise_mentions)):
            sentiment: Sentiment = rng.choices((1, -1, 0), (0.4, 0.4, 0.2))[0]
            mentions.append(Mention(rng.choice(unplanted), sentiment))
        composed = composer.compose(number, mentions)
        if dates is not None:
            composed["publication_date"] = dates[number - 1].isoformat()
        reviews.append(composed)
    if planted_trends is not None:
        planted_trends.extend(planted_now)

    expert = {
        "pros": {p.aspect: bank.ASPECTS[p.aspect].expert_pro for p in planted if p.polarity == "pros"},
        "cons": {p.aspect: bank.ASPECTS[p.aspect].expert_con for p in planted if p.polarity == "cons"},
    }
    name = f"{rng.choice(_NAME_FIRST)} {rng.choice(_NAME_SECOND)} #{index + 1}"
    record = {"entity_id": index + 1, "entity_name": name, "expert_review": expert, "user_reviews": reviews}
    return record, planted


def iter_synthetic(
    n_entities: int = 3, reviews_per_entity: int = 200, *, seed: int = 0, **options: Any
) -> Iterator[tuple[dict[str, Any], list[PlantedOpinion]]]:
    """Yield ``(entity_record, planted)`` one entity at a time.

    ``options`` are passed to :func:`generate_entity`.

    Example:
        >>> [rec["entity_id"] for rec, _ in iter_synthetic(2, 5)]
        [1, 2]
    """
    if n_entities < 1:
        raise ConfigError(f"n_entities={n_entities!r} must be at least 1")
    for index in range(n_entities):
        yield generate_entity(index, reviews_per_entity, seed=seed, **options)


def generate_dataset(
    n_entities: int = 3,
    reviews_per_entity: int = 200,
    *,
    seed: int = 0,
    sentences_per_review: tuple[int, int] = (1, 25),
    aspects_per_entity: tuple[int, int] = (4, 8),
    **options: Any,
) -> SyntheticDataset:
    """Generate a whole synthetic dataset in memory.

    Args:
        n_entities: Number of entities.
        reviews_per_entity: Reviews per entity.
        seed: Random seed; the same seed gives the same dataset.
        sentences_per_review: ``(min, max)`` sentences per review.
        aspects_per_entity: ``(min, max)`` planted aspects per entity.
        **options: Further :func:`generate_entity` options (``prevalence``,
            ``strength``, ``noise_mentions``, ``mean_sentences``).

    Returns:
        The entities with their truth and planted opinions.

    Example:
        >>> data = generate_dataset(2, 10, seed=5)
        >>> [e.entity_id for e in data.entities]
        [1, 2]
    """
    if n_entities < 1:
        raise ConfigError(f"n_entities={n_entities!r} must be at least 1")
    data = SyntheticDataset()
    for index in range(n_entities):
        trends: list[PlantedTrend] = []
        record, planted = generate_entity(
            index,
            reviews_per_entity,
            seed=seed,
            sentences_per_review=sentences_per_review,
            aspects_per_entity=aspects_per_entity,
            planted_trends=trends,
            **options,
        )
        entity = Entity.model_validate(record)
        data.entities.append(entity)
        data.truth[entity.key] = _truth_of(planted, trends)
        data.planted[entity.key] = planted
        if trends:
            data.trends[entity.key] = trends
    return data


def truth_path(path: str | os.PathLike[str]) -> Path:
    """The truth file written beside a dataset: ``PATH.truth.json``.

    Example:
        >>> truth_path("data/synth.json").as_posix()
        'data/synth.json.truth.json'
    """
    path = Path(path)
    return path.with_name(path.name + ".truth.json")


def write_synthetic(
    path: str | os.PathLike[str],
    n_entities: int = 3,
    reviews_per_entity: int = 200,
    seed: int = 0,
    **options: Any,
) -> tuple[Path, Path]:
    """Write a synthetic dataset as OpinioBank JSON, and its truth beside it.

    Entities are generated and written one at a time, so the whole dataset is
    never held in memory. Both files are written atomically (temporary file,
    then rename).

    Args:
        path: The dataset file (a JSON array of entities).
        n_entities: Number of entities.
        reviews_per_entity: Reviews per entity.
        seed: Random seed.
        **options: Further :func:`generate_entity` options.

    Returns:
        ``(dataset_path, truth_path)``; the truth is
        ``{entity_id: {"pros": [aspect, ...], "cons": [aspect, ...]}}``.

    Example:
        >>> import tempfile, pathlib
        >>> tmp = tempfile.TemporaryDirectory()
        >>> out = pathlib.Path(tmp.name) / "synth.json"
        >>> data, truth = write_synthetic(out, 1, 5)
        >>> truth.name
        'synth.json.truth.json'
    """
    target = Path(path)
    truth_target = truth_path(target)
    truth: dict[str, dict[str, Any]] = {}
    if n_entities < 1:
        raise ConfigError(f"n_entities={n_entities!r} must be at least 1")
    with atomic_writer(target, fsync=False) as handle:
        handle.write("[\n")
        for index in range(n_entities):
            trends: list[PlantedTrend] = []
            record, planted = generate_entity(index, reviews_per_entity, seed=seed, planted_trends=trends, **options)
            if index:
                handle.write(",\n")
            handle.write(json.dumps(record, ensure_ascii=False))
            truth[str(record["entity_id"])] = _truth_of(planted, trends)
        handle.write("\n]\n")
    with atomic_writer(truth_target, fsync=False) as handle:
        json.dump(truth, handle, indent=2, ensure_ascii=False)
        handle.write("\n")
    return target, truth_target
