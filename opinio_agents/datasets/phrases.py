"""The phrase bank of the sample and synthetic review datasets (data in ``resources/phrase_bank.json``).

Every hotel aspect has a query-like ``name`` (as an expert review would
annotate it, e.g. ``"wi-fi"``), the ``terms`` that count as a mention of it
(the name plus close variants and synonyms such as ``"internet"``), and
positive, negative and neutral review sentences, each of which mentions at
least one of those terms and no term of any other aspect. Narrative sentences
(arrival, trip purpose, closing recommendation) mention no aspect at all, so a
mention count over generated reviews measures exactly what was planted.

The sentences live in the data file ``resources/phrase_bank.json`` (edit it there);
this module loads it on first use of any of its constants (``ASPECTS``, ``OPENERS``,
...), never at import.

Example:
    >>> from opinio_agents.datasets.phrases import ASPECTS, mentions
    >>> "wi-fi" in ASPECTS
    True
    >>> mentions("wi-fi", "The internet kept dropping.")
    True
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from opinio_agents.errors import ConfigError, DataError

__all__ = [
    "AspectPhrases",
    "ASPECTS",
    "OPENERS",
    "FILLER",
    "NON_NATIVE_FILLER",
    "CLOSERS_POSITIVE",
    "CLOSERS_NEGATIVE",
    "CLOSERS_MIXED",
    "ONE_LINERS_POSITIVE",
    "ONE_LINERS_NEGATIVE",
    "PREFIXES_POSITIVE",
    "PREFIXES_NEGATIVE",
    "PREFIXES_ANY",
    "EMOJI_POSITIVE",
    "EMOJI_NEGATIVE",
    "MISSPELLINGS",
    "CRITICAL_COMPLAINTS",
    "SLOTS",
    "aspect",
    "mention_pattern",
    "mentions",
]


@dataclass(frozen=True)
class AspectPhrases:
    """Review sentences about one aspect.

    Attributes:
        name: The query-like aspect name (``"breakfast buffet"``).
        terms: Lower-case surface forms that count as a mention (name first).
        positive: Sentences praising the aspect.
        negative: Sentences complaining about it.
        neutral: Factual sentences with no clear sentiment.
        expert_pro: A key-point style PRO, as an expert review would phrase it.
        expert_con: A key-point style CON.
    """

    name: str
    terms: tuple[str, ...]
    positive: tuple[str, ...]
    negative: tuple[str, ...]
    neutral: tuple[str, ...]
    expert_pro: str
    expert_con: str


#: The data file, inside the package.
_BANK_RESOURCE = "phrase_bank.json"
_TUPLES = (
    "OPENERS",
    "FILLER",
    "NON_NATIVE_FILLER",
    "CLOSERS_POSITIVE",
    "CLOSERS_NEGATIVE",
    "CLOSERS_MIXED",
    "ONE_LINERS_POSITIVE",
    "ONE_LINERS_NEGATIVE",
    "PREFIXES_POSITIVE",
    "PREFIXES_NEGATIVE",
    "PREFIXES_ANY",
    "EMOJI_POSITIVE",
    "EMOJI_NEGATIVE",
)
_TUPLE_DICTS = ("SLOTS", "CRITICAL_COMPLAINTS")

if TYPE_CHECKING:  # loaded lazily by __getattr__ below
    #: Every aspect of the bank, keyed by its query-like name.
    ASPECTS: dict[str, AspectPhrases]
    #: Values for the ``{slot}`` placeholders in narrative sentences.
    SLOTS: dict[str, tuple[str, ...]]
    #: How a review starts: arrival, trip purpose, who came along.
    OPENERS: tuple[str, ...]
    FILLER: tuple[str, ...]
    NON_NATIVE_FILLER: tuple[str, ...]
    CLOSERS_POSITIVE: tuple[str, ...]
    CLOSERS_NEGATIVE: tuple[str, ...]
    CLOSERS_MIXED: tuple[str, ...]
    ONE_LINERS_POSITIVE: tuple[str, ...]
    ONE_LINERS_NEGATIVE: tuple[str, ...]
    PREFIXES_POSITIVE: tuple[str, ...]
    PREFIXES_NEGATIVE: tuple[str, ...]
    PREFIXES_ANY: tuple[str, ...]
    EMOJI_POSITIVE: tuple[str, ...]
    EMOJI_NEGATIVE: tuple[str, ...]
    #: Common misspellings, applied to some reviews (never to aspect terms).
    MISSPELLINGS: dict[str, str]
    #: Rare, serious complaints (what a critical-complaint guard should flag).
    CRITICAL_COMPLAINTS: dict[str, tuple[str, ...]]


@cache
def _bank() -> dict[str, Any]:
    """Read the data file once; sequences become tuples, aspects :class:`AspectPhrases`."""
    resource = resources.files("opinio_agents.datasets").joinpath("resources").joinpath(_BANK_RESOURCE)
    try:
        raw = json.loads(resource.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(
            f"phrase bank unreadable ({exc}); reinstall opinio-agents", source=str(resource)
        ) from exc
    bank: dict[str, Any] = {
        "ASPECTS": {
            item["name"]: AspectPhrases(
                name=item["name"],
                terms=tuple(item["terms"]),
                positive=tuple(item["positive"]),
                negative=tuple(item["negative"]),
                neutral=tuple(item["neutral"]),
                expert_pro=item["expert_pro"],
                expert_con=item["expert_con"],
            )
            for item in raw["aspects"]
        },
        "MISSPELLINGS": dict(raw["misspellings"]),
    }
    for name in _TUPLES:
        bank[name] = tuple(raw[name.lower()])
    for name in _TUPLE_DICTS:
        bank[name] = {key: tuple(values) for key, values in raw[name.lower()].items()}
    return bank


def __getattr__(name: str) -> Any:
    """The bank's constants, read from the data file on first use (PEP 562)."""
    if name.isupper() and name in __all__:
        return _bank()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def aspect(name: str) -> AspectPhrases:
    """Look up an aspect of the bank by name.

    Args:
        name: The aspect name, e.g. ``"pool"``.

    Returns:
        The aspect's phrases.

    Raises:
        ConfigError: When the bank has no such aspect.

    Example:
        >>> aspect("pool").terms[0]
        'pool'
    """
    try:
        return _bank()["ASPECTS"][name]
    except KeyError:
        known = ", ".join(sorted(_bank()["ASPECTS"]))
        raise ConfigError(f"unknown aspect {name!r}; choose one of: {known}") from None


def _term_regex(term: str) -> str:
    parts = re.split(r"[\s\-]+", term)
    body = r"[\s\-]?".join(re.escape(part) for part in parts)
    return rf"(?<![\w\-']){body}(?:s|es)?(?![\w\-])"


@cache
def mention_pattern(name: str) -> re.Pattern[str]:
    """A case-insensitive pattern that matches any term of an aspect.

    Terms match as whole words, with an optional plural ``s``/``es`` and with
    spaces and hyphens interchangeable (``wi-fi``, ``wi fi``, ``wifi``).

    Args:
        name: An aspect name of the bank.

    Returns:
        The compiled pattern.

    Example:
        >>> bool(mention_pattern("elevators").search("The lift was broken."))
        True
    """
    terms = aspect(name).terms
    return re.compile("|".join(_term_regex(term) for term in terms), re.IGNORECASE)


def mentions(name: str, text: str) -> bool:
    """Whether ``text`` mentions the aspect ``name`` (by any of its terms).

    Example:
        >>> mentions("pool", "The swimming pool was cold.")
        True
        >>> mentions("bar", "The minibar was empty.")
        False
    """
    return mention_pattern(name).search(text) is not None
