"""The golden run: the demo's sample document through the embedded engine with a fixed OCR.

"Fixed" means pinned settings: tesseract, English, page segmentation mode 11, one thread,
the default dpi; the embedded engine's weights are pinned by sha256. `test_golden.py`
compares each table's HTML with `tests/golden/expected/`; `.venv/bin/python tests/golden/update.py`
rewrites those files after a deliberate change (then review the diff and commit it).
"""

from __future__ import annotations

from pathlib import Path

from worker.devtools.samples import write_sample
from worker.pipeline import extract_document, load_stages
from worker.settings import Settings
from worker.storage import LocalStorage

EXPECTED = Path(__file__).resolve().parent / "expected"


def golden_settings() -> Settings:
    return Settings(
        _env_file=None,
        engine="embedded",
        device="cpu",
        torch_threads=1,
        ocr={"engine": "tesseract", "lang": "eng", "psm": 11, "threads": 1},
    )


def golden_tables(work: Path) -> dict[str, str]:
    """table_id -> HTML of the demo sample, extracted into `work`."""
    write_sample(work / "sample-scan.pdf")
    settings = golden_settings()
    store = LocalStorage(work / "out")
    manifest = extract_document(
        work / "sample-scan.pdf", stages=load_stages(settings), storage=store, settings=settings
    )
    folder = work / "out" / manifest["doc_id"] / "tables"
    return {t["table_id"]: (folder / f"{t['table_id']}.html").read_text() for t in manifest["tables"]}
