"""A store that survives an interrupted run, and one writer at a time (issue 11, items 4 and 5).

Kills are simulated in-process here (an exception at the point where a kill would
land); ``tests/test_reliability_probe.py`` kills real subprocesses with SIGKILL.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from opinio_agents.errors import StoreError
from opinio_agents.indexing import Indexer
from opinio_agents.indexing.stages import LexiconSentiment
from opinio_agents.models import Entity
from opinio_agents.stores import SentenceStore
from opinio_agents.stores.snapshot import compare_stores
from tests.conftest import tiny_entity_dict
from tests.fake_encoder import HashEncoder

REPO = Path(__file__).resolve().parents[1]


def _indexer(store: SentenceStore, encoder: HashEncoder | None = None) -> Indexer:
    return Indexer(store, encoder or HashEncoder(), sentiment=LexiconSentiment())


def _updated() -> Entity:
    data = tiny_entity_dict()
    data["user_reviews"] = data["user_reviews"][2:]  # reviews 1 and 2 removed
    data["user_reviews"][0]["text"] += " The lift was broken."  # review 3 edited
    return Entity.model_validate(data)


def _chroma_ids(store: SentenceStore, key: str) -> set[str]:
    return set(store.collection(key, create=True).get(include=[])["ids"])


def _catalog_ids(store: SentenceStore, key: str) -> set[str]:
    return {s.sentence.sentence_id for s in store.catalog.sentences(key)}


def test_update_interrupted_after_the_catalog_leaves_no_orphan_vectors(tmp_path, monkeypatch, tiny_entity):
    store = SentenceStore(tmp_path / "store")
    _indexer(store).index_entity(tiny_entity)

    calls = {"n": 0}
    original = SentenceStore.delete_vectors

    def killed_once(self, entity_id, sentence_ids):
        calls["n"] += 1
        if calls["n"] == 1:
            raise KeyboardInterrupt("killed right after the catalog transaction")
        return original(self, entity_id, sentence_ids)

    monkeypatch.setattr(SentenceStore, "delete_vectors", killed_once)
    with pytest.raises(KeyboardInterrupt):
        _indexer(store).index_entity(_updated())
    monkeypatch.setattr(SentenceStore, "delete_vectors", original)

    rerun = SentenceStore(tmp_path / "store")
    _indexer(rerun).index_entity(_updated())
    key = tiny_entity.key
    assert _chroma_ids(rerun, key) == _catalog_ids(rerun, key)  # the removed reviews' vectors are gone

    clean = SentenceStore(tmp_path / "clean")
    _indexer(clean).index_entity(tiny_entity)
    _indexer(clean).index_entity(_updated())
    assert compare_stores(tmp_path / "clean", tmp_path / "store") == []


def test_half_written_entity_is_refused_until_the_next_run_completes_it(tmp_path, tiny_entity):
    store = SentenceStore(tmp_path / "store")
    with pytest.raises(KeyboardInterrupt):  # dies while embedding: catalog rows exist, vectors do not
        _indexer(store, HashEncoder(fail_after_calls=0)).index_entity(tiny_entity)

    reader = SentenceStore(tmp_path / "store")
    assert reader.has_entity(tiny_entity.key)
    assert not reader.is_complete(tiny_entity.key)
    assert reader.entity_keys() == [] and reader.incomplete_entities() == [tiny_entity.key]
    with pytest.raises(StoreError, match=r"half-written.*rerun `opinio index`"):
        reader.sentences(tiny_entity.key)

    _indexer(SentenceStore(tmp_path / "store")).index_entity(tiny_entity)
    after = SentenceStore(tmp_path / "store")
    assert after.is_complete(tiny_entity.key)
    assert len(after.sentences(tiny_entity.key)) == after.embeddings(tiny_entity.key).shape[0] > 0

    clean = SentenceStore(tmp_path / "clean")
    _indexer(clean).index_entity(tiny_entity)
    assert compare_stores(tmp_path / "clean", tmp_path / "store") == []


def test_bm25_swap_interrupted_is_rebuilt_and_swept(tmp_path, monkeypatch, tiny_entity):
    from opinio_agents.api import OpinioRAG
    from opinio_agents.stores import derived

    def rag(where: Path) -> OpinioRAG:
        built = OpinioRAG(where, encoder=HashEncoder(), hiro_options={"n_codes": 2, "depth": 2})
        built.indexer = built.indexer.replace(sentiment=LexiconSentiment())
        return built

    rag(tmp_path / "clean").index(tiny_entity)
    rag(tmp_path / "store").index(tiny_entity)
    updated = _updated()

    def die_at(name: str) -> None:
        if name == "bm25-old-moved":  # the old index moved aside, the new one not yet in place
            raise KeyboardInterrupt(name)

    monkeypatch.setattr(derived, "checkpoint", die_at)
    with pytest.raises(KeyboardInterrupt):
        rag(tmp_path / "store").index(updated)
    monkeypatch.undo()

    assert not SentenceStore(tmp_path / "store").bm25_dir(tiny_entity.key).exists()
    rag(tmp_path / "store").index(updated)
    rag(tmp_path / "clean").index(updated)
    # The simulated kill leaves this (live) process's .old- directory, which no later run may delete while
    # its writer could still be alive; after a real kill -9 it is swept (tests/test_reliability_probe.py).
    diffs = compare_stores(tmp_path / "clean", tmp_path / "store")
    assert [d for d in diffs if not d.startswith("leftover temporary files")] == []
    hits = rag(tmp_path / "store").retrievers.retriever(tiny_entity.key, "bm25", top_k=2).retrieve("wifi")
    assert hits


def test_compare_stores_sees_a_missing_vector_and_a_changed_sentiment(tmp_path, tiny_entity):
    for name in ("a", "b"):
        _indexer(SentenceStore(tmp_path / name)).index_entity(tiny_entity)
    assert compare_stores(tmp_path / "a", tmp_path / "b") == []
    b = SentenceStore(tmp_path / "b")
    first = b.sentences(tiny_entity.key)[0].sentence.sentence_id
    b.delete_vectors(tiny_entity.key, [first])
    with b.catalog.transaction() as conn:
        conn.execute("UPDATE sentences SET sentiment = sentiment + 0.5 WHERE sentence_id = ?", (first,))
    diffs = compare_stores(tmp_path / "a", tmp_path / "b")
    assert any("Chroma ids differ" in d for d in diffs)
    assert any("sentiments differ" in d for d in diffs)


# -- one writer at a time ---------------------------------------------------------------
_HOLDER = textwrap.dedent(
    """
    import sys
    from opinio_agents.stores import SentenceStore
    with SentenceStore(sys.argv[1]).writer_lock():
        print("locked", flush=True)
        sys.stdin.readline()
    """
)


@pytest.fixture
def holder(tmp_path):
    """A child process holding the store's writer lock until its stdin gets a line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path / "store")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked", proc.stderr
    yield proc
    if proc.poll() is None:
        proc.communicate("go\n", timeout=60)


