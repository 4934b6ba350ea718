"""The per-query highlight prompt (OpinioRAG Sec. 4, Eq. 2 and Figure 5).

``Highlight(Q) = LLM(Q, S_Q, C, E, P)``: the query ``Q``, its top-K evidence
sentences ``S_Q`` (delimited, each with a short label ``S1``, ``S2``, ...), the
style guidelines ``C`` and exemplars ``E`` (in the system message) and the
instruction ``P`` (:data:`HIGHLIGHT_TASK`, also in the system turn). Only the last
turn (:data:`HIGHLIGHT_INSTRUCTION`: entity, query, evidence) differs between
queries, so every call of an entity's run starts with the same cached prefix. The
model answers with :class:`HighlightOutput` JSON.

Example:
    >>> from opinio_agents.prompts.highlight import HIGHLIGHT_PROMPT, HighlightInput, EvidenceItem
    >>> text = HIGHLIGHT_PROMPT.render_user(HighlightInput(
    ...     query="wi-fi", evidence=[EvidenceItem(id="S1", text="Wi-fi was fast.")]))
    >>> '{"id": "S1", "text": "Wi-fi was fast."}' in text
    True
"""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, Field, field_validator

from opinio_agents.kinds import DraftPolarity
from opinio_agents.prompts.contracts import FewShotExample, PromptTemplate, load_examples, quote_untrusted

__all__ = [
    "EvidenceItem",
    "HighlightInput",
    "HighlightDraft",
    "HighlightOutput",
    "HIGHLIGHT_INSTRUCTION",
    "HIGHLIGHT_TASK",
    "HIGHLIGHT_EXAMPLES",
    "HIGHLIGHT_PROMPT",
    "render_highlight_fields",
    "MAX_HIGHLIGHT_CHARS",
    "MAX_CITED",
    "cited_labels_schema",
    "at_least_one",
]

#: Bound of a highlight's text in the answer schema (about 25 words): constrained decoding stops there.
MAX_HIGHLIGHT_CHARS = 160
#: Most sentence labels one highlight may cite in the answer schema.
MAX_CITED = 4


class EvidenceItem(BaseModel):
    """One evidence sentence as shown to the model: a short label and the text."""

    id: str
    text: str


class HighlightInput(BaseModel):
    """What the highlight prompt is filled with."""

    query: str
    entity_name: str = ""
    evidence: list[EvidenceItem] = Field(default_factory=list)
    max_evidence_chars: int = 600


class HighlightDraft(BaseModel):
    """One highlight as the model writes it."""

    polarity: DraftPolarity = Field(
        description="PROS if the evidence praises the query, CONS if it criticises it."
    )
    text: str = Field(
        description="One concise key-point phrase, at most about 20 words.",
        json_schema_extra={"minLength": 1, "maxLength": MAX_HIGHLIGHT_CHARS},
    )
    sentence_ids: list[str] = Field(
        description="Labels (S1, S2, ...) of the evidence sentences that support the text.",
        json_schema_extra={"minItems": 1, "maxItems": MAX_CITED},
    )

    @field_validator("polarity", mode="before")
    @classmethod
    def _normalise_polarity(cls, value: Any) -> Any:
        """Accept 'pros', 'Pro', 'cons', 'CON' ... as models often vary the case or number."""
        if isinstance(value, str):
            word = value.strip().upper()
            return {"PRO": "PROS", "CON": "CONS"}.get(word, word)
        return value


class HighlightOutput(BaseModel):
    """The model's answer: zero to two highlights (one PROS and/or one CONS)."""

    highlights: list[HighlightDraft] = Field(
        description="Empty when no evidence sentence is about the query; at most one PROS and one CONS.",
        json_schema_extra={"maxItems": 2},
    )


