"""`opinio aspects` and `opinio compare` (registered on a local Typer app).

The dataset-backed tests index with the real MiniLM (about a minute on 2 cores), hence ``slow``.
"""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    from opinio_agents.cli.hiro import register

    application = typer.Typer()
    register(application)
    return application


@pytest.fixture(scope="module")
def dataset(tmp_path_factory, encoder):
    """A small synthetic dataset on disk (the shared encoder fixture warms the MiniLM cache)."""
    from opinio_agents.datasets import write_synthetic

    path = tmp_path_factory.mktemp("hiro-cli") / "synth.json"
    write_synthetic(path, n_entities=3, reviews_per_entity=30, seed=5, sentences_per_review=(1, 8))
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return tmp_path_factory.mktemp("hiro-cli-store")


@pytest.mark.slow
def test_aspects_json_indexes_on_first_use(app, dataset, store):
    result = CliRunner().invoke(app, ["aspects", str(dataset), "--entity", "1", "--store", str(store),
                                      "--format", "json", "--top", "5"])
    assert result.exit_code == 0, result.output
    records = json.loads(result.output)
    assert 0 < len(records) <= 5
    for record in records:
        assert set(record) == {"aspect", "mentions", "positive", "negative", "example_sentence_ids"}
        assert record["mentions"] >= record["positive"] + record["negative"]
        assert all(sid.startswith("1:") for sid in record["example_sentence_ids"])
    assert list((store / "hiro").glob("codebooks-*.npz")) != []


@pytest.mark.slow
def test_aspects_table_and_compare(app, dataset, store):
    runner = CliRunner()
    table = runner.invoke(app, ["aspects", str(dataset), "-e", "2", "--store", str(store)])
    assert table.exit_code == 0, table.output
    assert "Aspects of" in table.output and "mentions" in table.output
    compared = runner.invoke(app, ["compare", str(dataset), "-e", "2", "--store", str(store), "-f", "json"])
    assert compared.exit_code == 0, compared.output
    report = json.loads(compared.output)
    assert report["entity_id"] == "2" and report["compared_with"] == 2
    lifts = [item["lift"] for item in report["items"]]
    assert lifts == sorted(lifts, reverse=True)
    shown = runner.invoke(app, ["compare", str(dataset), "-e", "2", "--store", str(store)])
    assert shown.exit_code == 0 and "elsewhere" in shown.output


@pytest.mark.slow
def test_unknown_entity_is_a_clean_error(app, dataset, store):
    result = CliRunner().invoke(app, ["aspects", str(dataset), "--entity", "999", "--store", str(store)])
    assert result.exit_code == 2
    assert "999" in result.output and "Traceback" not in result.output


def test_missing_dataset_is_reported(app, tmp_path):
    result = CliRunner().invoke(app, ["aspects", str(tmp_path / "none.json"), "-e", "1", "--store", str(tmp_path)])
    assert result.exit_code != 0
    assert "does not exist" in result.output


@pytest.mark.slow
def test_unset_options_take_the_library_defaults(app, dataset, store):
    """Without --top/--alpha the command lists what ``OpinioRAG.aspects`` lists with its own defaults."""
    from opinio_agents import OpinioRAG

    runner = CliRunner()
    listed = runner.invoke(app, ["aspects", str(dataset), "-e", "3", "--store", str(store), "-f", "json"])
    assert listed.exit_code == 0, listed.output
    expected = [a.aspect for a in OpinioRAG(store).aspects("3")]
    assert [r["aspect"] for r in json.loads(listed.output)] == expected
    smoothed = runner.invoke(app, ["aspects", str(dataset), "-e", "3", "--store", str(store), "-f", "json",
                                   "--alpha", "1000", "--top", "3"])
    assert smoothed.exit_code == 0, smoothed.output
    assert [r["aspect"] for r in json.loads(smoothed.output)] == [
        a.aspect for a in OpinioRAG(store).aspects("3", top_k=3, alpha=1000)
    ]
