"""The notebooks in notebooks/ run top to bottom, offline, in a temporary working directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = ["quickstart.ipynb", "chatbot.ipynb", "evaluation.ipynb"]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_committed_without_outputs(name: str) -> None:
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, f"{name}: clear outputs"


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name: str, tmp_path: Path) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    text = "\n".join(
        out.get("text", "") for cell in nb.cells if cell.cell_type == "code" for out in cell.get("outputs", [])
    )
    assert "opinio-store" not in {p.name for p in NOTEBOOKS.iterdir()}  # never writes into the repo
    assert (tmp_path / "opinio-store").is_dir()
    assert "entity 101:" in text and "entity 202:" in text
    if name == "chatbot.ipynb":
        assert "[S1] 101:" in text and "search_reviews" in text and "extractive answer" in text
    else:
        assert "R1" in text or "expert:" in text
