"""Never nothing where the reviews have an answer (issue 20 item 3), fast tier: fault injection with fake models.

An answer still unusable after the repair turn, an empty answer over real evidence, or a highlight that
verification contradicts gets the extractive highlight of that query (``origin="extractive-fallback"``),
counted in ``meta.llm``; only a query without evidence (or without any answer) ends as a failure.
The real model runs the same paths in tests/test_local_llm.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_encoder import HashEncoder
from llm_fixtures import ScriptedChatModel, answer, make_item
from test_evaluate import KeywordTriplets

from opinio_agents.api import OpinioRAG
from opinio_agents.llm import RetryPolicy
from opinio_agents.models import Entity, LLMOutcomes, Polarity, Verification
from opinio_agents.synthesis.extractive import ExtractiveSynthesizer
from opinio_agents.synthesis.llm import LLMSynthesizer
from opinio_agents.synthesis.verification import HighlightVerifier


class _Contradicts(HighlightVerifier):
    """A verifier that contradicts and drops every highlight (fault injection)."""

    def apply(self, highlights):  # type: ignore[no-untyped-def, override]
        verdict = Verification(aspect_relevance=1.0, sentiment_factuality=0.0, opinion_faithfulness=1.0,
                               verdict="contradicted", reason="test", action="dropped")
        return [], [h.model_copy(update={"verification": verdict}) for h in highlights]


def _synth(respond: object, fallback: object = True) -> LLMSynthesizer:
    model = ScriptedChatModel(respond=respond)
    model.calls = []
    chosen = ExtractiveSynthesizer(HashEncoder()) if fallback is True else fallback
    return LLMSynthesizer(
        model, structured_output="parser", retry=RetryPolicy(max_retries=0), fallback=chosen  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(
    "respond",
    [
        ["The wifi is fast and free.", "I think the wifi is great."],  # plain text, never JSON (issue 24 item 9)
        ['{"highlights": [{"polarity": "PROS", "text": "x", "sentence_ids": ["S9"]}]}'] * 2,  # cites nothing real
        ['{"highlights": []}'],  # valid but empty although the evidence is about the query
    ],
    ids=["plain-text", "invented-citation", "empty"],
)
def test_an_unusable_or_empty_answer_gets_the_extractive_highlight(respond: list[str]) -> None:
    synth = _synth(respond)
    item = make_item()
    [outcome] = list(synth.synthesize_many([item]))
    assert outcome.failure is None and outcome.llm == "fallback" and outcome.highlights
    assert all(h.origin == "extractive-fallback" for h in outcome.highlights)
    assert all(any(n.startswith("extractive fallback") for n in h.notes) for h in outcome.highlights)
    evidence_ids = {e.sentence_id for e in item.evidence}
    assert all(set(h.sentence_ids) <= evidence_ids and h.sentence_ids for h in outcome.highlights)


def test_a_valid_answer_is_the_models_own_and_counted_as_answered_or_repaired() -> None:
    good = answer(("PROS", "Fast, free wi-fi in every room.", ["S1", "S2"]))
    [first] = list(_synth([good]).synthesize_many([make_item()]))
    assert first.llm == "answered" and [h.origin for h in first.highlights] == ["llm"]
    [second] = list(_synth(["no json here", good]).synthesize_many([make_item()]))
    assert second.llm == "repaired" and second.highlights[0].text == "Fast, free wi-fi in every room."


def test_only_a_query_without_evidence_or_any_answer_fails() -> None:
    synth = _synth(["never called"])
    [empty] = list(synth.synthesize_many([make_item(evidence=[])]))
    assert empty.llm == "failed" and not empty.highlights and synth.usage.calls == 0
    [refused] = list(_synth(["no json", "no json"], fallback=False).synthesize_many([make_item()]))
    assert refused.llm == "failed" and refused.failure is not None and "could not parse" in refused.failure.error


# -- through the façade: counts in meta.llm, verification on by default, contradicted -> fallback -----------
WIFI_BAD = [
    "The wifi was terrible and kept dropping.",
    "Awful wifi, slow and overpriced.",
    "The wifi was terrible in our room.",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fallback") / "store"
    reviews = [
        {"review_id": i, "text": f"{text} The breakfast was great and fresh.", "rating": 2}
        for i, text in enumerate(WIFI_BAD, 1)
    ]
    entity = Entity.model_validate({"entity_id": 5, "entity_name": "Quay Hotel", "user_reviews": reviews})
    rag = OpinioRAG(path, encoder=HashEncoder())
    rag.index(entity, fit_hiro=False)
    rag.close()
    return path


def _rag(store: Path, respond: object, **kwargs: object) -> OpinioRAG:
    model = ScriptedChatModel(respond=respond)
    model.calls = []
    options = {"cache_path": None, "structured_output": "parser", "max_retries": 0}
    return OpinioRAG(store, encoder=HashEncoder(), llm=model, llm_options=options, **kwargs)  # type: ignore[arg-type]


def test_meta_llm_counts_each_query_and_the_fallback_is_the_extractive_highlight(store: Path) -> None:
    def respond(messages):  # type: ignore[no-untyped-def]
        text = str(messages[-1].content)
        if "breakfast" in text.split("Query:")[1].split("\n")[0]:
            return answer(("PROS", "Great, fresh breakfast.", ["S1"]))
        return "Sorry, I cannot help with that."  # the wi-fi query: plain text, twice

    rag = _rag(store, respond, verify=False)
    result = rag.highlights(5, ["breakfast", "wi-fi"])
    assert result.meta.llm == LLMOutcomes(answered=1, fallback=1)
    by_query = {h.query: h for h in result.highlights}
    assert by_query["breakfast"].origin == "llm" and by_query["wi-fi"].origin == "extractive-fallback"
    assert not result.failures


def test_verification_is_on_when_a_model_writes_and_a_contradicted_claim_is_replaced(store: Path) -> None:
    assert _rag(store, ["{}"]).verifier(model_writes=True) is not None  # on by default on the LLM path
    assert OpinioRAG(store, encoder=HashEncoder()).verifier() is None  # the extractive path keeps its default
    assert _rag(store, ["{}"], verify=False).verifier(model_writes=True) is None  # --no-verify
    flipped = answer(("PROS", "Great, fast wifi.", ["S1", "S2"]))  # the evidence says the opposite
    verifier = HighlightVerifier(KeywordTriplets(), encoder=HashEncoder())
    result = _rag(store, [flipped], verify=verifier).highlights(5, ["wi-fi"])
    assert result.meta.llm is not None and result.meta.llm.contradicted == 1 and result.meta.llm.fallback == 1
    assert result.meta.llm.schema_valid_rate == 1.0  # the answer parsed; its claim did not hold
    assert result.highlights and all(h.origin == "extractive-fallback" for h in result.highlights)
    assert all(h.polarity is Polarity.CONS and h.verification is not None for h in result.highlights)


def test_a_server_that_takes_only_json_object_gets_the_schema_that_way() -> None:
    """llama-cpp-python's server refuses response_format json_schema (HTTP 500, "'text' or 'json_object'")
    but constrains json_object to a given schema: the call turns to that for good (the real server:
    tests/test_local_llm.py)."""
    pytest.importorskip("langchain_openai")
    from langchain_core.messages import HumanMessage
    from loopback_server import LoopbackServer, ok, status

    from opinio_agents.llm import StructuredChat, resolve_chat_model
    from opinio_agents.prompts.highlight import HighlightOutput

    refusal = {"error": {"type": "internal_server_error", "message": "1 validation error: {'loc': ('body', "
                         "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
                         "'input': 'json_schema'}"}}
    good = answer(("CONS", "Slow wi-fi.", ["S1"]))
    with LoopbackServer([status(500, refusal), ok(good), ok(good)]) as server:
        model = resolve_chat_model("openai:local", base_url=server.base_url)
        chat = StructuredChat(model, HighlightOutput, mode="native", retry=RetryPolicy(max_retries=0))
        first = chat.invoke([HumanMessage("Query: wi-fi")])
        second = chat.invoke([HumanMessage("Query: wi-fi")])
        bodies = [r["body"] for r in server.requests]
    assert first.value.highlights[0].text == "Slow wi-fi." and first.mode == second.mode == "native"
    assert bodies[0]["response_format"]["type"] == "json_schema"
    for body in bodies[1:]:  # the retry and every later call: json_object carrying the bounded schema
        assert body["response_format"]["type"] == "json_object"
        assert body["response_format"]["schema"]["properties"]["highlights"]["maxItems"] == 2


def test_a_weak_off_aspect_model_highlight_is_not_shown() -> None:
    # SmolLM2 under a grammar that must write a highlight wrote "A free unlimited Wi-Fi can help save
    # lives!" for "parking": verification calls it weak with aspect relevance 0. It must not be shown.
    from opinio_agents.models import Highlight
    from opinio_agents.synthesis.base import SynthesisOutcome
    from opinio_agents.synthesis.summarizer import _replace_contradicted

    item = make_item("parking")

    def written(text: str, verdict: str, ar: float) -> Highlight:
        return Highlight(
            query="parking", polarity=Polarity.PROS, text=text, origin="llm",
            verification=Verification(aspect_relevance=ar, sentiment_factuality=1.0, opinion_faithfulness=0.5,
                                      verdict=verdict, reason="test"),  # type: ignore[arg-type]
        )

    off = written("A free unlimited Wi-Fi can help save lives!", "weak", 0.0)
    on = written("Parking is easy and free.", "weak", 1.0)
    outcome = SynthesisOutcome(item=item, highlights=[off, on], llm="answered")
    shown, lost = _replace_contradicted(outcome, [], None, None, None)  # type: ignore[arg-type]
    assert [h.text for h in shown.highlights] == ["Parking is easy and free."]
    assert lost == [off] and shown.llm == "contradicted"
    # On-aspect weak highlights alone are kept as they are.
    kept, nothing = _replace_contradicted(
        SynthesisOutcome(item=item, highlights=[on], llm="answered"), [], None, None, None  # type: ignore[arg-type]
    )
    assert kept.highlights == [on] and nothing == [] and kept.llm == "answered"


def test_a_contradicted_fallback_is_still_shown_so_the_query_never_ends_empty() -> None:
    # SmolLM2 on "wi-fi" (sample, entity 101): its weak off-aspect highlight was replaced by the extractive
    # fallback, which the verifier then contradicted too ("so-called free wi-fi" read as praise): the
    # query, 50 reviews and 70% negative, showed nothing. The fallback is the reviews' own words: shown.
    from opinio_agents.models import Highlight
    from opinio_agents.synthesis.alerts import CriticalComplaintCheck
    from opinio_agents.synthesis.base import SynthesisOutcome
    from opinio_agents.synthesis.summarizer import _replace_contradicted

    item = make_item("wi-fi")
    model = Highlight(query="wi-fi", polarity=Polarity.CONS, text="Wi-fi is free.", origin="llm",
                      verification=Verification(aspect_relevance=0.0, sentiment_factuality=None,
                                                opinion_faithfulness=None, verdict="weak", reason="test"))
    fallback = Highlight(query="wi-fi", polarity=Polarity.CONS, text="The so-called free wi-fi was limited.",
                         origin="extractive-fallback")
    shown, lost = _replace_contradicted(
        SynthesisOutcome(item=item, highlights=[model], llm="answered"), [], lambda _: [fallback],
        _Contradicts(), CriticalComplaintCheck(),
    )
    assert [h.text for h in shown.highlights] == ["The so-called free wi-fi was limited."]
    assert shown.highlights[0].verification is not None
    assert shown.highlights[0].verification.verdict == "contradicted"
    assert shown.highlights[0].verification.action == "kept"
    assert lost == [model] and shown.llm == "contradicted"


def test_verification_never_empties_an_extractive_query() -> None:
    # SPACE dev hotel 188745, "rooms": the only highlight, "The rooms are quite small. The room was small.",
    # was read as contradicted and dropped, so the query showed nothing. The reviews' own sentences stay,
    # with the verdict on them; a model-written highlight is still dropped.
    from opinio_agents.models import Highlight
    from opinio_agents.synthesis.alerts import CriticalComplaintCheck
    from opinio_agents.synthesis.base import SynthesisOutcome
    from opinio_agents.synthesis.verification import KEPT_NOTE, verify_outcome

    item = make_item("rooms")
    own = Highlight(query="rooms", polarity=Polarity.CONS, text="The rooms are quite small.")
    outcome = SynthesisOutcome(item=item, highlights=[own])
    shown, lost = verify_outcome(_Contradicts(), CriticalComplaintCheck(), outcome)
    assert [h.text for h in shown.highlights] == ["The rooms are quite small."] and lost == []
    check = shown.highlights[0].verification
    assert check is not None and check.verdict == "contradicted" and check.action == "kept"
    assert KEPT_NOTE in shown.highlights[0].notes
    written = own.model_copy(update={"origin": "llm"})
    outcome = SynthesisOutcome(item=item, highlights=[written])
    shown, lost = verify_outcome(_Contradicts(), CriticalComplaintCheck(), outcome)
    assert shown.highlights == [] and [h.text for h in lost] == ["The rooms are quite small."]
