"""Small helpers shared by the tests (imported as `helpers`: conftest puts tests/ on the path)."""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from worker.core.types import Word
from worker.settings import Settings


def _dev_data() -> Path:
    """The development tables: `TABLESIGHT_DEV_DATA`, else the evaluation folder the workspace
    keeps beside the checkout (a worktree one level deeper looks one level further up). Tests
    that need it skip when it is absent; nothing from it is copied into the repository."""
    if os.environ.get("TABLESIGHT_DEV_DATA"):
        return Path(os.environ["TABLESIGHT_DEV_DATA"])
    here = Path(__file__).resolve()
    near = [here.parents[k] / "shared" / "eval" / "dev" for k in (2, 3)]
    return next((p for p in near if p.is_dir()), near[0])


DEV_DATA = _dev_data()


def weights_absent(models: Any = None) -> str | None:
    """Why the embedded engine's files (`models`, default all of them: the table models and
    PP-OCR's) cannot be used from the checkout's cache, or None when every one is present and
    right; tests that need them skip with this reason (`.ci/setup` fetches them)."""
    from models.embedded.weights import MODELS, EmbeddedWeightsMissing, default_dir, locate

    try:
        for model in MODELS if models is None else models:
            locate(model, default_dir(None))
    except EmbeddedWeightsMissing as exc:
        return str(exc)
    return None


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Callable[[], Any], timeout: float, interval: float = 0.05, what: str = "condition") -> Any:
    """Poll `check` until it returns something truthy (returned), or fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def isolated_settings(**overrides: Any) -> Settings:
    """Settings from the defaults and `overrides` only: no `.env` file is read."""
    return Settings(_env_file=None, **overrides)  # type: ignore[call-arg]


def store_table(storage: Any, doc_id: str, grid: Any, **where: Any) -> dict:
    """Write one table as the pipeline does (worker.outputs.store_grid: crop, HTML, exports, full
    record); returns its manifest entry as a dict."""
    from worker.outputs import store_grid

    return store_grid(storage, doc_id, grid, **where).dump()


@dataclass(frozen=True)
class BadInput:
    path: Path
    reason: str  # a word the one-line error must contain


def bad_inputs(folder: Path, *kinds: str) -> dict[str, BadInput]:
    """Inputs that must each fail with a clear reason, written into `folder` (every kind below,
    or the `kinds` named): the extract and queue tests feed them through their own path."""
    from PIL import Image
    from pypdf import PdfWriter

    from worker.devtools.samples import make_scanned_pdf

    folder.mkdir(parents=True, exist_ok=True)
    good = folder / "good.pdf"
    make_scanned_pdf(good, [Image.new("RGB", (200, 200), "white")])

    def corrupt(p: Path) -> None:
        p.write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage" * 3)

    def encrypted(p: Path) -> None:
        writer = PdfWriter(clone_from=good)
        writer.encrypt("secret")
        with p.open("wb") as fh:
            writer.write(fh)

    def huge(p: Path) -> None:  # 400 in square: over any pixel limit at 100 dpi
        Image.new("RGB", (200, 200), "white").save(p, "PDF", resolution=0.5)

    def oversized(p: Path) -> None:  # a valid PDF over 2 MB
        p.write_bytes(good.read_bytes() + b"\n%" + b"x" * 2_100_000 + b"\n")

    makers: dict[str, tuple[str, str, Callable[[Path], object] | None]] = {
        "corrupt": ("corrupt.pdf", "corrupt", corrupt),
        "encrypted": ("encrypted.pdf", "encrypted", encrypted),
        "empty": ("empty.pdf", "empty", lambda p: p.write_bytes(b"")),
        "zero pages": ("zero.pdf", "no pages", lambda p: PdfWriter().write(p)),
        "huge page": ("huge-page.pdf", "pixels", huge),
        "not a pdf": ("notes.pdf", "not a pdf", lambda p: p.write_text("just some text\n")),
        "oversized": ("big.pdf", "over the limit", oversized),
        "missing": ("missing.pdf", "no such file", None),
    }
    out = {}
    for kind in kinds or tuple(makers):
        name, reason, make = makers[kind]
        path = folder / name
        if make is not None:
            make(path)
        out[kind] = BadInput(path, reason)
    return out


def store_manifest(storage: Any, doc_id: str, tables: list[dict]) -> None:
    """A complete manifest listing `tables` (entries from `store_table`)."""
    from worker.contract import Manifest
    from worker.outputs import manifest_key

    pages = sorted({t["page"] for t in tables}) or [1]
    manifest = Manifest.model_validate(
        {
            "doc_id": doc_id,
            "status": "complete",
            "source": "test.pdf",
            "sha256": None,
            "kind": "pdf",
            "page_count": max(pages),
            "pages": pages,
            "pages_done": pages,
            "tables": tables,
            "errors": [],
            "models": {},
            "options": {"dpi": 200, "pages": None, "tables": "detect"},
            "timings": {},
            "wall_seconds": 0.0,
            "tool_version": "tablesight test",
            "finished_at": "2026-01-01T00:00:00Z",
        }
    )
    storage.put_json(manifest_key(doc_id), manifest.dump())


def grid_texts(grid: Any) -> list[list[str]]:
    """A grid's cell texts as rows of columns (a spanning cell's text at its top-left slot)."""
    rows = [[""] * grid.n_cols for _ in range(grid.n_rows)]
    for cell in grid.cells:
        rows[cell.row][cell.col] = cell.text
    return rows


def line_words(lefts: Sequence[float], y: float, texts: Sequence[str], height: float = 12.0) -> list[Word]:
    """One text line at `y` as an OCR boxes it: each text's words from 4 px right of its column's
    left edge (`lefts`), 9 px a character and a 6 px space; an empty text gives no word."""
    words = []
    for x, text in zip(lefts, texts):
        left = x + 4
        for token in text.split():
            words.append(Word(token, (left, y, left + 9 * len(token), y + height)))
            left += 9 * len(token) + 6
    return words
