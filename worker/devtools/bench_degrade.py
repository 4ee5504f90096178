"""`tablesight bench --degrade KIND`: the bench's pages turned into simulated scans first.

Every page of every corpus PDF is rendered, degraded by the scan simulator
(worker.evaluation.degrade; each page draws its own parameters from the seed) and written back
as an image-only PDF at the scan's resolution, so the pipeline's cost on a degraded scan is
measured on the same pages as on the clean ones. The generated corpus's truth (boxes on the
clean page) no longer applies, so it is removed and the models answer for themselves.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image


def degrade_corpus(corpus: Path, kind: str, strength: str, seed: int, dpi: int) -> None:
    """Rewrite each PDF in `corpus` as its pages degraded by `kind` at `strength` (rendered at `dpi`)."""
    from worker.devtools.samples import make_scanned_pdf
    from worker.evaluation.degrade import degrade_page, page_seed
    from worker.inputs import Document, open_document
    from worker.settings import Settings

    for pdf in sorted(corpus.glob("*.pdf")):
        doc = open_document(pdf, settings=Settings(_env_file=None))
        pages, out_dpi = [], dpi
        for p in range(1, doc.page_count + 1):

            def render(d: int, page: int = p, source: Document = doc) -> Image.Image:
                return source.render(page, d)

            done = degrade_page(render, dpi, kind, strength, page_seed(seed, f"{pdf.stem}:{p}"))
            pages.append(done.image)
            out_dpi = done.dpi
        make_scanned_pdf(pdf, pages, dpi=out_dpi)
    (corpus / "truth.json").unlink(missing_ok=True)
