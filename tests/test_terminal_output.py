"""What a user reads in a terminal (issue 25, item 5): `opinio` at 80 columns in a real subprocess.

Every CLI run here is ``python -m tests.fake_cli`` (the real CLI with the hashing encoder, so no
model loads) in a subprocess with ``COLUMNS=80``: tables fit 80 columns, wrap at word boundaries,
keep their borders and readable headers; ``--quiet`` prints nothing but errors and the result;
``compare`` says what it compares; short flags mean one thing; files are written 0644.
The subprocess runs (about ten, ~10 s each) are in the slow tier; the rest is fast.
"""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from opinio_agents.datasets import load_sample
from opinio_agents.io.writers import write_opiniobank

REPO = Path(__file__).resolve().parents[1]
WIDTH = 80
#: Box-drawing characters of rich's tables (the heavy header and the light body).
_BOX = "│┃"


def fake_opinio(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``opinio ARGS`` (hashing encoder) in a real subprocess at ``COLUMNS=80``."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "COLUMNS": str(WIDTH),
        "LINES": "50",
        "TERM": "xterm-256color",
    }
    env.pop("NO_COLOR", None)
    return subprocess.run(
        [sys.executable, "-m", "tests.fake_cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@dataclass
class Sample:
    root: Path
    both: Path  # the two sample hotels, 50 reviews each
    one: Path  # hotel 101 alone
    store: Path  # both hotels indexed
    index_run: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    entities = load_sample()
    for entity in entities:
        entity.user_reviews = entity.user_reviews[:50]
    root = tmp_path_factory.mktemp("terminal")
    both, one = root / "both.json", root / "one.json"
    write_opiniobank(entities, both)
    write_opiniobank(entities[:1], one)
    store = root / "store"
    run = fake_opinio("index", str(both), "--store", str(store), cwd=root)
    assert run.returncode == 0, run.stderr
    return Sample(root, both, one, store, run)


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _fits(text: str) -> None:
    wide = [line for line in text.splitlines() if len(line) > WIDTH]
    assert not wide, "\n".join(wide)


def _rows(text: str) -> list[list[str]]:
    """The body rows of every rich table in ``text``: each cell's wrapped lines joined with spaces."""
    rows: list[list[str]] = []
    current: list[list[str]] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("┡", "├")):  # a new row starts after the header rule or a row rule
            if current:
                rows.append([" ".join(" ".join(part).split()) for part in current])
            current = []
            continue
        if stripped.startswith(("└", "┏", "┗")):
            if current:
                rows.append([" ".join(" ".join(part).split()) for part in current])
            current = None
            continue
        if current is not None and stripped.startswith("│"):
            cells = stripped.strip("│").split("│")
            if not current:
                current.extend([] for _ in cells)
            for column, cell in enumerate(cells[: len(current)]):
                current[column].append(cell.strip())
    return rows


def _vocabulary(path: Path) -> set[str]:
    words: set[str] = set()
    for entity in json.loads(path.read_text(encoding="utf-8")):
        for review in entity["user_reviews"]:
            words.update(review["text"].split())
    return words


# --------------------------------------------------------------------------- index
@pytest.mark.slow
def test_index_table_fits_80_columns_with_readable_headers(sample: Sample) -> None:
    out = sample.index_run.stdout
    _fits(out)
    assert "…" not in out, out
    header = next(line for line in out.splitlines() if "entity" in line)
    for word in ("reviews", "added", "updated", "unchanged", "removed", "sentences", "embedded", "time"):
        assert word in out, (word, header)
    rule = next(line for line in out.splitlines() if line.startswith("─"))
    assert rule.strip("─") == ""  # the header rule spans the table (no vertical rules to lose at 80 columns)


@pytest.mark.slow
def test_index_quiet_prints_nothing(sample: Sample) -> None:
    again = fake_opinio("index", str(sample.both), "--store", str(sample.store), "--quiet", cwd=sample.root)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "" and again.stderr == ""


# --------------------------------------------------------------------------- aspects
@pytest.mark.slow
def test_aspects_table_fits_80_columns_and_never_cuts_a_word(sample: Sample) -> None:
    run = fake_opinio("aspects", str(sample.both), "-e", "101", "--store", str(sample.store), cwd=sample.root)
    assert run.returncode == 0, run.stderr
    _fits(run.stdout)
    body = [line for line in run.stdout.splitlines() if line.strip().startswith("│")]
    assert body and all(line.rstrip().endswith("│") for line in body), run.stdout  # the right border is kept
    rows = _rows(run.stdout)
    assert len(rows) >= 3, run.stdout
    vocabulary = _vocabulary(sample.both)
    for row in rows:
        examples = re.findall(r"“([^”]*)”", " ".join(row))  # quoted under the aspect at 80 columns
        assert len(examples) == 1, row
        cut = [word for word in examples[0].split() if word not in vocabulary and word != "…"]
        assert not cut, (cut, examples[0])  # every word whole: wrapped at word boundaries, never mid-word


# --------------------------------------------------------------------------- highlight
@pytest.mark.slow
def test_highlight_at_80_columns_shows_the_quotes_under_the_highlight_and_quiet_is_quiet(sample: Sample) -> None:
    args = ("highlight", str(sample.both), "-e", "101", "--query", "wi-fi", "--store", str(sample.store), "--quiet")
    as_json = fake_opinio(*args, "--format", "json", cwd=sample.root)
    assert as_json.returncode == 0, as_json.stderr
    result = json.loads(as_json.stdout)
    highlights = result["pros"] + result["cons"]
    assert highlights, result
    run = fake_opinio(*args, cwd=sample.root)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""  # --quiet: nothing but errors and the result
    _fits(run.stdout)
    shown = " ".join(" ".join(row) for row in _rows(run.stdout))
    for h in highlights:
        for evidence in h["evidence"][:2]:  # shown as quotes, under the highlight (no room beside it at 80)
            quote = " ".join(evidence["text"].split())
            assert f"“{quote}”" in shown, (quote, run.stdout)


# --------------------------------------------------------------------------- compare
@pytest.mark.slow
def test_compare_refuses_then_indexes_what_it_compares_with(sample: Sample) -> None:
    store = sample.root / "only-101"
    first = fake_opinio("index", str(sample.one), "--store", str(store), "--quiet", cwd=sample.root)
    assert first.returncode == 0 and first.stdout == first.stderr == "", first.stderr

    # The dataset has no other entity either: one line that names the fix, nothing on stdout.
    alone = fake_opinio("compare", str(sample.one), "-e", "101", "--store", str(store), cwd=sample.root)
    assert alone.returncode == 2, alone.stdout + alone.stderr
    assert alone.stdout == ""
    lines = alone.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), alone.stderr
    assert "opinio index" in lines[0] and "other" in lines[0], lines[0]

    # Query-free highlight with --quiet: no "note:" on stderr, only the result on stdout.
    quiet = fake_opinio("highlight", str(sample.one), "-e", "101", "--store", str(store), "--query-free",
                        "--quiet", cwd=sample.root)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    assert quiet.stdout.strip()

    # The README's order (highlight indexes only 101, then compare): DATASET is indexed, the headline says so.
    run = fake_opinio("compare", str(sample.both), "-e", "101", "--store", str(store), cwd=sample.root)
    assert run.returncode == 0, run.stderr
    assert "vs 1 other entity" in run.stdout and "entities" not in run.stdout.split("\n")[0], run.stdout
    assert "Palm Cove Beach Resort" in " ".join(run.stdout.split())  # names what it compares with
    _fits(run.stdout)
    report = json.loads(
        fake_opinio("compare", str(sample.both), "-e", "101", "--store", str(store), "-f", "json",
                    cwd=sample.root).stdout
    )
    assert report["compared_with"] == 1 and report["others"] == ["Palm Cove Beach Resort"]
    assert any(item["share_others"] > 0 for item in report["items"]), report  # not "0% elsewhere" everywhere


