"""Write entities in the OpinioBank JSON format (OpinioRAG App. A.1), atomically.

Example:
    >>> import pathlib, tempfile
    >>> from opinio_agents.models import Entity
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(tmp.name) / "out.json"
    >>> hotel = Entity(entity_id=1, user_reviews=[{"review_id": 1, "text": "Nice."}])
    >>> write_opiniobank([hotel], path)
    1
    >>> path.read_text().splitlines()[1]
    '{"entity_id": 1, "entity_name": "", "user_reviews": [{"review_id": 1, "text": "Nice."}]}'
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from opinio_agents.errors import DataError
from opinio_agents.io.outputs import atomic_writer
from opinio_agents.models import Entity

__all__ = ["write_opiniobank", "entity_to_opiniobank"]


def entity_to_opiniobank(entity: Entity) -> dict[str, Any]:
    """The paper's JSON object for ``entity``: dates as YYYY-MM-DD, ``None`` fields left out.

    Example:
        >>> data = entity_to_opiniobank(Entity(entity_id=2, user_reviews=[
        ...     {"review_id": 5, "text": "Ok.", "publication_date": "2019-04-01T10:00:00"}]))
        >>> data["user_reviews"]
        [{'review_id': 5, 'text': 'Ok.', 'publication_date': '2019-04-01'}]
    """
    return entity.model_dump(mode="json", exclude_none=True)


def write_opiniobank(entities: Iterable[Entity], path: str | Path, *, jsonl: bool = False) -> int:
    """Write entities as a JSON array (one entity per line) or as JSON Lines.

    The file is written to a temporary file next to ``path`` and moved into
    place with :func:`os.replace`, so readers never see a half-written file and
    a failure leaves any previous file untouched (:func:`~opinio_agents.io.outputs.atomic_writer`;
    the file gets the usual mode, 0666 less the umask).

    Args:
        entities: The entities (any iterable; consumed once, streamed).
        path: Destination file.
        jsonl: Write one entity object per line instead of a JSON array.

    Returns:
        The number of entities written.

    Example:
        >>> write_opiniobank([], "empty.json")  # doctest: +SKIP
        0
    """
    target = Path(path)
    if target.is_dir():
        raise DataError("is a directory; pass a file path to write to", source=str(target))
    if not target.parent.exists():
        raise DataError("the parent directory does not exist; create it first", source=str(target))
    count = 0
    with atomic_writer(target, newline="\n") as handle:
        if not jsonl:
            handle.write("[")
        for entity in entities:
            line = json.dumps(entity_to_opiniobank(entity), ensure_ascii=False)
            if jsonl:
                handle.write(line + "\n")
            else:
                handle.write(("\n" if count == 0 else ",\n") + line)
            count += 1
        if not jsonl:
            handle.write("\n]\n")
    return count