def cited_labels_schema(schema: dict[str, Any], labels: list[str]) -> dict[str, Any]:
    """``schema`` (an answer schema with a ``sentence_ids`` array anywhere in it) with its labels
    narrowed to ``labels`` (an ``enum``): constrained decoding then cites only sentences of the prompt.

    Example:
        >>> narrowed = cited_labels_schema(HighlightOutput.model_json_schema(), ["S1", "S2"])
        >>> narrowed["$defs"]["HighlightDraft"]["properties"]["sentence_ids"]["items"]
        {'enum': ['S1', 'S2'], 'type': 'string'}
    """
    out = copy.deepcopy(schema)

    def visit(node: Any) -> None:
        if isinstance(node, dict):
            ids = node.get("properties", {}).get("sentence_ids") if isinstance(node.get("properties"), dict) else None
            if isinstance(ids, dict) and ids.get("type") == "array":
                ids["items"] = {"enum": list(labels), "type": "string"}
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)

    visit(out)
    return out


def at_least_one(schema: dict[str, Any], field: str) -> dict[str, Any]:
    """Require at least one item in the array property ``field`` of ``schema`` (in place; returned).

    For constrained decoding over real evidence: a small model under a grammar that admits ``[]``
    answers ``[]`` for most queries (SmolLM2-135M did for 3 of 4 on the sample), which only sends
    the query to the extractive fallback. Made to write a highlight, it is verified against its
    evidence like any other, and replaced by the fallback when contradicted. The pydantic model
    keeps admitting ``[]`` for unconstrained models, as the prompt allows.

    Example:
        >>> at_least_one(HighlightOutput.model_json_schema(), "highlights")["properties"]["highlights"]["minItems"]
        1
    """
    prop = schema.get("properties", {}).get(field)
    if isinstance(prop, dict) and prop.get("type") == "array":
        prop["minItems"] = max(1, int(prop.get("minItems", 0)))
    return schema


#: The task, the same for every query: sent in the system turn, so that it is part of the cached prefix.
HIGHLIGHT_TASK = """Task: write the opinion highlight for the user query about the entity named in the last message, using only the retrieved review sentences in that message's evidence block as your source.

Instructions:
1. Decide from the evidence whether reviewers are mostly positive (PROS) or negative (CONS) about the query. Only when the reviews genuinely split, give one PROS and one CONS highlight.
2. Write each highlight as one concise key-point phrase of at most 20 words, in the style of the examples: no first person, no quotes, no hedging, no praise or blame the evidence does not state.
3. Serious problems (safety, hygiene, bed bugs, food poisoning, theft, harassment, discrimination) reported in the evidence go into a CONS highlight; never soften them.
4. In "sentence_ids" list the labels (S1, S2, ...) of the evidence sentences that support each highlight; use only labels present in the evidence block.
5. If no evidence sentence is about the query, answer {"highlights": []}.
6. Output JSON only, in exactly this format:
{"highlights": [{"polarity": "PROS" or "CONS", "text": "...", "sentence_ids": ["S1", "..."]}]}"""

#: The per-query part: entity, query and evidence, after every static byte of the prompt.
HIGHLIGHT_INSTRUCTION = """Entity: {entity}
Query: {query}
<evidence>
{evidence}
</evidence>"""


def render_highlight_fields(value: HighlightInput) -> dict[str, Any]:
    """Format fields of :data:`HIGHLIGHT_INSTRUCTION`; review text goes through :func:`quote_untrusted`."""
    lines = [
        f'{{"id": {quote_untrusted(item.id, 40)}, "text": {quote_untrusted(item.text, value.max_evidence_chars)}}}'
        for item in value.evidence
    ]
    return {
        "query": quote_untrusted(value.query, 200),
        "entity": quote_untrusted(value.entity_name, 200) if value.entity_name else "the entity",
        "evidence": "\n".join(lines) if lines else "(no evidence)",
    }


#: The few-shot demonstrations, from the package's examples data file (:func:`~opinio_agents.prompts.contracts.load_examples`).
HIGHLIGHT_EXAMPLES: tuple[FewShotExample[HighlightInput, HighlightOutput], ...] = load_examples("highlight", HighlightInput, HighlightOutput)

HIGHLIGHT_PROMPT: PromptTemplate[HighlightInput, HighlightOutput] = PromptTemplate(
    name="highlight",
    input_model=HighlightInput,
    output_model=HighlightOutput,
    instruction=HIGHLIGHT_INSTRUCTION,
    render_fields=render_highlight_fields,
    examples=HIGHLIGHT_EXAMPLES,
    static_instruction=HIGHLIGHT_TASK,
)
