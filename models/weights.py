"""Where model weights come from: a local folder, a `models download` folder, or the hub.

A model reference is either a local folder path (holding config.json) or a hub id with an
optional `@revision`, e.g. `microsoft/table-transformer-detection@no_timm`. Air-gapped
nodes point MODELS_DIR at a folder filled by `download` on a machine with hub access;
that folder is searched before the hub.
"""

from __future__ import annotations

import logging
import os
import re
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from worker.errors import TablesightError

logger = logging.getLogger(__name__)

CONFIG_FILE = "config.json"
# Written by `download` beside the weights, so a pinned revision survives the copy.
REVISION_FILE = "TABLESIGHT_REVISION"
# Weights and configs; tokenizer vocabularies, merges and chat templates too (vision models need them).
DOWNLOAD_PATTERNS = ["*.json", "*.safetensors", "*.bin", "*.txt", "*.model", "*.jinja", "*.tiktoken"]

HUB_PROBE_TIMEOUT = 8.0  # seconds for the one look-up that tells whether the hub answers

_HUB_ID_RE = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


class WeightsNotFound(TablesightError):
    """Weights could not be found or loaded; the message says where we looked and what to do."""


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    """What `from_pretrained` gets: a folder (local=True) or a hub id and revision.

    `hub_id` names the hub repository the weights came from when known (a hub reference,
    or a MODELS_DIR copy of one), so the manifest can record it rather than a path.
    """

    path_or_id: str
    revision: str | None
    local: bool
    hub_id: str | None = None


def split_ref(ref: str) -> tuple[str, str | None]:
    """`id@revision` -> (id, revision); an empty revision means the default branch."""
    repo_id, _, revision = ref.strip().partition("@")
    return repo_id, (revision or None)


def folder_name(repo_id: str) -> str:
    """The folder name a hub id gets inside MODELS_DIR (`org/name` -> `org--name`)."""
    return repo_id.replace("/", "--")


def _looks_like_path(ref: str) -> bool:
    return ref.startswith(("/", ".", "~")) or "\\" in ref or ref.partition("@")[0].count("/") > 1


def resolve(ref: str, models_dir: Path | None = None) -> ResolvedModel:
    """Decide where to load `ref` from, without loading it.

    Order: an existing local folder; then MODELS_DIR/<org--name>; then the hub. A reference
    that is plainly a path but does not exist raises WeightsNotFound at once.
    """
    ref = ref.strip()
    if not ref:
        raise WeightsNotFound("empty model reference: set a hub id[@revision] or a local folder")
    path = Path(ref).expanduser()
    if path.is_dir():
        folder = _checked_folder(path, ref)
        return ResolvedModel(str(folder), _stored_revision(folder), local=True)
    if _looks_like_path(ref):
        raise WeightsNotFound(f"model folder {str(path)!r} does not exist. {_advice()}")

    repo_id, revision = split_ref(ref)
    if not _HUB_ID_RE.match(repo_id):
        raise WeightsNotFound(f"{ref!r} is neither an existing folder nor a hub id[@revision]. {_advice()}")
    if models_dir is not None:
        candidate = Path(models_dir).expanduser() / folder_name(repo_id)
        if candidate.is_dir():
            folder = _checked_folder(candidate, ref)
            stored = _stored_revision(folder)
            if revision and stored and stored != revision:
                logger.warning("%s holds revision %s, not the requested %s; using it", folder, stored, revision)
            return ResolvedModel(str(folder), stored or revision, local=True, hub_id=repo_id)
        logger.info("%s not in models dir %s; trying the hub", repo_id, models_dir)
    return ResolvedModel(repo_id, revision, local=False, hub_id=repo_id)


