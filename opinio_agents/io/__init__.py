"""Reading and writing OpinioBank data (streamed JSON / JSONL / CSV readers in one registry, atomic writer).

Example:
    >>> from opinio_agents.io import iter_entities, write_opiniobank  # doctest: +SKIP
"""

from opinio_agents.io.base import Reader, ReadOptions, reader_for, register_reader, registered_readers
from opinio_agents.io.loaders import (
    LoadReport,
    iter_entities,
    iter_valid_entities,
    load_entities,
    load_entity,
    validate_file,
)
from opinio_agents.io.writers import entity_to_opiniobank, write_opiniobank

__all__ = [
    "LoadReport",
    "Reader",
    "ReadOptions",
    "reader_for",
    "register_reader",
    "registered_readers",
    "iter_entities",
    "iter_valid_entities",
    "load_entities",
    "load_entity",
    "validate_file",
    "write_opiniobank",
    "entity_to_opiniobank",
]
