"""The SQLite response cache: persistence, hit marking, thread safety, errors."""

from __future__ import annotations

import threading

import pytest
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, Generation
from llm_fixtures import ScriptedChatModel

from opinio_agents.errors import ConfigError, StoreError
from opinio_agents.llm import SQLiteResponseCache, attach_cache, is_cache_hit


def test_roundtrip_persists_across_instances(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "sub" / "llm_cache.sqlite"
    cache = SQLiteResponseCache(path)
    message = AIMessage(content="hi", usage_metadata={"input_tokens": 5, "output_tokens": 1, "total_tokens": 6})
    cache.update("p", "m", [ChatGeneration(message=message), Generation(text="plain")])
    assert cache.lookup("p", "other-model") is None
    cache.close()
    again = SQLiteResponseCache(path)
    chat, plain = again.lookup("p", "m")  # type: ignore[misc]
    assert chat.message.content == "hi" and chat.message.usage_metadata["input_tokens"] == 5
    assert is_cache_hit(chat.message) and not is_cache_hit(message)
    assert plain.text == "plain"
    assert (again.hits, again.misses) == (1, 0)
    again.clear()
    assert len(again) == 0


def test_concurrent_writers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cache = SQLiteResponseCache(tmp_path / "c.sqlite")

    def work(n: int) -> None:
        for i in range(20):
            cache.update(f"p{n}-{i}", "m", [ChatGeneration(message=AIMessage(content=str(i)))])
            assert cache.lookup(f"p{n}-{i}", "m") is not None

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 80


def test_attached_cache_serves_model_calls(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = ScriptedChatModel(respond=["one", "two"])
    cached = attach_cache(model, SQLiteResponseCache(tmp_path / "c.sqlite"))
    first = cached.invoke("hello")
    second = cached.invoke("hello")
    assert first.content == second.content == "one"
    assert is_cache_hit(second) and not is_cache_hit(first)
    assert model.cache is None  # the original is untouched
    with pytest.raises(ConfigError):
        attach_cache("model", SQLiteResponseCache(tmp_path / "d.sqlite"))  # type: ignore[arg-type]


def test_bad_paths(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match="directory"):
        SQLiteResponseCache(tmp_path)
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="delete the file"):
        SQLiteResponseCache(corrupt)


def test_token_counters_agree_roughly() -> None:
    from opinio_agents.llm import HeuristicTokenCounter, WordPieceTokenCounter

    text = "The breakfast buffet was cold and stale, wi-fi cost 15 dollars a day."
    wordpiece = WordPieceTokenCounter().count(text)
    heuristic = HeuristicTokenCounter().count(text)
    assert 12 <= wordpiece <= 25 and abs(wordpiece - heuristic) <= 6
    assert WordPieceTokenCounter().count("") == 0
