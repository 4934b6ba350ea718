"""The store against a real Chroma server (``chroma run`` on loopback) instead of the embedded client."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opinio_agents.api import OpinioRAG
from opinio_agents.errors import StoreError
from opinio_agents.models import Entity
from tests.conftest import tiny_entity_dict


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    exe = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    if not Path(exe).exists():
        pytest.skip("the chroma CLI is not installed")
    port = _free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    proc = subprocess.Popen(
        [exe, "run", "--path", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
        except OSError:
            time.sleep(0.3)
    else:  # pragma: no cover - environment problem
        proc.kill()
        pytest.skip("chroma server did not start")
    yield port
    proc.terminate()
    proc.wait(timeout=20)


@pytest.mark.slow
def test_index_and_highlight_through_a_chroma_server(tmp_path, encoder, chroma_server) -> None:
    rag = OpinioRAG(tmp_path / "store", chroma_host="127.0.0.1", chroma_port=chroma_server)
    stats = rag.index(Entity.model_validate(tiny_entity_dict()))
    assert stats[0].sentences_embedded == stats[0].sentences_total > 0
    assert not (tmp_path / "store" / "chroma").exists()  # vectors live in the server, not on local disk
    hits = rag.retrieve(7, "wi-fi", retriever="dense", top_k=3)
    assert len(hits) == 3 and all(
        "wi" in h.sentence.text.lower() or "internet" in h.sentence.text.lower() for h in hits
    )
    result = rag.highlights(7)
    assert [h.query for h in result.cons] == ["wi-fi"]


def test_unreachable_server_is_a_clear_error(tmp_path) -> None:
    port = _free_port()
    rag = OpinioRAG(tmp_path / "store", chroma_host="127.0.0.1", chroma_port=port)
    with pytest.raises(StoreError, match=f"cannot reach the Chroma server at 127.0.0.1:{port}"):
        rag.index(Entity.model_validate(tiny_entity_dict()))
    assert not (tmp_path / "store" / "catalog.sqlite").exists()  # nothing written before the failure
