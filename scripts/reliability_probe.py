"""The reliability probe: hostile inputs, kills, concurrent writers, LLM faults and prompt injection.

Runs every section module of ``scripts/probe/`` (``inputs``, ``kills``, ``writers``,
``llm``, ``injection``: each has ``run(workdir, *, quick=False) -> list[ProbeRow]``),
prints ONE markdown table of all cases and a summary line computed from the rows,
and exits 1 when any case is not ``ok`` or a section is missing or fails to run.
A missing section module is reported (and the others still run).

Usage::

    python scripts/reliability_probe.py                 # everything (a few minutes)
    python scripts/reliability_probe.py --quick         # the fast subset
    python scripts/reliability_probe.py --sections kills writers --workdir /tmp/probe

Example summary::

    bad inputs 83 tried, 0 tracebacks, 0 half-indexed, 0 accepted-invalid; kills 17 tried, all identical to
    a clean build; two writers: no crash; LLM: requests per failed query = configured attempts, bounded time;
    injection: 0 injected claims, 0 prompt text in any output
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script: make `scripts.probe` and this checkout importable
    sys.path.insert(0, str(REPO))

from scripts.probe.common import ProbeRow  # noqa: E402

SECTIONS: tuple[str, ...] = ("inputs", "kills", "writers", "llm", "injection")


def load_section(name: str) -> object | None:
    """The section module ``scripts.probe.<name>``, or None when it does not exist (yet)."""
    try:
        return importlib.import_module(f"scripts.probe.{name}")
    except ModuleNotFoundError as exc:
        if exc.name in (f"scripts.probe.{name}",):
            return None
        raise


def run_sections(
    names: Sequence[str], workdir: Path, *, quick: bool = False
) -> tuple[list[ProbeRow], list[str], dict[str, float]]:
    """Run the named sections; returns (rows, missing section names, seconds per section).

    A section that raises becomes one ``crash`` row with the exception's last line.
    """
    rows: list[ProbeRow] = []
    missing: list[str] = []
    seconds: dict[str, float] = {}
    for name in names:
        module = load_section(name)
        if module is None or not callable(getattr(module, "run", None)):
            missing.append(name)
            continue
        started = time.perf_counter()
        folder = workdir / name
        folder.mkdir(parents=True, exist_ok=True)
        try:
            got = list(module.run(folder, quick=quick))  # type: ignore[attr-defined]
        except Exception as exc:  # noqa: BLE001 - a broken section is a result, not the end of the probe
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            got = [ProbeRow(name, "section ran to completion", "crash", last[:300])]
        rows.extend(got)
        seconds[name] = time.perf_counter() - started
    return rows, missing, seconds


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def markdown_table(rows: Sequence[ProbeRow]) -> str:
    """One markdown table of every case (cells escaped so review text cannot break the table).

    Example:
        >>> print(markdown_table([ProbeRow("kills", "a|b", "ok")]))
        | section | case | outcome | detail |
        |---|---|---|---|
        | kills | a\\|b | ok |  |
    """
    lines = ["| section | case | outcome | detail |", "|---|---|---|---|"]
    lines += [f"| {_cell(r.section)} | {_cell(r.case)} | {_cell(r.outcome)} | {_cell(r.detail)} |" for r in rows]
    return "\n".join(lines)


def _bad(counts: Counter[str], skip: Sequence[str] = ()) -> str:
    return ", ".join(
        f"{n} {outcome}" for outcome, n in sorted(counts.items()) if outcome != "ok" and outcome not in skip
    )


def _others(counts: Counter[str], listed: Sequence[str]) -> str:
    other = _bad(counts, listed)
    return f", {other}" if other else ""


def summary_line(rows: Sequence[ProbeRow], missing: Sequence[str] = ()) -> str:
    """The one-line summary, computed from the rows (a section without rows says it was not run).

    Example:
        >>> summary_line([ProbeRow("kills", "x", "ok"), ProbeRow("writers", "y", "ok")], ["llm"])[:58]
        'bad inputs: not run; kills 1 tried, all identical to a cle'
    """
    by: dict[str, Counter[str]] = {name: Counter() for name in SECTIONS}
    for row in rows:
        by.setdefault(row.section, Counter())[row.outcome] += 1

    def absent(name: str, label: str) -> str | None:
        if by[name]:
            return None
        return f"{label}: {'missing (scripts/probe/' + name + '.py)' if name in missing else 'not run'}"

    parts: list[str] = []
    c = by["inputs"]
    parts.append(
        absent("inputs", "bad inputs")
        or f"bad inputs {sum(c.values())} tried, {c['traceback']} tracebacks, {c['half-indexed']} half-indexed, "
        f"{c['accepted-invalid']} accepted-invalid" + _others(c, ("traceback", "half-indexed", "accepted-invalid"))
    )
    c = by["kills"]
    parts.append(
        absent("kills", "kills")
        or f"kills {sum(c.values())} tried, "
        + ("all identical to a clean build" if set(c) == {"ok"} else f"{sum(c.values()) - c['ok']} not: {_bad(c)}")
    )
    c = by["writers"]
    parts.append(
        absent("writers", "two writers") or ("two writers: no crash" if set(c) == {"ok"} else f"two writers: {_bad(c)}")
    )
    c = by["llm"]
    parts.append(
        absent("llm", "LLM")
        or (
            "LLM: requests per failed query = configured attempts, bounded time"
            if set(c) == {"ok"}
            else f"LLM: {_bad(c)} of {sum(c.values())}"
        )
    )
    c = by["injection"]
    parts.append(
        absent("injection", "injection")
        or f"injection: {c['injected']} injected claims, {c['prompt-leak']} prompt text in any output"
        + _others(c, ("injected", "prompt-leak"))
    )
    extra = sorted(set(by) - set(SECTIONS))
    for name in extra:
        parts.append(f"{name}: {sum(by[name].values())} tried, " + (_bad(by[name]) or "all ok"))
    return "; ".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the probe; return 0 when every case is ok and every section ran, else 1."""
    parser = argparse.ArgumentParser(description="Reliability probe of opinio_agents (one table, one summary line).")
    parser.add_argument("--quick", action="store_true", help="Only the fast subset (what the default tests run).")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS), help="Sections to run.")
    parser.add_argument("--workdir", type=Path, default=None, help="Scratch directory (default: a temporary one).")
    args = parser.parse_args(argv)

    def go(workdir: Path) -> int:
        rows, missing, seconds = run_sections(args.sections, workdir, quick=args.quick)
        print(markdown_table(rows))
        print()
        for name in missing:
            print(f"section {name!r} is missing: scripts/probe/{name}.py does not exist or has no run()")
        timing = ", ".join(f"{name} {s:.0f} s" for name, s in seconds.items())
        print(f"ran {len(rows)} cases ({timing})")
        print(summary_line(rows, missing))
        failed = [r for r in rows if r.outcome != "ok"]
        return 1 if failed or missing else 0

    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return go(args.workdir)
    with tempfile.TemporaryDirectory(prefix="opinio-probe-") as tmp:
        return go(Path(tmp))


if __name__ == "__main__":
    sys.exit(main())
