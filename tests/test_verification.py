"""Verification of each highlight against its own evidence: verdict rules, rewrite/drop, the seam, the output.

The fast tests use a lexicon triplet extractor (no model); the slow ones run the
shipped embedded extractor end to end.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import pytest
from rich.console import Console

from opinio_agents.models import Evidence, Highlight, HighlightSet, Polarity, QueryEvidence, Support, Verification
from opinio_agents.synthesis.alerts import CriticalComplaintCheck
from opinio_agents.synthesis.base import SynthesisOutcome, Synthesizer
from opinio_agents.synthesis.verification import (
    HighlightVerifier,
    _discussed,
    judge,
    sentence_stance,
    verify_outcome,
)
from opinio_agents.triplets.aspects import aspect_words
from opinio_agents.triplets.base import Triplet, TripletExtractor

T = Triplet
PROS, CONS = Polarity.PROS, Polarity.CONS


def no_similarity(opinion: str, others: Sequence[str]) -> list[float]:
    return [0.0 for _ in others]


def some_similarity(opinion: str, others: Sequence[str]) -> list[float]:
    return [0.7 for _ in others]


# -- the verdict rules on inline triplets ------------------------------------------------------
def test_a_pro_citing_only_negative_evidence_is_contradicted() -> None:
    v = judge(
        PROS,
        [T(aspect="wifi", opinion="fast", sentiment=1)],
        [[T(aspect="wifi", opinion="slow", sentiment=-1)], [T(aspect="wi-fi", opinion="dropping", sentiment=-1)]],
        [-0.4, -0.5],
        some_similarity,
    )
    assert v.verdict == "contradicted"
    assert v.reason == "a PRO, but none of its 2 cited sentences is positive about wifi (2 negative)"
    assert (v.aspect_relevance, v.sentiment_factuality) == (1.0, 0.0)


def test_a_con_citing_only_positive_evidence_is_contradicted_even_when_the_text_agrees_with_its_side() -> None:
    v = judge(
        CONS,
        [T(aspect="pool", opinion="cold", sentiment=-1)],
        [[T(aspect="pool", opinion="lovely", sentiment=1)]],
        [0.6],
        no_similarity,
    )
    assert v.verdict == "contradicted" and "none of its 1 cited sentence is negative about pool" in v.reason


def test_an_off_aspect_highlight_is_contradicted() -> None:
    v = judge(
        PROS,
        [T(aspect="rooftop pool", opinion="stunning", sentiment=1)],
        [[T(aspect="breakfast", opinion="fresh", sentiment=1)], [T(aspect="coffee", opinion="good", sentiment=1)]],
        [0.5, 0.4],
        no_similarity,
        evidence_texts=["The breakfast was fresh.", "Good coffee."],
    )
    assert v.verdict == "contradicted"
    assert v.reason == "names 'rooftop pool', which none of its 2 cited sentences discusses"
    assert v.aspect_relevance == 0.0


def test_an_aspect_is_discussed_when_its_words_occur_or_a_similar_aspect_does() -> None:
    evidence = [[T(aspect="breakfast", opinion="fresh", sentiment=1)]]
    named_in_text = judge(
        PROS, [T(aspect="coffee", opinion="good", sentiment=1)], evidence, [0.5], no_similarity,
        evidence_texts=["Fresh breakfast and good coffee."],
    )
    similar = judge(PROS, [T(aspect="morning meal", opinion="fresh", sentiment=1)], evidence, [0.5], some_similarity)
    assert named_in_text.verdict != "contradicted" and similar.verdict != "contradicted"


def test_words_that_name_an_aspect_count_as_discussing_it() -> None:
    # The words every mention count takes for an aspect (support.aspect_forms): "quiet" is about noise,
    # "wi-fi" about the internet, "clean" about cleanliness; without the texts they are not.
    for aspect, text in [
        ("noise", "Quiet and relaxing."),
        ("internet", "Free wi-fi either in the hotel or your room."),
        ("cleanliness", "The rooms were clean and comfortable."),
    ]:
        assert _discussed(aspect, [], set(aspect_words(text)), no_similarity, (text,)), (aspect, text)
        assert not _discussed(aspect, [], set(aspect_words(text)), no_similarity)
    assert not _discussed("noise", [], set(), no_similarity, ("The breakfast was fresh.",))
    # a cited sentence that says "spotless" is evidence that discusses cleanliness: no contradiction
    v = judge(
        PROS, [T(aspect="cleanliness", opinion="great", sentiment=1)],
        [[T(aspect="room", opinion="spotless", sentiment=1)]], [0.5], no_similarity,
        evidence_texts=["Our room was spotless."],
    )
    assert v.verdict != "contradicted"


def test_text_that_says_the_opposite_of_one_sided_evidence_is_contradicted() -> None:
    # the side (PRO) matches the evidence, but the text itself is negative about the aspect
    v = judge(
        PROS,
        [T(aspect="staff", opinion="rude", sentiment=-1)],
        [[T(aspect="staff", opinion="friendly", sentiment=1)], [T(aspect="staff", opinion="helpful", sentiment=1)]],
        [0.6, 0.5],
        no_similarity,
    )
    assert v.verdict == "contradicted" and v.sentiment_factuality == 0.0
    assert "says 'rude' (negative) about staff" in v.reason


def test_a_good_highlight_is_supported_with_the_papers_scores() -> None:
    v = judge(
        CONS,
        [T(aspect="parking", opinion="expensive", sentiment=-1)],
        [[T(aspect="parking", opinion="expensive", sentiment=-1)],
         [T(aspect="Parking", opinion="pricey", sentiment=-1)]],
        [-0.3, -0.2],
        lambda a, bs: [0.5 for _ in bs],
    )
    assert v.verdict == "supported" and v.action == "kept"
    assert (v.aspect_relevance, v.sentiment_factuality, v.opinion_faithfulness) == (1.0, 1.0, 0.75)
    assert v.reason == "backed by 2 of its 2 cited sentences (negative about parking)"


@pytest.mark.parametrize(
    ("highlight", "evidence", "sentiments", "reason"),
    [
        ([T(aspect="bed", opinion="comfy", sentiment=1)],
         [[T(aspect="bed", opinion="comfy", sentiment=1)], [T(aspect="bed", opinion="hard", sentiment=-1)],
          [T(aspect="bed", opinion="saggy", sentiment=-1)]], [0.5, -0.4, -0.3], "mixed evidence: 1 of its 3"),
        ([T(aspect="lift", opinion="old", sentiment=-1), T(aspect="lift", opinion="fast", sentiment=1)],
         [[T(aspect="lift", opinion="old", sentiment=-1)]], [-0.3], "part of this CON reads positive about lift"),
        ([], [[T(aspect="bar", opinion="loud", sentiment=-1)]], [-0.3], "finds no opinion in it"),
        ([T(aspect="room", opinion="cosy", sentiment=1)],
         [[T(aspect="room", opinion="stylish", sentiment=1)]], [0.4], "far from what reviewers say"),
    ],
)
def test_partly_backed_highlights_are_weak(highlight, evidence, sentiments, reason) -> None:
    side = CONS if highlight and highlight[0].sentiment < 0 or not highlight else PROS
    v = judge(side, highlight, evidence, sentiments, no_similarity)
    assert v.verdict == "weak" and reason in v.reason


def test_no_evidence_is_weak_and_undefined() -> None:
    v = judge(PROS, [T(aspect="pool", opinion="big", sentiment=1)], [], [], no_similarity)
    assert (v.verdict, v.aspect_relevance, v.sentiment_factuality, v.opinion_faithfulness) == ("weak", None, None, None)


def test_stance_uses_the_triplets_about_the_subject_then_the_stored_sentiment() -> None:
    mixed = [T(aspect="room", opinion="clean", sentiment=1), T(aspect="wifi", opinion="slow", sentiment=-1)]
    assert sentence_stance(mixed, ["wifi"], 0.5) == -1
    assert sentence_stance(mixed, ["room"], -0.5) == 1
    assert sentence_stance([], ["wifi"], 0.01) == 0 and sentence_stance([], ["wifi"], None) == 0
    # a one-aspect sentence whose stored sentiment says the opposite: the triplet's polarity is the error
    dated = [T(aspect="room decor", opinion="dated", sentiment=1)]
    assert sentence_stance(dated, ["room decor"], -0.09) == -1 and sentence_stance(dated, ["room decor"], 0.0) == 1
    assert sentence_stance(mixed, ["wifi"], 0.9) == -1  # another aspect is named: the triplets decide


# -- rewrite and drop, with a lexicon extractor ------------------------------------------------
POSITIVE = {"great", "friendly", "fast", "lovely", "clean", "free"}
NEGATIVE = {"slow", "rude", "dirty", "noisy", "broken", "expensive", "cold"}
ASPECTS = {"wifi", "staff", "pool", "room", "parking", "spa"}


class LexiconExtractor(TripletExtractor):
    """One triplet per (aspect word, opinion word) in the sentence; counts the sentences it sees."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def extract(self, sentences: Sequence[str]) -> list[list[Triplet]]:
        self.seen.extend(sentences)
        out = []
        for sentence in sentences:
            words = re.findall(r"[a-z]+", sentence.lower())
            aspects = [w for w in words if w in ASPECTS] or [""]
            found = [
                Triplet(aspect=a, opinion=w, sentiment=1 if w in POSITIVE else -1)
                for w in words
                if w in POSITIVE or w in NEGATIVE
                for a in aspects[:1]
            ]
            out.append(found)
        return out


