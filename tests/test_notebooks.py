"""The notebooks in notebooks/ run top to bottom, offline, in a temporary working directory."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = ["quickstart.ipynb", "chatbot.ipynb", "evaluation.ipynb"]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_writes_its_store_in_a_temporary_folder(name: str) -> None:
    """`jupyter nbconvert --execute` runs a notebook in notebooks/: a store in the working directory
    would be left there, untracked. Every store a notebook opens is a fresh temporary folder."""
    code = "\n".join(
        "".join(cell["source"])
        for cell in json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))["cells"]
        if cell["cell_type"] == "code"
    )
    stores = re.findall(r"OpinioRAG\((.*?)\)", code)
    assert stores and all(arg.strip() == "store_dir=store_dir" for arg in stores), stores
    assert 'store_dir = tempfile.mkdtemp(prefix="opinio-store-")' in code


def test_jupyter_nbconvert_is_in_the_notebooks_extra() -> None:
    import tomllib

    project = tomllib.loads((NOTEBOOKS.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extra = project["optional-dependencies"]["notebooks"]
    assert any(requirement.startswith("nbconvert") for requirement in extra), extra
    assert any("notebooks" in requirement for requirement in project["optional-dependencies"]["dev"])


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_committed_without_outputs(name: str) -> None:
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, f"{name}: clear outputs"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the kernel inherits TMPDIR: the notebook's own temporary store is left under tmp_path, not in /tmp
    temporary, workdir = tmp_path / "tmp", tmp_path / "work"
    temporary.mkdir()
    workdir.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(workdir)}}
    )
    client.execute()
    text = "\n".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
    )
    assert "opinio-store" not in {p.name for p in NOTEBOOKS.iterdir()}  # never writes into the repo
    assert list(workdir.iterdir()) == []  # nor into its working directory (`jupyter nbconvert` runs in notebooks/)
    assert any(p.name.startswith("opinio-store-") for p in temporary.iterdir())  # its store, under TMPDIR
    assert "entity 101:" in text and "entity 202:" in text
    CHECKS[name](text)


def _sample() -> dict[str, object]:
    from opinio_agents.datasets import load_sample

    return {str(e.entity_id): e for e in load_sample()}


def _index_lines(text: str) -> None:
    # Both notebooks index the first 60 reviews of each sample hotel.
    got = re.findall(r"^entity (\d+): (\d+) reviews, (\d+) sentences$", text, re.M)
    assert [(e, r) for e, r, _ in got] == [("101", "60"), ("202", "60")], got
    assert all(int(n) > 60 for _, _, n in got)  # reviews have several sentences


def _check_quickstart(text: str) -> None:
    _index_lines(text)
    hits = re.findall(r"^\s*(101:\d+:\d+)\s+(\d\.\d{3})\s+(.+)$", text, re.M)
    assert len(hits) == 3, hits  # rag.retrieve("101", "wi-fi", top_k=3)
    assert all(float(score) > 0 for _, score, _ in hits)
    assert any(re.search(r"wi-?fi|internet", hit_text, re.I) for _, _, hit_text in hits)
    assert re.search(r"^mentioned in \d+ of 60 reviews, \d+% (negative|positive)$", text, re.M)
    expert = _sample()["101"].expert_review  # type: ignore[attr-defined]
    body = text[text.index("PROS\n") :]
    pros, cons = body.split("CONS\n", 1)
    for section, allowed in ((pros, expert.queries), (cons, expert.queries)):
        lines = re.findall(r"^  (.+?): (.+)  \((mentioned in .+); evidence \[(.+)\]\)$", section, re.M)
        assert lines, section
        for query, _, _, evidence in lines:
            assert query in allowed and "'101:" in evidence
    rouge = re.findall(r"^(.+?)\s+(pros|cons)\s+R1=(\d+\.\d) R2=(\d+\.\d) RL=(\d+\.\d)$", text, re.M)
    names = {e.entity_name for e in _sample().values()}  # type: ignore[attr-defined]
    expected = sorted((n, side) for n in names for side in ("pros", "cons"))
    assert sorted((n.strip(), side) for n, side, *_ in rouge) == expected
    assert all(0.0 <= float(v) <= 100.0 for *_, r1, r2, rl in rouge for v in (r1, r2, rl))
    assert any(float(r1) > 0 for *_, r1, _, _ in rouge)


def _check_evaluation(text: str) -> None:
    _index_lines(text)
    rows = re.findall(r"^(bm25|dense|hybrid)\s+(101|202)\s+(pros|cons)\s+(\d+\.\d)\s+(\d+\.\d)$", text, re.M)
    assert sorted((k, e, s) for k, e, s, _, _ in rows) == sorted(
        (k, e, s) for k in ("bm25", "dense", "hybrid") for e in ("101", "202") for s in ("pros", "cons")
    )
    assert all(0.0 <= float(v) <= 100.0 for *_, r1, rl in rows for v in (r1, rl))
    expert = _sample()["101"].expert_review  # type: ignore[attr-defined]
    for side in ("pros", "cons"):
        for query, reference in getattr(expert, side).items():
            block = re.search(rf"^\[{side}\] {re.escape(query)}\n   expert: (.+)\n   system: (.+)$", text, re.M)
            assert block is not None, (side, query)
            assert block.group(1) == reference and block.group(2).strip()
    polarity = re.findall(r"^(pros|cons)\s+(.+?)\s+(mentioned in \d+ of 60 reviews.*)$", text, re.M)
    assert polarity and all(query.strip() in expert.queries for _, query, _ in polarity)


def _check_chatbot(text: str) -> None:
    assert "[S1] 101:" in text and "search_reviews" in text and "extractive answer" in text


CHECKS = {"quickstart.ipynb": _check_quickstart, "evaluation.ipynb": _check_evaluation, "chatbot.ipynb": _check_chatbot}
