"""Shared helpers for the LLM tests: fake chat models and tiny evidence fixtures."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from opinio_agents.models import Evidence, QueryEvidence, Support

__all__ = ["ScriptedChatModel", "ToolCallingFake", "RaisingThenOk", "make_item", "answer", "EVIDENCE"]

EVIDENCE = [
    Evidence(sentence_id="7:11:0", text="The wifi was fast and free in every room.", score=0.9, sentiment=0.6),
    Evidence(sentence_id="7:12:3", text="Wi-fi worked well even on the balcony.", score=0.8, sentiment=0.4),
    Evidence(sentence_id="7:15:1", text="Slow wifi in the evenings.", score=0.7, sentiment=-0.3),
]


def make_item(query: str = "wi-fi", evidence: Sequence[Evidence] = EVIDENCE) -> QueryEvidence:
    """A QueryEvidence with a support count."""
    return QueryEvidence(
        query=query,
        evidence=[e.model_copy() for e in evidence],
        support=Support(reviews=3, positive=2, negative=1, total_reviews=10),
        entity_name="Harbor Inn",
    )


def answer(*highlights: tuple[str, str, list[str]]) -> str:
    """JSON answer text from ``(polarity, text, ids)`` tuples."""
    return json.dumps(
        {"highlights": [{"polarity": p, "text": t, "sentence_ids": ids} for p, t, ids in highlights]}
    )


class ScriptedChatModel(BaseChatModel):
    """A parser-mode fake: each call gets ``respond(messages)``; records the prompts.

    ``respond`` may also be a list of strings (consumed in order, last repeated)
    or raise an exception.
    """

    respond: Any
    calls: list[list[BaseMessage]] = []
    usage: dict[str, int] | None = None

    model_config = {"arbitrary_types_allowed": True}

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _next(self, messages: list[BaseMessage]) -> str:
        self.calls.append(list(messages))
        if callable(self.respond):
            return self.respond(messages)
        responses = list(self.respond)
        index = min(len(self.calls) - 1, len(responses) - 1)
        item = responses[index]
        if isinstance(item, BaseException):
            raise item
        return item

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        text = self._next(messages)
        message = AIMessage(content=text)
        if self.usage:
            message.usage_metadata = {
                "input_tokens": self.usage["input"],
                "output_tokens": self.usage["output"],
                "total_tokens": self.usage["input"] + self.usage["output"],
            }
        return ChatResult(generations=[ChatGeneration(message=message)])


class ToolCallingFake(GenericFakeChatModel):
    """A fake with ``bind_tools`` so LangChain's real ``with_structured_output`` path runs."""

    bound: list[Any] = []

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:  # type: ignore[override]
        self.bound.append((tools, kwargs))
        return self


def tool_message(name: str, args: dict[str, Any]) -> AIMessage:
    """An AIMessage that calls tool ``name``."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "call_1", "type": "tool_call"}])


class RaisingThenOk:
    """Callable for ScriptedChatModel: raise ``errors`` in turn, then return ``text``."""

    def __init__(self, errors: list[BaseException], text: str) -> None:
        self.errors = list(errors)
        self.text = text

    def __call__(self, messages: list[BaseMessage]) -> str:
        if self.errors:
            raise self.errors.pop(0)
        return self.text


def iter_texts(model: ScriptedChatModel) -> Iterator[str]:
    """The last user message of each recorded call."""
    for call in model.calls:
        yield str(call[-1].content)


Responder = Callable[[list[BaseMessage]], str]
