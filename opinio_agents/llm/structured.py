"""The one structured-output call of the package: a pydantic-validated answer with one repair turn.

Every LLM feature (the highlight chain, the long-context baseline, the LLM judge,
the LLM triplet extractor, HIRO's generators and its entailment judge) asks its
chat model for an answer through :class:`StructuredChat` (or the function
:func:`structured_call`). The flow of one call:

1. **Model call** (transient errors -- 429, 5xx, timeouts, garbled bodies -- are
   retried with backoff, see :mod:`opinio_agents.llm.retry`; this is the only retry
   layer, so ``attempts`` is the number of requests made, and the policy's
   ``deadline`` bounds the whole call, repair turn included). The mode decides how:

   * ``"native"``: ``model.with_structured_output(schema, method="json_schema",
     include_raw=True)`` -- the provider's JSON-schema output (OpenAI
     ``response_format``, Ollama ``format``; models that only offer tool calling
     get LangChain's tool-calling equivalent).
   * ``"parser"``: a plain call; the answer is JSON in text (OpinioRAG App. B.5).
   * ``"auto"`` (default): native where the model supports it (it implements
     ``with_structured_output``, its profile does not deny it, and it is not a
     local transformers pipeline), else parser; a server that rejects the
     ``response_format`` with HTTP 400/422 turns the caller to parser for good.

2. **Candidates**, tried in order: the natively parsed object, tool-call
   arguments, every JSON value :func:`~opinio_agents.llm.json_parsing.iter_json_candidates`
   recovers from the text (direct parse, JSON blocks, key pattern match), then
   the caller's ``text_fallback`` (e.g. "a one-sentence answer *is* the sentence").
   The first that validates against ``output_model`` *and* passes the caller's
   ``validate`` function (which raises :class:`OutputInvalid` to reject) wins.

3. **Exactly one repair turn** if none does: the model is shown its answer and
   the error and asked again. A second failure raises
   :class:`~opinio_agents.errors.LLMOutputError` carrying the raw output of both
   attempts, the errors, the number of model calls and the tokens spent. Its
   message quotes the output only as a short escaped snippet, and withholds it
   (like any error text) when it repeats the call's system message or the
   caller's ``protected`` texts (:class:`~opinio_agents.llm.redact.Redactor`).

:class:`StructuredChat` is a LangChain ``RunnableSerializable``: its calls, and
the chat-model calls inside them, show in callbacks and LangSmith traces with the
config's tags and metadata. The flow above is written once, free of I/O, as a
generator that yields the model calls it needs (``_conversation``); the sync and
async entry points only drive it, so they cannot drift apart.

Example:
    >>> from langchain_core.language_models import FakeListChatModel
    >>> from langchain_core.messages import HumanMessage
    >>> from pydantic import BaseModel
    >>> class Verdict(BaseModel):
    ...     answer: str
    >>> model = FakeListChatModel(responses=["Sure! {'answer'...", 'Here: {"answer": "yes"}'])
    >>> result = structured_call(model, [HumanMessage("Question?")], Verdict)
    >>> result.value.answer, result.repaired, result.mode
    ('yes', True, 'parser')
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar, cast

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSerializable
from langchain_core.runnables.config import patch_config
from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from opinio_agents.errors import ConfigError, LLMError, LLMOutputError
from opinio_agents.llm.cache import is_cache_hit
from opinio_agents.llm.json_parsing import iter_json_candidates
from opinio_agents.llm.providers import without_client_retries
from opinio_agents.llm.redact import Redactor
from opinio_agents.llm.retry import Deadline, RetryPolicy, acall_with_retry, call_with_retry, status_code_of
from opinio_agents.llm.tokens import TokenCounter, count_message_tokens, default_token_counter, usage_from_message
from opinio_agents.models import TokenUsage

__all__ = [
    "StructuredMode",
    "STRUCTURED_MODES",
    "StructuredChat",
    "StructuredResult",
    "OutputInvalid",
    "REPAIR_INSTRUCTION",
    "structured_call",
    "astructured_call",
    "check_mode",
    "native_support",
    "message_text",
]

logger = logging.getLogger(__name__)

R = TypeVar("R")

#: The structured-output modes every LLM feature accepts (``structured_output=``).
StructuredMode = Literal["auto", "native", "parser"]
STRUCTURED_MODES: tuple[str, ...] = ("auto", "native", "parser")

REPAIR_INSTRUCTION = (
    "Your previous answer could not be used: {error}\n"
    "Answer again with JSON only, in exactly the requested format. Do not add any other text."
)


class OutputInvalid(ValueError):
    """Raised by a ``validate`` function when a parsed answer is unusable (triggers the repair turn)."""


@dataclass
class StructuredResult(Generic[R]):
    """A validated answer and how it was obtained.

    Attributes:
        value: What ``validate`` returned (by default the ``output_model`` instance).
        raw_output: The text of the answer that was used.
        attempts: Model calls made, transport retries and the repair turn included.
        repaired: True when the repair turn produced the answer.
        mode: ``"native"`` or ``"parser"``: how the answer was requested.
        usage: Tokens of every call made.
        errors: Why the first answer was rejected (empty when it was not).
    """

    value: R
    raw_output: str
    attempts: int
    repaired: bool
    mode: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    errors: list[str] = field(default_factory=list)


def check_mode(mode: str) -> StructuredMode:
    """Return ``mode`` if it is one of :data:`STRUCTURED_MODES`.

    Raises:
        ConfigError: Any other value.
    """
    if mode not in STRUCTURED_MODES:
        raise ConfigError(f"structured_output={mode!r} must be one of {', '.join(map(repr, STRUCTURED_MODES))}")
    return cast(StructuredMode, mode)


def message_text(message: Any) -> str:
    """The text content of a chat message (content blocks joined)."""
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            b if isinstance(b, str) else str(b.get("text", "")) for b in content if isinstance(b, (str, dict))
        )
    return "" if content is None else str(content)


def native_support(model: BaseChatModel) -> bool | None:
    """Whether ``model`` offers JSON-schema structured output: True, False, or None (unknown).

    False for models that do not implement ``with_structured_output``, whose
    LangChain profile says ``structured_output: False``, and for local transformers
    pipelines (``ChatHuggingFace`` over ``HuggingFacePipeline``), which cannot
    constrain generation to a schema.
    """
    if type(model).with_structured_output is BaseChatModel.with_structured_output and (
        type(model).bind_tools is BaseChatModel.bind_tools
    ):
        return False
    inner = type(getattr(model, "llm", None)).__name__
    if type(model).__name__ == "ChatHuggingFace" and inner == "HuggingFacePipeline":
        return False
    profile = getattr(model, "profile", None)
    if isinstance(profile, dict) and profile.get("structured_output") is False:
        return False
    if isinstance(profile, dict) and profile.get("structured_output") is True:
        return True
    return None


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _short(exc: BaseException) -> str:
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors()[:4]:
            loc = ".".join(str(p) for p in err.get("loc", ()))
            parts.append(f"{loc or 'root'}: {err.get('msg')}")
        return "; ".join(parts)
    return str(exc)[:300]


def _as_messages(value: LanguageModelInput) -> list[BaseMessage]:
    if isinstance(value, PromptValue):
        return value.to_messages()
    if isinstance(value, str):
        return [HumanMessage(content=value)]
    if isinstance(value, Sequence) and all(isinstance(m, BaseMessage) for m in value):
        return [cast(BaseMessage, m) for m in value]
    raise ConfigError(
        f"structured call input must be a list of chat messages, a prompt value or a string, got {type(value).__name__}"
    )


@dataclass(frozen=True)
class _Ask:
    """A model call the exchange needs: the messages, the callback tag of the call, requests made before it."""

    messages: list[BaseMessage]
    tag: str | None
    spent: int


def _advance(
    steps: Generator[_Ask, tuple[Any, int], StructuredResult[Any]], reply: tuple[Any, int] | LLMError | None
) -> _Ask | StructuredResult[Any]:
    """Give the exchange the reply to its last call (or the error that ended it): its next call or its result."""
    try:
        if isinstance(reply, LLMError):
            return steps.throw(reply)
        return steps.send(reply)  # type: ignore[arg-type]  # None starts the generator
    except StopIteration as done:
        return cast(StructuredResult[Any], done.value)


class StructuredChat(RunnableSerializable[LanguageModelInput, StructuredResult[Any]]):
    """Ask ``model`` for an ``output_model`` answer: native JSON schema or text JSON, one repair turn.

    A Runnable: ``invoke(messages)`` returns a :class:`StructuredResult`; ``batch``,
    ``batch_as_completed``, ``ainvoke`` and ``abatch`` work as usual. Callers that
    check the answer against per-call context use :meth:`call` / :meth:`acall` with
    a ``validate`` function. Thread-safe (the only shared state is the mode, which
    can only turn from native to parser).

    Args:
        model: Any LangChain chat model.
        output_model: The pydantic model the answer must match.
        mode: ``"auto"``, ``"native"`` or ``"parser"`` (see the module docstring).
        retry: Policy for transient errors (default: 3 retries with backoff).
        counter: Token estimator used when a response carries no usage metadata.
        validate: Default check applied to every parsed answer (raise :class:`OutputInvalid`).
        text_fallback: Maps raw text without usable JSON to a candidate (a dict for
            ``output_model``) or None; tried after the JSON candidates.
        repair_instruction: The repair turn's message; ``{error}`` is replaced.
        what: What is being asked, for error messages (e.g. ``"highlight"``).
        protected: Texts that no error message may repeat (the system message of
            each call is always protected too).

    Raises:
        ConfigError: Not a chat model, an unknown mode, or ``"native"`` for a model without it.

    Example:
        >>> from langchain_core.language_models import FakeListChatModel
        >>> from pydantic import BaseModel
        >>> class Out(BaseModel):
        ...     answer: str
        >>> chat = StructuredChat(FakeListChatModel(responses=['{"answer": "yes"}']), Out)
        >>> chat.invoke("Question?").value.answer
        'yes'
    """

    model: BaseChatModel
    output_model: type[BaseModel]
    mode: str = "auto"
    retry: Any = None
    counter: Any = None
    validate_answer: Any = None
    text_fallback: Any = None
    repair_instruction: str = REPAIR_INSTRUCTION
    what: str = "model answer"
    protected: tuple[str, ...] = ()

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _native: Runnable[Any, Any] | None = PrivateAttr(default=None)
    _natives: dict[str, Runnable[Any, Any]] = PrivateAttr(default_factory=dict)
    _json_object: bool = PrivateAttr(default=False)
    _active: str = PrivateAttr(default="parser")
    _lock: Any = PrivateAttr(default=None)
    _keys: tuple[str, ...] = PrivateAttr(default=())
    _redactor: Redactor = PrivateAttr(default_factory=Redactor)

    def __init__(
        self,
        model: BaseChatModel,
        output_model: type[BaseModel],
        *,
        mode: str = "auto",
        retry: RetryPolicy | None = None,
        counter: TokenCounter | None = None,
        validate: Callable[[Any], Any] | None = None,
        text_fallback: Callable[[str], Any] | None = None,
        repair_instruction: str = REPAIR_INSTRUCTION,
        what: str = "model answer",
        protected: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        if not isinstance(model, BaseChatModel):
            raise ConfigError(
                f"model must be a LangChain BaseChatModel, got {type(model).__name__}; "
                "use opinio_agents.llm.resolve_chat_model() to build one from a string"
            )
        if not (isinstance(output_model, type) and issubclass(output_model, BaseModel)):
            raise ConfigError(f"output_model must be a pydantic model class, got {output_model!r}")
        retry = retry or RetryPolicy()
        fields: dict[str, Any] = {
            # One retry layer: the client's own retries off, its timeout capped at the deadline.
            "model": without_client_retries(model, timeout=retry.deadline),
            "output_model": output_model,
            "mode": check_mode(mode),
            "retry": retry,
            "counter": counter or default_token_counter(),
            "validate_answer": validate,
            "text_fallback": text_fallback,
            "repair_instruction": repair_instruction,
            "what": what,
            "protected": tuple(protected),
        }
        super().__init__(**fields, **kwargs)
        self._bind()  # outside pydantic validation, so a ConfigError stays a ConfigError

    def _bind(self) -> None:
        """Bind the native structured-output runnable where the mode and the model allow it."""
        self._lock = threading.Lock()
        self._redactor = Redactor(self.protected)
        self._keys = tuple(self.output_model.model_fields)
        self._active = "parser"
        if self.mode == "parser":
            return
        support = native_support(self.model)
        if support is False:
            if self.mode == "native":
                raise ConfigError(
                    f"{type(self.model).__name__} has no native JSON-schema structured output; "
                    "use structured_output='parser' (or 'auto')"
                )
            return
        try:
            # A JSON-schema dict, not the class: the provider client then does not validate on
            # its own (which would lose the raw text); the candidates are validated here.
            self._native = self.model.with_structured_output(
                self.output_model.model_json_schema(), method="json_schema", include_raw=True
            )
        except (NotImplementedError, ValueError, TypeError) as exc:
            if self.mode == "native":
                raise ConfigError(
                    f"{type(self.model).__name__} has no native JSON-schema structured output ({exc}); "
                    "use structured_output='parser' (or 'auto')"
                ) from None
            return
        self._active = "native"

    @property
    def active_mode(self) -> str:
        """``"native"`` or ``"parser"``: how the next call asks (auto may turn to parser after a 400)."""
        return self._active

    # -- one model call ---------------------------------------------------------------------------
    def _should_downgrade(self, exc: LLMError) -> bool:
        cause = exc.__cause__ or exc
        if self.mode != "auto" or self._active != "native":
            return False
        return status_code_of(cause) in (400, 422) or isinstance(cause, NotImplementedError)

    def _downgrade(self, exc: LLMError) -> None:
        with self._lock:
            if self._active == "native":
                logger.info(
                    "%s rejected native structured output (%s); asking for JSON in text from now on",
                    type(self.model).__name__,
                    str(exc)[:200],
                )
            self._active = "parser"

    def _unpack(self, result: Any) -> tuple[Any, Any]:
        if isinstance(result, dict) and "raw" in result:
            return result.get("raw"), result.get("parsed")
        return result, None

    def redactor_for(self, messages: Sequence[BaseMessage]) -> Redactor:
        """The redactor of one call: the ``protected`` texts plus the call's system message(s)."""
        system = [message_text(m) for m in messages if isinstance(m, SystemMessage)]
        return self._redactor.extended(system) if system else self._redactor

    def _ask(
        self, messages: list[BaseMessage], tag: str | None, spent: int
    ) -> Generator[_Ask, tuple[Any, int], tuple[Any, Any, int]]:
        """One model call (with its retries) as a step of :meth:`_conversation`; a native mode the
        server rejects turns to the parser mode and the call is made again."""
        try:
            result, attempts = yield _Ask(messages, tag, spent)
        except LLMError as exc:
            if self._json_object_only(exc):
                logger.info("the server takes response_format json_object with a schema; asking that way from now on")
                self._json_object = True
            elif not self._should_downgrade(exc):
                raise
            else:
                self._downgrade(exc)
            done = (exc.attempts or spent + 1) - spent
            result, more = yield _Ask(messages, tag, spent + done)
            attempts = done + more
        raw, parsed = self._unpack(result)
        return raw, parsed, attempts

    def _retry_args(self, ask: _Ask, deadline: Deadline, redactor: Redactor) -> dict[str, Any]:
        return {"what": f"{self.what} call", "deadline": deadline, "spent": ask.spent, "redact": redactor.clean}

    def _json_object_only(self, exc: LLMError) -> bool:
        """Whether the server refused ``json_schema`` but takes ``json_object`` with a schema
        (llama-cpp-python's server: "response_format.type should be 'text' or 'json_object'")."""
        if self._active != "native" or self._json_object:
            return False
        text = str(exc.__cause__ or exc)
        return "json_object" in text and "json_schema" in text

    def _native_for(self, schema: dict[str, Any] | None) -> Runnable[Any, Any] | None:
        """The native runnable of one call: the output model's, or one for ``schema`` (kept per schema text)."""
        if self._json_object and self._native is not None:
            wanted = schema or self.output_model.model_json_schema()
            return self.model.bind(response_format={"type": "json_object", "schema": wanted})
        if schema is None or self._native is None:
            return self._native
        key = json.dumps(schema, sort_keys=True)
        with self._lock:
            native = self._natives.get(key)
            if native is None:
                native = self.model.with_structured_output(schema, method="json_schema", include_raw=True)
                if len(self._natives) < 256:
                    self._natives[key] = native
        return native

    def _attempt(self, ask: _Ask, config: RunnableConfig, schema: dict[str, Any] | None = None) -> Callable[[], Any]:
        def attempt() -> Any:
            native = self._native_for(schema)
            if self._active == "native" and native is not None:
                return native.invoke(ask.messages, config=config)
            return self.model.invoke(ask.messages, config=config)

        return attempt

    def _aattempt(
        self, ask: _Ask, config: RunnableConfig, schema: dict[str, Any] | None = None
    ) -> Callable[[], Awaitable[Any]]:
        async def attempt() -> Any:
            native = self._native_for(schema)
            if self._active == "native" and native is not None:
                return await native.ainvoke(ask.messages, config=config)
            return await self.model.ainvoke(ask.messages, config=config)

        return attempt

    # -- usage, candidates, validation --------------------------------------------------------------
    def _usage(self, messages: Sequence[BaseMessage], raw: Any) -> TokenUsage:
        counted = usage_from_message(raw)
        if counted is None:
            counted = (count_message_tokens(messages, self.counter), self.counter.count(message_text(raw)))
        return TokenUsage(
            prompt_tokens=counted[0], completion_tokens=counted[1], calls=1, cached_calls=int(is_cache_hit(raw))
        )

    def _candidates(self, raw: Any, parsed: Any) -> list[Any]:
        out: list[Any] = []
        text = message_text(raw)
        # LangChain parses native output leniently (partial JSON): a truncated or malformed
        # answer would come back as a "valid" object with its broken part silently dropped.
        if parsed is not None and not (text.strip() and not _is_json(text)):
            out.append(parsed)
        for call in getattr(raw, "tool_calls", None) or []:
            args = call.get("args") if isinstance(call, dict) else None
            if isinstance(args, dict):
                out.append(args)
        out.extend(iter_json_candidates(text, self._keys))
        if self.text_fallback is not None:
            fallback = self.text_fallback(text)
            if fallback is not None:
                out.append(fallback)
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

    @staticmethod
    def _raw_text(raw: Any) -> str:
        text = message_text(raw)
        if not text and getattr(raw, "tool_calls", None):
            text = str(raw.tool_calls[0].get("args"))
        return text

    def _repair_messages(self, messages: list[BaseMessage], raw: Any, error: str) -> list[BaseMessage]:
        return [
            *messages,
            AIMessage(content=self._raw_text(raw)[:4000] or "(empty answer)"),
            HumanMessage(content=self.repair_instruction.format(error=error)),
        ]

    def _unusable(
        self, errors: list[str], outputs: list[str], attempts: int, usage: TokenUsage, redactor: Redactor
    ) -> LLMOutputError:
        return LLMOutputError(
            f"{self.what}: could not parse a valid answer after one repair turn: {redactor.clean(errors[-1], 200)}",
            raw_output=outputs[-1],
            attempts=attempts,
            outputs=outputs,
            errors=errors,
            usage=usage,
            preview=redactor.snippet(outputs[-1]),
        )

    def _check(self, validate: Callable[[Any], Any] | None) -> Callable[[Any], Any]:
        return validate or self.validate_answer or (lambda value: value)

    # -- the call ------------------------------------------------------------------------------------
    def _conversation(
        self, messages: list[BaseMessage], check: Callable[[Any], Any], redactor: Redactor
    ) -> Generator[_Ask, tuple[Any, int], StructuredResult[Any]]:
        """The whole exchange, free of I/O: ask, validate, repair once (the drivers make the calls).

        Yields the model calls it needs (:class:`_Ask`) and receives ``(response, attempts)``
        for each, or the :class:`~opinio_agents.errors.LLMError` that ended it; so the sync and
        async paths (:meth:`_run`, :meth:`_arun`) share every rule and differ only in how they call.
        """
        mode = self._active
        raw, parsed, attempts = yield from self._ask(messages, None, 0)
        usage = self._usage(messages, raw)
        try:
            return StructuredResult(self._coerce(raw, parsed, check), message_text(raw), attempts, False, mode, usage)
        except OutputInvalid as first:
            repair = self._repair_messages(messages, raw, str(first))
            raw2, parsed2, more = yield from self._ask(repair, "repair", attempts)
            usage = usage.add(self._usage(repair, raw2))
            try:
                value2 = self._coerce(raw2, parsed2, check)
            except OutputInvalid as second:
                raise self._unusable(
                    [str(first), str(second)],
                    [self._raw_text(raw), self._raw_text(raw2)],
                    attempts + more,
                    usage,
                    redactor,
                ) from second
            return StructuredResult(value2, message_text(raw2), attempts + more, True, mode, usage, [str(first)])

    def _run(
        self,
        value: LanguageModelInput,
        run_manager: CallbackManagerForChainRun,
        config: RunnableConfig,
        *,
        validate: Callable[[Any], Any] | None = None,
        schema: dict[str, Any] | None = None,
    ) -> StructuredResult[Any]:
        messages = _as_messages(value)
        deadline, redactor = self.retry.start(), self.redactor_for(messages)
        steps = self._conversation(messages, self._check(validate), redactor)
        step = _advance(steps, None)
        while isinstance(step, _Ask):
            attempt = self._attempt(step, patch_config(config, callbacks=run_manager.get_child(step.tag)), schema)
            try:
                reply = call_with_retry(attempt, self.retry, **self._retry_args(step, deadline, redactor))
            except LLMError as exc:
                step = _advance(steps, exc)
            else:
                step = _advance(steps, reply)
        return step

    async def _arun(
        self,
        value: LanguageModelInput,
        run_manager: AsyncCallbackManagerForChainRun,
        config: RunnableConfig,
        *,
        validate: Callable[[Any], Any] | None = None,
        schema: dict[str, Any] | None = None,
    ) -> StructuredResult[Any]:
        messages = _as_messages(value)
        deadline, redactor = self.retry.start(), self.redactor_for(messages)
        steps = self._conversation(messages, self._check(validate), redactor)
        step = _advance(steps, None)
        while isinstance(step, _Ask):
            aattempt = self._aattempt(
                step, patch_config(config, callbacks=run_manager.get_child(step.tag)), schema
            )
            try:
                reply = await acall_with_retry(aattempt, self.retry, **self._retry_args(step, deadline, redactor))
            except LLMError as exc:
                step = _advance(steps, exc)
            else:
                step = _advance(steps, reply)
        return step

    def call(
        self,
        messages: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        validate: Callable[[Any], Any] | None = None,
        schema: dict[str, Any] | None = None,
    ) -> StructuredResult[Any]:
        """Call the model, validate with ``validate`` (default: the instance's), repair once if needed.

        ``schema`` narrows the output model's JSON schema for this call in native mode (e.g. the
        evidence labels of this prompt as an ``enum``); the answer is still validated against
        ``output_model`` and ``validate``.

        Raises:
            LLMError: The model call failed after its retries.
            LLMOutputError: Neither the answer nor the repaired answer could be used.
        """
        return self._call_with_config(
            functools.partial(self._run, validate=validate, schema=schema), messages, config, run_type="chain"
        )

    async def acall(
        self,
        messages: LanguageModelInput,
        config: RunnableConfig | None = None,
        *,
        validate: Callable[[Any], Any] | None = None,
        schema: dict[str, Any] | None = None,
    ) -> StructuredResult[Any]:
        """Async twin of :meth:`call`."""
        return await self._acall_with_config(
            functools.partial(self._arun, validate=validate, schema=schema), messages, config, run_type="chain"
        )

    def invoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> StructuredResult[Any]:
        """Runnable entry point: :meth:`call` with the instance's ``validate``."""
        return self.call(input, config)

    async def ainvoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> StructuredResult[Any]:
        """Async twin of :meth:`invoke`."""
        return await self.acall(input, config)


