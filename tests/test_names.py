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


#: Public constants that share a name across modules on purpose, each with the reason.
NAMED_ALIKE = {
    # two different prompts, each private to its module's chain (triplet extraction, HIRO generation)
    "SYSTEM_PROMPT": {"opinio_agents/hiro/generators.py", "opinio_agents/triplets/llm.py"},
}


def _string_set(node: ast.AST) -> frozenset[str] | None:
    """The values of a ``Literal["a", "b", ...]`` or of a tuple/list/set of two or more strings."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "Literal":
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        elts = node.elts
    else:
        return None
    if len(elts) < 2 or not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts):
        return None
    return frozenset(e.value for e in elts)  # type: ignore[attr-defined]


def test_no_constant_name_is_defined_in_two_modules() -> None:
    """One name, one definition: ``DEFAULT_ALPHA`` meant HIRO smoothing and a significance level."""
    where: dict[str, set[str]] = defaultdict(set)
    for module, tree in _modules().items():
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign
            ) else []
            for target in targets:
                is_type_var = isinstance(node.value, ast.Call) and getattr(node.value.func, "id", "") == "TypeVar"
                if isinstance(target, ast.Name) and target.id.isupper() and not target.id.startswith("_") and not (
                    is_type_var
                ):
                    where[target.id].add(module)
    duplicates = {name: sorted(m) for name, m in where.items() if len(m) > 1 and m != NAMED_ALIKE.get(name)}
    assert duplicates == {}


def test_each_kind_is_spelled_once() -> None:
    """A string ``Literal`` is written in one place; the kinds of ``kinds.py`` are never re-typed.

    Catches a second ``Literal["bm25", "dense", "hybrid"]`` (or any other repeated ``Literal``)
    and a tuple or list that spells out the values of a ``kinds.py`` ``Literal`` instead of
    using its tuple (``RETRIEVERS``).
    """
    literals: dict[frozenset[str], list[str]] = defaultdict(list)
    spelled: list[tuple[frozenset[str], str]] = []
    for module, tree in _modules().items():
        for node in ast.walk(tree):
            values = _string_set(node)
            if values is None:
                continue
            where = f"{module}:{node.lineno}"  # type: ignore[attr-defined]
            if isinstance(node, ast.Subscript):
                literals[values].append(where)
            else:
                spelled.append((values, where))
    kinds = {v for v, places in literals.items() if any(p.startswith("opinio_agents/kinds.py:") for p in places)}
    assert {"bm25", "dense", "hybrid"} in kinds and {"queries", "expert-queries", "query-free"} in kinds
    repeated = {tuple(sorted(v)): places for v, places in literals.items() if len(places) > 1}
    assert repeated == {}
    retyped = [where for values, where in spelled if values in kinds and not where.startswith("opinio_agents/kinds.py")]
    assert retyped == []


def test_kinds_agree_with_the_models() -> None:
    from opinio_agents.kinds import POLARITY_NAMES, QUERY_MODES, RETRIEVERS
    from opinio_agents.models import Polarity, RunMeta
    from opinio_agents.retrieval.factory import RETRIEVERS as FACTORY_RETRIEVERS

    assert tuple(p.value for p in Polarity) == POLARITY_NAMES
    assert FACTORY_RETRIEVERS is RETRIEVERS
    assert RunMeta(mode=QUERY_MODES[0]).mode == "queries"