def test_compare_entity_refuses_a_store_without_other_entities(tmp_path: Path) -> None:
    from opinio_agents.errors import ConfigError
    from opinio_agents.hiro import HiroIndex, compare_entity
    from opinio_agents.indexing import Indexer
    from opinio_agents.stores import SentenceStore
    from tests.fake_encoder import HashEncoder

    hotel = load_sample()[0]
    hotel.user_reviews = hotel.user_reviews[:30]
    store = SentenceStore(tmp_path / "store")
    Indexer(store, HashEncoder()).index_entities([hotel])
    with pytest.raises(ConfigError, match="no other entity"):
        compare_entity(HiroIndex(store, directory=tmp_path / "h"), hotel.key)


def test_compare_numbers_for_one_and_many_other_entities(tmp_path: Path) -> None:
    from opinio_agents.hiro import HiroIndex, compare_entity
    from opinio_agents.indexing import Indexer
    from opinio_agents.stores import SentenceStore
    from opinio_agents.synthesis.support import count_support
    from tests.fake_encoder import HashEncoder

    first, second = load_sample()
    first.user_reviews = first.user_reviews[:40]
    second.user_reviews = second.user_reviews[:40]
    third = second.model_copy(
        update={"entity_id": 303, "entity_name": "Small Inn", "user_reviews": second.user_reviews[:15]}
    )
    store = SentenceStore(tmp_path / "store")
    Indexer(store, HashEncoder()).index_entities([first, second])
    one = compare_entity(HiroIndex(store, directory=tmp_path / "h1"), "101", top_k=4)
    assert one.compared_with == 1 and one.items
    for item in one.items:
        other = count_support(item.aspect, store.sentences("202"))
        assert item.share_others == pytest.approx(other.reviews / other.total_reviews, abs=1e-4)
        assert item.positive_others == pytest.approx(other.share_positive, abs=1e-4)
    Indexer(store, HashEncoder()).index_entities([third])
    many = compare_entity(HiroIndex(store, directory=tmp_path / "h2"), "101", top_k=4)
    assert many.compared_with == 2 and many.items
    for item in many.items:
        others = [count_support(item.aspect, store.sentences(k)) for k in ("202", "303")]
        reviews = sum(s.reviews for s in others)
        # "elsewhere": the other entities' reviews pooled, so every review weighs the same
        assert item.share_others == pytest.approx(reviews / sum(s.total_reviews for s in others), abs=1e-4)
        positive = sum(s.positive for s in others) / reviews if reviews else 0.0
        assert item.positive_others == pytest.approx(positive, abs=1e-4)


