"""Where the benchmark scripts find the research data: one resolver for every script.

The data never ships with the repository. It lives in ``../shared/data`` beside the checkout
(``real-reviews/``, ``aste-v2/``, ``semeval15-hotels/``); ``$OPINIO_REAL_REVIEWS`` points the
real-review scripts at another copy of ``real-reviews/``, which wins when it is a folder. A script
whose data is missing says so and exits 0, so the scripts run on a machine without the data.

Example:
    >>> from data_paths import real_reviews_dir  # the scripts import it by name, run from this folder
    >>> folder = real_reviews_dir()
"""

from __future__ import annotations

import os
from pathlib import Path

#: The research data folder beside the checkout (``<checkout>/../shared/data``).
SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

#: The environment variable that points at another copy of the real-reviews folder.
REAL_REVIEWS_ENV = "OPINIO_REAL_REVIEWS"

#: What a benchmark over the real-reviews folder prints when there is none (it then exits 0).
NO_DATA = f"no real-reviews folder found (set {REAL_REVIEWS_ENV}); nothing to run"


def real_reviews_dir() -> Path | None:
    """The real-reviews folder: ``$OPINIO_REAL_REVIEWS`` when it is a folder, else ``../shared/data/real-reviews``.

    Returns:
        The folder, or ``None`` when neither exists.

    Example:
        >>> folder = real_reviews_dir()
        >>> folder is None or folder.is_dir()
        True
    """
    env = os.environ.get(REAL_REVIEWS_ENV)
    candidates = [Path(env)] if env else []
    candidates.append(SHARED_DATA / "real-reviews")
    return next((c for c in candidates if c.is_dir()), None)


def real_reviews_file(name: str) -> Path:
    """The path of one real-reviews file (``space_dev.json``), whether or not it exists.

    For a script's ``--data`` default: the file in :func:`real_reviews_dir`, or where it would be in
    ``../shared/data/real-reviews`` when there is no folder (the script then reports it missing).

    Args:
        name: The file name inside the real-reviews folder.

    Example:
        >>> real_reviews_file("oposum.json").name
        'oposum.json'
    """
    return (real_reviews_dir() or SHARED_DATA / "real-reviews") / name
