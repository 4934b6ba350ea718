"""Chroma client and per-entity collections.

One collection per entity keeps queries filter-free (a ``where`` filter costs
~4x an unfiltered query). Embeddings are always computed by opinio_agents and
passed in explicitly: collections are created with ``embedding_function=None``
so Chroma's default embedding function (which downloads an ONNX model) is never
used, and anonymized telemetry is turned off.

Example:
    >>> client = make_chroma_client("/tmp/opinio-doc/chroma")   # doctest: +SKIP
    >>> collection_name("hotel 42")
    'opinio-hotel-42-63d7fd2d'
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from opinio_agents.errors import ConfigError, StoreError

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

__all__ = ["make_chroma_client", "collection_name", "get_collection", "delete_collection"]


def make_chroma_client(
    path: str | Path | None = None, *, host: str | None = None, port: int | None = None
) -> ClientAPI:
    """An embedded ``PersistentClient`` at ``path``, or an ``HttpClient`` for a Chroma server.

    Args:
        path: Directory of the embedded database (ignored when ``host`` is given).
        host: Host of a running Chroma server (``chroma run``).
        port: Port of that server (default 8000).
    """
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if host:
        try:
            return chromadb.HttpClient(host=host, port=port or 8000, settings=settings)
        except Exception as exc:  # chromadb raises plain exceptions on connection failure
            raise StoreError(
                f"cannot reach the Chroma server at {host}:{port or 8000} ({exc}); "
                "start it with `chroma run --path DIR` or drop --chroma-host to use the embedded store"
            ) from exc
    if path is None:
        raise ConfigError("make_chroma_client needs either path= (embedded store) or host= (Chroma server)")
    Path(path).mkdir(parents=True, exist_ok=True)
    try:
        return chromadb.PersistentClient(path=str(path), settings=settings)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # chromadb's Rust bindings raise InternalError or a pyo3 PanicException
        database = Path(path) / "chroma.sqlite3"
        reason = " ".join(str(exc).split())[:200]
        raise StoreError(
            f"{database}: the vector store cannot be opened ({type(exc).__name__}: {reason}); it is corrupt "
            f"or was written by another chromadb version. Delete the store directory {str(Path(path).parent)!r} "
            "and run `opinio index` again (a store is rebuilt from the dataset)"
        ) from exc


def collection_name(entity_key: str) -> str:
    """A valid, stable Chroma collection name for an entity id (3-63 chars, [a-zA-Z0-9._-])."""
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", entity_key).strip("-")[:40] or "entity"
    digest = hashlib.sha1(entity_key.encode("utf-8")).hexdigest()[:8]
    return f"opinio-{slug}-{digest}"


def get_collection(client: ClientAPI, entity_key: str, *, create: bool = True) -> Collection:
    """The entity's collection (cosine space, no embedding function)."""
    name = collection_name(entity_key)
    kwargs: dict[str, Any] = {"embedding_function": None}
    if create:
        return client.get_or_create_collection(name, configuration={"hnsw": {"space": "cosine"}}, **kwargs)
    try:
        return client.get_collection(name, **kwargs)
    except Exception as exc:
        raise StoreError(
            f"entity {entity_key!r} has no vector collection in this store; run `opinio index` first"
        ) from exc


def delete_collection(client: ClientAPI, entity_key: str) -> None:
    """Drop the entity's collection if it exists."""
    try:
        client.delete_collection(collection_name(entity_key))
    except Exception:  # noqa: BLE001 - absent collection is fine
        return
