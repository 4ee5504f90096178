"""Whether Table Transformer's weights would load here, found in seconds without loading them.

Both of its models resolve when they are a local folder, in MODELS_DIR, in the Hugging Face
cache, or answered for by one hub request with a short timeout and no retries. Loading through
`from_pretrained` would retry the hub for about a minute on a machine that cannot reach it.
The engine registry's `auto` (worker.engines.resolve_engine) asks this.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from models import weights
from worker.settings import ModelSettings

logger = logging.getLogger(__name__)

HUB_PROBE_TIMEOUT_S = 3.0


def tatr_problem(settings: ModelSettings) -> str | None:
    """Why the Table Transformer weights would not load, or None when both resolve."""
    for ref in (settings.detection_model, settings.structure_model):
        try:
            resolved = weights.resolve(ref, settings.models_dir)
        except weights.WeightsNotFound as exc:
            return str(exc).split(". ")[0]
        if resolved.local:
            continue
        problem = _hub_problem(resolved.path_or_id, resolved.revision)
        if problem:
            return f"{ref}: {problem}"
    return None


def _hub_problem(repo_id: str, revision: str | None) -> str | None:
    """None when the model is in the local HF cache or the hub answers about it at once."""
    from huggingface_hub import try_to_load_from_cache

    cached = try_to_load_from_cache(repo_id, weights.CONFIG_FILE, revision=revision)
    if isinstance(cached, str) and Path(cached).is_file():
        return None
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}:
        return "not in the local Hugging Face cache (HF_HUB_OFFLINE is set)"
    import requests

    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
    url = f"{endpoint}/api/models/{repo_id}" + (f"/revision/{revision}" if revision else "")
    try:
        response = requests.get(url, timeout=HUB_PROBE_TIMEOUT_S)  # one request, no retries
    except requests.RequestException as exc:
        return f"not cached and the hub is unreachable ({type(exc).__name__})"
    if response.status_code != 200:
        return f"not cached and the hub answered HTTP {response.status_code}"
    return None
