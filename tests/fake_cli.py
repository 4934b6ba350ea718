"""Run the ``opinio`` CLI in this process with :class:`~tests.fake_encoder.HashEncoder` as its encoder.

For fast-tier tests that need the CLI's real behaviour in a real subprocess (exit status,
stderr, what reaches the store) without loading MiniLM::

    python -m tests.fake_cli index data.json --store STORE --quiet
"""

from __future__ import annotations

import logging
import sys

import opinio_agents.api as api
from tests.fake_encoder import HashEncoder

_ENCODER = HashEncoder()


def _get_encoder(model_path: object = None, **_: object) -> HashEncoder:
    return _ENCODER


def run(argv: list[str] | None = None) -> int:
    """The CLI's ``main`` with the fake encoder in place of the default one."""
    api.get_encoder = _get_encoder  # type: ignore[assignment]
    # The hashing encoder is not MiniLM, so the default sentiment stage says it uses VADER only.
    logging.getLogger("opinio_agents.indexing.stages").setLevel(logging.ERROR)
    from opinio_agents.cli.main import main

    return main(argv)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
