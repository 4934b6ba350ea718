"""Prompts as typed contracts: system message, key-point style, highlight (per query and per entity), long context."""

from opinio_agents.prompts.contracts import FewShotExample, PromptTemplate, quote_untrusted
from opinio_agents.prompts.highlight import (
    HIGHLIGHT_EXAMPLES,
    HIGHLIGHT_INSTRUCTION,
    HIGHLIGHT_PROMPT,
    EvidenceItem,
    HighlightDraft,
    HighlightInput,
    HighlightOutput,
)
from opinio_agents.prompts.highlight_batch import (
    HIGHLIGHT_BATCH_PROMPT,
    BatchQuery,
    HighlightBatchInput,
    HighlightBatchOutput,
    QueryHighlights,
)
from opinio_agents.prompts.long_context import (
    LONG_CONTEXT_INSTRUCTION,
    LONG_CONTEXT_PROMPT,
    KeyPoint,
    LongContextInput,
    LongContextOutput,
    ReviewItem,
)
from opinio_agents.prompts.promptset import PromptSet, default_prompts
from opinio_agents.prompts.system import (
    KEY_POINT_CHARACTERISTICS,
    KEY_POINT_EXEMPLARS,
    UNTRUSTED_DATA_RULES,
    KeyPointExemplar,
    SystemPrompt,
    render_style_guide,
)

__all__ = [
    "FewShotExample",
    "PromptTemplate",
    "quote_untrusted",
    "EvidenceItem",
    "HighlightInput",
    "HighlightDraft",
    "HighlightOutput",
    "HIGHLIGHT_INSTRUCTION",
    "HIGHLIGHT_EXAMPLES",
    "HIGHLIGHT_PROMPT",
    "BatchQuery",
    "HighlightBatchInput",
    "HighlightBatchOutput",
    "QueryHighlights",
    "HIGHLIGHT_BATCH_PROMPT",
    "ReviewItem",
    "LongContextInput",
    "KeyPoint",
    "LongContextOutput",
    "LONG_CONTEXT_INSTRUCTION",
    "LONG_CONTEXT_PROMPT",
    "PromptSet",
    "default_prompts",
    "KeyPointExemplar",
    "KEY_POINT_CHARACTERISTICS",
    "KEY_POINT_EXEMPLARS",
    "UNTRUSTED_DATA_RULES",
    "SystemPrompt",
    "render_style_guide",
]