def ev(i: int, text: str, sentiment: float) -> Evidence:
    return Evidence(sentence_id=f"1:{i}:0", text=text, sentiment=sentiment)


NEG_WIFI = [ev(1, "The wifi was slow all week.", -0.4), ev(2, "Wifi broken in our room.", -0.5)]
POS_WIFI = [ev(3, "Free and fast wifi.", 0.6)]


def test_a_contradicted_pro_is_rewritten_from_its_evidence_on_the_evidence_side() -> None:
    verifier = HighlightVerifier(LexiconExtractor(), similarity=no_similarity)
    wrong = Highlight(query="wi-fi", polarity=PROS, text="Great wifi everywhere.", evidence=NEG_WIFI)
    shown, dropped = verifier.apply([wrong])
    assert dropped == [] and len(shown) == 1
    rewritten = shown[0]
    assert rewritten.polarity is CONS and rewritten.verification is not None
    assert rewritten.verification.action == "rewritten" and rewritten.verification.verdict != "contradicted"
    assert "Great wifi" not in rewritten.text and rewritten.text.startswith("The wifi was slow")
    assert "was a PRO: 'Great wifi everywhere.'" in rewritten.notes[-1]
    assert [e.sentence_id for e in rewritten.evidence] == ["1:1:0", "1:2:0"]
    assert wrong.polarity is PROS and wrong.verification is None  # the input is not modified


