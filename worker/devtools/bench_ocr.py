"""What tesseract's switches do to the words a table crop gives and to their cost.

On born-digital pages the PDF text layer is the truth: each table of an evaluation set
(records with `pdf`, `page` and `crop_px_in_page`) is cut from the page rendered at `dpi`
with the pipeline's padding, OCR'd with each variant, and its words compared with the text
layer's words in the same crop (as multisets: order and boxes aside). CPU is tesseract's
(children's user + system time). A switch is worth keeping only if it loses no words.

    python -m worker.devtools.bench_ocr ../shared/eval/dev --tables 20
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

VARIANTS: dict[str, dict[str, Any]] = {
    "baseline (psm 11)": {},
    "invert off": {"invert": False},
    "invert off + dpi hint": {"invert": False, "dpi": True},
    "psm 6": {"psm": 6},
    "psm 4": {"psm": 4},
}


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip().strip(".,;:()").lower()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(data_dir: Path, tables: int, dpi: int, variants: list[str]) -> dict[str, Any]:
    """Per variant: words read, words matching the text layer, text-layer words, tesseract CPU s."""
    from models.ocr import ocr_words
    from worker.core.detections import padded_box, words_in_crop
    from worker.inputs import open_document
    from worker.settings import Settings
    from worker.text_layer import pdf_words

    settings = Settings(_env_file=None)
    records = []
    for gt in sorted(data_dir.rglob("gt.jsonl")):
        for line in gt.read_text(encoding="utf-8").splitlines():
            record = json.loads(line) if line.strip() else {}
            if record.get("pdf") and record.get("crop_px_in_page"):
                records.append((gt.parent.parent / record["pdf"], int(record["page"]), record["crop_px_in_page"]))
    records = records[:tables] if tables else records
    totals = {v: {"words": 0, "matched": 0, "truth": 0, "cpu_s": 0.0} for v in variants}
    for pdf, page, crop_144 in records:
        doc = open_document(pdf, settings=settings)
        image = doc.render(page, dpi)
        box = tuple(v * dpi / 144 for v in crop_144)
        crop_box = padded_box(box, image.size, settings.detection.crop_padding, settings.detection.crop_padding_min_px)
        truth = Counter(_norm(w.text) for w in words_in_crop(pdf_words(doc, page, dpi), crop_box))
        truth.pop("", None)
        crop = image.crop(crop_box)
        for name in variants:
            o = VARIANTS[name]
            c0 = _children_cpu()
            words = ocr_words(
                crop,
                psm=o.get("psm", settings.ocr.psm),
                rule_min_px=max(10, dpi // 5),
                threads=1,
                invert=o.get("invert", True),
                dpi=dpi if o.get("dpi") else None,
            )
            totals[name]["cpu_s"] += _children_cpu() - c0
            got = Counter(_norm(w.text) for w in words)
            got.pop("", None)
            totals[name]["words"] += sum(got.values())
            totals[name]["matched"] += sum((got & truth).values())
            totals[name]["truth"] += sum(truth.values())
    return {"tables": len(records), "dpi": dpi, "variants": totals}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m worker.devtools.bench_ocr", description=__doc__)
    parser.add_argument("data", type=Path, help="an evaluation set with born-digital PDFs (e.g. the dev set)")
    parser.add_argument("--tables", type=int, default=0, help="the first N tables (0: all)")
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated, of: " + ", ".join(VARIANTS))
    args = parser.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        print(f"error: unknown variant(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    result = measure(args.data, args.tables, args.dpi, variants)
    print(f"{result['tables']} table crops at {result['dpi']} dpi; words against the PDF text layer")
    print(f"{'variant':<24}{'words read':>12}{'matching':>10}{'of truth':>10}{'recall':>8}{'CPU s':>8}")
    for name, t in result["variants"].items():
        recall = t["matched"] / t["truth"] if t["truth"] else 0.0
        print(f"{name:<24}{t['words']:>12}{t['matched']:>10}{t['truth']:>10}{recall:>8.3f}{t['cpu_s']:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
