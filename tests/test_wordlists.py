"""Word lists are package data (``opinio_agents/resources/words/*.json``), read on first use, never at import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from opinio_agents.errors import ConfigError
from opinio_agents.text import wordlists

ROOT = Path(__file__).resolve().parents[1]
WORDS = ROOT / "opinio_agents" / "resources" / "words"
#: Modules whose word lists moved to the data files (none may read them when imported).
USERS = (
    "opinio_agents.text.preprocess",
    "opinio_agents.text.segment",
    "opinio_agents.text.sentiment",
    "opinio_agents.evaluation.baselines.graph",
    "opinio_agents.agents.chat",
    "opinio_agents.hiro.lexical",
    "opinio_agents.hiro.labels",
    "opinio_agents.hiro.aspects",
    "opinio_agents.synthesis.selection",
    "opinio_agents.synthesis.keypoint",
    "opinio_agents.synthesis.verification",
    "opinio_agents.synthesis.support",
)


def test_every_list_says_why_and_holds_words_or_rules() -> None:
    files = sorted(WORDS.glob("*.json"))
    assert files
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        for name, entry in data.items():
            assert entry.get("why"), f"{path.name}: {name} has no reason"
            kinds = [kind for kind in ("words", "patterns", "rules", "table") if isinstance(entry.get(kind), list)]
            assert len(kinds) == 1, f"{path.name}: {name} holds {kinds}"
            if "words" in entry:
                words = entry["words"]
                assert len(words) == len(set(words)), f"{path.name}: {name} repeats a word"
                assert wordlists.word_set(path.stem, name) == frozenset(words)


def test_the_word_files_are_package_data() -> None:
    tomllib = pytest.importorskip("tomllib", reason="Python < 3.11 has no tomllib")
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["opinio_agents"]
    for path in WORDS.glob("*.json"):
        rel = path.relative_to(ROOT / "opinio_agents").as_posix()
        assert any(Path(rel).match(pattern) for pattern in patterns), f"{rel} is not shipped (package-data)"


def test_nothing_is_read_at_import() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {USERS!r}: importlib.import_module(name)\n"
        "from opinio_agents.text.wordlists import words_file\n"
        "from opinio_agents.hiro.labels import _lexicon\n"
        "print(words_file.cache_info().currsize + _lexicon.cache_info().currsize)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "0", done.stderr


def test_the_old_public_names_still_answer() -> None:
    from opinio_agents.hiro import lexical
    from opinio_agents.text import preprocess

    assert "the" in preprocess.STOPWORDS and "parking" in preprocess.KEEP_WORDS
    assert ("\\bwi\\s*-?\\s*fi\\b", "wifi") in preprocess.PROTECTED_TOKENS
    assert "hotel" in lexical.GENERIC_TOKENS and "monday" in lexical.FUNCTION_WORDS
    from opinio_agents.text import sentiment

    assert sentiment.REVIEW_LEXICON["filthy"] == -3.0 and r"\bout of order\b" in sentiment.NEGATIVE_PHRASES
    sentiment.REVIEW_LEXICON["filthy"] = 0.0  # a caller's copy: the shipped table stays as it is
    assert sentiment.REVIEW_LEXICON["filthy"] == -3.0


def test_a_missing_list_names_the_file_and_the_list() -> None:
    with pytest.raises(ConfigError, match=r"preprocess\.json: list 'nope'"):
        wordlists.word_set("preprocess", "nope")
    with pytest.raises(ConfigError, match=r"resources/words/absent\.json"):
        wordlists.words_file("absent")
