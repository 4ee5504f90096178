"""Captions read on scans against the captions of the same pages' text layers.

`python -m worker.evaluation.caption_eval --data DEV [--degrade office] [--limit N] [--pages eu-004:2,...]`

The dev set's GT carries no captions, but its ICDAR-2013 pages are born-digital PDFs: the
caption and notes worker.core.captions finds in a page's text layer around the GT table box are
the reference. Each page is then rendered as a scan (optionally with a scanner look,
worker.devtools.degrade_hook) and the same table's caption and notes are read by OCR of its
strips twice, with the same OCR engine: every strip line read (`full`, as before
worker.core.strip_lines) and only the lines the caption step can use (`nearest`, the pipeline
now). Per table: whether the two differ, each one's similarity to the reference (difflib's
ratio of the normalised texts), and the recognition seconds and lines each spent.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
from pathlib import Path
from typing import Any

from worker.core.types import BBox


def similarity(a: str, b: str) -> float:
    """1.0 for the same text up to case and spacing, 0.0 for nothing in common (both empty: 1.0)."""
    na, nb = (re.sub(r"\s+", " ", s).strip().lower() for s in (a, b))
    if not na and not nb:
        return 1.0
    return difflib.SequenceMatcher(None, na, nb).ratio()


def _tight(rec: dict[str, Any]) -> BBox:
    """The GT table box in page px without the 8 pt padding its crop carries."""
    pad = 8 * int(rec["render_dpi"]) / 72
    x0, y0, x1, y1 = rec["crop_px_in_page"]
    return (x0 + pad, y0 + pad, x1 - pad, y1 - pad)


def _timings(engine: Any) -> Any:
    """The PP-OCR engine's Timings under its wrappers (None for an engine without them)."""
    for _ in range(4):
        if hasattr(engine, "timings"):
            return engine.timings
        engine = getattr(engine, "engine", None)
    return None


def evaluate(
    data: Path, degrade: str | None, limit: int = 0, seed: int = 0, only: set[str] | None = None
) -> dict[str, Any]:
    """Per-table captions and notes (reference, full, nearest) and their summary."""
    import time

    from worker.core.captions import capture_context
    from worker.devtools.degrade_hook import degrader
    from worker.engines.ocr import load_ocr_engine
    from worker.inputs import open_document
    from worker.pipeline import Run, Stages
    from worker.pipeline.context import table_context
    from worker.settings import Settings
    from worker.text_layer import pdf_words

    settings = Settings(_env_file=None)
    recs = [
        json.loads(line)
        for gt in sorted(data.glob("*/gt.jsonl"))
        for line in gt.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    recs = [r for r in recs if r.get("pdf") and r.get("page")]
    pages = sorted({(r["pdf"], int(r["page"])) for r in recs})
    if only:
        pages = [(pdf, page) for pdf, page in pages if f"{Path(pdf).stem}:{page}" in only]
    if limit:
        pages = pages[:limit]
    apply = degrader(degrade) if degrade else None
    engines: dict[int, Any] = {}
    rows: list[dict[str, Any]] = []
    for n, (pdf_rel, page) in enumerate(pages, 1):
        page_recs = [r for r in recs if r["pdf"] == pdf_rel and int(r["page"]) == page]
        dpi = int(page_recs[0]["render_dpi"])
        if dpi not in engines:
            engines[dpi] = load_ocr_engine(settings.ocr, dpi, settings.models)
        engine = engines[dpi]
        pdf = data / pdf_rel
        doc = open_document(pdf, settings=settings)
        size = doc.page_size_px(page, dpi)
        words = pdf_words(doc, page, dpi)
        image = doc.render(page, dpi)
        if apply is not None:
            image = apply(image, seed + n)
        boxes = [_tight(r) for r in page_recs]
        for rec, box in zip(page_recs, boxes):
            ref = capture_context(words, box, size, other_tables=boxes)
            row: dict[str, Any] = {"table": f"{Path(pdf_rel).stem} p{page} t{rec['table_id']}"}
            row["reference"] = {"caption": ref.caption, "notes": ref.notes}
            for way, ocr in (("full", lambda im, e=engine: e.read(im)), ("nearest", engine.read)):
                stages = Stages(structure=None, detector=None, ocr=ocr, ocr_engine=engine)  # type: ignore[arg-type]
                run = Run(doc=doc, doc_id="0" * 16, stages=stages, storage=None, settings=settings, dpi=dpi)  # type: ignore[arg-type]
                timings = _timings(engine)
                if timings is not None:
                    timings.reset()
                started = time.process_time()
                ctx = table_context(run, box, image, [], boxes)
                row[way] = {
                    "caption": ctx.caption,
                    "notes": ctx.notes,
                    "above_clear": ctx.above_clear,
                    "below_clear": ctx.below_clear,
                    "cpu_s": round(time.process_time() - started, 3),
                    "recognise_s": round(timings.recognise, 3) if timings is not None else None,
                    "lines": timings.lines if timings is not None else None,
                    "caption_sim": round(similarity(ctx.caption, ref.caption), 3),
                    "notes_sim": round(similarity(" ".join(ctx.notes), " ".join(ref.notes)), 3),
                }
            rows.append(row)
        print(f"{n}/{len(pages)} {pdf_rel} p{page}", file=sys.stderr)
    return {"degrade": degrade or "none", "tables": rows, "summary": summarise(rows)}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts of changed captions and notes, better or worse against the reference, and costs."""
    out: dict[str, Any] = {"tables": len(rows)}
    for part in ("caption", "notes"):
        key = f"{part}_sim"
        changed = [r for r in rows if r["full"][part] != r["nearest"][part]]
        out[f"{part}_changed"] = len(changed)
        out[f"{part}_better"] = sum(1 for r in changed if r["nearest"][key] > r["full"][key])
        out[f"{part}_worse"] = sum(1 for r in changed if r["nearest"][key] < r["full"][key])
        for way in ("full", "nearest"):
            out[f"{part}_sim_{way}"] = round(sum(r[way][key] for r in rows) / max(1, len(rows)), 4)
            out[f"{part}_exact_{way}"] = sum(1 for r in rows if r[way][key] == 1.0)
    out["clear_changed"] = sum(
        1
        for r in rows
        if (r["full"]["above_clear"], r["full"]["below_clear"])
        != (r["nearest"]["above_clear"], r["nearest"]["below_clear"])
    )
    for way in ("full", "nearest"):
        for cost in ("cpu_s", "recognise_s", "lines"):
            values = [r[way][cost] for r in rows if r[way][cost] is not None]
            out[f"{cost}_{way}"] = round(sum(values), 2) if values else None
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m worker.evaluation.caption_eval", description=__doc__)
    p.add_argument("--data", type=Path, required=True, help="the dev set's folder (*/gt.jsonl with pdf and page)")
    p.add_argument("--degrade", default=None, help="a scanner look for the rendered pages (e.g. office)")
    p.add_argument("--limit", type=int, default=0, help="the first N pages only (0: all)")
    p.add_argument("--pages", default="", help="only these pages, e.g. eu-004:2,eu-018:1 (PDF stem:page)")
    p.add_argument("--json", type=Path, default=None, help="write the per-table report here")
    args = p.parse_args(argv)
    only = {x.strip() for x in args.pages.split(",") if x.strip()} or None
    report = evaluate(args.data, args.degrade, args.limit, only=only)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False), encoding="utf-8")
    print(json.dumps(report["summary"], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
