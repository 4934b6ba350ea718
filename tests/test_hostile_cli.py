"""Hostile input through the ``opinio`` CLI in real subprocesses (end-to-end tier: marked slow).

Each case runs ``python -m tests.fake_cli`` (the real CLI, with the hashing encoder of
tests/fake_encoder.py in place of MiniLM) against a store under ``tmp_path`` and checks
what a user sees: the exit status, exactly one ``error:`` line and never a traceback,
names printed exactly as given, and what reached the store.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Every test here runs the real CLI in subprocesses (a few seconds each): the end-to-end tier.
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


def opinio(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run the CLI with the fake encoder in a subprocess; ``NO_COLOR`` so output is plain text."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "NO_COLOR": "1",
        "COLUMNS": "250",
        "RUST_BACKTRACE": "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "tests.fake_cli", *args],
        cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=180,
    )


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line of a failed run (asserting status 2 and no traceback)."""
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    return errors[0]


def entity(entity_id: object, *reviews: tuple[object, str], name: str = "") -> dict:
    return {"entity_id": entity_id, "entity_name": name,
            "user_reviews": [{"review_id": rid, "text": text} for rid, text in reviews]}


def store_keys(store: Path) -> list[str]:
    if not (store / "catalog.sqlite").exists():
        return []
    from opinio_agents.stores import SentenceStore

    return sorted(SentenceStore(store).entity_keys())


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> tuple[Path, Path]:
    """A file named ``hotel[v2].json`` with markup-like ids and text, indexed through the CLI."""
    root = tmp_path_factory.mktemp("hostile")
    data = [
        entity("t1", ("r1", "The pool was great [bold]fun[/bold]. The room was clean [/]."),
               ("r2", "Great pool, friendly staff."), name="Inn [red]x[/red]"),
        entity("[/]", ("[/]", "The pool was lovely. Breakfast was cold.")),
    ]
    path = root / "hotel[v2].json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = opinio("index", path.name, "--store", "store", cwd=root)  # not --quiet: the table is checked
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    rows = [line.split() for line in done.stdout.splitlines() if line.strip()]
    assert any(row[0] == "[/]" for row in rows), done.stdout
    return root, path


def test_markup_in_ids_and_text_is_indexed_and_shown_literally(indexed) -> None:
    root, path = indexed
    assert store_keys(root / "store") == ["[/]", "t1"]
    done = opinio("highlight", path.name, "-e", "t1", "-q", "pool", "-q", "[/]", "--store", "store", "--quiet",
                  cwd=root)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "[t1:r1:0]" in done.stdout  # evidence ids are not read as markup tags
    assert "[bold]fun[/bold]" in done.stdout and "Inn [red]x[/red]" in done.stdout


def test_file_names_with_brackets_print_exactly(tmp_path) -> None:
    line = one_error_line(opinio("index", "hotel[v2].json", "--store", "s", cwd=tmp_path))
    assert line == "error: hotel[v2].json: file not found; check the path"


def test_error_messages_with_markup_print_exactly(indexed) -> None:
    root, path = indexed
    line = one_error_line(opinio("highlight", path.name, "-e", "[/]nope", "--store", "store", "--quiet", cwd=root))
    assert "entity '[/]nope' not found" in line and "hotel[v2].json" in line


def test_usage_error_with_markup_is_one_line(tmp_path) -> None:
    line = one_error_line(opinio("highlight", "--bogus[/]", cwd=tmp_path))
    assert line == "error: opinio highlight: No such option: --bogus[/] (see 'opinio highlight --help')"


def _cases() -> list[tuple[str, str, str, str]]:
    """(case, file name, content, what the error line says)."""
    ok = entity(1, (1, "Quiet room."))
    deep = "[" * 100_000 + "]" * 100_000
    return [
        ("deep json", "deep.json", f'[{{"entity_id": 1, "x": {deep}, "user_reviews": []}}]', "nests deeper than"),
        ("deep jsonl", "deep.jsonl", f'{{"entity_id": 1, "x": {deep[:5000]}{deep[-5000:]}}}\n', "nests too deeply"),
        ("surrogate json", "s.json", '[{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "a\\ud800"}]}]',
         "lone surrogate"),
        ("surrogate jsonl", "s.jsonl", '{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "a\\udfff"}]}\n',
         "field 'text': contains a lone surrogate"),
        ("nan rating", "n.jsonl", '{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "a", "rating": NaN}]}\n',
         "field 'rating': rating must be a finite number from 0 to 10"),
        ("infinity rating", "i.csv", "entity_id,review_id,text,rating\n1,1,ok,Infinity\n", "line 2"),
        ("csv open quote", "q.csv", 'entity_id,review_id,text\n1,1,ok\n1,2,"open\n1,3,swallowed\n', "line 3"),
        ("review too long", "big.json", json.dumps([entity(1, (1, "word " * 30_000))]), "over the limit of 100,000"),
        ("truncated array", "cut.json", json.dumps([ok, entity(2, (1, "x"))])[:-30], "malformed JSON"),
    ]


CASES = _cases()


