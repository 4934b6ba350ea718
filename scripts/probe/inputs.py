"""Probe section ``inputs``: hostile input files, paths and outputs through the real ``opinio`` CLI.

Every case writes a small file (generated here, nothing is read from the research data),
runs ``opinio`` in a subprocess against a scratch store under ``workdir`` and classifies
what happened:

* ``ok``: bad input gave status 2 and exactly one ``error:`` line, and the store holds no
  entity; good-but-odd input (markup in ids, hostile review text) worked and came out
  escaped, ids printed exactly.
* ``traceback``: a Python traceback reached the user.
* ``half-indexed``: the run failed, but some entity of the file reached the store.
* ``accepted-invalid``: invalid input indexed with status 0, or untrusted text reached an
  output raw (markdown: HTML, a link, an ANSI escape, a bidi override; the terminal table:
  an ANSI escape or a bidi override), or a planted symlink was written through.
* ``crash``: any other unexpected status or output (no traceback).
* ``unbounded``: the command ran past its time limit.

The CLI runs as ``python -m opinio_agents`` (the real encoder, MiniLM). With ``quick=True``
(the subset the default test suite runs) it runs a handful of cases, and, from a checkout
whose ``tests/`` package is importable, through ``python -m tests.fake_cli``: the same CLI
with the hashing encoder of ``tests/fake_encoder.py``, so no model is loaded.

Example:
    >>> from pathlib import Path; import tempfile
    >>> rows = run(Path(tempfile.mkdtemp()), quick=True)   # doctest: +SKIP
    >>> {r.outcome for r in rows}                          # doctest: +SKIP
    {'ok'}
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from scripts.probe.common import ProbeRow

__all__ = ["run", "CASES"]

REPO = Path(__file__).resolve().parents[2]
SECTION = "inputs"
TIMEOUT_S = 300

Check = Callable[[Path, subprocess.CompletedProcess[str]], str | None]


def _entity(entity_id: object, *reviews: tuple[object, str], name: str = "", **extra: object) -> dict:
    return {
        "entity_id": entity_id,
        "entity_name": name,
        "user_reviews": [{"review_id": rid, "text": text, **extra} for rid, text in reviews],
    }


GOOD = [_entity(1, (1, "The room was quiet and clean."), (2, "Great pool, friendly staff."), name="Harbor Inn")]
#: One sentence (so it is the evidence whatever the encoder ranks first) with every kind of output
#: payload, and nothing the injection screen withholds (``</evidence>`` would be: see the injection section).
HOSTILE_TEXT = (
    "The pool was lovely <b>bold</b><script>x()</script> [click](http://evil.example) "
    "\x1b[31mred\x1b[0m \u202eevil\u202c and clean"
)


@dataclass
class Case:
    """One hostile input: the files it writes, the command it runs, what must happen.

    Attributes:
        name: Short name (the probe table's ``case`` column).
        files: File name -> content (str, or bytes for raw encodings).
        args: The ``opinio`` arguments (``{store}`` is replaced by the scratch store).
        expect: ``"error"`` (status 2, one line, nothing indexed) or ``"ok"`` (status 0).
        check: For ``ok`` cases, a function of (case dir, result) returning a problem or None.
        setup: Commands to run first (e.g. build a store to corrupt), each an args list.
        after_setup: A function of the case directory run between setup and the case.
        quick: Part of the quick subset.
    """

    name: str
    files: dict[str, str | bytes]
    args: list[str]
    expect: str = "error"
    check: Check | None = None
    setup: list[list[str]] = field(default_factory=list)
    after_setup: Callable[[Path], None] | None = None
    quick: bool = False


def _json(data: object) -> str:
    return json.dumps(data, ensure_ascii=False)


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _index(name: str, *extra: str) -> list[str]:
    return ["index", name, "--store", "{store}", "--quiet", *extra]


def _highlight(name: str, entity: str, *extra: str) -> list[str]:
    return ["highlight", name, "-e", entity, "--store", "{store}", "--quiet", *extra]


# -- checks of the cases that must work ------------------------------------------------------
def _shows(*needles: str) -> Check:
    def check(_: Path, done: subprocess.CompletedProcess[str]) -> str | None:
        missing = [n for n in needles if n not in done.stdout]
        return f"output lacks {missing}" if missing else None

    return check


def _raw_text_in(text: str) -> list[str]:
    bad = [raw for raw in ("<b>", "<script>", "\x1b", "\u202e") if raw in text]
    if "[click](" in text:
        bad.append("[click](")
    return bad


def _escaped_markdown(_: Path, done: subprocess.CompletedProcess[str]) -> str | None:
    bad = _raw_text_in(done.stdout)
    if bad:
        return f"raw {bad!r} in the output"
    return None if "&lt;b&gt;" in done.stdout else "the hostile sentence is not in the output (escaped or not)"


def _escaped_terminal(_: Path, done: subprocess.CompletedProcess[str]) -> str | None:
    """A terminal runs control and bidi characters (HTML and markdown links are inert text there)."""
    bad = [raw for raw in ("\x1b", "\u202e") if raw in done.stdout]
    if bad:
        return f"raw {bad!r} in the output"
    return None if "\\x1b[31mred" in done.stdout else "the escape is not shown as \\x1b"


def _json_verbatim(_: Path, done: subprocess.CompletedProcess[str]) -> str | None:
    try:
        data = json.loads(done.stdout)
    except ValueError as exc:
        return f"not JSON: {exc}"
    texts = [e["text"] for side in ("pros", "cons") for h in data[side] for e in h["evidence"]]
    return None if any("\x1b[31mred" in t and "\u202e" in t for t in texts) else "review text not verbatim in JSON"


def _symlink_untouched(case_dir: Path, done: subprocess.CompletedProcess[str]) -> str | None:
    if (case_dir / "victim.txt").read_text() != "precious":
        return "the planted symlink's target was overwritten"
    out = case_dir / "out.md"
    if not out.is_file() or out.is_symlink():
        return "out.md was not written as a regular file"
    text = out.read_text(encoding="utf-8")
    bad = _raw_text_in(text)
    if bad:
        return f"raw {bad!r} in out.md"
    return None if "&lt;b&gt;" in text else "the hostile sentence is not in out.md (escaped or not)"


def _plant_symlink(case_dir: Path) -> None:
    (case_dir / "victim.txt").write_text("precious")
    (case_dir / "out.md.tmp").symlink_to(case_dir / "victim.txt")


def _no_collision(case_dir: Path, _: subprocess.CompletedProcess[str]) -> str | None:
    from opinio_agents.stores import SentenceStore

    store = SentenceStore(case_dir / "store")
    seen = {key: [s.sentence.text for s in store.sentences(key)] for key in ("a:b", "a")}
    if seen != {"a:b": ["Lovely pool."], "a": ["Dirty room."]}:
        return f"sentences lost to an id collision: {seen}"
    return None


def _corrupt(relative: str) -> Callable[[Path], None]:
    def damage(case_dir: Path) -> None:
        (case_dir / "store" / relative).write_bytes(b"not a database " * 300)

    return damage


def _file_named(relative: str) -> Callable[[str], str | None]:
    def check(line: str) -> str | None:
        return None if relative in line else f"the error does not name {relative}"

    return check


# -- the cases ------------------------------------------------------------------------------
def _cases() -> list[Case]:
    ok = _json(GOOD)
    two = _json([GOOD[0], _entity(2, (1, "Nice pool."))])
    bank = [
        # malformed as a whole
        Case("json nested 100k deep", {"d.json": f'[{{"entity_id": 1, "x": {_deep(100_000)}}}]'},
             _index("d.json"), quick=True),
        Case("jsonl nested 5k deep", {"d.jsonl": f'{{"entity_id": 1, "x": {_deep(5_000)}}}\n'}, _index("d.jsonl")),
        Case("json truncated array", {"t.json": two[:-40]}, _index("t.json")),
        Case("json truncated array --skip-invalid", {"t.json": two[:-40]}, _index("t.json", "--skip-invalid"),
             quick=True),
        Case("json trailing garbage", {"g.json": ok + " ]}"}, _index("g.json")),
        Case("json top-level scalar", {"s.json": "42"}, _index("s.json")),
        Case("json empty file", {"e.json": ""}, _index("e.json")),
        Case("json NaN literal", {"n.json": ok.replace('"text": "Great pool', '"rating": NaN, "text": "Great pool')},
             _index("n.json")),
        Case("not UTF-8 (latin-1 bytes)", {"l.json": ok.replace("quiet", "qui\u00e9t").encode("latin-1")},
             _index("l.json")),
        Case("csv unbalanced quote", {"q.csv": 'entity_id,review_id,text\n1,1,ok\n1,2,"open\n1,3,gone\n1,4,too\n'},
             _index("q.csv"), quick=True),
        Case("csv stray quote", {"q.csv": 'entity_id,review_id,text\n1,1,"Quiet" room\n1,2,ok\n'}, _index("q.csv")),
        Case("csv unbalanced quote --skip-invalid", {"q.csv": 'entity_id,review_id,text\n1,1,ok\n2,1,"open\n2,2,x\n'},
             _index("q.csv", "--skip-invalid")),
        Case("csv missing column", {"m.csv": "entity_id,text\n1,ok\n"}, _index("m.csv")),
        Case("csv non-contiguous entity", {"c.csv": "entity_id,review_id,text\n1,1,a\n2,1,b\n1,2,c\n"},
             _index("c.csv")),
        Case("csv wrong cell count", {"w.csv": "entity_id,review_id,text\n1,1,a,extra\n"}, _index("w.csv")),
        Case("file over --max-file-mb", {"big.json": _json([_entity(i, (1, "x" * 2000)) for i in range(700)])},
             _index("big.json", "--max-file-mb", "1")),
        Case("unsupported extension", {"d.txt": ok}, _index("d.txt")),
        Case("dataset is a directory", {"dir/keep.json": ok}, _index("dir")),
        Case("dataset missing", {}, _index("missing[v2].json")),
        # invalid records
        Case("json lone surrogate \\ud800", {"s.json": ok.replace("Great pool", "Great \\ud800 pool")},
             _index("s.json"), quick=True),
        Case("jsonl lone surrogate \\udfff", {"s.jsonl": ok[1:-1].replace("Great pool", "Great \\udfff pool") + "\n"},
             _index("s.jsonl")),
        Case("jsonl NaN rating", {"n.jsonl": _json(_entity(1, (1, "ok"), rating=5)).replace("5", "NaN") + "\n"},
             _index("n.jsonl"), quick=True),
        Case("jsonl Infinity rating", {"i.jsonl": _json(_entity(1, (1, "ok"), rating=5)).replace("5", "Infinity")
                                       + "\n"}, _index("i.jsonl")),
        Case("csv NaN rating", {"n.csv": "entity_id,review_id,text,rating\n1,1,ok,nan\n"}, _index("n.csv")),
        Case("rating out of range", {"r.json": _json([_entity(1, (1, "ok"), rating=11)])}, _index("r.json")),
        Case("negative rating", {"r.json": _json([_entity(1, (1, "ok"), rating=-1)])}, _index("r.json")),
        Case("review of 5 MB", {"big.json": _json([_entity(1, (1, "Noisy room. " * 440_000))])}, _index("big.json")),
        Case("review over --max-review-chars", {"r.json": _json([_entity(1, (1, "x" * 500))])},
             _index("r.json", "--max-review-chars", "100")),
        Case("duplicate entity ids", {"d.json": _json([GOOD[0], GOOD[0]])}, _index("d.json")),
        Case("duplicate review ids", {"d.json": _json([_entity(1, (1, "a"), (1, "b"))])}, _index("d.json")),
        Case("blank review text", {"b.json": _json([_entity(1, (1, "   "))])}, _index("b.json")),
        Case("missing text field", {"m.json": '[{"entity_id": 1, "user_reviews": [{"review_id": 1}]}]'},
             _index("m.json")),
        Case("text of the wrong type", {"w.json": '[{"entity_id": 1, "user_reviews": [{"review_id": 1, "text": 5}]}]'},
             _index("w.json")),
        Case("entity id null", {"n.json": '[{"entity_id": null, "user_reviews": []}]'}, _index("n.json")),
        Case("jsonl garbage line", {"g.jsonl": ok[1:-1] + "\n{not json\n"}, _index("g.jsonl")),
        # paths
        Case("--store is a regular file", {"d.json": ok, "plain": "x"},
             ["index", "d.json", "--store", "plain", "--quiet"], quick=True),
        Case("--store under a regular file", {"d.json": ok, "plain": "x"},
             ["index", "d.json", "--store", "plain/store", "--quiet"]),
        Case("-o is an existing directory", {"d.json": ok, "outdir/keep": "x"},
             _highlight("d.json", "1", "-q", "pool", "-o", "outdir"), quick=True),
        Case("-o under a regular file", {"d.json": ok, "plain": "x"},
             _highlight("d.json", "1", "-q", "pool", "-o", "plain/out.md")),
        Case("usage error with markup", {}, ["highlight", "--bogus[/]"]),
        Case("corrupt catalog.sqlite", {"d.json": ok}, _highlight("d.json", "1", "-q", "pool"),
             setup=[_index("d.json")], after_setup=_corrupt("catalog.sqlite")),
        Case("corrupt chroma/chroma.sqlite3", {"d.json": ok}, _highlight("d.json", "1", "-q", "pool"),
             setup=[_index("d.json")], after_setup=_corrupt("chroma/chroma.sqlite3")),
        # good but odd input: must work, print names exactly, escape untrusted text
        Case("index 'hotel[v2].json' with entity_id \"[/]\"",
             {"hotel[v2].json": _json([_entity("[/]", ("[/]", "The [/] pool was great."), name="Inn [b]x[/b]")])},
             ["index", "hotel[v2].json", "--store", "{store}"],  # not --quiet: the table is checked
             expect="ok", check=_shows("[/]", "Indexed into"), quick=True),
        Case("evidence ids like [t1:r1:0] in the table",
             {"h.json": _json([_entity("t1", ("r1", "The pool was great [bold]fun[/bold]."), ("r2", "Nice pool."))])},
             _highlight("h.json", "t1", "-q", "pool", "-q", "[/]"), expect="ok",
             check=_shows("[t1:r1:0]", "[bold]fun[/bold]")),
        Case("hostile review text in the table", {"h.json": _json([_entity(1, (1, HOSTILE_TEXT))])},
             _highlight("h.json", "1", "-q", "pool"), expect="ok", check=_escaped_terminal),
        Case("hostile review text in markdown", {"h.json": _json([_entity(1, (1, HOSTILE_TEXT))])},
             _highlight("h.json", "1", "-q", "pool", "-f", "markdown"), expect="ok", check=_escaped_markdown),
        Case("hostile review text in JSON stays verbatim", {"h.json": _json([_entity(1, (1, HOSTILE_TEXT))])},
             _highlight("h.json", "1", "-q", "pool", "-f", "json"), expect="ok", check=_json_verbatim),
        Case("-o with a planted out.md.tmp symlink", {"h.json": _json([_entity(1, (1, HOSTILE_TEXT))])},
             _highlight("h.json", "1", "-q", "pool", "-f", "markdown", "-o", "out.md"), expect="ok",
             check=_symlink_untouched, after_setup=_plant_symlink),
        Case("sentence-id collision a:b/c vs a/b:c",
             {"c.json": _json([_entity("a:b", ("c", "Lovely pool.")), _entity("a", ("b:c", "Dirty room."))])},
             _index("c.json"), expect="ok", check=_no_collision),
    ]
    return bank


CASES = _cases()
_NAMED = {
    "corrupt catalog.sqlite": _file_named("catalog.sqlite"),
    "corrupt chroma/chroma.sqlite3": _file_named("chroma.sqlite3"),
}


def _command(quick: bool) -> tuple[list[str], str]:
    if quick and (REPO / "tests" / "fake_cli.py").is_file():
        return [sys.executable, "-m", "tests.fake_cli"], "hash encoder (tests/fake_cli.py)"
    return [sys.executable, "-m", "opinio_agents"], "MiniLM"


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
        "NO_COLOR": "1",
        "COLUMNS": "250",
        "RUST_BACKTRACE": "0",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }


def _store_keys(store: Path) -> list[str]:
    if not (store / "catalog.sqlite").exists():
        return []
    from opinio_agents.stores import SentenceStore

    try:
        return SentenceStore(store).entity_keys()
    except Exception as exc:  # noqa: BLE001 - a store the case corrupted on purpose
        return [f"<unreadable: {type(exc).__name__}>"] if "corrupt" not in str(exc) else []


def _one_line(text: str, limit: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _run_case(case: Case, root: Path, base: list[str]) -> ProbeRow:
    case_dir = root / "".join(c if c.isalnum() else "-" for c in case.name)[:60]
    case_dir.mkdir(parents=True, exist_ok=True)
    for name, content in case.files.items():
        path = case_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8", errors="surrogatepass")
    store = case_dir / "store"

    def opinio(args: list[str]) -> subprocess.CompletedProcess[str]:
        argv = [a.replace("{store}", str(store)) for a in args]
        return subprocess.run(
            [*base, *argv], cwd=case_dir, env=_env(), capture_output=True, text=True, timeout=TIMEOUT_S,
            errors="backslashreplace",
        )

    try:
        for args in case.setup:
            prepared = opinio(args)
            if prepared.returncode != 0:
                return ProbeRow(SECTION, case.name, "crash", f"setup failed: {_one_line(prepared.stderr)}")
        if case.after_setup is not None:
            case.after_setup(case_dir)
        done = opinio(case.args)
    except subprocess.TimeoutExpired:
        return ProbeRow(SECTION, case.name, "unbounded", f"ran past {TIMEOUT_S} s")
    if "Traceback (most recent call last)" in done.stderr:
        last = [line for line in done.stderr.splitlines() if line.strip()][-1:]
        return ProbeRow(SECTION, case.name, "traceback", _one_line(" ".join(last)))
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    if case.expect == "error":
        if done.returncode == 0:
            return ProbeRow(SECTION, case.name, "accepted-invalid", "status 0: " + _one_line(done.stdout, 100))
        if done.returncode != 2 or len(errors) != 1:
            return ProbeRow(SECTION, case.name, "crash",
                            f"status {done.returncode}, {len(errors)} error lines: {_one_line(done.stderr)}")
        if case.setup == [] and _store_keys(store):
            return ProbeRow(SECTION, case.name, "half-indexed", f"store holds {_store_keys(store)}; {errors[0]}")
        named = _NAMED.get(case.name)
        problem = named(errors[0]) if named else None
        if problem:
            return ProbeRow(SECTION, case.name, "crash", f"{problem}: {_one_line(errors[0])}")
        return ProbeRow(SECTION, case.name, "ok", _one_line(errors[0]))
    if done.returncode != 0:
        return ProbeRow(SECTION, case.name, "crash", f"status {done.returncode}: {_one_line(done.stderr)}")
    problem = case.check(case_dir, done) if case.check else None
    if problem:
        return ProbeRow(SECTION, case.name, "accepted-invalid", problem)
    return ProbeRow(SECTION, case.name, "ok", "status 0, output escaped, names exact")


def run(workdir: Path, *, quick: bool = False) -> list[ProbeRow]:
    """Run every hostile-input case (``quick``: the small subset) and classify each.

    Args:
        workdir: An empty scratch directory (one folder and store per case is made in it).
        quick: Only the cases marked quick, through the hashing encoder when ``tests/`` is there.

    Returns:
        One :class:`~scripts.probe.common.ProbeRow` per case, in order.
    """
    base, _ = _command(quick)
    root = Path(workdir) / SECTION
    root.mkdir(parents=True, exist_ok=True)
    return [_run_case(case, root, base) for case in CASES if case.quick or not quick]


if __name__ == "__main__":  # python -m scripts.probe.inputs [--quick]
    import tempfile

    quick_run = "--quick" in sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="opinio-probe-inputs-") as scratch:
        rows = run(Path(scratch), quick=quick_run)
    width = max(len(r.case) for r in rows)
    for r in rows:
        print(f"{r.case:<{width}}  {r.outcome:<16}  {r.detail}")
    counts = {o: sum(r.outcome == o for r in rows) for o in ("traceback", "half-indexed", "accepted-invalid")}
    others = sum(r.outcome not in ("ok", *counts) for r in rows)
    print(f"inputs: {len(rows)} tried, {counts['traceback']} tracebacks, {counts['half-indexed']} half-indexed, "
          f"{counts['accepted-invalid']} accepted-invalid, {others} other failures ({_command(quick_run)[1]})")
