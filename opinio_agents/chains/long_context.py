"""The long-context baseline chain (OpinioRAG App. B.2, Figure 6).

Input: a :class:`~opinio_agents.prompts.long_context.LongContextInput` (all the
reviews that fit, the queries, the expected PROS/CONS counts). Output:
:class:`LongContextResult` whose key points are tied to the asked queries; key
points naming a query that was not asked are dropped and reported.

Example:
    >>> from langchain_core.language_models import FakeListChatModel
    >>> from opinio_agents.prompts.long_context import LongContextInput, ReviewItem
    >>> chain = LongContextChain(FakeListChatModel(responses=[
    ...     '{"pros": [{"query": "Wi-Fi", "text": "Fast Wi-Fi."}], "cons": []}']))
    >>> result = chain.invoke(LongContextInput(queries=["wi-fi"], n_pros=1, n_cons=0,
    ...     reviews=[ReviewItem(review_id="1", text="Fast wifi.")]))
    >>> [(k.query, k.text) for k in result.pros]
    [('wi-fi', 'Fast Wi-Fi.')]
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field, PrivateAttr

from opinio_agents.chains.base import ChainPlan, StructuredChatChain
from opinio_agents.errors import ConfigError
from opinio_agents.kinds import POLARITY_NAMES
from opinio_agents.llm.retry import RetryPolicy
from opinio_agents.llm.structured import OutputInvalid, StructuredChat, StructuredMode, StructuredResult
from opinio_agents.llm.tokens import TokenCounter
from opinio_agents.models import TokenUsage
from opinio_agents.prompts.long_context import KeyPoint, LongContextInput, LongContextOutput
from opinio_agents.prompts.promptset import PromptSet

__all__ = ["LongContextChain", "LongContextResult", "match_query"]


class LongContextResult(BaseModel):
    """Validated long-context answer."""

    pros: list[KeyPoint] = Field(default_factory=list)
    cons: list[KeyPoint] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list, description="Key points whose query was not asked.")
    attempts: int = 1
    repaired: bool = False
    mode: str = "parser"
    usage: TokenUsage = Field(default_factory=TokenUsage)
    raw_output: str = ""


def _norm(text: str) -> str:
    return " ".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split())


def match_query(name: str, queries: list[str]) -> str | None:
    """The asked query ``name`` refers to (case/punctuation-insensitive; containment as fallback)."""
    target = _norm(name)
    if not target:
        return None
    normed = {q: _norm(q) for q in queries}
    for query, n in normed.items():
        if n == target or n.replace(" ", "") == target.replace(" ", ""):
            return query
    for query, n in sorted(normed.items(), key=lambda kv: -len(kv[1])):
        if n and (f" {n} " in f" {target} " or f" {target} " in f" {n} "):
            return query
    return None


class LongContextChain(StructuredChatChain[LongContextInput, LongContextResult]):
    """All reviews in one prompt -> PROS and CONS key points per query.

    A ``RunnableSerializable``: callbacks, tags and traces see the chain run and the
    chat-model calls inside it.

    Args:
        model: A LangChain chat model (use ``max_tokens=512``, App. B.3).
        prompts: Prompt set; defaults to the paper's.
        domain: Domain of the default system message.
        structured_output: ``"auto"``, ``"native"`` or ``"parser"``.
        retry: Retry policy for transient errors.
        max_text_chars: Upper bound of a key point's text.
        counter: Token estimator for responses without usage metadata.
    """

    _system_text: str = PrivateAttr(default="")

    def __init__(
        self,
        model: BaseChatModel,
        *,
        prompts: PromptSet | None = None,
        domain: str = "hotels and restaurants",
        structured_output: StructuredMode = "auto",
        retry: RetryPolicy | None = None,
        max_text_chars: int = 300,
        counter: TokenCounter | None = None,
        **kwargs: Any,
    ) -> None:
        fields = self.settings(
            model,
            prompts=prompts,
            domain=domain,
            structured_output=structured_output,
            retry=retry,
            counter=counter,
            max_text_chars=max_text_chars,
        )
        super().__init__(**fields, **kwargs)
        self._bind()  # outside pydantic validation, so a ConfigError stays a ConfigError

    def _bind(self) -> None:
        """Render the system message and bind the structured caller."""
        self._system_text = self.prompts.system.render()
        self._structured = StructuredChat(
            self.model,
            self.prompts.long_context.output_model,
            mode=self.structured_output,
            retry=self.retry,
            counter=self.counter,
            what="long-context answer",
        )

    @property
    def system_text(self) -> str:
        """The system turn as sent: the system message, then the long-context task (static for every entity)."""
        return self.prompts.long_context.system_text(self._system_text)

    def build_messages(self, value: LongContextInput) -> list[BaseMessage]:
        """The chat messages sent for one entity."""
        return self.prompts.long_context.build_messages(self._system_text, value)
    def _validate(self, value: LongContextInput, output: LongContextOutput, dropped: list[str]) -> LongContextResult:
        dropped.clear()
        sides: dict[str, list[KeyPoint]] = {"pros": [], "cons": []}
        for side in POLARITY_NAMES:
            for point in getattr(output, side):
                text = " ".join(point.text.split())
                query = match_query(point.query, value.queries)
                if query is None or not text:
                    dropped.append(f"{side}: {point.query[:60]!r}")
                    continue
                if len(text) > self.max_text_chars:
                    text = text[: self.max_text_chars - 1].rsplit(" ", 1)[0] + "\u2026"
                sides[side].append(KeyPoint(query=query, text=text))
        if not sides["pros"] and not sides["cons"] and (value.n_pros or value.n_cons):
            raise OutputInvalid(
                "no key point names one of the listed user queries; give each key point's query exactly as listed"
            )
        return LongContextResult(pros=sides["pros"], cons=sides["cons"], dropped=list(dropped))

    def _check(self, value: Any) -> LongContextInput:
        if not isinstance(value, LongContextInput):
            if isinstance(value, dict):
                return LongContextInput.model_validate(value)
            raise ConfigError(f"long-context chain input must be a LongContextInput, got {type(value).__name__}")
        return value

    @staticmethod
    def _wrap(result: StructuredResult[Any]) -> LongContextResult:
        out: LongContextResult = result.value
        return out.model_copy(
            update={
                "attempts": result.attempts,
                "repaired": result.repaired,
                "mode": result.mode,
                "usage": result.usage,
                "raw_output": result.raw_output[:4000],
            }
        )

    def _plan(self, value: Any) -> ChainPlan[LongContextResult]:
        checked = self._check(value)
        dropped: list[str] = []
        # Constrained decoding (native mode) may then name only the listed queries.
        schema = self._structured.output_model.model_json_schema()
        point = schema.get("$defs", {}).get("KeyPoint", {}).get("properties", {}).get("query")
        if isinstance(point, dict) and checked.queries:
            point["enum"] = list(checked.queries)
        return ChainPlan(
            self.build_messages(checked),
            validate=lambda out: self._validate(checked, out, dropped),
            finish=lambda result: self._wrap(result),  # type: ignore[arg-type]  # always called with a result
            schema=schema,
        )
