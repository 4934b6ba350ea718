"""`opinio evaluate --references` on a 2-hotel slice of SPACE dev (real reviews, human summaries).

The data lives outside the repository: ``$OPINIO_REAL_REVIEWS`` or
``../shared/data/real-reviews`` next to the checkout. Without it the test is
skipped with the reason.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from opinio_agents.cli.evaluate import register

pytestmark = pytest.mark.slow

HOTELS = 2
REVIEWS = 60


def real_reviews_dir() -> Path | None:
    env = os.environ.get("OPINIO_REAL_REVIEWS")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[1].parent / "shared" / "data" / "real-reviews")
    return next((c for c in candidates if (c / "space_dev.json").is_file()), None)


@pytest.fixture(scope="module")
def space_slice(tmp_path_factory) -> tuple[Path, Path]:
    folder = real_reviews_dir()
    if folder is None:
        pytest.skip("SPACE dev not found: set OPINIO_REAL_REVIEWS or put it in ../shared/data/real-reviews")
    refs = json.loads((folder / "space_dev.refs.json").read_text(encoding="utf-8"))
    data = json.loads((folder / "space_dev.json").read_text(encoding="utf-8"))
    entities = [e for e in data if e["entity_id"] in refs]
    chosen = entities[:HOTELS]
    for entity in chosen:
        entity["user_reviews"] = entity["user_reviews"][:REVIEWS]
    tmp = tmp_path_factory.mktemp("space")
    data, ref_file = tmp / "space_slice.json", tmp / "space_slice.refs.json"
    data.write_text(json.dumps(chosen), encoding="utf-8")
    ref_file.write_text(json.dumps({e["entity_id"]: refs[e["entity_id"]] for e in chosen}), encoding="utf-8")
    return data, ref_file


def test_cli_aspect_and_general_beat_random(space_slice, tmp_path) -> None:
    data, refs = space_slice
    app = typer.Typer()
    register(app)

    @app.command("noop")
    def noop() -> None:  # a second command keeps typer in group mode
        """Unused."""

    out = tmp_path / "out"
    args = ["evaluate", str(data), "--references", str(refs), "--task", "aspect", "--task", "general"]
    args += ["-o", str(out), "--no-plots", "--quiet"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "Aspect summaries" in result.output and "General summaries" in result.output
    tables = json.loads((out / "human_tables.json").read_text())["tables"]
    for task, baselines in (
        ("aspect", {"random", "bm25-top2", "lexrank", "centroid", "oracle"}),
        ("general", {"random", "lexrank", "centroid", "oracle"}),
    ):
        rows = {r["System"]: r for r in tables[task]["rows"]}
        assert set(rows) == {"opinio", *baselines}
        assert rows["opinio"]["Entities"] == HOTELS
        assert rows["opinio"]["RL"] > rows["random"]["RL"], (task, rows)
        assert rows["opinio"]["R1"] > rows["random"]["R1"], (task, rows)
        assert rows["oracle"]["RL"] > rows["random"]["RL"]  # the upper bound reads the references
    records = [json.loads(line) for line in (out / "human_records.jsonl").read_text().splitlines()]
    assert {r["unit"] for r in records if r["task"] == "aspect"} == {
        "building",
        "cleanliness",
        "food",
        "location",
        "rooms",
        "service",
    }
    bad = CliRunner().invoke(app, [*args[:4], "--task", "bogus", *args[8:]])
    assert bad.exit_code != 0
