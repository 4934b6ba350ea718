"""What every section of the reliability probe returns.

A section is a module in this folder with a function::

    def run(workdir: pathlib.Path, *, quick: bool = False) -> list[ProbeRow]: ...

``workdir`` is an empty scratch directory (never inside the repository); ``quick``
asks for the small subset the default test suite runs. ``scripts/reliability_probe.py``
runs every section it finds, prints one table and a summary line.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OUTCOMES", "ProbeRow"]

#: ``ok`` is the only passing outcome; the others are counted in the summary line.
OUTCOMES: tuple[str, ...] = (
    "ok",
    "traceback",
    "half-indexed",
    "accepted-invalid",
    "not-identical",
    "crash",
    "unbounded",
    "injected",
    "prompt-leak",
)


@dataclass(frozen=True)
class ProbeRow:
    """One case of the probe.

    Attributes:
        section: ``inputs``, ``kills``, ``writers``, ``llm`` or ``injection``.
        case: A short name of what was tried (e.g. ``"csv unbalanced quote"``).
        outcome: One of :data:`OUTCOMES`.
        detail: What was seen: the error line printed, requests counted, seconds taken ...
    """

    section: str
    case: str
    outcome: str
    detail: str = ""

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome={self.outcome!r} is not one of {', '.join(OUTCOMES)}")
