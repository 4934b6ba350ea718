"""The import graph has no upward edge: each layer imports only the layers below it.

The layer order is the one ARCHITECTURE.md documents. The check parses every
module of the package (imports inside functions and ``TYPE_CHECKING`` blocks
included, since a lazy import is still a dependency) and fails on any import of
a higher layer, naming the file, the line and both layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "opinio_agents"

# Lowest first. Units in one tuple are peers and must not import each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors", "kinds"),
    ("models",),
    ("embeddings", "prompts", "io", "trends"),
    ("text", "datasets"),
    ("stores", "llm"),
    ("indexing", "triplets"),
    ("retrieval", "chains"),
    ("synthesis",),
    ("pipeline", "hiro"),
    ("summarizers",),
    ("api",),
    ("evaluation", "agents", "scale", "report"),
    ("serve",),
    ("cli",),
    ("__main__",),
)
RANK = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
    return [(line, name) for line, name in found if name == "opinio_agents" or name.startswith("opinio_agents.")]


def _upward_edges() -> list[str]:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _unit(_module_name(path))
        if source == "__init__":  # the lazy top-level namespace re-exports every layer
            continue
        for line, target_module in _imports(path):
            target = _unit(target_module)
            if target in (source, "__init__"):
                continue
            if source not in RANK or target not in RANK:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {source} or {target} has no layer")
            elif RANK[target] >= RANK[source]:
                problems.append(
                    f"{path.relative_to(PACKAGE.parent)}:{line}: {source} (layer {RANK[source]}) imports "
                    f"{target_module} (layer {RANK[target]})"
                )
    return problems


def test_every_package_unit_has_a_layer() -> None:
    units = {_unit(_module_name(p)) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    assert units <= set(RANK), f"add these to LAYERS (and ARCHITECTURE.md): {sorted(units - set(RANK))}"


def test_no_upward_or_sideways_import() -> None:
    problems = _upward_edges()
    assert not problems, "imports against the layer order:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "target", "ok"),
    [("stores", "retrieval", False), ("retrieval", "stores", True), ("chains", "synthesis", False)],
)
def test_layer_order_examples(source: str, target: str, ok: bool) -> None:
    assert (RANK[target] < RANK[source]) is ok
