"""The ``opinio`` CLI end to end on (a subset of) the shipped sample."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from opinio_agents.cli.main import main
from opinio_agents.datasets import load_sample
from opinio_agents.io.writers import write_opiniobank


@pytest.fixture(scope="module")
def small_sample(tmp_path_factory, encoder):
    """The two sample hotels cut to 40 reviews each, written as OpinioBank JSON, and a store path."""
    entities = load_sample()
    for entity in entities:
        entity.user_reviews = entity.user_reviews[:40]
    root = tmp_path_factory.mktemp("cli")
    path = root / "small.json"
    write_opiniobank(entities, path)
    store = root / "store"
    assert main(["index", str(path), "--store", str(store), "--quiet"]) == 0
    return path, store, entities


REPO = Path(__file__).resolve().parents[1]


def opinio(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m opinio_agents ARGS`` in a real subprocess (this checkout first on the path)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "opinio_agents", *args],
        cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=120,
    )


USAGE_ERRORS = [
    (["highlight", "--bogus"], "opinio highlight: No such option: --bogus"),
    (["highlight"], "opinio highlight: Missing argument 'dataset'"),
    (["highlight", "data.json"], "opinio highlight: Missing option '--entity'"),
    (["sample", "a.json", "b.json"], "opinio sample: Got unexpected extra argument(s) (b.json)"),
    (["highlight", "data.json", "-e", "1", "--top-k", "0"], "Invalid value for '--top-k' / '-k'"),
    (["highlight", "data.json", "-e", "1", "--retriever", "foo"], "Invalid value for '--retriever'"),
    (["index", "data.json", "--chroma-port", "abc"], "Invalid value for '--chroma-port'"),
    (["nosuch"], "opinio: No such command 'nosuch'"),
    (["evaluate", "--bogus"], "opinio evaluate: No such option: --bogus"),
    (["triplets", "--bogus"], "opinio triplets: No such option: --bogus"),
    (["aspects", "data.json"], "opinio aspects: Missing option '--entity'"),
    (["chat"], "opinio chat: Missing argument 'dataset'"),
]


@pytest.mark.parametrize(("args", "expected"), USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_usage_error_is_one_line_and_status_2_in_a_subprocess(tmp_path, args, expected) -> None:
    done = opinio(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and expected in lines[0], lines[0]
    assert "Traceback" not in done.stderr and "--help" in lines[0]
    assert done.stdout == ""


def test_usage_errors_through_the_console_script(tmp_path) -> None:
    script = Path(sys.executable).with_name("opinio")
    if not script.exists():
        pytest.skip("the opinio console script is not installed next to this interpreter")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [str(script), "highlight", "--bogus"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: opinio highlight: No such option: --bogus (see 'opinio highlight --help')"
    ]


def test_data_error_is_one_line_in_a_subprocess(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": ""}]}]')
    done = opinio("index", str(bad), "--store", str(tmp_path / "store"), "--quiet", cwd=tmp_path)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: ") and "bad.json" in line and "'text'" in line
    assert not (tmp_path / "store" / "catalog.sqlite").exists()


def test_sample_command_writes_the_dataset(tmp_path, capsys) -> None:
    target = tmp_path / "sample.json"
    assert main(["sample", str(target)]) == 0
    data = json.loads(target.read_text())
    assert len(data) >= 2 and all(len(e["user_reviews"]) >= 150 for e in data)
    assert "wrote" in capsys.readouterr().err


def test_synth_command_writes_truth(tmp_path) -> None:
    target = tmp_path / "synth.json"
    assert main(["synth", str(target), "--entities", "2", "--reviews-per-entity", "20", "--seed", "4"]) == 0
    truth = json.loads((tmp_path / "synth.json.truth.json").read_text())
    assert len(truth) == 2 and all(set(v) == {"pros", "cons"} for v in truth.values())


def test_highlight_json_is_a_valid_highlight_set(small_sample, capsys) -> None:
    from opinio_agents.models import HighlightSet

    path, store, entities = small_sample
    entity = entities[0]
    code = main(
        ["highlight", str(path), "--entity", str(entity.entity_id), "--store", str(store), "--format", "json",
         "--top-k", "5", "--quiet"]
    )
    assert code == 0
    result = HighlightSet.model_validate_json(capsys.readouterr().out)
    assert result.entity_name == entity.entity_name
    assert result.meta.queries == entity.queries
    assert result.highlights
    ids = {f"{entity.entity_id}:{r.review_id}" for r in entity.user_reviews}
    for highlight in result.highlights:
        assert all(e.sentence_id.rsplit(":", 1)[0] in ids for e in highlight.evidence)


def test_highlight_markdown_to_file(small_sample, tmp_path) -> None:
    path, store, entities = small_sample
    out = tmp_path / "out" / "h.md"
    code = main(
        ["highlight", str(path), "-e", str(entities[1].entity_id), "--store", str(store), "-q", "pool",
         "-q", "check-in", "--format", "markdown", "-o", str(out), "--quiet"]
    )
    assert code == 0
    text = out.read_text()
    assert text.startswith(f"# {entities[1].entity_name}")
    assert "mentioned in" in text


def test_a_query_no_review_talks_about_is_named_not_left_out(small_sample, capsys) -> None:
    # A hotel's reviews say nothing about a casino: the query gets no highlight, and every surface says
    # so (HighlightSet.unanswered, in the JSON and on the table and markdown outputs).
    from opinio_agents.models import HighlightSet

    path, store, entities = small_sample
    common = ["highlight", str(path), "-e", str(entities[0].entity_id), "--store", str(store), "-q", "pool",
              "-q", "casino", "--quiet"]
    assert main([*common, "--format", "json"]) == 0
    result = HighlightSet.model_validate_json(capsys.readouterr().out)
    assert result.unanswered == ["casino"] and "pool" in {h.query for h in result.highlights}
    assert main([*common, "--format", "markdown"]) == 0
    assert "_No highlight for casino: no review sentence about it takes a side._" in capsys.readouterr().out
    assert main(common) == 0
    assert "No highlight for casino" in capsys.readouterr().out


def test_highlight_table_output(small_sample, capsys) -> None:
    path, store, entities = small_sample
    assert main(["highlight", str(path), "-e", str(entities[0].entity_id), "--store", str(store), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "PROS" in out and "CONS" in out


def test_bad_file_gives_one_line_error(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": ""}]}]')
    store = tmp_path / "store"
    assert main(["index", str(bad), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "review 1" in err and "'text'" in err
    assert "Traceback" not in err
    assert not (store / "catalog.sqlite").exists()  # nothing indexed from a file that failed


def test_unknown_entity(small_sample, capsys) -> None:
    path, store, _ = small_sample
    assert main(["highlight", str(path), "--entity", "nope", "--store", str(store)]) == 2
    assert "nope" in capsys.readouterr().err


def test_llm_synthesizer_without_llm_is_refused(small_sample, capsys) -> None:
    path, store, entities = small_sample
    code = main(
        ["highlight", str(path), "-e", str(entities[0].entity_id), "--store", str(store), "--synthesizer", "llm"]
    )
    assert code == 2
    assert "needs an LLM" in capsys.readouterr().err


def test_help_lists_commands(capsys) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("index", "highlight", "sample", "synth"):
        assert command in out


def test_highlight_with_llm_over_loopback_openai_server(small_sample, tmp_path, capsys, monkeypatch) -> None:
    """`--llm openai:MODEL --base-url` drives the real openai client; highlights cite real evidence."""
    pytest.importorskip("langchain_openai")
    from opinio_agents.models import HighlightSet
    from opinio_agents.stores import SentenceStore
    from tests.llm_fixtures import answer
    from tests.loopback_server import LoopbackServer, ok

    path, store, entities = small_sample
    entity = entities[0]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    reply = answer(("cons", "Guests report a problem worth knowing about.", ["S1"]))
    args = [
        "highlight",
        str(path),
        "-e",
        str(entity.entity_id),
        "--store",
        str(store),
        "-q",
        "noise level",
        "-q",
        "wi-fi",
        "--llm",
        "openai:loopback-model",
        "--format",
        "json",
        "--quiet",
    ]
    with LoopbackServer([ok(reply, prompt_tokens=300, completion_tokens=25)]) as server:
        assert main([*args, "--base-url", server.base_url]) == 0
        assert server.request_count == 2
        result = HighlightSet.model_validate_json(capsys.readouterr().out)
        # A second run is answered from the persistent response cache: no request reaches the server.
        assert main([*args, "--base-url", server.base_url]) == 0
        assert server.request_count == 2
        cached = HighlightSet.model_validate_json(capsys.readouterr().out)
    assert result.meta.synthesizer == "llm" and result.meta.model == "loopback-model"
    assert result.meta.tokens.prompt_tokens == 600 and result.meta.tokens.completion_tokens == 50
    assert {h.query for h in result.cons} == {"noise level", "wi-fi"}
    known = {s.sentence.sentence_id for s in SentenceStore(store).sentences(entity.key)}
    for highlight in result.cons:
        assert highlight.evidence and all(e.sentence_id in known for e in highlight.evidence)
    assert cached.meta.tokens.cached_calls == 2
    assert [h.text for h in cached.cons] == [h.text for h in result.cons]


def test_query_free_highlight_uses_hiro_and_says_so(tmp_path, encoder, capsys) -> None:
    from opinio_agents.models import HighlightSet

    entities = load_sample()
    for entity in entities:
        entity.user_reviews = entity.user_reviews[:30]
        entity.expert_review = None
    path = tmp_path / "noexpert.json"
    write_opiniobank(entities, path)
    store = tmp_path / "store"
    assert main(["index", str(path), "--store", str(store), "--quiet"]) == 0
    capsys.readouterr()
    args = ["highlight", str(path), "-e", str(entities[0].entity_id), "--store", str(store), "--format", "json"]
    assert main(args) == 0  # without --quiet: the note on stderr (with --quiet: only errors and the result)
    captured = capsys.readouterr()
    result = HighlightSet.model_validate_json(captured.out)
    assert result.meta.mode == "query-free" and result.meta.retriever == "hiro"
    assert result.highlights
    assert all(h.evidence and h.support.reviews > 0 for h in result.highlights)
    assert f"note: entity {entities[0].entity_id} has no queries" in captured.err  # no silent mode switch
    assert "query-free mode" in captured.err
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr().err == ""  # --quiet: no note
    assert main([*args, "--query-free"]) == 0  # asked for: no note
    asked = capsys.readouterr()
    assert "note:" not in asked.err
    assert HighlightSet.model_validate_json(asked.out).meta.mode == "query-free"
    assert main([*args, "--query-free", "-q", "wi-fi"]) == 2
    assert "--query-free takes no --query" in capsys.readouterr().err


@pytest.mark.slow  # embeds in the subprocess
def test_index_reads_stdin_in_a_subprocess(tmp_path) -> None:
    entities = load_sample()
    for entity in entities:
        entity.user_reviews = entity.user_reviews[:15]
    path = tmp_path / "small.json"
    write_opiniobank(entities, path)
    done = opinio("index", "-", "--store", str(tmp_path / "store"), cwd=tmp_path, stdin=path.read_text())
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    for entity in entities:
        assert str(entity.entity_id) in done.stdout
    from opinio_agents.stores import SentenceStore

    store = SentenceStore(tmp_path / "store")
    assert sorted(store.entity_keys()) == sorted(e.key for e in entities)


def test_index_stdin_error_names_stdin_and_indexes_nothing(tmp_path) -> None:
    text = (
        '[\n{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": "ok"}]},\n'
        '{"entity_id": 2, "user_reviews": [{"review_id": 1, "text": ""}]}\n]'
    )
    done = opinio("index", "-", "--store", str(tmp_path / "store"), "--quiet", cwd=tmp_path, stdin=text)
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("error: <stdin>: line 3, entity 2, review 1, field 'text'"), line
    assert not (tmp_path / "store" / "catalog.sqlite").exists()


@pytest.mark.slow
def test_triplets_command_prints_json_lines_and_no_model_loading_bar(tmp_path) -> None:
    result = opinio("triplets", cwd=tmp_path, stdin="The staff were friendly.\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.splitlines()[0])["triplets"][0]["aspect"] == "staff"
    assert "Loading weights" not in result.stderr  # transformers' progress bar is silenced
