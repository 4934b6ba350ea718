"""The benchmark scripts as modules, for the tests that check their helpers."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

#: The folder of the benchmark scripts (they are scripts, not a package).
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` imported as the module ``name``, the folder on ``sys.path`` while it loads.

    The scripts import each other by name (``topics.py`` reads ``real_reviews``), as they do when run from
    their folder; the module stays in ``sys.modules``, so a second call returns it.
    """
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))
