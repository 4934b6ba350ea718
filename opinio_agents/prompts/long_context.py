"""The long-context baseline prompt (OpinioRAG App. B.2 and Figure 6).

All of an entity's reviews in one prompt, with a task description, the user
queries, instructions, the expected number of PROS and CONS (from the reference)
and a JSON output format.

Example:
    >>> from opinio_agents.prompts.long_context import LONG_CONTEXT_PROMPT, LongContextInput, ReviewItem
    >>> text = LONG_CONTEXT_PROMPT.render_user(LongContextInput(
    ...     entity_name="Harbor Inn", queries=["wi-fi"], n_pros=1, n_cons=0,
    ...     reviews=[ReviewItem(review_id="1", text="Great wi-fi.")]))
    >>> "exactly 1 PROS and 0 CONS" in text
    True
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from opinio_agents.prompts.contracts import PromptTemplate, quote_untrusted

__all__ = [
    "ReviewItem",
    "LongContextInput",
    "KeyPoint",
    "LongContextOutput",
    "LONG_CONTEXT_INSTRUCTION",
    "LONG_CONTEXT_TASK",
    "LONG_CONTEXT_PROMPT",
    "render_long_context_fields",
]


class ReviewItem(BaseModel):
    """One review as shown to the model."""

    review_id: str
    text: str
    date: str | None = None


class LongContextInput(BaseModel):
    """What the long-context prompt is filled with."""

    entity_name: str = ""
    queries: list[str]
    reviews: list[ReviewItem]
    n_pros: int = Field(ge=0)
    n_cons: int = Field(ge=0)


class KeyPoint(BaseModel):
    """One highlight of the long-context answer."""

    query: str = Field(
        description="The user query the highlight addresses (one of the listed queries).",
        json_schema_extra={"maxLength": 80},
    )
    text: str = Field(description="One concise key-point phrase.", json_schema_extra={"maxLength": 160})


class LongContextOutput(BaseModel):
    """The long-context answer: PROS and CONS key points, each tied to a query."""

    # The bounds make schema-constrained output end (local models); the answer's own limits are n_pros/n_cons.
    pros: list[KeyPoint] = Field(json_schema_extra={"maxItems": 12})
    cons: list[KeyPoint] = Field(json_schema_extra={"maxItems": 12})


#: The task, the same for every entity: sent in the system turn (part of the cached prefix).
LONG_CONTEXT_TASK = """Task: summarize the user reviews of the entity named in the last message into opinion highlights divided into PROS and CONS, guided by the user queries listed there.

Instructions:
1. Write exactly as many PROS and CONS as the message asks for.
2. Each highlight addresses one of the user queries (give its query exactly as listed) and states the reviewers' prevailing opinion about it.
3. Write each highlight as one concise key-point phrase of at most 20 words, in the style of the examples.
4. Serious problems (safety, hygiene, bed bugs, food poisoning, theft, harassment, discrimination) go into CONS; never soften them.
5. Output JSON only, in exactly this format:
{"pros": [{"query": "...", "text": "..."}], "cons": [{"query": "...", "text": "..."}]}"""

#: The per-entity part: entity, queries, counts and reviews.
LONG_CONTEXT_INSTRUCTION = """Entity: {entity}
User queries: {queries}
Write exactly {n_pros} PROS and {n_cons} CONS.
<reviews>
{reviews}
</reviews>"""


def render_long_context_fields(value: LongContextInput) -> dict[str, Any]:
    """Format fields of :data:`LONG_CONTEXT_INSTRUCTION`; review text is quoted."""
    lines = []
    for review in value.reviews:
        date = f', "date": {quote_untrusted(review.date, 20)}' if review.date else ""
        review_id = quote_untrusted(review.review_id, 60)
        lines.append(f'{{"review_id": {review_id}{date}, "text": {quote_untrusted(review.text)}}}')
    return {
        "entity": quote_untrusted(value.entity_name, 200) if value.entity_name else "the entity",
        "queries": "; ".join(quote_untrusted(q, 200) for q in value.queries),
        "n_pros": value.n_pros,
        "n_cons": value.n_cons,
        "reviews": "\n".join(lines) if lines else "(no reviews)",
    }


LONG_CONTEXT_PROMPT: PromptTemplate[LongContextInput, LongContextOutput] = PromptTemplate(
    name="long_context",
    input_model=LongContextInput,
    output_model=LongContextOutput,
    instruction=LONG_CONTEXT_INSTRUCTION,
    render_fields=render_long_context_fields,
    examples=(),
    static_instruction=LONG_CONTEXT_TASK,
)
