"""One truth on every surface (issue 25): the same count and side split for an aspect everywhere.

Fast tier: entity 101 of the shipped sample indexed with the hashing encoder (no model), HIRO
fitted. Every surface is asked about the same aspects and must give the same numbers: the
highlight support line (API, CLI JSON/markdown), the aspect list and the page's chips
(``/aspects``), the page's panel (``/highlights/stream``), ``/search``, the chat's support line,
the MCP toolkit and the report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fake_encoder import HashEncoder  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from opinio_agents.agents.chat import ReviewChat  # noqa: E402
from opinio_agents.agents.toolkit import ReviewToolkit  # noqa: E402
from opinio_agents.api import OpinioRAG  # noqa: E402
from opinio_agents.cli.render import support_line, to_json  # noqa: E402
from opinio_agents.datasets import load_sample  # noqa: E402
from opinio_agents.models import Polarity, Sentence, Support  # noqa: E402
from opinio_agents.report.html import build_report  # noqa: E402
from opinio_agents.serve import create_app  # noqa: E402
from opinio_agents.synthesis.support import aspect_terms, aspect_text, shown_sides  # noqa: E402
from opinio_agents.text.duplicates import same_statement, statement_tokens  # noqa: E402

ASPECTS = ["wi-fi", "breakfast buffet", "parking", "room"]
#: How a user asks the chat about each aspect (the issue's questions).
QUESTIONS = {
    "wi-fi": "How is the wifi?",
    "breakfast buffet": "How is the breakfast buffet?",
    "parking": "Is parking easy?",
    "room": "How are the rooms?",
}
HIRO = {"n_codes": 6, "depth": 2}


def split(support: Support | dict[str, Any]) -> tuple[int, int, int, int, int]:
    d = support if isinstance(support, dict) else support.model_dump()
    return (int(d["reviews"]), int(d["positive"]), int(d["negative"]), int(d["neutral"]), int(d["total_reviews"]))


@pytest.fixture(scope="module")
def rag(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpinioRAG]:
    entity = next(e for e in load_sample() if str(e.entity_id) == "101")
    path = Path(tmp_path_factory.mktemp("one-truth")) / "store"
    rag = OpinioRAG(path, encoder=HashEncoder(), hiro_options=HIRO)
    rag.index([entity])
    yield rag
    rag.close()


@pytest.fixture(scope="module")
def client(rag: OpinioRAG) -> Iterator[TestClient]:
    with TestClient(create_app(rag, rate_limit=None), raise_server_exceptions=False, base_url="http://127.0.0.1") as c:
        yield c


def test_queries_normalise_to_one_aspect() -> None:
    assert aspect_terms("wi-fi") == aspect_terms("WiFi") == aspect_terms("How is the wifi?") == ["wifi"]
    assert aspect_terms("Is parking easy?") == ["parking"]
    assert aspect_text("How are the rooms?") == "room"
    assert aspect_terms("room decor") == ["room", "decor"]
    assert aspect_terms("value for money") == ["value", "money"]  # a plain query keeps its words


def test_support_counts_the_reviews_of_the_mentions(rag: OpinioRAG) -> None:
    stored = rag.store.sentences(rag.store.entity_record("101").key)
    sentences = {s.sentence.sentence_id: s.sentence.review_id for s in stored}
    for q in ASPECTS:
        reviews = {sentences[i] for i in rag.mentions("101", q)}
        assert len(reviews) == rag.support("101", q).reviews > 0


def test_a_question_shares_a_topic_only_with_all_its_words() -> None:
    from opinio_agents.agents.chat import _shares_topic

    assert not _shares_topic("Do they have a golf course?", ["Of course we will come back."])
    assert _shares_topic("Do they have a golf course?", ["The golf course next door is lovely."])


def test_wifi_and_wi_fi_count_the_same(rag: OpinioRAG) -> None:
    assert split(rag.support("101", "wifi")) == split(rag.support("101", "wi-fi")) == split(rag.support("101", "Wi-Fi"))


def test_every_surface_gives_the_same_numbers(rag: OpinioRAG, client: TestClient) -> None:
    truth = {q: split(rag.support("101", q)) for q in ASPECTS}
    assert all(t[0] > 0 for t in truth.values()), truth
    seen: dict[str, dict[str, tuple[int, ...]]] = {q: {} for q in ASPECTS}

    result = rag.highlights("101", ASPECTS)
    assert {h.query for h in result.highlights} == set(ASPECTS)
    for h in result.highlights:
        seen[h.query][f"API highlight {h.polarity.value}"] = split(h.support)
        assert h.support.describe() in support_line(h)
    for side in ("pros", "cons"):  # the CLI's --format json
        for h in json.loads(to_json(result))[side]:
            seen[h["query"]][f"CLI json {side}"] = split(h["support"])

    for q, question in QUESTIONS.items():
        chat = ReviewChat(rag, "101")
        chat.invoke(question)
        assert chat.last_answer is not None
        seen[q]["chat"] = split(chat.last_answer.support.model_dump())
        cited = [c.text for c in chat.last_answer.evidence]
        tokens = [statement_tokens(c) for c in cited]
        assert not any(same_statement(a, b) for i, a in enumerate(tokens) for b in tokens[i + 1 :]), cited
        # the first cited sentence is on the support line's majority side ('77% negative' above praise was a bug)
        majority = shown_sides(rag.support("101", q))[0]
        first = chat.last_answer.evidence[0].sentiment or 0.0
        assert (first > 0) if majority.value == "pros" else (first < 0), (q, cited)
        # only excerpts that mention the aspect (the one definition) are quoted
        mentioned = rag.mentions("101", q)
        assert all(c.sentence_id in mentioned for c in chat.last_answer.evidence), (q, cited)

    toolkit = ReviewToolkit(rag)
    for q in ASPECTS:
        seen[q]["MCP search_reviews"] = split(toolkit.search_reviews("101", q).support.model_dump())
        seen[q]["HTTP /search"] = split(client.get("/entities/101/search", params={"q": q}).json()["support"])
        response = client.get("/entities/101/highlights/stream", params={"query": q})
        for line in response.text.splitlines():
            if line.startswith("data:") and '"failure"' in line:
                for h in json.loads(line[5:])["highlights"]:
                    seen[q][f"page panel {h['polarity']}"] = split(h["support"])

    report = build_report(rag, "101", ASPECTS, verify=False)
    for h in report.result.highlights:
        seen[h.query][f"report {h.polarity.value}"] = split(h.support)

    for h in result.highlights:  # no two quotes under a highlight say the same thing
        tokens = [statement_tokens(e.text) for e in h.evidence]
        assert not any(same_statement(a, b) for i, a in enumerate(tokens) for b in tokens[i + 1 :]), h.query
    for q in ASPECTS:  # both sides wherever they pass the one threshold (shown_sides)
        support = rag.support("101", q)
        sides = {h.polarity.value for h in result.highlights if h.query == q}
        assert sides == {p.value for p in shown_sides(support)}, (q, support)
    for q in ASPECTS:
        wrong = {surface: got for surface, got in seen[q].items() if got != truth[q]}
        assert not wrong, f"{q}: rag.support says {truth[q]}, but {wrong}"
        assert {"chat", "HTTP /search", "MCP search_reviews"} <= set(seen[q])


def test_aspect_list_chips_and_mcp_count_as_the_highlight_does(rag: OpinioRAG, client: TestClient) -> None:
    listed = rag.aspects("101", top_k=10)
    assert listed
    chips = {a["aspect"]: a for a in client.get("/entities/101/aspects", params={"top_k": 10}).json()["aspects"]}
    overview = {a.aspect: a.support for a in ReviewToolkit(rag).aspect_overview("101", top_k=10).aspects}
    for aspect in listed:
        truth = split(rag.support("101", aspect.aspect))
        listed_split = (aspect.mentions, aspect.positive, aspect.negative, aspect.neutral, aspect.total_reviews)
        assert listed_split == truth, aspect.aspect
        chip = chips[aspect.aspect]
        assert (chip["mentions"], chip["positive"], chip["negative"], chip["neutral"]) == truth[:4], aspect.aspect
        assert split(overview[aspect.aspect].model_dump()) == truth, aspect.aspect
        [highlight, *_] = rag.highlights("101", [aspect.aspect]).highlights or [None]
        if highlight is not None:
            assert split(highlight.support) == truth, aspect.aspect


def test_query_free_highlights_take_their_sides_by_the_one_rule() -> None:
    # HIRO's query-free highlights used their own rule (0.35 of the opinionated reviews), so an
    # aspect could show a CON on the query page and none in the summary: now shown_sides decides.
    from opinio_agents.hiro.aspects import DiscoveredAspect
    from opinio_agents.hiro.highlights import aspect_highlights
    from opinio_agents.stores.catalog import StoredSentence

    texts = [
        ("The wifi was great.", 0.6), ("Fast wifi everywhere.", 0.5), ("Wifi was excellent.", 0.7),
        ("The wifi kept dropping.", -0.6), ("Wifi was useless at night.", -0.5),
    ]
    stored = [
        StoredSentence(
            Sentence(sentence_id=f"e:r{i}:0", entity_id="e", review_id=f"r{i}", index=0, text=t, start=0, end=len(t)),
            tuple(t.lower().split()), score,
        )
        for i, (t, score) in enumerate(texts)
    ]
    # 10 reviews mention it: 6 positive, 3 negative, 1 neutral -> the CON holds 30% of them, 33% of the opinionated
    aspect = DiscoveredAspect(aspect="wifi", sentence_indices=list(range(5)), term_indices=list(range(5)),
                              mentions=10, positive=6, negative=3, neutral=1, total_reviews=40, score=1.0)
    sides = {h.polarity for h in aspect_highlights(aspect, stored)}
    expected = set(shown_sides(Support(reviews=10, positive=6, negative=3, neutral=1)))
    assert sides == expected == {Polarity.PROS, Polarity.CONS}
