"""Robust JSON extraction from model output (OpinioRAG App. B.5).

The pipeline, in order:

1. **Direct parsing** of the whole text.
2. **JSON block extraction**: fenced ```json blocks, then every top-level
   balanced ``{...}`` / ``[...]`` block found by a string-aware scanner, each parsed
   as is and after light repair (trailing commas, smart quotes, Python literals).
3. **Key pattern matching**: for the expected keys (e.g. ``highlights`` or
   ``pros``/``cons``), ``"key": <value>`` fragments are cut out and assembled.
4. **Validation** is left to the caller, who tries the candidates in order
   against its schema (see :func:`iter_json_candidates`).

Example:
    >>> parse_json_output('Sure! ```json\\n{"a": 1,}\\n``` Hope it helps.')
    {'a': 1}
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from opinio_agents.errors import LLMOutputError

__all__ = ["iter_json_candidates", "parse_json_output", "extract_blocks", "repair_json_text"]

_FENCE_RE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA_RE = re.compile(r",\s*([}\]])")
_SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'"})
_PY_LITERALS = (
    (re.compile(r"\bTrue\b"), "true"),
    (re.compile(r"\bFalse\b"), "false"),
    (re.compile(r"\bNone\b"), "null"),
)


def repair_json_text(text: str) -> str:
    """Fix the most common near-JSON defects (trailing commas, smart quotes, Python literals)."""
    fixed = text.translate(_SMART)
    fixed = _TRAILING_COMMA_RE.sub(r"\1", fixed)
    for pattern, repl in _PY_LITERALS:
        fixed = pattern.sub(repl, fixed)
    return fixed


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket that closes ``text[start]``, string-aware."""
    opener = text[start]
    closer = "}" if opener == "{" else "]"
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1 if ch == closer else None
    return None


def extract_blocks(text: str) -> list[str]:
    """Fenced blocks first, then top-level balanced ``{}``/``[]`` blocks in document order."""
    blocks = [m.group(1).strip() for m in _FENCE_RE.finditer(text)]
    i = 0
    while i < len(text):
        if text[i] in "{[":
            end = _balanced_end(text, i)
            if end is not None:
                blocks.append(text[i:end])
                i = end
                continue
        i += 1
    return [b for b in dict.fromkeys(blocks) if b]


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, ValueError):
        pass
    try:
        return json.loads(repair_json_text(text))
    except (json.JSONDecodeError, ValueError):
        return _MISSING


_MISSING = object()


def _match_keys(text: str, keys: Sequence[str]) -> dict[str, Any] | None:
    found: dict[str, Any] = {}
    for key in keys:
        for match in re.finditer(r'"' + re.escape(key) + r'"\s*:\s*', text):
            pos = match.end()
            if pos >= len(text):
                continue
            if text[pos] in "{[":
                end = _balanced_end(text, pos)
                if end is None:
                    continue
                value = _loads(text[pos:end])
            else:
                scalar = re.match(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null', text[pos:])
                value = _loads(scalar.group(0)) if scalar else _MISSING
            if value is not _MISSING:
                found[key] = value
                break
    return found or None


def iter_json_candidates(text: str, keys: Sequence[str] = ()) -> Iterator[Any]:
    """Yield every JSON value recoverable from ``text``, most direct first.

    Args:
        text: The model's raw output.
        keys: Top-level keys the schema expects, for the key pattern-matching step.
    """
    stripped = text.strip()
    value = _loads(stripped)
    if value is not _MISSING:
        yield value
    for block in extract_blocks(stripped):
        value = _loads(block)
        if value is not _MISSING:
            yield value
    if keys:
        matched = _match_keys(stripped, keys)
        if matched is not None:
            yield matched


def parse_json_output(text: str, keys: Sequence[str] = ()) -> Any:
    """The first JSON value recoverable from ``text``.

    Raises:
        LLMOutputError: Nothing JSON-like could be recovered.
    """
    for value in iter_json_candidates(text, keys):
        return value
    raise LLMOutputError("no JSON found in model output", raw_output=text)
