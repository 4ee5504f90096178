"""img2table 2.0 for `tablesight eval pages`; runs in its venv, never in ours.

Tesseract OCR, `borderless_tables=True`, `implicit_rows=False`. In scan and crop mode each
page is an image; in text mode img2table reads the PDF with its own text extraction (it
renders PDFs at 200 dpi, so boxes are scaled to the job's dpi). img2table 2.0.0 raises a
TypeError on pages where tesseract reads a word made only of `|`, `_` or `*`: such a page is
reported as a failure and scores 0.

Reads a job (JSON) on stdin, writes {"tables": {page: [{"bbox", "html"}]}, "failures": {}, "timing":
{"load_s", "page_s": [...]}} (timing: seconds to ready, then per page, for `tablesight bench --peers`).
"""

import json
import sys
import time

STARTED = time.perf_counter()  # before the peer's imports: its start-up is part of what a user pays

from img2table.document import PDF, Image  # noqa: E402
from img2table.ocr import TesseractOCR  # noqa: E402

PDF_DPI = 200


def _tables(extracted, scale: float) -> list:
    out = []
    for t in extracted:
        b = t.bbox
        out.append({"bbox": [b.x1 * scale, b.y1 * scale, b.x2 * scale, b.y2 * scale], "html": t.html})
    return out


def main() -> None:
    job = json.load(sys.stdin)
    ocr = TesseractOCR(n_threads=1, lang="eng")
    options = {"implicit_rows": False, "borderless_tables": True}
    tables, failures = {}, {}
    timing = {"load_s": time.perf_counter() - STARTED, "page_s": []}
    for page in job["pages"]:
        key = str(page)
        t0 = time.perf_counter()
        try:
            if job["mode"] == "text":
                doc = PDF(job["pdf"], pages=[page - 1], pdf_text_extraction=True)
                found = doc.extract_tables(ocr=ocr, **options).get(page - 1, [])
                tables[key] = _tables(found, job["dpi"] / PDF_DPI)
            else:
                found = Image(job["images"][key]).extract_tables(ocr=ocr, **options)
                if job["mode"] == "crop":
                    found = found[:1]
                tables[key] = _tables(found, 1.0)
        except TypeError as exc:
            failures[key] = f"TypeError: {exc}"[:300]
        timing["page_s"].append(time.perf_counter() - t0)
    print(json.dumps({"tables": tables, "failures": failures, "timing": timing}))


if __name__ == "__main__":
    main()
