"""The review tools as LangChain ``StructuredTool`` objects (pydantic argument schemas).

Each tool returns its result model as a JSON string (what a tool message
carries). Errors a caller can fix (unknown entity, bad arguments) come back to
the agent as the tool's answer instead of aborting the run.

Example:
    >>> tools = make_langchain_tools(ReviewToolkit(rag))                    # doctest: +SKIP
    >>> [t.name for t in tools]                                              # doctest: +SKIP
    ['list_entities', 'search_reviews', 'review_highlights', 'aspect_overview', 'compare_entities', 'ask_reviews']
    >>> tools[1].invoke({"entity": "101", "query": "wi-fi", "k": 3})         # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel

from opinio_agents.agents.descriptions import TOOL_DESCRIPTIONS
from opinio_agents.agents.schemas import (
    AskReviewsInput,
    AspectOverviewInput,
    CompareEntitiesInput,
    ListEntitiesInput,
    ReviewHighlightsInput,
    SearchReviewsInput,
)
from opinio_agents.agents.toolkit import ReviewToolkit
from opinio_agents.errors import OpinioError

__all__ = ["make_langchain_tools", "TOOL_SCHEMAS"]

#: Argument schema of each tool.
TOOL_SCHEMAS: dict[str, type[BaseModel]] = {
    "list_entities": ListEntitiesInput,
    "search_reviews": SearchReviewsInput,
    "review_highlights": ReviewHighlightsInput,
    "aspect_overview": AspectOverviewInput,
    "compare_entities": CompareEntitiesInput,
    "ask_reviews": AskReviewsInput,
}


def _guarded(method: Callable[..., BaseModel]) -> Callable[..., str]:
    """Call a toolkit method, return JSON, turn library errors into tool errors."""

    def run(**kwargs: Any) -> str:
        try:
            return method(**kwargs).model_dump_json()
        except OpinioError as exc:
            raise ToolException(str(exc)) from exc

    run.__name__ = method.__name__
    run.__doc__ = method.__doc__
    return run


def _explain_validation_error(error: Exception) -> str:
    """Tell the agent which argument was wrong, so it can retry the call correctly."""
    errors = getattr(error, "errors", None)
    if callable(errors):
        details = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ())) or 'arguments'}: {e.get('msg', '')}" for e in errors()
        )
        return f"Invalid tool arguments: {details}"
    return f"Invalid tool arguments: {error}"


def make_langchain_tools(toolkit: ReviewToolkit, *, include: list[str] | None = None) -> list[BaseTool]:
    """LangChain tools over ``toolkit``.

    Args:
        toolkit: The review toolkit (one store).
        include: Tool names to build (default: all of :data:`TOOL_SCHEMAS`).

    Returns:
        ``StructuredTool`` objects with pydantic ``args_schema`` and agent-facing descriptions.
    """
    names = include or list(TOOL_SCHEMAS)
    unknown = [n for n in names if n not in TOOL_SCHEMAS]
    if unknown:
        from opinio_agents.errors import ConfigError

        raise ConfigError(f"include={unknown!r} names unknown tools; choose from {', '.join(TOOL_SCHEMAS)}")
    tools: list[BaseTool] = []
    for name in names:
        tools.append(
            StructuredTool.from_function(
                func=_guarded(getattr(toolkit, name)),
                name=name,
                description=TOOL_DESCRIPTIONS[name],
                args_schema=TOOL_SCHEMAS[name],
                handle_tool_error=True,
                handle_validation_error=_explain_validation_error,
            )
        )
    return tools
