"""`tablesight rebuild`: replay structure objects into HTML without the models.

The format is described in docs/architecture.md, 'The replay format'.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from worker.core.html_out import grid_to_html
from worker.core.replay import ReplayError, ReplayInput, parse_payload, replay_grid

# A payload does not record its render dpi; 200 dpi gives the ruling-line erasing replay has
# always used (lines longer than 40 px, models.rules.RULE_MIN_PX).
REPLAY_DPI = 200


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "rebuild",
        help="structure-objects JSON -> HTML (no models needed)",
        description="Replay a structure-objects file and print its HTML.",
    )
    p.add_argument("file", nargs="?", type=Path, help="one structure-objects JSON file")
    p.add_argument("--jsonl", type=Path, help='one object per line in; one {"html": ...} line out')
    p.add_argument("--image", type=Path, help="table crop to OCR when the file has no words")
    p.set_defaults(func=run)


def _words_from_image(item: ReplayInput, image: Path | None, base: Path) -> None:
    """Fill empty words by OCR of the crop, the same OCR the pipeline uses, and ruling lines
    (when the payload has none) by the same line detection."""
    path = image or (Path(item.image) if item.image else None)
    if item.words or path is None:
        return
    if not path.is_absolute():
        path = base / path
    from PIL import Image

    from worker.engines.ocr import load_ocr_engine
    from worker.settings import get_settings

    settings = get_settings()
    try:
        with Image.open(path) as im:
            rgb = im.convert("RGB")
    except (OSError, ValueError) as exc:
        raise ReplayError(f"cannot read image {path}: {exc}") from exc
    item.words = load_ocr_engine(settings.ocr, REPLAY_DPI, settings.models).read(rgb)
    if item.lines is None and settings.refine.lines:
        from models.rules import find_ruling_lines

        item.lines = find_ruling_lines(rgb)
    if item.image_size is None:
        item.image_size = (float(rgb.width), float(rgb.height))


def rebuild_one(obj: Any, image: Path | None = None, base: Path = Path(".")) -> str:
    """Payload -> HTML; raises ReplayError with a one-line reason."""
    from worker.settings import get_settings

    item = parse_payload(obj)
    _words_from_image(item, image, base)
    settings = get_settings()
    if not settings.refine.lines:
        item.lines = None
    grid = replay_grid(
        item, settings.structure.thresholds(), settings.structure.duplicate_overlap, settings.refine.rules()
    )
    return grid_to_html(grid)


def _run_jsonl(path: Path, image: Path | None, out: TextIO) -> int:
    failed = 0
    with path.open(encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                html = rebuild_one(json.loads(line), image, path.parent)
                out.write(json.dumps({"html": html}) + "\n")
            except (json.JSONDecodeError, ReplayError, RecursionError) as exc:
                failed += 1
                reason = f"not JSON: {exc}" if isinstance(exc, json.JSONDecodeError) else str(exc)
                out.write(json.dumps({"error": f"line {n}: {reason}"}) + "\n")
    if failed:
        print(f"error: {failed} line(s) of {path} could not be rebuilt", file=sys.stderr)
    return 1 if failed else 0


def run(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.jsonl is None):
        print("error: give either FILE.json or --jsonl IN.jsonl", file=sys.stderr)
        return 2
    path: Path = args.file or args.jsonl
    if not path.is_file():
        print(f"error: {path}: no such file", file=sys.stderr)
        return 1
    if args.jsonl:
        return _run_jsonl(path, args.image, sys.stdout)
    try:
        obj = json.loads(path.read_text(encoding="utf-8", errors="replace"))
        print(rebuild_one(obj, args.image, path.parent))
    except json.JSONDecodeError as exc:
        print(f"error: {path}: not JSON ({exc})", file=sys.stderr)
        return 1
    except (ReplayError, RecursionError) as exc:
        print(f"error: {path}: {exc}", file=sys.stderr)
        return 1
    return 0
