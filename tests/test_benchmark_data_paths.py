"""``benchmarks/data_paths.py``: every benchmark script finds the research data through one resolver."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.benchmark_support import BENCHMARKS, load_benchmark


@pytest.fixture(scope="module")
def paths():  # noqa: ANN201 - a script module
    return load_benchmark("data_paths")


def test_the_environment_variable_wins_when_it_names_a_folder(paths, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(paths.REAL_REVIEWS_ENV, str(tmp_path))
    assert paths.real_reviews_dir() == tmp_path
    assert paths.real_reviews_file("space_dev.json") == tmp_path / "space_dev.json"


def test_a_variable_that_names_no_folder_falls_back_to_the_shared_data(paths, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(paths.REAL_REVIEWS_ENV, str(tmp_path / "missing"))
    shared = paths.SHARED_DATA / "real-reviews"
    assert paths.real_reviews_dir() == (shared if shared.is_dir() else None)
    assert paths.real_reviews_file("oposum.json") == shared / "oposum.json"


def test_no_script_resolves_the_shared_data_on_its_own() -> None:
    # One resolver: a script that builds "shared/data" or reads $OPINIO_REAL_REVIEWS itself would miss the other.
    own = re.compile(r'"shared"\s*/\s*"data"|/\s*"shared/data|environ\.get\("OPINIO_REAL_REVIEWS"')
    offenders = [
        script.name
        for script in sorted(BENCHMARKS.glob("*.py"))
        if script.name != "data_paths.py" and own.search(_code(script.read_text(encoding="utf-8")))
    ]
    assert offenders == []


def _code(source: str) -> str:
    """``source`` without its docstrings and comments (they name the folder for the reader)."""
    source = re.sub(r'"""[\s\S]*?"""', "", source)
    return re.sub(r"#.*", "", source)
