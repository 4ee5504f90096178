"""Small helpers shared by the tests (imported as `helpers`: conftest puts tests/ on the path)."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

from worker.settings import Settings


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


def store_table(storage: Any, doc_id: str, grid: Any, *, page: int = 1, index: int = 1, caption: str = "") -> dict:
    """Write one table (crop, HTML, exports, full record) as the pipeline does; returns its
    manifest entry. For tests that start from a grid rather than from a document."""
    from PIL import Image

    from worker.core.captions import Context
    from worker.core.detections import TableBox
    from worker.core.flags import complexity_flags
    from worker.core.html_out import grid_to_html
    from worker.outputs import manifest_entry, table_record, write_table

    crop = Image.new("RGB", (20, 20), "white")
    record = table_record(
        doc_id=doc_id,
        page=page,
        index=index,
        dpi=200,
        box=TableBox((10.0, 10.0, 30.0, 30.0), 0.99, False),
        crop_box=(10, 10, 30, 30),
        crop_size=crop.size,
        text_source="text-layer",
        grid=grid,
        flags=complexity_flags(grid),
        context=Context(caption, [], None, None) if caption else None,
        page_size=(1700, 2200),
        structure=[],
        words=[],
    )
    keys = write_table(storage, crop, grid_to_html(grid), record)
    return manifest_entry(record, keys).dump()


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
