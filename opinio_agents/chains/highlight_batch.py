"""The per-entity highlight chain: every query of an entity in one model call.

:class:`EntityHighlightChain` takes the :class:`~opinio_agents.models.QueryEvidence`
of all the queries of one entity and asks the model once with
:data:`~opinio_agents.prompts.highlight_batch.HIGHLIGHT_BATCH_PROMPT`: one evidence
block (each retrieved sentence once, even when several queries found it), the
queries with the labels of their own evidence, an answer keyed by query id. Each
query's highlights are then validated exactly like the per-query chain's
(:class:`~opinio_agents.chains.highlight.HighlightChain`): cited labels must be among
that query's evidence, at most one PROS and one CONS, no prompt leak, polarity
cross-checked with the cited sentences' sentiment; instruction-like evidence is kept
out of the prompt the same way.

A query the answer leaves out, or answers with something unusable, is not failed:
it is listed in :attr:`EntityHighlightResult.unanswered` so that the caller can ask
it on its own (:class:`~opinio_agents.synthesis.llm.LLMSynthesizer` does). When
no query at all can be used, the structured-output layer asks for one repair.

Example:
    >>> from langchain_core.language_models import FakeListChatModel
    >>> from opinio_agents.models import Evidence, QueryEvidence
    >>> model = FakeListChatModel(responses=['{"results": [{"query_id": "Q1", "highlights": '
    ...     '[{"polarity": "CONS", "text": "Slow wi-fi.", "sentence_ids": ["S1"]}]}, '
    ...     '{"query_id": "Q2", "highlights": []}]}'])
    >>> chain = EntityHighlightChain(model)
    >>> result = chain.invoke([
    ...     QueryEvidence(query="wi-fi", evidence=[Evidence(sentence_id="1:2:0", text="Wifi was slow.")]),
    ...     QueryEvidence(query="pool", evidence=[Evidence(sentence_id="1:3:0", text="We had dinner.")])])
    >>> [h.text for h in result.results["wi-fi"].highlights], result.results["pool"].highlights, result.calls
    (['Slow wi-fi.'], [], 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel, Field, PrivateAttr

from opinio_agents.chains.base import ChainPlan, StructuredChatChain
from opinio_agents.chains.highlight import HighlightChain, HighlightResult, _coerce_item, _Context, label_for
from opinio_agents.errors import ConfigError
from opinio_agents.llm.retry import RetryPolicy
from opinio_agents.llm.structured import OutputInvalid, StructuredChat, StructuredMode, StructuredResult
from opinio_agents.llm.tokens import TokenCounter
from opinio_agents.models import QueryEvidence, TokenUsage
from opinio_agents.prompts.highlight import EvidenceItem, HighlightOutput, at_least_one, cited_labels_schema
from opinio_agents.prompts.highlight_batch import BatchQuery, HighlightBatchOutput
from opinio_agents.prompts.promptset import PromptSet

__all__ = ["EntityHighlightChain", "EntityHighlightResult", "BATCH_REPAIR_INSTRUCTION"]

#: The repair turn of the per-entity chain.
BATCH_REPAIR_INSTRUCTION = (
    "Your previous answer could not be used: {error}\n"
    "Answer again with JSON only, in exactly the requested format: one entry per query id, citing only "
    "labels listed for that query. Do not add any other text."
)


class EntityHighlightResult(BaseModel):
    """What the per-entity chain returns for the queries of one entity."""

    results: dict[str, HighlightResult] = Field(default_factory=dict, description="Usable answers, by query.")
    unanswered: dict[str, str] = Field(
        default_factory=dict, description="Queries the answer left out or got wrong (query -> why): ask them alone."
    )
    calls: int = 0
    attempts: int = 0
    repaired: bool = False
    mode: str = "parser"
    usage: TokenUsage = Field(default_factory=TokenUsage)
    raw_output: str = ""


class _Batch:
    """Per-call state: the screened queries, their contexts and what the model must answer."""

    def __init__(self, items: list[QueryEvidence]) -> None:
        self.items = items
        self.contexts: dict[str, _Context] = {}
        self.ids: dict[str, str] = {}  # query id -> query
        self.withheld: dict[str, dict[str, list[str]]] = {}
        self.empty: list[str] = []  # queries with no evidence left: answered without the model
        self.evidence: list[EvidenceItem] = []
        self.queries: list[BatchQuery] = []


class EntityHighlightChain(StructuredChatChain[Any, EntityHighlightResult]):
    """(the queries of one entity, each with its evidence) -> :class:`EntityHighlightResult`, in one call.

    Args:
        model: A LangChain chat model.
        prompts: Prompt set (system message, ``highlight_batch`` prompt); the paper's by default.
        domain: Domain of the default system message.
        structured_output: ``"auto"``, ``"native"`` or ``"parser"``.
        retry: Retry policy for transient errors.
        max_text_chars: Upper bound on a highlight's text.
        max_evidence_chars: Upper bound on one evidence sentence in the prompt.
        counter: Token estimator for responses without usage metadata.
        screen_injection: Keep instruction-like evidence sentences out of the prompt.
    """

    max_evidence_chars: int = 600
    screen_injection: bool = True

    _single: HighlightChain = PrivateAttr()

    def __init__(
        self,
        model: BaseChatModel,
        *,
        prompts: PromptSet | None = None,
        domain: str = "hotels and restaurants",
        structured_output: StructuredMode = "auto",
        retry: RetryPolicy | None = None,
        max_text_chars: int = 300,
        max_evidence_chars: int = 600,
        counter: TokenCounter | None = None,
        screen_injection: bool = True,
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
            max_evidence_chars=max_evidence_chars,
        )
        fields["screen_injection"] = screen_injection
        super().__init__(**fields, **kwargs)
        # The per-query chain holds the validation, screening and redaction rules; both modes share them.
        self._single = HighlightChain(
            model,
            prompts=self.prompts,
            structured_output=structured_output,
            retry=retry,
            max_text_chars=max_text_chars,
            max_evidence_chars=max_evidence_chars,
            counter=counter,
            screen_injection=screen_injection,
        )
        batch = self.prompts.highlight_batch
        full_system = batch.system_text(self.prompts.system.render())
        self._structured = StructuredChat(
            model,
            batch.output_model,
            mode=self.structured_output,
            retry=retry,
            counter=counter,
            repair_instruction=BATCH_REPAIR_INSTRUCTION,
            what="highlights of an entity",
            protected=(full_system, self._single.system_text, batch.static_instruction),
        )

    @property
    def per_query(self) -> HighlightChain:
        """The per-query chain with the same settings (validation rules; the fallback for unanswered queries)."""
        return self._single

    @property
    def system_text(self) -> str:
        """The system turn as sent: the system message, then the per-entity task."""
        return self.prompts.highlight_batch.system_text(self.prompts.system.render())

    # -- prompt ----------------------------------------------------------------------------------------
    def _batch(self, value: Any) -> _Batch:
        if isinstance(value, (QueryEvidence, dict)) or not isinstance(value, Sequence):
            raise ConfigError(
                "the per-entity chain takes a list of QueryEvidence (or dicts with 'query' and 'evidence'), "
                f"one per query of the entity; got {type(value).__name__}"
            )
        items = [_coerce_item(v) for v in value]
        seen: set[str] = set()
        for item in items:
            if not item.query.strip():
                raise ConfigError("query must not be empty")
            if item.query in seen:
                raise ConfigError(f"query {item.query!r} is given twice; pass each query of the entity once")
            seen.add(item.query)
        batch = _Batch(items)
        labels: dict[str, str] = {}  # sentence id -> label, over the whole entity
        for item in items:
            screened, withheld = self._single.screen(item)
            batch.withheld[item.query] = withheld
            if not screened.evidence:
                batch.empty.append(item.query)
                batch.contexts[item.query] = _Context(screened)
                continue
            own: list[str] = []
            for ev in screened.evidence:
                if ev.sentence_id not in labels:
                    labels[ev.sentence_id] = label_for(len(labels))
                    batch.evidence.append(EvidenceItem(id=labels[ev.sentence_id], text=ev.text))
                own.append(labels[ev.sentence_id])
            query_id = f"Q{len(batch.queries) + 1}"
            batch.ids[query_id] = item.query
            batch.queries.append(BatchQuery(id=query_id, query=item.query, evidence_ids=own))
            batch.contexts[item.query] = _Context(screened, labels=own)
        return batch

    def build_messages(self, items: Sequence[QueryEvidence]) -> list[BaseMessage]:
        """The chat messages sent for the queries of one entity (those with evidence left)."""
        return self._messages(self._batch(list(items)))

    def _messages(self, batch: _Batch) -> list[BaseMessage]:
        entity = next((item.entity_name for item in batch.items if item.entity_name), "")
        prompt_input = self.prompts.highlight_batch.input_model(
            entity_name=entity,
            evidence=batch.evidence,
            queries=batch.queries,
            max_evidence_chars=self.max_evidence_chars,
        )
        return self.prompts.highlight_batch.build_messages(self.prompts.system.render(), prompt_input)

    # -- validation ------------------------------------------------------------------------------------
    def _validate(
        self, batch: _Batch, output: HighlightBatchOutput
    ) -> tuple[dict[str, HighlightResult], dict[str, str]]:
        results: dict[str, HighlightResult] = {}
        unanswered: dict[str, str] = {}
        for entry in output.results:
            query = batch.ids.get(str(entry.query_id).strip().upper())
            if query is None or query in results:
                continue  # an unknown or repeated id: ignored (the listed ids are answered below or asked again)
            ctx = batch.contexts[query]
            ctx.rejected = []
            try:
                highlights = self._single._validate(ctx, HighlightOutput(highlights=entry.highlights))
            except OutputInvalid as exc:
                unanswered[query] = str(exc)
                continue
            results[query] = HighlightResult(
                query=query,
                highlights=highlights,
                rejected_ids=list(ctx.rejected),
                withheld=batch.withheld[query],
                mode=self.mode,
            )
        for query in batch.ids.values():
            if query not in results and query not in unanswered:
                unanswered[query] = "the answer has no entry for this query"
        if batch.ids and not results:
            reasons = "; ".join(f"{q!r}: {why}" for q, why in list(unanswered.items())[:3])
            raise OutputInvalid(f"no query could be used ({reasons})")
        return results, unanswered

    def _finish(self, batch: _Batch, result: StructuredResult[Any] | None) -> EntityHighlightResult:
        out = EntityHighlightResult(mode=self.mode)
        for query in batch.empty:
            out.results[query] = HighlightResult(
                query=query, attempts=0, mode=self.mode, withheld=batch.withheld[query]
            )
        if result is not None:
            answered, unanswered = result.value
            out.results.update(answered)
            out.unanswered = unanswered
            out.calls, out.attempts, out.repaired = 1, result.attempts, result.repaired
            out.mode, out.usage, out.raw_output = result.mode, result.usage, result.raw_output[:8000]
            for item in answered.values():
                item.attempts, item.repaired, item.mode = result.attempts, result.repaired, result.mode
        ordered = {i.query: out.results[i.query] for i in batch.items if i.query in out.results}
        out.results = ordered
        return out

    def _plan(self, value: Any) -> ChainPlan[EntityHighlightResult]:
        batch = self._batch(value)
        schema = None
        if batch.queries and batch.evidence:
            # Constrained decoding (native mode) may then write only listed query ids and evidence labels.
            labels = [e.id for e in batch.evidence]
            schema = cited_labels_schema(self._structured.output_model.model_json_schema(), labels)
            entry = schema.get("$defs", {}).get("QueryHighlights", {}).get("properties", {}).get("query_id")
            if isinstance(entry, dict):
                entry["enum"] = list(batch.ids)
            results = schema.get("properties", {}).get("results")
            if isinstance(results, dict):
                results["maxItems"] = results["minItems"] = len(batch.queries)
            at_least_one(schema.get("$defs", {}).get("QueryHighlights", {}), "highlights")
        return ChainPlan(
            self._messages(batch) if batch.queries else None,
            validate=lambda out: self._validate(batch, out),
            finish=lambda result: self._finish(batch, result),
            schema=schema,
        )
