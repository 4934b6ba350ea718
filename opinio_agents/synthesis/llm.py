"""LLM synthesizer: one highlight-chain call per query (or per entity), bounded concurrency, cache, usage.

Concurrency is LangChain's own: :meth:`LLMSynthesizer.synthesize_many` runs the
:class:`~opinio_agents.chains.highlight.HighlightChain` with ``batch_as_completed``
(``abatch_as_completed`` for the async twin) and ``max_concurrency``; every call
carries the synthesizer's run ``config`` (callbacks, tags, metadata).

``llm_calls="per-entity"`` asks the model once for all the queries of an entity
(:class:`~opinio_agents.chains.highlight_batch.EntityHighlightChain`): the system
message, task and exemplars are sent once instead of once per query, and a sentence
retrieved for several queries is sent once. Each query is validated as in the
per-query mode; a query the answer leaves out or gets wrong is then asked on its own.

Example:
    >>> from langchain_core.language_models import FakeListChatModel
    >>> from opinio_agents.models import Evidence
    >>> from opinio_agents.models import QueryEvidence
    >>> synth = LLMSynthesizer(FakeListChatModel(responses=[
    ...     '{"highlights": [{"polarity": "CONS", "text": "Wi-Fi costs extra.", "sentence_ids": ["S1"]}]}']))
    >>> [h.text for h in synth.synthesize(QueryEvidence(query="wi-fi", evidence=[
    ...     Evidence(sentence_id="1:4:2", text="Wifi is $10 a day.", sentiment=-0.2)]))]
    ['Wi-Fi costs extra.']
    >>> synth.usage.calls
    1
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config

from opinio_agents.chains.highlight import HighlightChain, HighlightResult
from opinio_agents.chains.highlight_batch import EntityHighlightChain, EntityHighlightResult
from opinio_agents.errors import ConfigError, LLMOutputError, OpinioError
from opinio_agents.llm.cache import SQLiteResponseCache, attach_cache
from opinio_agents.llm.providers import model_name_of, resolve_chat_model
from opinio_agents.llm.retry import RetryPolicy
from opinio_agents.llm.structured import StructuredMode
from opinio_agents.llm.usage import UsageMeter
from opinio_agents.models import Highlight, QueryEvidence, QueryFailure, TokenUsage
from opinio_agents.prompts.promptset import PromptSet, default_prompts
from opinio_agents.synthesis.alerts import guard_highlights
from opinio_agents.synthesis.base import LLMStatus, SynthesisOutcome, Synthesizer

__all__ = [
    "LLMSynthesizer",
    "prepare_model",
    "DEFAULT_DEADLINE",
    "DEFAULT_TIMEOUT",
    "DEFAULT_CONCURRENCY",
    "retry_policy",
    "LLM_CALLS",
    "LLMCalls",
]

#: ``llm_calls=`` values: the paper's one call per query, or one call for all the queries of an entity.
LLM_CALLS: tuple[str, ...] = ("per-query", "per-entity")
LLMCalls = Literal["per-query", "per-entity"]

#: Per-request timeout (seconds) of models built from a string.
DEFAULT_TIMEOUT = 60.0
#: Total time (seconds) one query may take: every request, backoff sleep and the repair turn.
DEFAULT_DEADLINE = 120.0
#: Queries in flight at once for a model that does not batch: a server answers them in parallel.
DEFAULT_CONCURRENCY = 4


def retry_policy(
    retry: RetryPolicy | None, max_retries: int, deadline: float | None, default_deadline: float = DEFAULT_DEADLINE
) -> RetryPolicy:
    """The policy of a synthesizer: ``retry`` as given, else one with ``max_retries``.

    ``deadline`` (when not None) replaces the policy's; without it a new policy gets
    ``default_deadline`` and a given ``retry`` keeps its own (``RetryPolicy(deadline=None)``
    means no total limit).

    Example:
        >>> retry_policy(None, 2, None).deadline, retry_policy(None, 2, 30.0).max_attempts
        (120.0, 3)
    """
    if retry is None:
        return RetryPolicy(max_retries=max_retries, deadline=default_deadline if deadline is None else deadline)
    return dataclasses.replace(retry, deadline=deadline) if deadline is not None else retry


def prepare_model(
    llm: BaseChatModel | str,
    *,
    base_url: str | None = None,
    max_tokens: int = 256,
    timeout: float = DEFAULT_TIMEOUT,
    cache_path: str | Path | None = None,
    temperature: float | None = None,
    top_p: float = 0.9,
    device: str | int = "auto",
) -> tuple[BaseChatModel, SQLiteResponseCache | None]:
    """Resolve ``llm`` (client retries off: the caller retries) and attach the SQLite cache.

    ``device`` is used by ``hf:`` models only (``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"auto"``).
    """
    if llm is None:
        raise ConfigError(
            "an LLM is required for the LLM synthesizer; pass e.g. 'openai:gpt-4o-mini' or use the "
            "extractive synthesizer"
        )
    model = resolve_chat_model(
        llm,
        base_url=base_url,
        temperature=temperature,
        top_p=top_p,
        max_tokens=max_tokens,
        timeout=timeout,
        max_retries=0,
        device=device,
    )
    if model is None:  # pragma: no cover - resolve_chat_model returns None only for None
        raise ConfigError("llm resolved to no model; pass a provider string or a BaseChatModel")
    cache = None
    if cache_path is not None:
        cache = SQLiteResponseCache(cache_path)
        model = attach_cache(model, cache)
    return model, cache


class LLMSynthesizer(Synthesizer):
    """The OpinioRAG synthesizer stage with an LLM (Sec. 4, Eq. 2).

    Args:
        llm: A LangChain chat model or a provider string (``"openai:gpt-4o-mini"``,
            ``"ollama:llama3.1"``, ...; see :func:`opinio_agents.llm.resolve_chat_model`).
            Strings are resolved with the paper's sampling defaults and with the
            client's own retries off, so that this class's retry policy is the only one.
        prompts: Prompt set; defaults to the paper's prompts for ``domain``.
        domain: Domain of the system message.
        max_concurrency: Queries in flight at once in :meth:`synthesize_many`. None:
            :data:`DEFAULT_CONCURRENCY`, or the model's ``batch_size`` when it decodes concurrent
            calls in batches (an ``hf:`` model: an entity's queries then share its forward passes).
        timeout: Per-request timeout (seconds) for models built from a string
            (CLI: ``--llm-timeout``).
        max_retries: Retries of transient errors (429, 5xx, timeouts) per call: an
            always-failing server gets ``max_retries + 1`` requests per query, and the
            failure reports exactly that as ``attempts`` (the client's own retries are off).
        deadline: Total seconds one query may take, retries, backoff and the repair turn
            included (CLI: ``--llm-deadline``). None: :data:`DEFAULT_DEADLINE`, or the
            deadline of ``retry`` when that is given (``RetryPolicy(deadline=None)`` for no
            total limit). A query past it fails with :class:`~opinio_agents.errors.LLMDeadlineError`.
        cache_path: SQLite response cache file; a re-run with the same prompts and
            settings is then free and returns the same highlights.
        max_evidence_chars: Longest evidence sentence put in a prompt.
        base_url: OpenAI-compatible server for string specs.
        structured_output: ``"auto"``, ``"native"`` or ``"parser"``.
        retry: Full retry policy (overrides ``max_retries``).
        guard: Apply the critical-complaint guard inside :meth:`synthesize` too. Off by
            default: every :class:`~opinio_agents.synthesis.summarizer.Summarizer`
            (the retrieval pipeline included) guards each query once in its
            post-processing; switch it on only to use this synthesizer on its own.
        max_tokens: Answer budget of models built from a string (paper: 256).
        device: Device of an ``hf:`` model: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``
            (the first GPU when there is one).
        config: LangChain run config given to every chain call (``callbacks``,
            ``tags``, ``metadata``, ``run_name``), e.g. a LangSmith tracer.
        llm_calls: ``"per-query"`` (the paper: one call per query) or ``"per-entity"`` (one
            call for all the queries of :meth:`synthesize_many`; CLI ``--llm-calls``). With
            ``"per-entity"``, ``deadline`` bounds the one call, and queries the answer leaves
            out or gets wrong are asked one by one afterwards.
        fallback: What :meth:`synthesize_many` shows for a query whose answer is still unusable
            after the repair turn (or fails, or is empty although there is evidence): a synthesizer
            (the façade passes its :class:`~opinio_agents.synthesis.extractive.ExtractiveSynthesizer`),
            True for a new extractive one (built on first use, with the shared encoder), or False
            (default) for a failure instead. Fallback highlights are marked
            ``origin="extractive-fallback"``; only a query without an answer from either ends as a failure.
    """

    name = "llm"

    def __init__(
        self,
        llm: BaseChatModel | str,
        *,
        prompts: PromptSet | None = None,
        domain: str = "hotels and restaurants",
        max_concurrency: int | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        deadline: float | None = None,
        cache_path: str | Path | None = None,
        max_evidence_chars: int = 600,
        base_url: str | None = None,
        structured_output: StructuredMode = "auto",
        retry: RetryPolicy | None = None,
        guard: bool = False,
        max_tokens: int = 256,
        device: str | int = "auto",
        config: RunnableConfig | None = None,
        llm_calls: LLMCalls = "per-query",
        fallback: Synthesizer | bool = False,
    ) -> None:
        super().__init__()
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigError(f"max_concurrency={max_concurrency} must be >= 1")
        if llm_calls not in LLM_CALLS:
            raise ConfigError(f"llm_calls={llm_calls!r} is not one of {', '.join(LLM_CALLS)}")
        self.llm_calls: LLMCalls = llm_calls
        self.model, self.cache = prepare_model(
            llm, base_url=base_url, max_tokens=max_tokens, timeout=timeout, cache_path=cache_path, device=device
        )
        self.model_name = model_name_of(self.model)
        if max_concurrency is None:
            batch = getattr(self.model, "batch_size", None)
            max_concurrency = max(DEFAULT_CONCURRENCY, batch if isinstance(batch, int) else 1)
        self.max_concurrency = max_concurrency
        self.guard = guard
        self.chain = HighlightChain(
            self.model,
            prompts=prompts or default_prompts(domain),
            structured_output=structured_output,
            retry=retry_policy(retry, max_retries, deadline),
            max_evidence_chars=max_evidence_chars,
        )
        self._entity_chain: EntityHighlightChain | None = None
        self._fallback: Synthesizer | bool = fallback
        self._meter = UsageMeter()
        self.config: RunnableConfig = dict(config or {})  # type: ignore[assignment]

    @property
    def entity_chain(self) -> EntityHighlightChain:
        """The per-entity chain (same model, prompts and policies as :attr:`chain`), built on first use."""
        if self._entity_chain is None:
            self._entity_chain = EntityHighlightChain(
                self.model,
                prompts=self.chain.prompts,
                structured_output=self.chain.structured_output,  # type: ignore[arg-type]
                retry=self.chain.retry,
                max_evidence_chars=self.chain.max_evidence_chars,
            )
        return self._entity_chain

    def _config(self, **extra: Any) -> RunnableConfig:
        merged: dict[str, Any] = {**ensure_config(self.config), **extra}
        return merged  # type: ignore[return-value]

    @property
    def usage(self) -> TokenUsage:  # type: ignore[override]
        """Tokens and calls so far (all threads)."""
        return self._meter.snapshot()

    @usage.setter
    def usage(self, value: TokenUsage) -> None:
        # Synthesizer.__init__ assigns a fresh TokenUsage; keep the meter in sync.
        meter = getattr(self, "_meter", None) or UsageMeter()
        meter.reset()
        meter.add(value)
        self._meter = meter

    def _finish(self, item: QueryEvidence, result: HighlightResult) -> list[Highlight]:
        self._meter.add(result.usage)
        highlights = [h.model_copy(update={"origin": "llm"}) for h in result.highlights]
        if self.guard:
            highlights = guard_highlights(item, highlights)
        return highlights

    def synthesize(self, item: QueryEvidence) -> list[Highlight]:
        """Highlights for one query (empty without evidence; no model call then).

        Raises:
            LLMError: The model failed after its retries.
            LLMOutputError: The answer could not be parsed or validated after one repair.
        """
        try:
            result = self.chain.invoke(item, self._config())
        except OpinioError as exc:
            self._record_failed(exc)
            raise
        return self._finish(item, result)

    def _record_failed(self, exc: Exception) -> None:
        spent = getattr(exc, "usage", None)
        if isinstance(spent, TokenUsage):
            self._meter.add(spent)

    async def asynthesize(self, item: QueryEvidence) -> list[Highlight]:
        """Async twin of :meth:`synthesize`."""
        try:
            result = await self.chain.ainvoke(item, self._config())
        except OpinioError as exc:
            self._record_failed(exc)
            raise
        return self._finish(item, result)

    def fallback(self, item: QueryEvidence) -> list[Highlight]:
        """The extractive highlights of ``item`` (or the configured fallback's), marked
        ``origin="extractive-fallback"``; empty without evidence or with ``fallback=False``."""
        if self._fallback is False or not item.evidence:
            return []
        if self._fallback is True:
            from opinio_agents.synthesis.extractive import ExtractiveSynthesizer

            self._fallback = ExtractiveSynthesizer()
        assert isinstance(self._fallback, Synthesizer)
        try:
            highlights = self._fallback.synthesize(item)
        except OpinioError:
            return []
        return [h.model_copy(update={"origin": "extractive-fallback"}) for h in highlights]

    def _failure(self, item: QueryEvidence, exc: Exception) -> SynthesisOutcome:
        attempts = getattr(exc, "attempts", None)
        if attempts is None:
            attempts = 1
        # Never a long quote of model output, never prompt text (the message is already built
        # from redacted parts; this is the last check before it reaches a report).
        error = self.chain.redactor.clean(str(exc), 600)
        shown = self.fallback(item)
        if shown:
            why = self.chain.redactor.clean(str(exc), 200)
            note = f"extractive fallback: the model's answer could not be used ({why})"
            for highlight in shown:
                highlight.notes.append(note)
            return SynthesisOutcome(item=item, highlights=shown, llm="fallback")
        failure = QueryFailure(query=item.query, error=error, attempts=attempts)
        return SynthesisOutcome(item=item, failure=failure, llm="failed")

    def _outcome(self, item: QueryEvidence, result: HighlightResult | Exception) -> SynthesisOutcome:
        if isinstance(result, Exception):
            self._record_failed(result)
            return self._failure(item, result)
        try:
            highlights = self._finish(item, result)
        except Exception as exc:  # the guard must not sink the other queries either
            return self._failure(item, exc)
        status: LLMStatus = "repaired" if result.repaired else "answered"
        if not highlights and item.evidence:  # evidence, but the model wrote nothing: never nothing
            shown = self.fallback(item)
            if shown:
                for highlight in shown:
                    highlight.notes.append("extractive fallback: the model wrote no highlight for this evidence")
                return SynthesisOutcome(item=item, highlights=shown, llm="fallback")
        if not item.evidence:
            status = "failed"
        return SynthesisOutcome(item=item, highlights=highlights, llm=status)

    def synthesize_many(self, items: Sequence[QueryEvidence]) -> Iterator[SynthesisOutcome]:
        """Yield one outcome per query in completion order, ``max_concurrency`` at a time.

        Runs the chain's ``batch_as_completed``. A query that fails (after retries and
        one repair) yields an outcome with ``failure`` set; the other queries are
        unaffected. With ``llm_calls="per-entity"`` the queries go in one call first
        (outcomes then in query order), and only those it does not answer are asked alone.
        """
        items = list(items)
        if not items:
            return
        rest = items
        if self.llm_calls == "per-entity" and len(items) > 1:
            try:
                batch = self.entity_chain.invoke(items, self._config())
            except LLMOutputError as exc:  # an unusable answer, even after the repair: ask each query alone
                self._record_failed(exc)
            except OpinioError as exc:  # the model failed (after its retries): every query fails with it
                self._record_failed(exc)
                for item in items:
                    yield self._failure(item, exc)
                return
            else:
                yield from self._batch_outcomes(items, batch)
                rest = [item for item in items if item.query not in batch.results]
        if not rest:
            return
        config = self._config(max_concurrency=self.max_concurrency)
        for index, result in self.chain.batch_as_completed(rest, config, return_exceptions=True):
            yield self._outcome(rest[index], result)

    def _batch_outcomes(self, items: list[QueryEvidence], batch: EntityHighlightResult) -> Iterator[SynthesisOutcome]:
        self._meter.add(batch.usage)  # the one call's tokens (each query's own result carries none)
        for item in items:
            answered = batch.results.get(item.query)
            if answered is not None:
                yield self._outcome(item, answered)

    async def asynthesize_many(self, items: Sequence[QueryEvidence]) -> AsyncIterator[SynthesisOutcome]:
        """Async twin of :meth:`synthesize_many` (the chain's ``abatch_as_completed``)."""
        items = list(items)
        if not items:
            return
        rest = items
        if self.llm_calls == "per-entity" and len(items) > 1:
            try:
                batch = await self.entity_chain.ainvoke(items, self._config())
            except LLMOutputError as exc:
                self._record_failed(exc)
            except OpinioError as exc:
                self._record_failed(exc)
                for item in items:
                    yield self._failure(item, exc)
                return
            else:
                for outcome in self._batch_outcomes(items, batch):
                    yield outcome
                rest = [item for item in items if item.query not in batch.results]
        if not rest:
            return
        config = self._config(max_concurrency=self.max_concurrency)
        async for index, result in self.chain.abatch_as_completed(rest, config, return_exceptions=True):
            yield self._outcome(rest[index], result)
