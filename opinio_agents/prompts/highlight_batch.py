"""The one-call-per-entity highlight prompt: every query of an entity in one prompt.

The paper asks the model once per query (:mod:`opinio_agents.prompts.highlight`).
This prompt asks once per entity: one evidence block holding each retrieved
sentence once (labels ``S1``, ``S2``, ... over the whole block, so a sentence found
by two queries is sent once), then the queries, each with the labels of its own
evidence, and the answer is structured by query (:class:`HighlightBatchOutput`:
one entry per query id ``Q1``, ``Q2``, ...). The task text, style guide and
exemplars are paid once per entity instead of once per query. As in the per-query
prompt, all static text comes first (system turn and example) and the entity's
queries and evidence come last.

Example:
    >>> from opinio_agents.prompts.highlight import EvidenceItem
    >>> value = HighlightBatchInput(entity_name="Harbor Inn",
    ...     evidence=[EvidenceItem(id="S1", text="Wi-fi was fast.")],
    ...     queries=[BatchQuery(id="Q1", query="wi-fi", evidence_ids=["S1"])])
    >>> text = HIGHLIGHT_BATCH_PROMPT.render_user(value)
    >>> '{"id": "Q1", "query": "wi-fi", "evidence": ["S1"]}' in text
    True
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from opinio_agents.prompts.contracts import FewShotExample, PromptTemplate, load_examples, quote_untrusted
from opinio_agents.prompts.highlight import EvidenceItem, HighlightDraft

__all__ = [
    "BatchQuery",
    "HighlightBatchInput",
    "QueryHighlights",
    "HighlightBatchOutput",
    "HIGHLIGHT_BATCH_TASK",
    "HIGHLIGHT_BATCH_INSTRUCTION",
    "HIGHLIGHT_BATCH_EXAMPLES",
    "HIGHLIGHT_BATCH_PROMPT",
    "render_highlight_batch_fields",
]


class BatchQuery(BaseModel):
    """One query of the entity: its id, its text and the labels of its evidence sentences."""

    id: str
    query: str
    evidence_ids: list[str] = Field(default_factory=list)


class HighlightBatchInput(BaseModel):
    """What the per-entity prompt is filled with."""

    entity_name: str = ""
    evidence: list[EvidenceItem] = Field(default_factory=list)
    queries: list[BatchQuery] = Field(default_factory=list)
    max_evidence_chars: int = 600


class QueryHighlights(BaseModel):
    """The highlights of one query, keyed by its id."""

    query_id: str = Field(
        description="The id of the query (Q1, Q2, ...) exactly as listed.", json_schema_extra={"maxLength": 8}
    )
    highlights: list[HighlightDraft] = Field(
        description="Empty when none of the query's evidence is about it; at most one PROS and one CONS.",
        json_schema_extra={"maxItems": 2},
    )


class HighlightBatchOutput(BaseModel):
    """The model's answer: one entry per listed query."""

    results: list[QueryHighlights] = Field(
        description="One entry per query id, in the order listed.", json_schema_extra={"maxItems": 32}
    )


#: The task, the same for every entity: in the system turn, part of the cached prefix.
HIGHLIGHT_BATCH_TASK = """Task: write the opinion highlights for each user query listed in the last message about the entity named there, using only the retrieved review sentences in that message's evidence block as your source. Each query lists the labels of its own evidence sentences.

Instructions:
1. For each query, decide from its evidence whether reviewers are mostly positive (PROS) or negative (CONS) about it. Only when the reviews genuinely split, give one PROS and one CONS highlight for that query.
2. Write each highlight as one concise key-point phrase of at most 20 words, in the style of the examples: no first person, no quotes, no hedging, no praise or blame the evidence does not state.
3. Serious problems (safety, hygiene, bed bugs, food poisoning, theft, harassment, discrimination) reported in the evidence go into a CONS highlight; never soften them.
4. In "sentence_ids" list the labels of the evidence sentences that support each highlight; use only labels listed for that query.
5. If none of a query's evidence sentences is about it, give that query an empty "highlights" list.
6. Answer every query, once, by its id. Output JSON only, in exactly this format:
{"results": [{"query_id": "Q1", "highlights": [{"polarity": "PROS" or "CONS", "text": "...", "sentence_ids": ["S1", "..."]}]}]}"""

#: The per-entity part: entity, evidence block, queries.
HIGHLIGHT_BATCH_INSTRUCTION = """Entity: {entity}
<evidence>
{evidence}
</evidence>
<queries>
{queries}
</queries>"""


def render_highlight_batch_fields(value: HighlightBatchInput) -> dict[str, Any]:
    """Format fields of :data:`HIGHLIGHT_BATCH_INSTRUCTION`; review text and queries are quoted."""
    evidence = [
        f'{{"id": {quote_untrusted(item.id, 40)}, "text": {quote_untrusted(item.text, value.max_evidence_chars)}}}'
        for item in value.evidence
    ]
    queries = [
        f'{{"id": {quote_untrusted(q.id, 40)}, "query": {quote_untrusted(q.query, 200)}, '
        f'"evidence": [{", ".join(quote_untrusted(label, 40) for label in q.evidence_ids)}]}}'
        for q in value.queries
    ]
    return {
        "entity": quote_untrusted(value.entity_name, 200) if value.entity_name else "the entity",
        "evidence": "\n".join(evidence) if evidence else "(no evidence)",
        "queries": "\n".join(queries) if queries else "(no queries)",
    }


#: The few-shot demonstrations, from the package's examples data file (:func:`~opinio_agents.prompts.contracts.load_examples`).
HIGHLIGHT_BATCH_EXAMPLES: tuple[FewShotExample[HighlightBatchInput, HighlightBatchOutput], ...] = load_examples("highlight_batch", HighlightBatchInput, HighlightBatchOutput)

HIGHLIGHT_BATCH_PROMPT: PromptTemplate[HighlightBatchInput, HighlightBatchOutput] = PromptTemplate(
    name="highlight_batch",
    input_model=HighlightBatchInput,
    output_model=HighlightBatchOutput,
    instruction=HIGHLIGHT_BATCH_INSTRUCTION,
    render_fields=render_highlight_batch_fields,
    examples=HIGHLIGHT_BATCH_EXAMPLES,
    static_instruction=HIGHLIGHT_BATCH_TASK,
)
