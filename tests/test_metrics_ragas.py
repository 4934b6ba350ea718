"""RAGAs adapter: an install hint without ragas; offline and fake-LLM metrics with the real ragas.

The ragas tests skip in the main environment (ragas 0.4.3 pins openai < 2) and run in CI's
second environment (``.venv-ragas``, see the README), where ``OPINIO_REQUIRE_RAGAS=1`` turns
a missing ragas into a failure instead of a skip.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys

import pytest

from opinio_agents.errors import MissingDependencyError
from opinio_agents.models import ExpertReview, Highlight, HighlightSet, Polarity

HAS_RAGAS = (
    importlib.util.find_spec("ragas") is not None
    and importlib.util.find_spec("rapidfuzz") is not None
)
REQUIRE_RAGAS = os.environ.get("OPINIO_REQUIRE_RAGAS") == "1"
needs_ragas = pytest.mark.skipif(
    not HAS_RAGAS and not REQUIRE_RAGAS,
    reason="ragas extra not installed (its own venv: pip install -e '.[ragas]')",
)


def test_required_ragas_is_installed():
    if REQUIRE_RAGAS:
        assert HAS_RAGAS, "OPINIO_REQUIRE_RAGAS=1 but ragas or rapidfuzz is not importable"


def test_missing_ragas_raises_install_hint(monkeypatch):
    from opinio_agents.evaluation.ragas_adapter import RagasScorer

    monkeypatch.setitem(sys.modules, "ragas", None)  # makes `import ragas` fail, installed or not
    with pytest.raises(MissingDependencyError) as info:
        RagasScorer()
    assert "pip install 'opinio-agents[ragas]'" in str(info.value)


@needs_ragas
def test_non_llm_metrics_offline():
    from opinio_agents.evaluation.ragas_adapter import RagasScorer

    scorer = RagasScorer()
    names = [m.name for m in scorer.metrics()]
    assert names == [
        "non_llm_context_precision_with_reference",
        "non_llm_context_recall",
        "non_llm_string_similarity",
        "rouge_score",
    ]
    same = scorer.score_sample(
        "wifi", "Fast free wifi.", ["Fast free wifi.", "Cold eggs."], "Fast free wifi."
    )
    assert same["non_llm_string_similarity"] == pytest.approx(1.0)
    assert same["non_llm_context_recall"] == pytest.approx(1.0)
    assert same["rouge_score"] == pytest.approx(1.0)
    other = scorer.score_sample("wifi", "Cold eggs.", ["Cold eggs."], "Fast free wifi.")
    assert other["non_llm_string_similarity"] < 0.5 and other["non_llm_context_recall"] == 0.0

    hs = HighlightSet(
        entity_id=1,
        pros=[Highlight(query="wifi", polarity=Polarity.PROS, text="Fast free wifi.")],
        cons=[Highlight(query="spa", polarity=Polarity.CONS, text="No spa.")],
    )
    scores = scorer(
        hs, ExpertReview(pros={"wifi": "Fast free wifi."}), {"wifi": ["Fast free wifi."]}
    )
    assert scores["rouge_score"] == pytest.approx(1.0)


@needs_ragas
def test_llm_metrics_through_langchain_wrapper_with_fake_model():
    from langchain_core.language_models import FakeListChatModel

    from opinio_agents.evaluation.ragas_adapter import RagasScorer

    answers = [
        json.dumps({"statements": ["The wifi is fast."]}),
        json.dumps(
            {"statements": [{"statement": "The wifi is fast.", "reason": "stated", "verdict": 1}]}
        ),
        json.dumps({"reason": "useful", "verdict": 1}),
        json.dumps({"reason": "unrelated", "verdict": 0}),
    ]
    scorer = RagasScorer(FakeListChatModel(responses=answers), non_llm=False)
    assert [m.name for m in scorer.metrics()] == [
        "faithfulness",
        "llm_context_precision_with_reference",
    ]
    scores = scorer.score_sample(
        "wifi", "Fast wifi.", ["The wifi was fast.", "Breakfast was cold."], "Fast, free wifi."
    )
    assert scores["faithfulness"] == pytest.approx(1.0)
    assert scores["llm_context_precision_with_reference"] == pytest.approx(1.0, abs=1e-6)
