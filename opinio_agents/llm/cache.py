"""A persistent, thread-safe SQLite response cache for LangChain chat models.

Responses are keyed on the serialized prompt and the model's ``llm_string``
(model name, sampling parameters, bound tools / response format), so a re-run of
the same entity with the same settings costs nothing and returns the same text.
Generations are stored as plain JSON (``messages_to_dict``); nothing is
unpickled or imported when reading the cache back.

A cache hit is marked on the returned message:
``message.response_metadata["opinio_cache_hit"] is True``.

Example:
    >>> import tempfile, pathlib
    >>> from langchain_core.outputs import ChatGeneration
    >>> from langchain_core.messages import AIMessage
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(tmp.name) / "llm_cache.sqlite"
    >>> cache = SQLiteResponseCache(path)
    >>> cache.update("prompt", "model", [ChatGeneration(message=AIMessage("hi"))])
    >>> cache.lookup("prompt", "model")[0].message.content
    'hi'
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.caches import RETURN_VAL_TYPE, BaseCache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, messages_from_dict, messages_to_dict
from langchain_core.outputs import ChatGeneration, Generation

from opinio_agents.errors import ConfigError, StoreError

__all__ = ["SQLiteResponseCache", "CACHE_HIT_KEY", "enable_cache", "attach_cache", "is_cache_hit"]

#: Key set to True in ``response_metadata`` of messages served from the cache.
CACHE_HIT_KEY = "opinio_cache_hit"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS llm_responses (
    key TEXT PRIMARY KEY,
    llm_string TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
)
"""


def _key(prompt: str, llm_string: str) -> str:
    digest = hashlib.sha256()
    digest.update(llm_string.encode("utf-8"))
    digest.update(b"\x00")
    digest.update(prompt.encode("utf-8"))
    return digest.hexdigest()


def _encode(generations: Sequence[Generation]) -> str:
    items: list[dict[str, Any]] = []
    for gen in generations:
        if isinstance(gen, ChatGeneration):
            items.append(
                {"kind": "chat", "message": messages_to_dict([gen.message])[0], "info": gen.generation_info}
            )
        else:
            items.append({"kind": "text", "text": gen.text, "info": gen.generation_info})
    return json.dumps(items, ensure_ascii=False, default=str)


def _decode(payload: str) -> list[Generation]:
    out: list[Generation] = []
    for item in json.loads(payload):
        if item.get("kind") == "chat":
            message = messages_from_dict([item["message"]])[0]
            if isinstance(message, AIMessage):
                message.response_metadata = {**message.response_metadata, CACHE_HIT_KEY: True}
            out.append(ChatGeneration(message=message, generation_info=item.get("info")))
        else:
            out.append(Generation(text=item.get("text", ""), generation_info=item.get("info")))
    return out


class SQLiteResponseCache(BaseCache):
    """LangChain ``BaseCache`` backed by one SQLite file; safe across threads.

    Args:
        path: The SQLite file; parent directories are created.

    Attributes:
        hits: Lookups answered from the cache since creation.
        misses: Lookups that found nothing.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.exists() and self.path.is_dir():
            raise ConfigError(
                f"cache_path={str(self.path)!r} is a directory; give a file path such as 'llm_cache.sqlite'"
            )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        try:
            self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open LLM response cache {str(self.path)!r}: {exc}; delete the file to rebuild it"
            ) from exc

    def lookup(self, prompt: str, llm_string: str) -> RETURN_VAL_TYPE | None:
        """Return the stored generations for this prompt and model, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT payload FROM llm_responses WHERE key = ?", (_key(prompt, llm_string),)
            ).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        try:
            return _decode(row[0])
        except (ValueError, KeyError, TypeError):
            return None  # a corrupt entry is a miss; it is overwritten on update

    def update(self, prompt: str, llm_string: str, return_val: RETURN_VAL_TYPE) -> None:
        """Store the generations for this prompt and model."""
        payload = _encode(return_val)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO llm_responses (key, llm_string, payload) VALUES (?, ?, ?)",
                (_key(prompt, llm_string), llm_string, payload),
            )
            self._conn.commit()

    def clear(self, **kwargs: Any) -> None:
        """Delete every stored response."""
        with self._lock:
            self._conn.execute("DELETE FROM llm_responses")
            self._conn.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM llm_responses").fetchone()[0])

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._conn.close()


def enable_cache(path: str | Path) -> SQLiteResponseCache:
    """Install a process-wide cache for every LangChain model without its own cache.

    Example:
        >>> enable_cache("/tmp/llm_cache.sqlite")  # doctest: +SKIP
    """
    from langchain_core.globals import set_llm_cache

    cache = SQLiteResponseCache(path)
    set_llm_cache(cache)
    return cache


def attach_cache(model: BaseChatModel, cache: BaseCache) -> BaseChatModel:
    """Return a shallow copy of ``model`` that reads and writes ``cache``.

    The copy shares the original's client; the original model is not modified.
    """
    if not isinstance(model, BaseChatModel):
        raise ConfigError(f"attach_cache needs a LangChain BaseChatModel, got {type(model).__name__}")
    return model.model_copy(update={"cache": cache})


def is_cache_hit(message: Any) -> bool:
    """True when ``message`` was served from a :class:`SQLiteResponseCache`."""
    meta = getattr(message, "response_metadata", None) or {}
    return bool(meta.get(CACHE_HIT_KEY))