def structured_call(
    model: BaseChatModel,
    messages: LanguageModelInput,
    output_model: type[BaseModel],
    *,
    mode: str = "auto",
    validate: Callable[[Any], Any] | None = None,
    text_fallback: Callable[[str], Any] | None = None,
    retry: RetryPolicy | None = None,
    counter: TokenCounter | None = None,
    config: RunnableConfig | None = None,
    what: str = "model answer",
) -> StructuredResult[Any]:
    """One structured call (see :class:`StructuredChat` for the arguments).

    Raises:
        LLMError: The model call failed after its retries.
        LLMOutputError: The answer and the repaired answer were both unusable.
    """
    chat = StructuredChat(
        model, output_model, mode=mode, retry=retry, counter=counter, text_fallback=text_fallback, what=what
    )
    return chat.call(messages, config, validate=validate)


async def astructured_call(
    model: BaseChatModel,
    messages: LanguageModelInput,
    output_model: type[BaseModel],
    *,
    mode: str = "auto",
    validate: Callable[[Any], Any] | None = None,
    text_fallback: Callable[[str], Any] | None = None,
    retry: RetryPolicy | None = None,
    counter: TokenCounter | None = None,
    config: RunnableConfig | None = None,
    what: str = "model answer",
) -> StructuredResult[Any]:
    """Async twin of :func:`structured_call`."""
    chat = StructuredChat(
        model, output_model, mode=mode, retry=retry, counter=counter, text_fallback=text_fallback, what=what
    )
    return await chat.acall(messages, config, validate=validate)