def test_a_contradicted_highlight_is_dropped_when_its_query_already_has_that_side() -> None:
    verifier = HighlightVerifier(LexiconExtractor(), similarity=no_similarity)
    con = Highlight(query="wi-fi", polarity=CONS, text="The wifi was slow all week.", evidence=NEG_WIFI)
    wrong = Highlight(query="wi-fi", polarity=PROS, text="Great wifi.", evidence=NEG_WIFI[1:])
    shown, dropped = verifier.apply([con, wrong])
    assert [h.text for h in shown] == [con.text]
    assert len(dropped) == 1 and dropped[0].verification.action == "dropped"  # type: ignore[union-attr]
    assert "already has a CON" in dropped[0].verification.reason  # type: ignore[union-attr]


def test_a_contradicted_highlight_without_a_side_in_its_evidence_is_dropped() -> None:
    verifier = HighlightVerifier(LexiconExtractor(), similarity=no_similarity)
    wrong = Highlight(
        query="spa", polarity=PROS, text="Lovely spa.", evidence=[ev(5, "We booked the room online.", 0.0)]
    )
    shown, dropped = verifier.apply([wrong])
    assert shown == [] and "takes no clear side" in dropped[0].verification.reason  # type: ignore[union-attr]


def test_triplets_are_extracted_once_per_distinct_sentence() -> None:
    extractor = LexiconExtractor()
    verifier = HighlightVerifier(extractor, similarity=no_similarity, cache_size=10)
    h = Highlight(query="wi-fi", polarity=CONS, text="The wifi was slow all week.", evidence=NEG_WIFI)
    verifier.verify([h, h])
    verifier.verify([h])
    assert sorted(extractor.seen) == sorted({h.text, *(e.text for e in NEG_WIFI)})


