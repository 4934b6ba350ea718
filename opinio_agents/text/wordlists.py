"""Word lists as package data, read on first use: ``opinio_agents/resources/words/<file>.json``.

Each file holds named lists, each with the reason it exists::

    {"stopwords": {"why": "function words BM25 drops ...", "words": ["a", "an", ...]}}

A list holds ``words`` (a set of lowercase words), ``patterns`` (regular
expressions, in order), ``rules`` (``[pattern, replacement]`` pairs, in order) or
``table`` (``[word, number]`` pairs). Nothing is read at import time; each file is read once per
process.

Example:
    >>> "the" in word_set("preprocess", "stopwords")
    True
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from opinio_agents.errors import ConfigError

__all__ = [
    "word_set", "word_alternation", "word_patterns", "word_rules", "word_table", "words_file", "lazy_getattr",
]

_FOLDER = "resources/words"


@cache
def words_file(file: str) -> dict[str, Any]:
    """The named lists of ``resources/words/<file>.json``.

    Raises:
        ConfigError: When the file is missing or not a JSON object (a broken install).
    """
    where = f"opinio_agents/{_FOLDER}/{file}.json"
    try:
        data = json.loads(resources.files("opinio_agents").joinpath(f"{_FOLDER}/{file}.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{where}: cannot read the word lists ({exc}); reinstall opinio-agents") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected an object of named word lists; reinstall opinio-agents")
    return data


def _entry(file: str, name: str, field: str) -> list[Any]:
    entry = words_file(file).get(name)
    if not isinstance(entry, dict) or not isinstance(entry.get(field), list):
        raise ConfigError(f"opinio_agents/{_FOLDER}/{file}.json: list {name!r} has no {field!r} array")
    return list(entry[field])


@cache
def word_set(file: str, name: str) -> frozenset[str]:
    """The words of the list ``name`` in ``file``."""
    return frozenset(str(word) for word in _entry(file, name, "words"))


def word_alternation(file: str, name: str) -> str:
    """A list's words and phrases as one regex alternation: longest first, each escaped, the words of a phrase
    joined by any run of spaces (for a caller's ``(?:...)``).

    Example:
        >>> import re
        >>> bool(re.fullmatch(word_alternation("keypoint", "fillers"), "by  the way"))
        True
    """
    phrases = sorted(word_set(file, name), key=len, reverse=True)
    return "|".join(r"\s+".join(re.escape(w) for w in phrase.split()) for phrase in phrases)


@cache
def word_rules(file: str, name: str) -> tuple[tuple[str, str], ...]:
    """The ``(pattern, replacement)`` rules of the list ``name`` in ``file``, in order."""
    rules = _entry(file, name, "rules")
    if not all(isinstance(rule, list) and len(rule) == 2 for rule in rules):
        raise ConfigError(f"opinio_agents/{_FOLDER}/{file}.json: list {name!r}: each rule is [pattern, replacement]")
    return tuple((str(pattern), str(replacement)) for pattern, replacement in rules)


@cache
def word_patterns(file: str, name: str) -> tuple[str, ...]:
    """The regular expressions of the list ``name`` in ``file``, in order."""
    return tuple(str(pattern) for pattern in _entry(file, name, "patterns"))


def word_table(file: str, name: str) -> dict[str, float]:
    """The ``word -> number`` table of the list ``name`` in ``file`` (a fresh dict per call)."""
    return dict(_table_rows(file, name))


@cache
def _table_rows(file: str, name: str) -> tuple[tuple[str, float], ...]:
    rows = _entry(file, name, "table")
    if not all(isinstance(row, list) and len(row) == 2 and isinstance(row[1], (int, float)) for row in rows):
        raise ConfigError(f"opinio_agents/{_FOLDER}/{file}.json: list {name!r}: each row is [word, number]")
    return tuple((str(word), float(value)) for word, value in rows)


def lazy_getattr(module: str, lists: Mapping[str, Callable[[], Any]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that answers the public names of ``lists`` by reading
    their data on first access, so importing the module reads nothing.

    Example:
        >>> get = lazy_getattr("demo", {"WORDS": lambda: frozenset({"a"})})
        >>> get("WORDS")
        frozenset({'a'})
    """

    def __getattr__(name: str) -> Any:
        if name in lists:
            return lists[name]()
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
