"""``opinio index --ray``: argument handling and the hand-off to the distributed indexer (no Ray started)."""

from __future__ import annotations

import pytest

import opinio_agents.scale.distributed as distributed
from opinio_agents.cli.main import _bare_ray, main
from opinio_agents.scale.distributed import DistributedStats


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["index", "d.json", "--ray"], ["index", "d.json", "--ray", "local"]),
        (["index", "d.json", "--ray", "--quiet"], ["index", "d.json", "--ray", "local", "--quiet"]),
        (["index", "--ray", "auto", "d.json"], ["index", "--ray", "auto", "d.json"]),
        (["index", "d.json", "--ray", "ray://head:10001"], ["index", "d.json", "--ray", "ray://head:10001"]),
        (["index", "--ray", "d.json"], ["index", "--ray", "local", "d.json"]),
        (["highlight", "--ray"], ["highlight", "--ray"]),
    ],
)
def test_bare_ray_means_a_local_cluster(argv, expected) -> None:
    assert _bare_ray(argv) == expected


def test_ray_without_a_chroma_server_is_one_clear_line(tmp_path, capsys) -> None:
    data = tmp_path / "d.json"
    data.write_text("[]")
    assert main(["index", str(data), "--ray", "--store", str(tmp_path / "s")]) == 2
    message = capsys.readouterr().err
    assert "--ray needs --chroma-host" in message and "chroma run" in message
    assert not (tmp_path / "s").exists()


def test_ray_options_reach_the_distributed_indexer(tmp_path, monkeypatch, capsys) -> None:
    seen: dict = {}

    def fake(entities, store, **kwargs):
        seen.update(kwargs, entities=[e.key for e in entities], store=store)
        return DistributedStats(entities_total=1, entities_skipped=1, workers=0)

    monkeypatch.setattr(distributed, "index_with_ray", fake)
    monkeypatch.setattr(distributed, "require_ray", lambda: None)  # importing Ray takes seconds: not here
    data = tmp_path / "d.json"
    data.write_text('[{"entity_id": 3, "user_reviews": [{"review_id": 1, "text": "Quiet room."}]}]')
    argv = ["index", str(data), "--store", str(tmp_path / "s"), "--chroma-host", "127.0.0.1", "--chroma-port", "9"]
    assert main([*argv, "--ray", "--ray-workers", "3", "--quiet"]) == 0
    assert seen["address"] is None and seen["workers"] == 3 and seen["chroma_port"] == 9
    assert seen["entities"] == ["3"] and seen["show_progress"] is False
    assert main([*argv, "--ray", "ray://head:10001"]) == 0
    assert seen["address"] == "ray://head:10001"
    assert "1 already up to date" in capsys.readouterr().err