def test_the_guard_still_holds_after_verification() -> None:
    """A CON carrying a critical complaint is flipped by verification; the guard puts the complaint back in a CON."""
    bugs = ev(7, "Bed bugs bit us, the room was otherwise lovely and clean.", 0.3)
    item = QueryEvidence(query="room", evidence=[bugs, ev(8, "Lovely clean room.", 0.7)])
    wrong = Highlight(query="room", polarity=CONS, text="Dirty room.", evidence=[bugs, item.evidence[1]])
    checks = CriticalComplaintCheck()
    outcome, dropped = verify_outcome(
        HighlightVerifier(LexiconExtractor(), similarity=no_similarity),
        checks,
        SynthesisOutcome(item=item, highlights=[wrong]),
    )
    cons = [h for h in outcome.highlights if h.polarity is CONS]
    pros = [h for h in outcome.highlights if h.polarity is PROS]
    assert any(bugs.sentence_id in h.sentence_ids for h in cons)
    assert all(bugs.sentence_id not in h.sentence_ids for h in pros)
    assert all(h.verification is not None for h in outcome.highlights)
    assert not any(h.text == "Dirty room." for h in outcome.highlights)
    assert dropped == [] or all(d.verification.action == "dropped" for d in dropped)  # type: ignore[union-attr]


# -- the seam: every summarizer verifies, and a contradicted highlight is never printed -------
class WrongSideSynthesizer(Synthesizer):
    """Writes, for every query, a PRO from the most negative evidence sentence (a wrong-side highlight)."""

    name = "wrong-side"

    def synthesize(self, item: QueryEvidence) -> list[Highlight]:
        negative = [e for e in item.evidence if (e.sentiment or 0.0) < -0.05]
        if not negative:
            return []
        return [Highlight(query=item.query, polarity=PROS, text="WRONG SIDE: guests adore the wifi.",
                          evidence=negative[:2], support=item.support)]


def _small_entity():
    from opinio_agents.models import Entity

    texts = [
        "The wifi was slow and kept dropping.",
        "Wifi broken in the room, terrible.",
        "Slow wifi, awful for work.",
        "The pool was lovely.",
        "Great pool and friendly staff.",
    ]
    return Entity.model_validate(
        {"entity_id": "v1", "entity_name": "Test Inn",
         "user_reviews": [{"review_id": i, "text": t} for i, t in enumerate(texts)]}
    )


@pytest.fixture(scope="module")
def wrong_side_run(tmp_path_factory):
    from opinio_agents.api import OpinioRAG
    from tests.fake_encoder import HashEncoder

    extractor = LexiconExtractor()
    rag = OpinioRAG(
        tmp_path_factory.mktemp("verify") / "store",
        encoder=HashEncoder(),
        synthesizer=WrongSideSynthesizer(),
        verify=HighlightVerifier(extractor, similarity=no_similarity),
        top_k=3,
    )
    rag.index(_small_entity(), fit_hiro=False)
    return rag


