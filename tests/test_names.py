"""One name per concept: checked over the package's source (no import, no model)."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "opinio_agents"


def _modules() -> dict[str, ast.Module]:
    return {
        str(path.relative_to(PACKAGE.parent)): ast.parse(path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def test_no_two_public_classes_share_a_name() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for module, tree in _modules().items():
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                where[node.name].append(module)
    duplicates = {name: modules for name, modules in where.items() if len(modules) > 1}
    assert duplicates == {}


def test_the_sentiment_threshold_and_types_are_defined_once() -> None:
    defined: dict[str, list[str]] = defaultdict(list)
    for module, tree in _modules().items():
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign
            ) else []
            for target in targets:
                if isinstance(target, ast.Name) and target.id in {"SENTIMENT_THRESHOLD", "Sentiment", "Side"}:
                    defined[target.id].append(module)
    assert dict(defined) == {
        "SENTIMENT_THRESHOLD": ["opinio_agents/models.py"],
        "Sentiment": ["opinio_agents/models.py"],
    }


def test_sentiment_type_is_the_triplet_one() -> None:
    from opinio_agents.models import SENTIMENT_NAMES, Sentiment
    from opinio_agents.triplets.base import Sentiment as TripletSentiment

    assert TripletSentiment is Sentiment
    assert set(SENTIMENT_NAMES) == {-1, 0, 1}
