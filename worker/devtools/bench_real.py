"""Real pages for `tablesight bench --data`: the evaluation set's born-digital PDF pages
rasterised into image-only PDFs (scans), and a random-weight detector that finds one table
per page, so a page costs what a real dense page costs: a real table's worth of OCR, a
structure crop, caption strips.

Random weights find no tables; the detector made here has identical queries, a strong
`table` logit and a fixed box (the middle of the page, `ONE_TABLE_BOX`), so every page has
exactly one table and the pipeline's later stages get a realistic share of the page.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

# (cx, cy, w, h) of the one table, relative to the page: most of the text block of a dense page
ONE_TABLE_BOX = (0.5, 0.5, 0.84, 0.64)


def real_corpus(data_dir: Path, out_dir: Path, pages: int | None, dpi: int) -> Path:
    """Image-only PDFs of the `pages` densest pages (most ground-truth cells) of every
    `gt.jsonl` under `data_dir` that names a source `pdf` and `page`; one PDF per source
    document, its pages in order. `pages.json` says which pages were taken."""
    from pdf2image import convert_from_path

    from worker.devtools.samples import make_scanned_pdf

    cells: dict[tuple[str, int], int] = defaultdict(int)
    for gt in sorted(data_dir.rglob("gt.jsonl")):
        for line in gt.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            if record.get("pdf") and record.get("page"):
                source = gt.parent.parent / record["pdf"]  # relative to the data set's root
                cells[(str(source), int(record["page"]))] += len(record.get("cells", []))
    if not cells:
        raise ValueError(f"no gt.jsonl under {data_dir} names PDF pages (records with 'pdf' and 'page')")
    chosen = sorted(cells, key=lambda k: (-cells[k], k))[: pages or len(cells)]
    by_pdf: dict[str, list[int]] = defaultdict(list)
    for pdf, page in chosen:
        by_pdf[pdf].append(page)
    out_dir.mkdir(parents=True, exist_ok=True)
    for pdf, numbers in sorted(by_pdf.items()):
        images = [
            convert_from_path(pdf, dpi=dpi, first_page=n, last_page=n, grayscale=True)[0] for n in sorted(numbers)
        ]
        make_scanned_pdf(out_dir / Path(pdf).name, images, dpi=dpi)
    listing = [{"pdf": Path(pdf).name, "page": page, "gt_cells": cells[(pdf, page)]} for pdf, page in chosen]
    (out_dir / "pages.json").write_text(json.dumps({"dpi": dpi, "pages": listing}, indent=2), encoding="utf-8")
    return out_dir


def one_table_detector(source: Path, root: Path) -> Path:
    """The random detector at `source`, rewritten to find one table per page (built once)."""
    import torch
    from transformers import TableTransformerForObjectDetection

    target = root / "detection-one-table"
    if (target / "config.json").is_file():
        return target
    root.mkdir(parents=True, exist_ok=True)
    model = TableTransformerForObjectDetection.from_pretrained(source)
    with torch.no_grad():
        queries = model.model.query_position_embeddings.weight
        queries[:] = queries[0:1].clone()
        bias = model.class_labels_classifier.bias
        bias[:] = -10.0
        bias[model.config.label2id["table"]] = 10.0
        last = model.bbox_predictor.layers[-1]
        last.weight.zero_()
        last.bias.copy_(torch.tensor([math.log(v / (1 - v)) for v in ONE_TABLE_BOX]))  # sigmoid^-1
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=".one-table-"))
    model.save_pretrained(tmp)
    try:
        os.rename(tmp, target)
    except OSError:  # another bench got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return target
