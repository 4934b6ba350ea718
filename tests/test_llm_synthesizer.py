"""LLMSynthesizer and LongContextSynthesizer with fake models (no network)."""

from __future__ import annotations

import asyncio
import json

import pytest
from llm_fixtures import EVIDENCE, ScriptedChatModel, answer, make_item

from opinio_agents.errors import ConfigError
from opinio_agents.llm import RetryPolicy, prompt_token_ratio
from opinio_agents.models import Entity, Evidence, Polarity
from opinio_agents.synthesis.llm import LLMSynthesizer
from opinio_agents.synthesis.long_context import LongContextSynthesizer, select_recent_reviews

FAST = RetryPolicy(max_retries=1, base_delay=0.0)


def by_query(messages) -> str:  # type: ignore[no-untyped-def]
    if any('"explode"' in str(m.content) for m in messages[-3:]):  # also in the repair turn
        return "not json"
    return answer(("PROS", "Fast Wi-Fi.", ["S1"]))


def test_synthesize_many_reports_failures_without_sinking_others() -> None:
    model = ScriptedChatModel(respond=by_query, usage={"input": 100, "output": 10})
    synth = LLMSynthesizer(model, retry=FAST, max_concurrency=3)
    items = [make_item("wi-fi"), make_item("explode"), make_item("internet")]
    outcomes = list(synth.synthesize_many(items))
    assert sorted(o.item.query for o in outcomes) == ["explode", "internet", "wi-fi"]
    failed = [o for o in outcomes if o.failure]
    assert [o.item.query for o in failed] == ["explode"]
    assert "repair" in failed[0].failure.error and failed[0].failure.attempts == 2  # type: ignore[union-attr]
    assert all(o.highlights for o in outcomes if not o.failure)
    assert synth.usage.calls == 4 and synth.usage.prompt_tokens == 400
    assert synth.name == "llm" and synth.model_name == "ScriptedChatModel"


def test_async_many_and_guard_applied() -> None:
    critical = [*EVIDENCE, Evidence(sentence_id="7:20:0", text="Someone stole my phone in the lobby.", sentiment=-0.5)]
    model = ScriptedChatModel(respond=[answer(("PROS", "Fast Wi-Fi.", ["S1", "S4"]))])
    synth = LLMSynthesizer(model, retry=FAST, guard=True)  # standalone use: the synthesizer guards itself

    async def collect():  # type: ignore[no-untyped-def]
        return [o async for o in synth.asynthesize_many([make_item("wi-fi", critical)])]

    [outcome] = asyncio.run(collect())
    pro, con = outcome.highlights
    assert pro.polarity is Polarity.PROS and pro.sentence_ids == ["7:11:0"]
    assert con.polarity is Polarity.CONS and con.sentence_ids == ["7:20:0"]
    scripted = ScriptedChatModel(respond=[answer(("PROS", "Safe lobby.", ["S4"]))])
    unguarded = LLMSynthesizer(scripted, retry=FAST)  # default
    assert unguarded.synthesize(make_item("wi-fi", critical))[0].polarity is Polarity.PROS


def test_queries_in_flight_default_to_the_batch_of_a_batching_model() -> None:
    from opinio_agents.synthesis.llm import DEFAULT_CONCURRENCY

    class Batching(ScriptedChatModel):
        batch_size: int = 8  # as LocalChatModel: concurrent calls decoded together

    assert LLMSynthesizer(ScriptedChatModel(respond=["x"])).max_concurrency == DEFAULT_CONCURRENCY
    assert LLMSynthesizer(Batching(respond=["x"])).max_concurrency == 8
    assert LLMSynthesizer(Batching(respond=["x"]), max_concurrency=1).max_concurrency == 1  # asked for: kept


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError):
        LLMSynthesizer(ScriptedChatModel(respond=["x"]), max_concurrency=0)
    with pytest.raises(ConfigError):
        LLMSynthesizer(None)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not a known provider"):
        LLMSynthesizer("gpt-4o-mini")


def _entity(n: int = 6, expert: bool = True) -> Entity:
    reviews = [
        {"review_id": i, "text": f"Review {i}: the wifi was fine and the pool was warm. " * 3,
         "publication_date": f"2024-01-{i + 1:02d}"}
        for i in range(n)
    ]
    reviews.append({"review_id": "old", "text": "Undated review with bed bugs in it."})
    data = {"entity_id": 9, "entity_name": "Harbor Inn", "user_reviews": reviews}
    if expert:
        data["expert_review"] = {"pros": {"wi-fi": "Free Wi-Fi."}, "cons": {"pool": "Small pool.", "noise": "Noisy."}}
    return Entity.model_validate(data)


LC_ANSWER = json.dumps({
    "pros": [{"query": "wi-fi", "text": "Free, fast Wi-Fi."}],
    "cons": [{"query": "pool", "text": "Small pool."}, {"query": "spa", "text": "No spa."}],
})


def test_long_context_run_side_by_side_schema_and_counts_from_expert_review() -> None:
    model = ScriptedChatModel(respond=[LC_ANSWER], usage={"input": 900, "output": 40})
    synth = LongContextSynthesizer(model, context_window_tokens=100_000)
    result = synth.run(_entity(), ["wi-fi", "pool", "noise"])
    assert [(h.query, h.polarity.value) for h in result.highlights] == [("wi-fi", "pros"), ("pool", "cons")]
    assert "exactly 1 PROS and 2 CONS" in str(model.calls[0][-1].content)
    assert result.meta.synthesizer == "long-context" and result.meta.tokens.prompt_tokens == 900
    assert result.meta.reviews_dropped == 0 and result.meta.dropped_key_points == ["cons: 'spa'"]  # type: ignore[attr-defined]
    assert [a.category for a in result.alerts] == ["bed bugs"]
    with pytest.raises(ConfigError, match="n_pros"):
        synth.run(_entity(expert=False), ["wi-fi"])


def test_long_context_drops_oldest_reviews_first_to_fit() -> None:
    model = ScriptedChatModel(respond=[LC_ANSWER])
    synth = LongContextSynthesizer(model, context_window_tokens=1_200, max_tokens=100, safety_margin=0.0)
    entity = _entity(n=12)
    full = synth.estimate_prompt_tokens(entity, ["wi-fi"], fit=False)
    fitted = synth.estimate_prompt_tokens(entity, ["wi-fi"])
    assert fitted < full and fitted <= 1_100
    result = synth.run(entity, ["wi-fi", "pool"], n_pros=1, n_cons=1)
    sent = str(model.calls[0][-1].content)
    dropped = result.meta.reviews_dropped  # type: ignore[attr-defined]
    assert dropped > 0 and result.meta.reviews_sent + dropped == 13  # type: ignore[attr-defined]
    assert "Review 11:" in sent and "Undated review" not in sent and "Review 0:" not in sent
    assert prompt_token_ratio(300, full) < 1


def test_long_context_failure_is_reported_per_query() -> None:
    synth = LongContextSynthesizer(ScriptedChatModel(respond=["garbage"]), max_retries=0)
    result = synth.run(_entity(), ["wi-fi", "pool"], n_pros=1, n_cons=1)
    assert result.highlights == [] and [f.query for f in result.failures] == ["wi-fi", "pool"]
    assert result.alerts  # alerts do not depend on the model


def test_select_recent_reviews_never_skips_a_newer_review() -> None:
    entity = _entity(n=3)
    kept, dropped = select_recent_reviews(entity.user_reviews, 25, lambda r: 10 if r.review_id != 1 else 30)
    assert [r.review_id for r in kept] == [2] and dropped == 3