def test_a_contradicted_highlight_is_rewritten_or_dropped_and_never_printed(wrong_side_run) -> None:
    from opinio_agents.cli.render import to_json, to_markdown, to_rich

    result = wrong_side_run.highlights("v1", ["wifi"])
    assert "verification" in result.meta.timings
    shown = [h for h in result.highlights if "WRONG SIDE" in h.text]
    assert shown == []
    changed = [h for h in result.highlights if h.verification and h.verification.action == "rewritten"]
    assert len(changed) + len(result.meta.dropped) == 1
    assert all(h.polarity is CONS for h in changed)
    console = Console(file=io.StringIO(), width=80, color_system=None)
    console.print(to_rich(result, width=80))
    table = console.file.getvalue()  # type: ignore[attr-defined]
    assert "WRONG SIDE" not in table and "WRONG SIDE" not in to_markdown(result)
    parsed = HighlightSet.model_validate_json(to_json(result))
    assert all("WRONG SIDE" not in h.text for h in parsed.highlights)  # the notes keep what it was, for audit
    if changed:
        assert "verdict: rewritten, now" in _cells(table)
    else:
        assert "verification dropped 1 highlight" in _cells(table)


def test_verification_off_keeps_the_synthesizer_output(wrong_side_run) -> None:
    result = wrong_side_run.highlights("v1", ["wifi"], verify=False)
    assert [h.text for h in result.pros] == ["WRONG SIDE: guests adore the wifi."]
    assert result.pros[0].verification is None and "verification" not in result.meta.timings


def test_verify_setting_is_checked() -> None:
    from opinio_agents.errors import ConfigError
    from opinio_agents.synthesis.summarizer import resolve_verifier

    with pytest.raises(ConfigError, match="verify="):
        resolve_verifier("yes")  # type: ignore[arg-type]


# -- the terminal layout ------------------------------------------------------------------------
def _table_set(verified: bool = True) -> HighlightSet:
    result = HighlightSet(entity_id=101, entity_name="Harborview City Hotel")
    check = Verification(aspect_relevance=1.0, sentiment_factuality=1.0, opinion_faithfulness=0.84,
                         verdict="supported", reason="backed by 5 of its 5 cited sentences (positive about location)")
    for query, side, support in (
        ("location", PROS, Support(reviews=93, positive=69, negative=10, total_reviews=240)),
        ("breakfast buffet", PROS, Support(reviews=56, positive=34, negative=15, total_reviews=240)),
        ("room decor", PROS, Support(reviews=40, positive=19, negative=20, total_reviews=240)),
        ("wi-fi connection in the rooms", CONS, Support(reviews=49, positive=20, negative=26, total_reviews=240)),
    ):
        result.add(Highlight(
            query=query, polarity=side,
            text=f"The {query} was described at length by many guests, with plenty of detail to wrap around.",
            evidence=[Evidence(sentence_id=f"101:10100{i}:{i}", text="Some sentence.", sentiment=0.5)
                      for i in range(5)],
            support=support, verification=check if verified else None,
        ))
    return result


def _printed(result: HighlightSet, width: int) -> str:
    from opinio_agents.cli.render import to_rich

    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(to_rich(result, width=width))
    return console.file.getvalue()  # type: ignore[attr-defined]


def _cells(text: str) -> str:
    """Each table column's text with its wrapped lines joined (columns one after the other), then the rest."""
    columns: dict[int, list[str]] = {}
    rest = []
    for line in text.splitlines():
        if "│" in line:
            for i, part in enumerate(line.split("│")):
                columns.setdefault(i, []).append(part.strip())
        else:
            rest.append(line)
    joined = [" ".join(" ".join(parts).split()) for _, parts in sorted(columns.items())]
    return " | ".join([*joined, " ".join(" ".join(rest).split())])