def test_second_writer_fails_fast_naming_the_store_and_the_holder(tmp_path, holder, tiny_entity):
    from opinio_agents.stores.lock import StoreLockedError

    store = SentenceStore(tmp_path / "store")
    with pytest.raises(StoreLockedError) as caught:
        _indexer(store).index_entity(tiny_entity)
    message = str(caught.value)
    assert str(tmp_path / "store") in message and str(holder.pid) in message and "--wait" in message
    assert not store.catalog_path.exists()  # nothing was written


def test_cli_second_writer_is_one_error_line(tmp_path, holder, monkeypatch, capsys):
    import json

    from opinio_agents.cli.main import main

    monkeypatch.setattr("opinio_agents.api.get_encoder", lambda *a, **k: HashEncoder())
    data = tmp_path / "hotel.json"
    data.write_text(json.dumps([tiny_entity_dict()]), "utf-8")
    code = main(["index", str(data), "--store", str(tmp_path / "store"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(holder.pid) in errors[0], err
    assert "Traceback" not in err and "chromadb" not in err


def test_waiting_writer_says_so_and_proceeds_when_the_holder_ends(tmp_path, holder, tiny_entity):
    import threading

    messages: list[str] = []
    release = threading.Thread(target=lambda: holder.communicate("go\n", timeout=60))

    def on_wait(message: str) -> None:
        messages.append(message)
        release.start()  # the holder finishes only after the waiter has said it waits

    store = SentenceStore(tmp_path / "store")
    with store.writer_lock(wait=True, on_wait=on_wait):
        _indexer(store).index_entity(tiny_entity)
    release.join()
    assert len(messages) == 1 and "waiting" in messages[0] and str(tmp_path / "store") in messages[0]
    assert store.is_complete(tiny_entity.key)


def test_readers_are_not_blocked_by_a_writer(tmp_path, tiny_entity):
    _indexer(SentenceStore(tmp_path / "store")).index_entity(tiny_entity)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(tmp_path / "store")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        reader = SentenceStore(tmp_path / "store")
        assert reader.writer_active()
        assert len(reader.sentences(tiny_entity.key)) == reader.embeddings(tiny_entity.key).shape[0]
        assert np.isfinite(reader.embeddings(tiny_entity.key)).all()
    finally:
        holder.communicate("go\n", timeout=60)
    assert not SentenceStore(tmp_path / "store").writer_active()


def test_lock_is_released_when_the_holder_is_killed(tmp_path, holder, tiny_entity):
    holder.kill()
    holder.wait(timeout=60)
    store = SentenceStore(tmp_path / "store")
    assert not store.writer_active()
    _indexer(store).index_entity(tiny_entity)  # no stale lock
    assert store.is_complete(tiny_entity.key)


def test_store_path_that_is_a_file_is_a_clear_error(tmp_path, tiny_entity):
    path = tmp_path / "store"
    path.write_text("not a store", "utf-8")
    with pytest.raises(StoreError, match="is a file"):
        with SentenceStore(path).writer_lock():
            pass


def test_an_up_to_date_entity_is_not_rewritten_so_highlight_needs_no_lock(tmp_path, holder, tiny_entity):
    from opinio_agents.api import OpinioRAG
    from opinio_agents.stores.lock import StoreLockedError

    # The holder locked an empty store; build the entity in another store and move it under the lock file.
    built = tmp_path / "built"
    rag = OpinioRAG(built, encoder=HashEncoder(), hiro_options={"n_codes": 2, "depth": 2})
    rag.indexer = rag.indexer.replace(sentiment=LexiconSentiment())
    rag.index(tiny_entity)
    for item in built.iterdir():
        if item.name != "writer.lock":  # the holder's lock file stays the one it locked
            item.rename(tmp_path / "store" / item.name)
    reader = OpinioRAG(tmp_path / "store", encoder=HashEncoder())
    reader.indexer = reader.indexer.replace(sentiment=LexiconSentiment())
    assert reader.indexer.up_to_date(tiny_entity)
    assert reader.index(tiny_entity)[0].reviews_unchanged == len(tiny_entity.user_reviews)  # while locked
    changed = _updated()
    assert not reader.indexer.up_to_date(changed)
    with pytest.raises(StoreLockedError):
        reader.index(changed)


def test_threads_of_one_process_take_turns_and_one_thread_may_reenter(tmp_path):
    import threading

    from opinio_agents.stores.lock import StoreLock

    order: list[str] = []
    first_in = threading.Event()
    let_go = threading.Event()

    def first() -> None:
        with StoreLock(tmp_path):
            with StoreLock(tmp_path):  # re-entrant in one thread
                order.append("first in")
                first_in.set()
                let_go.wait(60)
            order.append("first out")

    def second() -> None:
        first_in.wait(60)
        with StoreLock(tmp_path):  # blocks (no error) until the first thread is done
            order.append("second in")

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    first_in.wait(60)
    let_go.set()
    for t in threads:
        t.join(60)
    assert order == ["first in", "first out", "second in"]
