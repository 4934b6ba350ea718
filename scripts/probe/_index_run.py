"""Index a dataset into a store the way the probe needs it: ``opinio index`` itself, or the façade with a hash encoder.

Run as ``python -m scripts.probe._index_run --store DIR --data FILE [--encoder hash|minilm] [--wait]``
(``minilm`` runs the real ``opinio index`` command; ``hash`` the same ``OpinioRAG.index`` with
an instant, deterministic bag-of-words encoder, for the fast test tier). ``OPINIO_KILL_AT``
in the environment makes the run kill itself at that checkpoint
(see :mod:`opinio_agents.stores.checkpoints`).
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Sequence

import numpy as np


class ProbeHashEncoder:
    """Hashed bag of words, L2-normalised: deterministic and instant (no model is loaded)."""

    name = "probe-hash-bow"
    dimension = 64
    batch_size = 32

    def encode(self, texts: Sequence[str], **_: object) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in text.lower().split() or [text]:
                out[i, int(hashlib.md5(token.encode()).hexdigest(), 16) % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and index; returns the exit status of the run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--encoder", choices=("hash", "minilm"), default="hash")
    parser.add_argument("--wait", action="store_true")
    args = parser.parse_args(argv)
    if args.encoder == "minilm":
        from opinio_agents.cli.main import main as cli

        return cli(["index", args.data, "--store", args.store, "--quiet", *(["--wait"] if args.wait else [])])
    from opinio_agents.api import OpinioRAG
    from opinio_agents.errors import OpinioError
    from opinio_agents.indexing.stages import LexiconSentiment

    rag = OpinioRAG(args.store, encoder=ProbeHashEncoder())
    rag.indexer = rag.indexer.replace(sentiment=LexiconSentiment())  # VADER alone, chosen (no notice printed)
    try:
        stats = rag.index(args.data, wait=args.wait)
    except OpinioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"indexed {len(stats)} entities")
    return 0


if __name__ == "__main__":
    sys.exit(main())