def test_table_layout_at_80_columns() -> None:
    from opinio_agents.cli.render import table_layout

    layout = table_layout(80, ["101:1010015:5", "101:1010042:11"])
    assert layout.ids == len("[101:1010042:11]") and not layout.evidence_text
    assert layout.query + layout.ids + 30 <= 80
    assert table_layout(160).evidence_text and table_layout(40).query >= 8
    assert table_layout(80, ["x" * 60]).ids == 26  # very long ids fold in a capped column (a third)
    assert table_layout(80, ["100585:100585-r017:11"]).ids == len("[100585:100585-r017:11]")  # SPACE ids stay whole


@pytest.mark.parametrize("width", [80, 100, 160])
def test_every_field_stays_whole_at_narrow_widths(width: int) -> None:
    text = _printed(_table_set(), width)
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) <= width
    cells = _cells(text)
    for piece in (
        "breakfast buffet", "wi-fi connection in the rooms", "mentioned in 93 of 240 reviews, 74% positive",
        "verdict: supported (AR 1.00, SF 1.00, OF 0.84): backed by 5 of its 5 cited sentences",
        "[101:101004:4]",
    ):
        assert piece in cells, piece


def test_a_pro_of_a_split_aspect_says_reviews_are_split() -> None:
    cells = _cells(_printed(_table_set(), 80))
    assert "reviews split, 48% positive: mentioned in 40 of 240 reviews, 50% negative" in cells
    assert "reviews split, 53% negative" not in cells  # a CON leaning negative is not "split"
    assert not re.search(r"(?<!split, 48% positive: )mentioned in 40 of 240 reviews, 50% negative", cells)


def test_markdown_shows_the_verdict_and_the_split() -> None:
    from opinio_agents.cli.render import to_markdown

    text = to_markdown(_table_set())
    assert "_verification: supported (AR 1.00, SF 1.00, OF 0.84): backed by 5 of its 5 cited sentences" in text
    assert "reviews split, 48% positive" in text


def test_unverified_results_print_no_verdict() -> None:
    assert "verdict:" not in _printed(_table_set(verified=False), 80)


def test_agent_tool_results_carry_the_verdict(wrong_side_run) -> None:
    from opinio_agents.agents.toolkit import ReviewToolkit

    result = ReviewToolkit(wrong_side_run).review_highlights("v1", ["wifi"])
    items = [*result.pros, *result.cons]
    assert items and all(i.verdict in ("supported", "weak") and i.verification for i in items)


# -- slow: the shipped extractor end to end, and the CLI at 80 columns in a real subprocess -----
WRONG_PRO = "The wi-fi is fast and reliable everywhere."


def _wrong_side_model():
    from tests.llm_fixtures import ScriptedChatModel, answer

    def respond(messages) -> str:
        prompt = str(messages[-1].content)
        if "Query: \"wi-fi\"" in prompt or "Query: wi-fi" in prompt:
            return answer(("PROS", WRONG_PRO, ["S1", "S2"]))
        return answer(("PROS", "Large, clean pool that is never crowded.", ["S1", "S2"]))

    return ScriptedChatModel(respond=respond, calls=[])


@pytest.mark.slow
def test_a_wrong_side_llm_highlight_is_never_printed_with_the_real_extractor(tiny_store, encoder) -> None:
    from opinio_agents.cli.render import to_json, to_markdown, to_rich
    from opinio_agents.pipeline import HighlightPipeline
    from opinio_agents.synthesis.llm import LLMSynthesizer

    pipeline = HighlightPipeline(
        tiny_store,
        LLMSynthesizer(_wrong_side_model()),
        top_k=3,
        verifier=HighlightVerifier(encoder=encoder),
    )
    result = pipeline.summarize("7", ["wi-fi", "pool"])
    assert all(h.verification is not None for h in result.highlights)
    assert WRONG_PRO not in [h.text for h in result.highlights]
    fixed = [h for h in [*result.highlights, *result.meta.dropped] if h.query == "wi-fi"]
    assert fixed and all(h.verification.action in ("rewritten", "dropped") for h in fixed)  # type: ignore[union-attr]
    assert all(h.polarity is CONS for h in result.highlights if h.query == "wi-fi")
    pool = [h for h in result.highlights if h.query == "pool"]
    assert pool and pool[0].verification.action == "kept"  # type: ignore[union-attr]
    assert pool[0].verification.verdict != "contradicted"  # type: ignore[union-attr]
    printed = _printed(result, 80) + to_markdown(result)
    assert WRONG_PRO not in printed.replace("\n", " ")
    assert all(WRONG_PRO != h.text for h in HighlightSet.model_validate_json(to_json(result)).highlights)
    assert to_rich  # the table printer was exercised through _printed


