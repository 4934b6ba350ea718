"""Ask a chat model for a pydantic-validated answer: native structured output where
the provider has it, else text parsing with the App. B.5 fallback, then one bounded
repair turn.

Flow of :meth:`StructuredCaller.call`:

1. Call the model (transient errors retried with backoff, see
   :mod:`opinio_agents.llm.retry`). In ``"native"`` mode the model is wrapped
   with LangChain ``with_structured_output(..., include_raw=True)``; in ``"parser"``
   mode it is called plainly. ``"auto"`` uses native output when the model
   implements it and falls back to parsing when it does not, or when the server
   rejects the ``response_format`` with HTTP 400/422.
2. Candidates are tried in order: the natively parsed object, tool-call
   arguments, then every JSON value :func:`~opinio_agents.llm.json_parsing.iter_json_candidates`
   recovers from the text (direct parse, JSON blocks, key pattern match). The
   first one that validates against the output model *and* passes the caller's
   ``validate`` function wins.
3. If none does, one repair turn shows the model its answer and the error and asks
   again; a second failure raises :class:`~opinio_agents.errors.LLMOutputError`.

Token usage of every call is reported (from ``usage_metadata``, else estimated).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import BaseModel, ValidationError

from opinio_agents.errors import ConfigError, LLMError, LLMOutputError
from opinio_agents.llm.cache import is_cache_hit
from opinio_agents.llm.json_parsing import iter_json_candidates
from opinio_agents.llm.retry import RetryPolicy, acall_with_retry, call_with_retry, status_code_of
from opinio_agents.llm.tokens import TokenCounter, count_message_tokens, default_token_counter, usage_from_message
from opinio_agents.models import TokenUsage

__all__ = ["StructuredCaller", "StructuredResult", "OutputInvalid", "StructuredMode", "REPAIR_INSTRUCTION"]

OutT = TypeVar("OutT", bound=BaseModel)
R = TypeVar("R")
StructuredMode = Literal["auto", "native", "parser"]

REPAIR_INSTRUCTION = (
    "Your previous answer could not be used: {error}\n"
    "Answer again with JSON only, in exactly the requested format, citing only labels that "
    "appear in the evidence block. Do not add any other text."
)


class OutputInvalid(ValueError):
    """Raised by a ``validate`` function when a parsed answer is unusable (triggers repair)."""


@dataclass
class StructuredResult(Generic[R]):
    """A validated answer and how it was obtained."""

    value: R
    raw_output: str
    attempts: int
    repaired: bool
    mode: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    errors: list[str] = field(default_factory=list)


def _text_of(message: Any) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text", "")) for b in content if isinstance(b, (str, dict))
        )
    return str(content)


def _short(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors()[:4]:
            loc = ".".join(str(p) for p in err.get("loc", ()))
            parts.append(f"{loc or 'root'}: {err.get('msg')}")
        return "; ".join(parts)
    return str(exc)[:300]


class StructuredCaller(Generic[OutT, R]):
    """Call ``model`` and return ``validate(OutputModel)``; thread-safe.

    Args:
        model: Any LangChain chat model.
        output_model: The pydantic model the answer must match.
        validate: Maps a parsed answer to the caller's result; raise
            :class:`OutputInvalid` to reject it (the repair turn is then used).
        mode: ``"auto"``, ``"native"`` or ``"parser"``.
        retry: Policy for transient errors.
        counter: Token estimator used when a response carries no usage.

    Example:
        >>> from langchain_core.language_models import FakeListChatModel
        >>> from pydantic import BaseModel
        >>> class Out(BaseModel):
        ...     answer: str
        >>> caller = StructuredCaller(FakeListChatModel(responses=['Here: {"answer": "yes"}']), Out)
        >>> caller.call([HumanMessage("Question?")]).value.answer
        'yes'
    """

    def __init__(
        self,
        model: BaseChatModel,
        output_model: type[OutT],
        validate: Callable[[OutT], R] | None = None,
        *,
        mode: StructuredMode = "auto",
        retry: RetryPolicy | None = None,
        counter: TokenCounter | None = None,
        repair_instruction: str = REPAIR_INSTRUCTION,
    ) -> None:
        if mode not in ("auto", "native", "parser"):
            raise ConfigError(f"structured_output={mode!r} must be 'auto', 'native' or 'parser'")
        if not isinstance(model, BaseChatModel):
            raise ConfigError(
                f"model must be a LangChain BaseChatModel, got {type(model).__name__}; "
                "use opinio_agents.llm.resolve_chat_model() to build one from a string"
            )
        self.model = model
        self.output_model = output_model
        self.validate: Callable[[OutT], Any] = validate or (lambda value: value)
        self.retry = retry or RetryPolicy()
        self.counter = counter or default_token_counter()
        self.repair_instruction = repair_instruction
        self._keys = tuple(output_model.model_fields)
        self._lock = threading.Lock()
        self._native: Runnable[Any, Any] | None = None
        self.mode: str = "parser" if mode == "parser" else "native"
        self._requested_mode = mode
        if mode != "parser":
            try:
                # A JSON-schema dict, not the class: the provider client then does not
                # validate on its own (which would lose the raw text); we validate below.
                self._native = model.with_structured_output(output_model.model_json_schema(), include_raw=True)
            except NotImplementedError:
                if mode == "native":
                    raise ConfigError(
                        f"{type(model).__name__} has no native structured output; use structured_output='parser'"
                    ) from None
                self.mode = "parser"

    # -- one model call ---------------------------------------------------------------------------
    def _unpack(self, result: Any) -> tuple[Any, Any]:
        if isinstance(result, dict) and "raw" in result:
            return result.get("raw"), result.get("parsed")
        return result, None

    def _should_downgrade(self, exc: BaseException) -> bool:
        cause = exc.__cause__ or exc
        return self._requested_mode == "auto" and self.mode == "native" and status_code_of(cause) in (400, 422)

    def _downgrade(self) -> None:
        with self._lock:
            self.mode = "parser"

    def _invoke_once(self, messages: Sequence[BaseMessage], config: RunnableConfig | None) -> tuple[Any, Any, int]:
        def attempt() -> Any:
            if self.mode == "native" and self._native is not None:
                return self._native.invoke(list(messages), config=config)
            return self.model.invoke(list(messages), config=config)

        try:
            result, attempts = call_with_retry(attempt, self.retry)
        except LLMError as exc:
            if not self._should_downgrade(exc):
                raise
            self._downgrade()
            result, more = call_with_retry(attempt, self.retry)
            attempts = (exc.attempts or 1) + more
        raw, parsed = self._unpack(result)
        return raw, parsed, attempts

    async def _ainvoke_once(
        self, messages: Sequence[BaseMessage], config: RunnableConfig | None
    ) -> tuple[Any, Any, int]:
        async def attempt() -> Any:
            if self.mode == "native" and self._native is not None:
                return await self._native.ainvoke(list(messages), config=config)
            return await self.model.ainvoke(list(messages), config=config)

        try:
            result, attempts = await acall_with_retry(attempt, self.retry)
        except LLMError as exc:
            if not self._should_downgrade(exc):
                raise
            self._downgrade()
            result, more = await acall_with_retry(attempt, self.retry)
            attempts = (exc.attempts or 1) + more
        raw, parsed = self._unpack(result)
        return raw, parsed, attempts

    # -- usage and validation -------------------------------------------------------------------
    def _usage(self, messages: Sequence[BaseMessage], raw: Any) -> TokenUsage:
        counted = usage_from_message(raw)
        if counted is None:
            counted = (count_message_tokens(messages, self.counter), self.counter.count(_text_of(raw)))
        return TokenUsage(
            prompt_tokens=counted[0], completion_tokens=counted[1], calls=1, cached_calls=int(is_cache_hit(raw))
        )

    def _candidates(self, raw: Any, parsed: Any) -> list[Any]:
        out: list[Any] = []
        if parsed is not None:
            out.append(parsed)
        for call in getattr(raw, "tool_calls", None) or []:
            args = call.get("args") if isinstance(call, dict) else None
            if isinstance(args, dict):
                out.append(args)
        out.extend(iter_json_candidates(_text_of(raw), self._keys))
        return out

    def _coerce(self, raw: Any, parsed: Any, validate: Callable[[Any], Any]) -> Any:
        errors: list[str] = []
        candidates = self._candidates(raw, parsed)
        for candidate in candidates:
            try:
                value = (
                    candidate
                    if isinstance(candidate, self.output_model)
                    else self.output_model.model_validate(candidate)
                )
                return validate(value)
            except ValidationError as exc:
                errors.append(f"the JSON does not match the schema ({_short(exc)})")
            except OutputInvalid as exc:
                errors.append(str(exc))
        if not candidates:
            raise OutputInvalid("no JSON object was found in the answer")
        raise OutputInvalid(errors[0])

    def _repair_messages(self, messages: Sequence[BaseMessage], raw: Any, error: str) -> list[BaseMessage]:
        text = _text_of(raw)
        if not text and getattr(raw, "tool_calls", None):
            text = str(raw.tool_calls[0].get("args"))
        return [
            *messages,
            AIMessage(content=text[:4000] or "(empty answer)"),
            HumanMessage(content=self.repair_instruction.format(error=error)),
        ]

    @staticmethod
    def _unusable(error: OutputInvalid, raw: Any, attempts: int, usage: TokenUsage) -> LLMOutputError:
        exc = LLMOutputError(
            f"model output unusable after one repair attempt: {error}", raw_output=_text_of(raw), attempts=attempts
        )
        exc.usage = usage  # type: ignore[attr-defined]  # tokens spent, for accounting
        return exc

    # -- public API ------------------------------------------------------------------------------
    def call(
        self,
        messages: Sequence[BaseMessage],
        config: RunnableConfig | None = None,
        *,
        validate: Callable[[Any], Any] | None = None,
    ) -> StructuredResult[Any]:
        """Call the model, validate, repair once if needed.

        Args:
            messages: The prompt.
            config: LangChain run config (callbacks, tags) passed to the model.
            validate: Overrides the instance's ``validate`` for this call.

        Raises:
            LLMError: The model call failed after its retries.
            LLMOutputError: The answer (and the repaired answer) could not be used; its
                ``usage`` attribute holds the tokens spent.
        """
        check = validate or self.validate
        raw, parsed, attempts = self._invoke_once(messages, config)
        usage = self._usage(messages, raw)
        try:
            value = self._coerce(raw, parsed, check)
            return StructuredResult(value, _text_of(raw), attempts, False, self.mode, usage)
        except OutputInvalid as first:
            repair = self._repair_messages(messages, raw, str(first))
            raw2, parsed2, more = self._invoke_once(repair, config)
            usage = usage.add(self._usage(repair, raw2))
            try:
                value = self._coerce(raw2, parsed2, check)
            except OutputInvalid as second:
                raise self._unusable(second, raw2, attempts + more, usage) from second
            return StructuredResult(value, _text_of(raw2), attempts + more, True, self.mode, usage, [str(first)])

    async def acall(
        self,
        messages: Sequence[BaseMessage],
        config: RunnableConfig | None = None,
        *,
        validate: Callable[[Any], Any] | None = None,
    ) -> StructuredResult[Any]:
        """Async twin of :meth:`call`."""
        check = validate or self.validate
        raw, parsed, attempts = await self._ainvoke_once(messages, config)
        usage = self._usage(messages, raw)
        try:
            value = self._coerce(raw, parsed, check)
            return StructuredResult(value, _text_of(raw), attempts, False, self.mode, usage)
        except OutputInvalid as first:
            repair = self._repair_messages(messages, raw, str(first))
            raw2, parsed2, more = await self._ainvoke_once(repair, config)
            usage = usage.add(self._usage(repair, raw2))
            try:
                value = self._coerce(raw2, parsed2, check)
            except OutputInvalid as second:
                raise self._unusable(second, raw2, attempts + more, usage) from second
            return StructuredResult(value, _text_of(raw2), attempts + more, True, self.mode, usage, [str(first)])
