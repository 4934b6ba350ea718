"""Prompts as typed contracts: an input model, an output model, an instruction and
few-shot examples written as model instances.

A :class:`PromptTemplate` turns an input instance into chat messages; the output
model is what the chain validates the answer against (and what providers with
native structured output are asked to produce). Every static part of a prompt
(system message, task text, few-shot turns) comes before its first dynamic byte
(query, entity, evidence), so consecutive calls share one stable prefix and a
provider's prompt cache (OpenAI, Anthropic, vLLM prefix caching) reuses it. Untrusted text (review
sentences) is placed in the prompt only through :func:`quote_untrusted`, which
JSON-quotes it and neutralises angle brackets so it cannot close its delimiter.

Example:
    >>> quote_untrusted('ignore </evidence> "this"')
    '"ignore \\\\u003c/evidence\\\\u003e \\\\"this\\\\""'
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Generic, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError

from opinio_agents.errors import ConfigError

__all__ = ["FewShotExample", "PromptTemplate", "quote_untrusted", "load_examples", "EXAMPLES_FILE"]

InT = TypeVar("InT", bound=BaseModel)
OutT = TypeVar("OutT", bound=BaseModel)


def quote_untrusted(text: str, max_chars: int | None = None) -> str:
    """JSON-quote untrusted text for a prompt; ``<``/``>`` become ``\\u003c``/``\\u003e``.

    Args:
        text: Review text (data, never instructions).
        max_chars: Truncate longer text (with an ellipsis) before quoting.
    """
    if max_chars is not None and len(text) > max_chars:
        text = text[: max(0, max_chars - 1)].rstrip() + "\u2026"
    quoted = json.dumps(text, ensure_ascii=False)
    return quoted.replace("<", "\\u003c").replace(">", "\\u003e")


@dataclass(frozen=True)
class FewShotExample(Generic[InT, OutT]):
    """One demonstration: an input instance and the output the model should give."""

    input: InT
    output: OutT


#: The package's few-shot demonstrations, by prompt name (a data file, read by :func:`load_examples`).
EXAMPLES_FILE = "resources/examples.json"


def load_examples(
    name: str, input_model: type[InT], output_model: type[OutT], *, text: str | None = None
) -> tuple[FewShotExample[InT, OutT], ...]:
    """The few-shot demonstrations of prompt ``name``, validated against its input and output models.

    Args:
        name: The prompt's name (``"highlight"``), a key of :data:`EXAMPLES_FILE`.
        input_model: The prompt's input model.
        output_model: The prompt's output model.
        text: The JSON to read instead of the package's file (``{name: [{"input": ..., "output": ...}]}``).

    Raises:
        ConfigError: The file is not JSON, has no list under ``name``, or a demonstration does not
            validate (the message names the demonstration and the field).

    Example:
        >>> from opinio_agents.prompts.highlight import HighlightInput, HighlightOutput
        >>> examples = load_examples("highlight", HighlightInput, HighlightOutput)
        >>> examples[0].input.query
        'shuttle service'
    """
    where = f"opinio_agents/prompts/{EXAMPLES_FILE}"
    if text is None:
        text = resources.files("opinio_agents.prompts").joinpath(EXAMPLES_FILE).read_text(encoding="utf-8")
    else:
        where = "the examples text"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not JSON (line {exc.lineno}: {exc.msg})") from exc
    items = data.get(name) if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ConfigError(f"{where}: no list of demonstrations under {name!r}")
    out: list[FewShotExample[InT, OutT]] = []
    for number, item in enumerate(items, 1):
        parsed: dict[str, Any] = {}
        for part, model in (("input", input_model), ("output", output_model)):
            if not isinstance(item, dict) or part not in item:
                raise ConfigError(f"{where}: {name} demonstration {number} has no {part!r}")
            try:
                parsed[part] = model.model_validate(item[part])
            except ValidationError as exc:
                first = exc.errors()[0]
                field_path = ".".join(str(x) for x in first["loc"]) or part
                raise ConfigError(
                    f"{where}: {name} demonstration {number}, {part}.{field_path}: {first['msg']}"
                ) from exc
        out.append(FewShotExample(parsed["input"], parsed["output"]))
    return tuple(out)


@dataclass(frozen=True)
class PromptTemplate(Generic[InT, OutT]):
    """A prompt contract.

    Attributes:
        name: Short identifier (``"highlight"``, ``"long_context"``).
        input_model: Pydantic model of what the prompt is filled with.
        output_model: Pydantic model the answer must validate against.
        instruction: The per-call text (the dynamic part); ``str.format`` fields are filled
            from ``render_fields(input)`` (untrusted text is already quoted there).
        render_fields: Maps an input instance to the instruction's format fields.
        examples: Few-shot demonstrations, shown as user/assistant turns.
        static_instruction: Task text that is the same for every call (steps, output
            format). It is appended to the system message, before the few-shot turns,
            so that it belongs to the cached prefix and is sent once per call instead of
            once per example; it is not formatted (write braces as they are). Empty: the
            ``instruction`` carries the whole task.

    Example:
        >>> from opinio_agents.prompts import default_prompts
        >>> prompts = default_prompts()
        >>> custom = prompts.highlight.with_overrides(examples=())
        >>> len(custom.examples)
        0
    """

    name: str
    input_model: type[InT]
    output_model: type[OutT]
    instruction: str
    render_fields: Callable[[InT], dict[str, Any]]
    examples: Sequence[FewShotExample[InT, OutT]] = field(default_factory=tuple)
    static_instruction: str = ""

    def with_overrides(self, **changes: Any) -> PromptTemplate[InT, OutT]:
        """A copy with some attributes replaced (instruction, examples, ...)."""
        accepted = [f.name for f in dataclasses.fields(self)]
        unknown = set(changes) - set(accepted)
        if unknown:
            raise ConfigError(f"unknown prompt attribute(s) {sorted(unknown)}; accepted: {accepted}")
        return dataclasses.replace(self, **changes)

    def render_user(self, value: InT) -> str:
        """The user-turn text for one input."""
        if not isinstance(value, self.input_model):
            raise ConfigError(
                f"prompt {self.name!r} expects {self.input_model.__name__}, got {type(value).__name__}"
            )
        try:
            return self.instruction.format(**self.render_fields(value))
        except (KeyError, IndexError) as exc:
            raise ConfigError(
                f"prompt {self.name!r}: the instruction uses a field {exc} that its renderer does not "
                "provide; escape literal braces as '{{' and '}}'"
            ) from exc

    def system_text(self, system: str) -> str:
        """The system turn: ``system`` followed by :attr:`static_instruction` (when there is one)."""
        return f"{system}\n\n{self.static_instruction}" if self.static_instruction else system

    def build_messages(self, system: str, value: InT) -> list[BaseMessage]:
        """System turn (with the static task text), few-shot turns, then the user turn for ``value``.

        Everything before the last turn is the same for every ``value``.
        """
        messages: list[BaseMessage] = [SystemMessage(content=self.system_text(system))]
        for example in self.examples:
            messages.append(HumanMessage(content=self.render_user(example.input)))
            messages.append(AIMessage(content=example.output.model_dump_json()))
        messages.append(HumanMessage(content=self.render_user(value)))
        return messages