@pytest.mark.slow
def test_cli_table_at_80_columns_keeps_every_field_whole(tmp_path, encoder) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    from opinio_agents.cli.main import main
    from opinio_agents.datasets import load_sample
    from opinio_agents.io.writers import write_opiniobank

    entity = next(e for e in load_sample() if e.key == "101")
    entity.user_reviews = entity.user_reviews[:20]
    data = tmp_path / "small.json"
    write_opiniobank([entity], data)
    store = tmp_path / "store"
    assert main(["index", str(data), "--store", str(store), "--quiet"]) == 0
    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "COLUMNS": "80", "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "opinio_agents", "highlight", str(data), "--entity", "101", "--store", str(store),
         "--quiet", "--verify", "-q", "location", "-q", "front desk staff", "-q", "room decor"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "…" not in out and max(len(line) for line in out.splitlines()) <= 80
    cells = _cells(out)
    assert "front desk staff" in cells and "verdict: " in cells
    assert re.search(r"mentioned in \d+ of 20 reviews, \d+% (positive|negative)", cells)
    assert re.search(r"\[101:\d+:\d+\]", cells) and "verified=yes" in out


def test_any_summarizer_gets_verification_from_the_base_seam(wrong_side_run) -> None:
    """A Summarizer that is not the retrieval pipeline (as the long-context and HIRO ones) is verified too."""
    from opinio_agents.synthesis.summarizer import Draft, Summarizer

    class OneShot(Summarizer):
        name = "one-shot"
        query_free = True  # it answers its own query, "wifi"

        def draft(self, request):
            entity_key = request.entity_key
            item = QueryEvidence(query="wifi", evidence=NEG_WIFI)
            wrong = Highlight(query="wifi", polarity=PROS, text="Great wifi everywhere.", evidence=NEG_WIFI)
            return Draft(entity_id=entity_key, entity_name="", queries=["wifi"],
                         outcomes=[SynthesisOutcome(item=item, highlights=[wrong])])

    store = wrong_side_run.store
    verified = OneShot(store, verifier=HighlightVerifier(LexiconExtractor(), similarity=no_similarity)).summarize("v1")
    assert [h.polarity for h in verified.highlights] == [CONS]
    assert verified.highlights[0].verification.action == "rewritten"  # type: ignore[union-attr]
    assert OneShot(store, verifier=False).summarize("v1").pros[0].text == "Great wifi everywhere."


# -- background extraction: the next query is synthesized while this one's triplets are extracted
def _three_queries(store):
    """A Summarizer answering three queries with extractive (non-model) highlights, one of them on the wrong side."""
    from opinio_agents.synthesis.summarizer import Draft, Summarizer

    class ThreeQueries(Summarizer):
        name = "three-queries"
        query_free = True

        def draft(self, request):
            def outcomes():
                for query, text, evidence in (
                    ("wifi", "Great wifi everywhere.", NEG_WIFI),
                    ("pool", "Free and fast wifi.", POS_WIFI),
                    ("wifi again", "The wifi was slow all week.", NEG_WIFI),
                ):
                    item = QueryEvidence(query=query, evidence=evidence)
                    side = PROS if "Great" in text or "Free" in text else CONS
                    yield SynthesisOutcome(item=item, highlights=[
                        Highlight(query=query, polarity=side, text=text, evidence=evidence)
                    ])

            return Draft(entity_id=request.entity_key, entity_name="", queries=["wifi", "pool", "wifi again"],
                         outcomes=outcomes())

    return ThreeQueries