def test_compare_headline_counts_in_words() -> None:
    from opinio_agents.cli.hiro import compare_title
    from opinio_agents.hiro.compare import EntityComparison

    one = EntityComparison("101", "Harbor", 1, [], others=("Palm Cove",))
    many = EntityComparison("101", "Harbor", 3, [], others=("A", "B", "C"))
    assert compare_title(one) == "Harbor vs 1 other entity (Palm Cove)"
    assert compare_title(many) == "Harbor vs 3 other entities (A, B, C)"


# --------------------------------------------------------------------------- flags, files
def test_each_short_flag_means_one_thing_across_commands() -> None:
    import click
    import typer.main

    from opinio_agents.cli.main import app

    meaning: dict[str, set[str]] = {}

    def walk(command: click.Command) -> None:
        for param in command.params:
            shorts = [o for o in (*param.opts, *param.secondary_opts) if re.fullmatch(r"-[A-Za-z]", o)]
            longs = [o for o in param.opts if o.startswith("--")]
            for short in shorts:
                meaning.setdefault(short, set()).update(longs[:1])
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    walk(typer.main.get_command(app))
    clashes = {short: sorted(longs) for short, longs in meaning.items() if len(longs) > 1}
    assert not clashes, clashes
    assert meaning.get("-q") == {"--query"}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "`-q` is `--query`" in readme


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_sample_and_synth_write_files_like_the_rest(tmp_path: Path, umask: int, mode: int) -> None:
    from opinio_agents.cli.main import main

    previous = os.umask(umask)
    try:
        assert main(["sample", str(tmp_path / "s.json")]) == 0
        assert main(["synth", str(tmp_path / "y.json"), "--entities", "1", "--reviews-per-entity", "5"]) == 0
    finally:
        os.umask(previous)
    for name in ("s.json", "y.json", "y.json.truth.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name


def test_write_opiniobank_writes_the_usual_mode(tmp_path: Path) -> None:
    previous = os.umask(0o022)
    try:
        write_opiniobank(load_sample()[:1], tmp_path / "out.json")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "out.json").stat().st_mode) == 0o644