@pytest.mark.parametrize(("name", "content", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_file_is_one_line_and_indexes_nothing(tmp_path, name, content, expected) -> None:
    (tmp_path / name).write_text(content, encoding="utf-8", errors="surrogatepass")
    line = one_error_line(opinio("index", name, "--store", "store", "--quiet", cwd=tmp_path))
    assert expected in line, line
    assert store_keys(tmp_path / "store") == []


def test_skip_invalid_on_a_truncated_array_indexes_nothing(tmp_path) -> None:
    text = json.dumps([entity(1, (1, "Quiet room.")), entity(2, (1, "Nice pool.")), entity(3, (1, "Cold."))])
    (tmp_path / "cut.json").write_text(text[: text.rindex("{")], encoding="utf-8")
    line = one_error_line(opinio("index", "cut.json", "--store", "store", "--skip-invalid", "--quiet", cwd=tmp_path))
    assert "cut.json" in line and "malformed JSON" in line
    assert store_keys(tmp_path / "store") == []


def test_skip_invalid_skips_an_oversized_review(tmp_path) -> None:
    data = [entity(1, (1, "Quiet room."), (2, "x" * 500)), entity(2, (1, "Nice pool."))]
    (tmp_path / "d.json").write_text(json.dumps(data), encoding="utf-8")
    done = opinio("index", "d.json", "--store", "store", "--skip-invalid", "--max-review-chars", "100", "--quiet",
                  cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "skipped 1 invalid record:" in done.stderr and "over the limit of 100" in done.stderr
    assert store_keys(tmp_path / "store") == ["2"]


def test_store_that_is_a_regular_file(tmp_path) -> None:
    (tmp_path / "d.json").write_text(json.dumps([entity(1, (1, "Quiet."))]), encoding="utf-8")
    (tmp_path / "notadir").write_text("x")
    line = one_error_line(opinio("index", "d.json", "--store", "notadir", cwd=tmp_path))
    assert "--store 'notadir' is a file" in line
    line = one_error_line(opinio("index", "d.json", "--store", "notadir/sub", cwd=tmp_path))
    assert "'notadir' is a file" in line


@pytest.mark.parametrize("target", ["outdir", "plain.txt/x.md"])
def test_output_that_cannot_be_a_file(tmp_path, target) -> None:
    (tmp_path / "d.json").write_text(json.dumps([entity(1, (1, "Quiet."))]), encoding="utf-8")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "plain.txt").write_text("x")
    line = one_error_line(opinio("highlight", "d.json", "-e", "1", "-q", "room", "-o", target, "--store", "store",
                                 cwd=tmp_path))
    assert "output" in line and ("is a directory" in line or "is a file" in line)
    assert not (tmp_path / "store").exists()  # refused before any work


def test_output_never_writes_through_a_planted_symlink(tmp_path) -> None:
    (tmp_path / "d.json").write_text(json.dumps([entity(1, (1, "Quiet room <b>x</b> [a](http://e.x)."))]))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "out.md.tmp").symlink_to(victim)
    done = opinio("highlight", "d.json", "-e", "1", "-q", "room", "-f", "markdown", "-o", "out.md",
                  "--store", "store", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious"
    text = (tmp_path / "out.md").read_text()
    assert "<b>" not in text and "[a](" not in text and "&lt;b&gt;" in text


@pytest.mark.parametrize("damaged", ["catalog.sqlite", "chroma/chroma.sqlite3"])
def test_corrupt_store_file_names_the_file_and_the_fix(tmp_path, damaged) -> None:
    (tmp_path / "d.json").write_text(json.dumps([entity(1, (1, "Quiet room."), (2, "Nice pool."))]))
    assert opinio("index", "d.json", "--store", "store", "--quiet", cwd=tmp_path).returncode == 0
    (tmp_path / "store" / damaged).write_bytes(os.urandom(4096))
    line = one_error_line(opinio("highlight", "d.json", "-e", "1", "-q", "room", "--store", "store", "--quiet",
                                 cwd=tmp_path))
    assert str(Path("store") / damaged) in line and "delete" in line.lower()


def test_unexpected_exception_is_one_line_and_debug_shows_the_traceback(tmp_path, monkeypatch, capsys) -> None:
    from opinio_agents.cli import main as cli
    from opinio_agents.io import loaders

    def boom(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("simulated [/] bug")

    monkeypatch.setattr(loaders, "iter_valid_entities", boom)
    assert cli.main(["index", str(tmp_path / "x.json"), "--store", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "error: unexpected error: ZeroDivisionError: simulated [/] bug; rerun with --debug for the traceback"
    ]
    assert cli.main(["index", str(tmp_path / "x.json"), "--store", str(tmp_path / "s"), "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and err.strip().splitlines()[-1].startswith("error:")


def test_debug_flag_is_listed_in_help(tmp_path) -> None:
    done = opinio("--help", cwd=tmp_path)
    assert done.returncode == 0 and "--debug" in done.stdout


def test_probe_section_inputs_quick_subset(tmp_path) -> None:
    from scripts.probe.inputs import CASES, run

    rows = run(tmp_path, quick=True)
    assert len(rows) == sum(case.quick for case in CASES) >= 8
    assert {r.section for r in rows} == {"inputs"}
    assert [r for r in rows if r.outcome != "ok"] == []
