"""Exceptions raised by opinio_agents.

Every error derives from :class:`OpinioError` and carries an actionable message:
what was wrong (file, entity, line, field or argument), the offending value and
how to fix it. The CLI prints ``str(error)`` on one line, without a traceback.

Example:
    >>> from opinio_agents.errors import DataError
    >>> err = DataError("text must not be empty", source="hotels.json", entity_id=7,
    ...                 review_id=3, field="text")
    >>> print(err)
    hotels.json: entity 7, review 3, field 'text': text must not be empty
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "OpinioError",
    "DataError",
    "ConfigError",
    "MissingDependencyError",
    "StoreError",
    "LLMError",
    "LLMOutputError",
    "LLMDeadlineError",
]


class OpinioError(Exception):
    """Base class of every error raised by opinio_agents."""


class DataError(OpinioError, ValueError):
    """Invalid input data: names the file, line, entity, review and field at fault.

    Args:
        message: What is wrong and how to fix it.
        source: The file (or ``"<stdin>"``) the record came from.
        line: 1-based line number in ``source`` where known.
        entity_id: The entity the record belongs to.
        review_id: The review at fault.
        field: The field at fault (dotted path for nested fields).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        entity_id: Any = None,
        review_id: Any = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.entity_id = entity_id
        self.review_id = review_id
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        where: list[str] = []
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.entity_id is not None:
            where.append(f"entity {self.entity_id}")
        if self.review_id is not None:
            where.append(f"review {self.review_id}")
        if self.field:
            where.append(f"field '{self.field}'")
        location = ", ".join(where)
        prefix = self.source or ""
        if prefix and location:
            prefix = f"{prefix}: {location}"
        elif location:
            prefix = location
        return f"{prefix}: {self.message}" if prefix else self.message


class ConfigError(OpinioError, ValueError):
    """A bad argument or setting: names the argument, the value and the fix."""


class MissingDependencyError(OpinioError, ImportError):
    """An optional dependency is not installed.

    Args:
        package: The importable module that is missing.
        extra: The ``pip install 'opinio-agents[extra]'`` extra that provides it.
        purpose: What the dependency is needed for.
        hint: The install command, when it is neither the extra's nor ``pip install PACKAGE``.
    """

    def __init__(self, package: str, extra: str | None = None, purpose: str = "", *, hint: str | None = None) -> None:
        self.package = package
        self.extra = extra
        hint = hint or (f"pip install 'opinio-agents[{extra}]'" if extra else f"pip install {package}")
        what = f" (needed for {purpose})" if purpose else ""
        super().__init__(f"Optional dependency '{package}' is not installed{what}. Install it with: {hint}")


class StoreError(OpinioError, RuntimeError):
    """The on-disk index is missing, incompatible or corrupt."""


class LLMError(OpinioError, RuntimeError):
    """A language-model call failed after its retries.

    Args:
        message: What failed.
        attempts: How many attempts were made.
        query: The query being answered, where relevant.
    """

    def __init__(self, message: str, *, attempts: int | None = None, query: str | None = None) -> None:
        self.attempts = attempts
        self.query = query
        parts = [message]
        if query is not None:
            parts.append(f"query={query!r}")
        if attempts is not None:
            parts.append(f"attempts={attempts}")
        super().__init__("; ".join(parts))


class LLMOutputError(LLMError):
    """The model answered, but its output could not be parsed or validated.

    Attributes:
        raw_output: The model's raw text of the last attempt (kept for debugging; may be long).
        outputs: The raw text of every attempt, in order (first answer, then the repair turn's).
        errors: Why each attempt was rejected, in the same order.
        usage: Tokens spent on the failed attempts (a ``TokenUsage``), when known.
    """

    def __init__(
        self,
        message: str,
        *,
        raw_output: str,
        attempts: int | None = None,
        query: str | None = None,
        outputs: list[str] | None = None,
        errors: list[str] | None = None,
        usage: Any = None,
        preview: str | None = None,
    ) -> None:
        self.raw_output = raw_output
        self.outputs = list(outputs) if outputs is not None else [raw_output]
        self.errors = list(errors or [])
        self.usage = usage
        if preview is None:  # a short, escaped snippet; the whole text stays in raw_output
            preview = repr(" ".join(raw_output.split())[:80])
        super().__init__(f"{message} (raw output starts: {preview})", attempts=attempts, query=query)


class LLMDeadlineError(LLMError):
    """A query ran out of its total time budget (``deadline``) before the model answered usably.

    ``attempts`` counts the requests made before the deadline stopped the query.
    """
