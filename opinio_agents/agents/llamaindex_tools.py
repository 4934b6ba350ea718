"""The review tools as LlamaIndex ``FunctionTool`` objects (same schemas as LangChain).

Example:
    >>> tools = make_llamaindex_tools(ReviewToolkit(rag))                    # doctest: +SKIP
    >>> tools[1].metadata.name                                               # doctest: +SKIP
    'search_reviews'
    >>> tools[1].call(entity="101", query="wi-fi", k=3).raw_output.hits[0]   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from opinio_agents.agents.descriptions import TOOL_DESCRIPTIONS
from opinio_agents.agents.langchain_tools import TOOL_SCHEMAS
from opinio_agents.agents.toolkit import ReviewToolkit
from opinio_agents.errors import ConfigError, OpinioError

__all__ = ["make_llamaindex_tools"]


def _validated(method: Callable[..., BaseModel], schema: type[BaseModel]) -> Callable[..., Any]:
    """Validate the arguments with the tool's schema, then call the toolkit method.

    Library errors are returned as ``{"error": ...}`` so an agent can correct its call.
    """

    def run(**kwargs: Any) -> Any:
        args = schema.model_validate(kwargs)
        try:
            return method(**{name: getattr(args, name) for name in type(args).model_fields})
        except OpinioError as exc:
            return {"error": str(exc)}

    run.__name__ = method.__name__
    run.__doc__ = method.__doc__
    return run


def make_llamaindex_tools(toolkit: ReviewToolkit, *, include: list[str] | None = None) -> list[Any]:
    """LlamaIndex ``FunctionTool`` objects over ``toolkit`` (``include`` selects tools by name)."""
    from llama_index.core.tools import FunctionTool

    names = include or list(TOOL_SCHEMAS)
    unknown = [n for n in names if n not in TOOL_SCHEMAS]
    if unknown:
        raise ConfigError(f"include={unknown!r} names unknown tools; choose from {', '.join(TOOL_SCHEMAS)}")
    return [
        FunctionTool.from_defaults(
            fn=_validated(getattr(toolkit, name), TOOL_SCHEMAS[name]),
            name=name,
            description=TOOL_DESCRIPTIONS[name],
            fn_schema=TOOL_SCHEMAS[name],
        )
        for name in names
    ]
