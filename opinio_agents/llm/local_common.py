"""What the in-process chat models share: ``hf:`` (:mod:`opinio_agents.llm.local`) and ``gguf:``
(:mod:`opinio_agents.llm.llamacpp`).

Both run a chat template over LangChain messages, answer JSON-schema structured output by
binding the schema text (``json_schema=...``) that their own constrained decoder enforces, and
keep the same call counters and generation settings. Those pieces are here once
(:class:`InProcessChatModel`); loading, decoding and the key/value cache stay with each backend.

Example:
    >>> from langchain_core.messages import SystemMessage
    >>> message_role(SystemMessage("Be brief.")), stop_at("yes STOP no", ["STOP"])
    ('system', 'yes ')
"""

from __future__ import annotations

import json
import os
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import ConfigDict, PrivateAttr

__all__ = [
    "InProcessChatModel",
    "message_role",
    "message_text",
    "stop_at",
    "schema_text",
    "structured_chain",
    "count_call",
    "DEFAULT_REPETITION_PENALTY",
    "default_threads",
]

#: Repetition penalty of local models: 1.15 stops SmolLM2-135M repeating a clause until the token
#: limit (issue 20) while leaving the JSON keys the grammar forces untouched.
DEFAULT_REPETITION_PENALTY = 1.15


def _cores() -> int:
    """The CPU cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def default_threads() -> int:
    """CPU threads of a local model when none are given: half the cores (llama.cpp's own default), at least one.

    The threads of one matrix product wait for each other by spinning, so they collapse when the cores
    are shared: on 2 cores under a load of 10, llama.cpp with 2 threads evaluated a 1,200-token prompt
    at 19-22 tokens/s and with 1 thread at 61-69 (``benchmarks/llm_profile.py --threads``); torch with
    2 threads spent 0.24 CPU-s a generated token of SmolLM2-135M and with 1 thread 0.05
    (``benchmarks/llm_profile.py --hf-threads``). On a machine of one's own, pass ``threads=`` up to the
    number of cores.
    """
    return max(1, _cores() // 2)


class InProcessChatModel(BaseChatModel):
    """The settings, counters and structured output of a chat model run in this process.

    Subclasses load the weights and decode (``_generate``, ``_stream``), and call
    :func:`count_call` on :attr:`_stats` once per answer; structured output binds the
    schema text, which their ``_generate`` enforces with a grammar.

    Attributes:
        model_path: The folder or file the weights came from (resolved).
        max_new_tokens: Token budget of one answer.
        temperature: 0 for greedy decoding (default), else sampling with ``top_p``.
        top_p: Nucleus sampling when ``temperature > 0``.
        repetition_penalty: Logit penalty on tokens already in the answer (1.0: off).
        prefix_cache: Reuse the key/value cache of the prompt prefix shared with the previous call.
    """

    model_path: str
    max_new_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 0.9
    repetition_penalty: float = DEFAULT_REPETITION_PENALTY
    prefix_cache: bool = True

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _stats: dict[str, float] = PrivateAttr(default_factory=dict)

    @property
    def model_name(self) -> str:
        """The path the model was loaded from (run metadata)."""
        return self.model_path

    @property
    def stats(self) -> dict[str, float]:
        """Counters since loading: ``calls``, ``prompt_tokens``, ``reused_prefix_tokens``,
        ``completion_tokens``, ``constrained_calls``, ``seconds``; ``hf:`` models add ``forward_calls``,
        ``forced_tokens`` (taken from the grammar without logits) and ``drafted_tokens`` (guesses kept)."""
        return dict(self._stats)

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature,
            "top_p": self.top_p,
            "repetition_penalty": self.repetition_penalty,
        }

    def _check_structured(self) -> None:
        """Raise ``NotImplementedError`` when this backend cannot constrain its answers (default: it can)."""

    def with_structured_output(  # type: ignore[override]
        self,
        schema: dict[str, Any] | type,
        *,
        method: str = "json_schema",
        include_raw: bool = False,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, Any]:
        """Answers constrained to ``schema`` (a JSON-schema dict or a pydantic class).

        Returns ``{"raw", "parsed", "parsing_error"}`` with ``include_raw=True``, else the parsed dict.

        Raises:
            NotImplementedError: ``method`` is not ``"json_schema"``/``"json_mode"``, or the
                backend's constrained decoder is not installed.
        """
        schema_json = schema_text(schema, method, type(self).__name__)
        self._check_structured()
        return structured_chain(self, schema_json, include_raw=include_raw)


def message_role(message: BaseMessage) -> str:
    """The chat-template role of a message: ``system``, ``assistant`` or ``user``."""
    if isinstance(message, SystemMessage):
        return "system"
    if isinstance(message, AIMessage):
        return "assistant"
    return "user"


def message_text(message: BaseMessage) -> str:
    """A message's text (the text blocks of a content list joined)."""
    content = message.content
    if isinstance(content, str):
        return content
    return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content if isinstance(b, (str, dict)))


def stop_at(text: str, stop: list[str] | None) -> str:
    """``text`` cut at the first of the ``stop`` markers it holds."""
    for marker in stop or []:
        if marker and marker in text:
            text = text[: text.index(marker)]
    return text


def schema_text(schema: dict[str, Any] | type, method: str, model: str) -> str:
    """The JSON-schema text a structured-output call binds (``json_mode``: any JSON object).

    Raises:
        NotImplementedError: ``method`` is not ``json_schema``/``json_mode``, or ``schema`` is
            neither a JSON-schema dict nor a pydantic class.
    """
    if method not in ("json_schema", "json_mode"):
        raise NotImplementedError(f"{model} supports method='json_schema' only, not {method!r}")
    if isinstance(schema, dict):
        schema_dict = schema
    elif hasattr(schema, "model_json_schema"):
        schema_dict = schema.model_json_schema()
    else:
        raise NotImplementedError(f"schema must be a JSON-schema dict or a pydantic model, got {schema!r}")
    return json.dumps(schema_dict if method == "json_schema" else {"type": "object"})


def structured_chain(model: BaseChatModel, schema: str, *, include_raw: bool) -> Runnable[LanguageModelInput, Any]:
    """``model`` bound to ``schema`` and its answer parsed: ``{"raw", "parsed", "parsing_error"}``
    with ``include_raw``, else the parsed value."""

    def parse(message: Any) -> dict[str, Any]:
        try:
            return {"raw": message, "parsed": json.loads(message_text(message)), "parsing_error": None}
        except ValueError as exc:
            return {"raw": message, "parsed": None, "parsing_error": exc}

    chain = model.bind(json_schema=schema) | RunnableLambda(parse)
    if include_raw:
        return chain
    return chain | RunnableLambda(lambda out: out["parsed"])


def count_call(
    stats: dict[str, float],
    *,
    prompt: int,
    reused: int,
    completion: int,
    constrained: bool,
    seconds: float,
    **steps: int,
) -> None:
    """Add one call to a model's counters (``calls``, ``prompt_tokens``, ``reused_prefix_tokens``,
    ``completion_tokens``, ``constrained_calls``, ``seconds``, and the backend's own ``steps``, such as
    ``forward_calls``)."""
    for key, value in (("calls", 1), ("prompt_tokens", prompt), ("reused_prefix_tokens", reused),
                       ("completion_tokens", completion), ("constrained_calls", int(constrained)),
                       ("seconds", seconds), *steps.items()):
        stats[key] = stats.get(key, 0) + value