def checked_source(ref: str, resolved: ResolvedModel, models_dir: Path | None) -> ResolvedModel:
    """Make one look-up of a hub model before loading it, and fail fast when it cannot succeed.

    A hub model already in the local cache loads from there without asking the hub. Otherwise
    one HEAD request for its config, with a short timeout, tells whether the hub answers:
    `from_pretrained` itself would retry an unreachable hub for about a minute, printing
    warnings, before raising the same error.
    """
    if resolved.local or _hub_offline():
        return resolved
    from huggingface_hub import constants, try_to_load_from_cache

    cached = try_to_load_from_cache(resolved.path_or_id, CONFIG_FILE, revision=resolved.revision)
    if isinstance(cached, str):
        return ResolvedModel(str(Path(cached).parent), resolved.revision, local=True, hub_id=resolved.hub_id)
    url = f"{constants.ENDPOINT}/{resolved.path_or_id}/resolve/{resolved.revision or 'main'}/{CONFIG_FILE}"
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=HUB_PROBE_TIMEOUT).close()
    except (OSError, ValueError) as exc:  # URLError, HTTPError (401/404), timeouts
        raise not_found(ref, resolved, models_dir, exc) from None
    return resolved


def not_found(ref: str, resolved: ResolvedModel, models_dir: Path | None, error: BaseException) -> WeightsNotFound:
    """The error to raise when `from_pretrained` fails for `resolved` (usually an OSError)."""
    if resolved.local:
        where = f"in folder {resolved.path_or_id!r}"
    else:
        rev = f" at revision {resolved.revision!r}" if resolved.revision else ""
        searched = (
            f"in {str(Path(models_dir) / folder_name(resolved.path_or_id))!r} and " if models_dir is not None else ""
        )
        offline = " (HF_HUB_OFFLINE is set, so the hub was not asked)" if _hub_offline() else ""
        where = f"{searched}on the Hugging Face hub as {resolved.path_or_id!r}{rev}{offline}"
    return WeightsNotFound(f"could not load model {ref!r}: looked {where}: {_one_line(error)}. {_advice()}")


def download(refs: list[str], dest: Path) -> list[Path]:
    """Copy hub models into `dest/<org--name>/` for nodes without hub access.

    Returns the folders written; point TABLESIGHT_MODELS_DIR at `dest` on the offline node.
    """
    from huggingface_hub import snapshot_download

    dest = Path(dest).expanduser()
    dest.mkdir(parents=True, exist_ok=True)
    folders: list[Path] = []
    for ref in refs:
        repo_id, revision = split_ref(ref)
        if Path(repo_id).expanduser().is_dir() or not _HUB_ID_RE.match(repo_id):
            raise ValueError(f"{ref!r} is not a hub id[@revision]; only hub models can be downloaded")
        target = dest / folder_name(repo_id)
        logger.info("downloading %s%s to %s", repo_id, f"@{revision}" if revision else "", target)
        try:
            snapshot_download(
                repo_id=repo_id, revision=revision, local_dir=str(target), allow_patterns=DOWNLOAD_PATTERNS
            )
        except (OSError, ValueError) as exc:  # HTTP, offline-mode and validation errors
            raise WeightsNotFound(
                f"could not download {ref!r} from the Hugging Face hub into {str(target)!r}: "
                f"{_one_line(exc)}. This command needs hub access (and HF_HUB_OFFLINE unset)."
            ) from exc
        (target / REVISION_FILE).write_text(f"{revision or 'main'}\n", encoding="utf-8")
        folders.append(target)
    return folders


def _checked_folder(folder: Path, ref: str) -> Path:
    if not (folder / CONFIG_FILE).is_file():
        raise WeightsNotFound(f"model folder {str(folder)!r} (for {ref!r}) has no {CONFIG_FILE}. {_advice()}")
    return folder.resolve()


def _stored_revision(folder: Path) -> str | None:
    marker = folder / REVISION_FILE
    if not marker.is_file():
        return None
    return marker.read_text(encoding="utf-8").strip() or None


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:400]}"


def _advice() -> str:
    from worker.engines import offline_hint  # names the offline engine and the command that fills its folder

    return (
        "Run `tablesight models download --dir D` on a machine with hub access, copy D here and set "
        "TABLESIGHT_MODELS_DIR=D (with HF_HUB_OFFLINE=1 to skip hub look-ups), or set the model to a "
        f"local folder that holds config.json and the weights. {offline_hint()}"
    )
