"""The set of prompts a synthesizer uses; override any part of it.

Example:
    >>> prompts = default_prompts(domain="restaurants")
    >>> prompts.system.render().startswith("You are an expert summarizer of user reviews for restaurants")
    True
    >>> custom = prompts.with_overrides(highlight=prompts.highlight.with_overrides(examples=()))
    >>> len(custom.highlight.examples), len(prompts.highlight.examples)
    (0, 2)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from opinio_agents.errors import ConfigError
from opinio_agents.prompts.contracts import PromptTemplate
from opinio_agents.prompts.highlight import HIGHLIGHT_PROMPT, HighlightInput, HighlightOutput
from opinio_agents.prompts.highlight_batch import HIGHLIGHT_BATCH_PROMPT, HighlightBatchInput, HighlightBatchOutput
from opinio_agents.prompts.long_context import LONG_CONTEXT_PROMPT, LongContextInput, LongContextOutput
from opinio_agents.prompts.system import SystemPrompt

__all__ = ["PromptSet", "default_prompts"]


@dataclass(frozen=True)
class PromptSet:
    """System message, per-query and per-entity highlight prompts and the long-context baseline prompt."""

    system: SystemPrompt = field(default_factory=SystemPrompt)
    highlight: PromptTemplate[HighlightInput, HighlightOutput] = HIGHLIGHT_PROMPT
    long_context: PromptTemplate[LongContextInput, LongContextOutput] = LONG_CONTEXT_PROMPT
    highlight_batch: PromptTemplate[HighlightBatchInput, HighlightBatchOutput] = HIGHLIGHT_BATCH_PROMPT

    def with_overrides(self, **changes: object) -> PromptSet:
        """A copy with ``system``, ``highlight``, ``long_context`` and/or ``highlight_batch`` replaced."""
        accepted = {"system", "highlight", "long_context", "highlight_batch"}
        unknown = set(changes) - accepted
        if unknown:
            raise ConfigError(f"unknown prompt(s) {sorted(unknown)}; accepted: {', '.join(sorted(accepted))}")
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def default_prompts(domain: str = "hotels and restaurants", specialization: str = "travel") -> PromptSet:
    """The paper's prompts for ``domain`` (App. B.6, C, Figures 5 and 6)."""
    if not domain.strip():
        raise ConfigError("domain must not be empty, e.g. 'hotels and restaurants'")
    return PromptSet(system=SystemPrompt(domain=domain, specialization=specialization))
