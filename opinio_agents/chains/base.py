"""What every chat chain of the package shares: settings, the Runnable entry points and one call path.

A chain here turns one input into chat messages, asks its model through the one
structured-output layer (:class:`~opinio_agents.llm.structured.StructuredChat`:
native JSON schema or the text fallback, one repair turn, retries) and turns the
validated answer into its result. :class:`StructuredChatChain` holds the parts
that do not depend on the task: the common settings and their checks
(:meth:`StructuredChatChain.settings`), ``invoke``/``ainvoke`` through
LangChain's run machinery (callbacks, tags and traces see the chain run and the
model calls inside it), and the sync and async call of the model. A subclass
says only what its task is, in :meth:`StructuredChatChain._plan`: the messages
(or ``None`` when the answer needs no model), how to validate the model's
output, and how to build the result.

Example:
    >>> from langchain_core.language_models import FakeListChatModel
    >>> StructuredChatChain.settings(
    ...     FakeListChatModel(responses=["{}"]), prompts=None, domain="hotels", structured_output="auto",
    ...     retry=None, counter=None, max_text_chars=10)
    Traceback (most recent call last):
    ...
    opinio_agents.errors.ConfigError: max_text_chars=10 must be >= 20
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, RunnableSerializable
from langchain_core.runnables.config import patch_config
from pydantic import ConfigDict, PrivateAttr

from opinio_agents.errors import ConfigError
from opinio_agents.llm.retry import RetryPolicy
from opinio_agents.llm.structured import StructuredChat, StructuredMode, StructuredResult, check_mode
from opinio_agents.llm.tokens import TokenCounter
from opinio_agents.prompts.promptset import PromptSet, default_prompts

__all__ = ["ChainPlan", "StructuredChatChain", "MIN_CHARS"]

InputT = TypeVar("InputT")
OutputT = TypeVar("OutputT")

#: The smallest character limit a chain accepts (a highlight or one evidence sentence).
MIN_CHARS = 20


@dataclass
class ChainPlan(Generic[OutputT]):
    """What one call of a chain does, as its subclass decides from the input.

    Attributes:
        messages: The chat messages to send; ``None`` when the result needs no model call.
        validate: Turns the parsed model output into the value ``finish`` reads; raises
            :class:`~opinio_agents.llm.structured.OutputInvalid` to ask the model to repair it.
        finish: Builds the chain's result from the structured result (``None`` when no model was called).
        schema: The output schema narrowed for this call (native mode), e.g. the prompt's evidence
            labels as an ``enum``, so constrained decoding cannot cite a sentence that is not there.
    """

    messages: list[BaseMessage] | None
    validate: Callable[[Any], Any]
    finish: Callable[[StructuredResult[Any] | None], OutputT]
    schema: dict[str, Any] | None = None


class StructuredChatChain(RunnableSerializable[InputT, OutputT]):
    """Base of the package's chat chains (see the module docstring).

    Subclasses set ``_structured`` when they bind their prompt and implement :meth:`_plan`.

    Attributes:
        model: A LangChain chat model.
        prompts: The prompt set (system message and task prompts).
        structured_output: ``"auto"`` (native when available), ``"native"`` or ``"parser"``.
        retry: Retry policy for transient errors (429, 5xx, timeouts).
        max_text_chars: Upper bound on the text of one generated key point.
        counter: Token estimator for responses without usage metadata.
    """

    model: BaseChatModel
    prompts: Any
    structured_output: str = "auto"
    retry: Any = None
    max_text_chars: int = 300
    counter: Any = None

    model_config = ConfigDict(arbitrary_types_allowed=True)

    _structured: StructuredChat = PrivateAttr()

    @staticmethod
    def settings(
        model: BaseChatModel,
        *,
        prompts: PromptSet | None,
        domain: str,
        structured_output: StructuredMode,
        retry: RetryPolicy | None,
        counter: TokenCounter | None,
        **limits: int,
    ) -> dict[str, Any]:
        """The checked field values of a chain (``limits``: character bounds such as ``max_text_chars``).

        Raises:
            ConfigError: ``model`` is not a LangChain chat model, ``structured_output`` is unknown,
                or a limit is below :data:`MIN_CHARS`.
        """
        if not isinstance(model, BaseChatModel):
            raise ConfigError(
                f"model must be a LangChain BaseChatModel, got {type(model).__name__}; "
                "use opinio_agents.llm.resolve_chat_model() to build one from a string"
            )
        for name, value in limits.items():
            if value < MIN_CHARS:
                raise ConfigError(f"{name}={value} must be >= {MIN_CHARS}")
        return {
            "model": model,
            "prompts": prompts or default_prompts(domain),
            "structured_output": check_mode(structured_output),
            "retry": retry,
            "counter": counter,
            **limits,
        }

    @property
    def structured(self) -> StructuredChat:
        """The structured-output caller (one per chain)."""
        return self._structured

    @property
    def mode(self) -> str:
        """``"native"`` or ``"parser"`` (may turn to parser after a 400 from the server)."""
        return self._structured.active_mode

    def _plan(self, value: Any) -> ChainPlan[OutputT]:
        """The messages, validation and result of one call for ``value`` (checks the input)."""
        raise NotImplementedError

    def _run(self, value: Any, run_manager: CallbackManagerForChainRun, config: RunnableConfig) -> OutputT:
        plan = self._plan(value)
        if plan.messages is None:
            return plan.finish(None)
        child = patch_config(config, callbacks=run_manager.get_child())
        return plan.finish(self._structured.call(plan.messages, child, validate=plan.validate, schema=plan.schema))

    async def _arun(
        self, value: Any, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> OutputT:
        plan = self._plan(value)
        if plan.messages is None:
            return plan.finish(None)
        child = patch_config(config, callbacks=run_manager.get_child())
        return plan.finish(
            await self._structured.acall(plan.messages, child, validate=plan.validate, schema=plan.schema)
        )

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> OutputT:
        """Run the chain on one input (no model call when the input needs none)."""
        return self._call_with_config(self._run, input, config, run_type="chain")

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> OutputT:
        """Async twin of :meth:`invoke` (uses the model's native ``ainvoke``)."""
        return await self._acall_with_config(self._arun, input, config, run_type="chain")