def test_background_extraction_gives_the_sequential_verdicts_in_query_order(wrong_side_run) -> None:
    from opinio_agents.synthesis.summarizer import SummaryDone

    kind = _three_queries(wrong_side_run.store)
    runs = {}
    for prefetch in (False, True):
        extractor = LexiconExtractor()
        verifier = HighlightVerifier(extractor, similarity=no_similarity, prefetch=prefetch)
        events = list(kind(wrong_side_run.store, verifier=verifier).stream("v1"))
        assert isinstance(events[-1], SummaryDone)
        assert [e.item.query for e in events[:-1]] == ["wifi", "pool", "wifi again"]
        runs[prefetch] = (events[-1].result, extractor.seen)
    sequential, prefetched = runs[False][0], runs[True][0]
    assert [(h.query, h.polarity, h.text, h.verification) for h in prefetched.highlights] == [
        (h.query, h.polarity, h.text, h.verification) for h in sequential.highlights
    ]
    assert [h.verification.action for h in prefetched.highlights].count("rewritten") == 1  # type: ignore[union-attr]
    assert sorted(runs[True][1]) == sorted(runs[False][1])  # each text extracted once, ahead or not


def test_prefetch_does_nothing_when_off_or_cached() -> None:
    h = Highlight(query="wi-fi", polarity=CONS, text="The wifi was slow all week.", evidence=NEG_WIFI)
    assert HighlightVerifier(LexiconExtractor(), similarity=no_similarity, prefetch=False).prefetch([h]) is None
    extractor = LexiconExtractor()
    verifier = HighlightVerifier(extractor, similarity=no_similarity)
    ahead = verifier.prefetch([h])
    assert ahead is not None and len(ahead.result()) == 2  # the text and the other cited sentence
    assert verifier.prefetch([h]) is None and len(extractor.seen) == 2


def test_a_background_extraction_error_is_raised_in_the_callers_thread(wrong_side_run) -> None:
    class Broken(TripletExtractor):
        def extract(self, sentences):
            raise RuntimeError("the triplet model is broken")

    verifier = HighlightVerifier(Broken(), similarity=no_similarity)
    with pytest.raises(RuntimeError, match="broken"):
        _three_queries(wrong_side_run.store)(wrong_side_run.store, verifier=verifier).summarize("v1")


def test_verification_is_on_by_default_on_every_path(verify_by_default, tmp_path) -> None:
    """The shipped default verifies when nobody says: the façade (CLI, service, MCP, agent tools) and any summarizer."""
    from opinio_agents.api import OpinioRAG
    from opinio_agents.synthesis.summarizer import resolve_verifier
    from opinio_agents.synthesis.verification import VerificationSettings
    from tests.fake_encoder import HashEncoder

    assert verify_by_default is True and VerificationSettings().verify_by_default is True
    assert isinstance(resolve_verifier(None), HighlightVerifier) and resolve_verifier(False) is None
    rag = OpinioRAG(tmp_path / "store", encoder=HashEncoder())
    assert isinstance(rag.verifier(), HighlightVerifier) and rag.verifier() is rag.verifier()
    assert rag.verifier(False) is None and OpinioRAG(tmp_path / "store", verify=False).verifier() is None


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_prefetches_with_its_own_thread() -> None:
    """A child forked after the parent's background thread started must not wait on a thread it lacks."""
    import os

    h = Highlight(query="wi-fi", polarity=CONS, text="Wifi broken.", evidence=POS_WIFI)
    assert HighlightVerifier(LexiconExtractor(), similarity=no_similarity).prefetch([h]).result() is not None  # type: ignore[union-attr]
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only when its own prefetch completes
        try:
            ahead = HighlightVerifier(LexiconExtractor(), similarity=no_similarity).prefetch([h])
            os._exit(0 if ahead is not None and len(ahead.result(timeout=20)) == 2 else 1)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
