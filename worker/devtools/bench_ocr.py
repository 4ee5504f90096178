"""What the OCR engines (tesseract, PP-OCR) and their switches do to a crop's words and cost.

On born-digital pages the PDF text layer is the truth: each table of an evaluation set
(records with `pdf`, `page` and `crop_px_in_page`) is cut from the page rendered at `dpi`
with the pipeline's padding, OCR'd with each variant, and its words compared with the text
layer's words in the same crop (as multisets: order and boxes aside). CPU is tesseract's
(children's user + system time) or PP-OCR's (this process). `--degrade` reads each crop also
after a seeded scan simulation (worker.devtools.ocr_degrade). A switch is worth keeping only
if it loses no words.

    python -m worker.devtools.bench_ocr DATA --tables 20 --variants "baseline (psm 11),ppocr" --degrade clean,scan
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
    # PP-OCRv6 (models.ppocr); "ppocr" is what the pipeline runs by default
    "ppocr": {"engine": "ppocr"},
    "ppocr det 736": {"engine": "ppocr", "min_side": 736},  # PaddleOCR's / rapidocr's detection sizing
    "ppocr det x1.5": {"engine": "ppocr", "scale": 1.5},
    "ppocr batch 1": {"engine": "ppocr", "batch": 1},
    "ppocr batch 32": {"engine": "ppocr", "batch": 32},
    "ppocr 2 threads": {"engine": "ppocr", "threads": 2},
    "lines to 28 px": {"line_px": 28},
    "lines to 32 px": {"line_px": 32},
    "lines to 40 px": {"line_px": 40},
}
DEFAULT_VARIANTS = ("baseline (psm 11)", "ppocr")


def _norm(text: str) -> str:
    return unicodedata.normalize("NFKC", text).strip().strip(".,;:()").lower()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _readers(variants: list[str], dpi: int) -> dict[str, Any]:
    """One OCR callable per variant (PP-OCR sessions loaded once, before any timing)."""
    from models.ocr import ocr_words
    from models.rules import rule_length

    readers: dict[str, Any] = {}
    for name in variants:
        o = VARIANTS[name]
        if o.get("engine") == "ppocr":
            import models.ppocr as ppocr
            from models.ppocr.detect import DetectConfig
            from models.ppocr.recognise import RecogniseConfig

            readers[name] = ppocr.load(
                threads=o.get("threads", 1),
                detect=DetectConfig(min_side=o.get("min_side", 0), scale=o.get("scale", 1.0)),
                recognise=RecogniseConfig(batch_size=o.get("batch", 8)),
                rule_min_px=rule_length(dpi),
            )
        else:

            def read(crop: Any, o: dict[str, Any] = o) -> Any:
                return ocr_words(
                    crop,
                    psm=o.get("psm", 11),
                    rule_min_px=rule_length(dpi),
                    threads=1,
                    invert=o.get("invert", True),
                    dpi=dpi if o.get("dpi") else None,
                    line_px=o.get("line_px"),
                )

            readers[name] = read
    return readers


def measure(
    data_dir: Path, tables: int, dpi: int, variants: list[str], kinds: tuple[str, ...] = ("clean",), seed: int = 0
) -> dict[str, Any]:
    """Per image kind and variant: words read, words matching the text layer, text-layer words,
    wall and CPU seconds (tesseract's subprocess CPU, or this process's for PP-OCR, whose
    sessions run here), and PP-OCR's detection / recognition split. Variants take turns on
    each crop, so load on the machine falls on all of them alike."""
    import time

    from worker.core.detections import padded_box, words_in_crop
    from worker.devtools.ocr_degrade import degrade
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
    readers = _readers(variants, dpi)
    zero = {"words": 0, "matched": 0, "truth": 0, "wall_s": 0.0, "cpu_s": 0.0, "detect_s": 0.0, "recognise_s": 0.0}
    totals = {k: {v: dict(zero) for v in variants} for k in kinds}
    for index, (pdf, page, crop_144) in enumerate(records):
        doc = open_document(pdf, settings=settings)
        image = doc.render(page, dpi)
        box = tuple(v * dpi / 144 for v in crop_144)
        crop_box = padded_box(box, image.size, settings.detection.crop_padding, settings.detection.crop_padding_min_px)
        truth = Counter(_norm(w.text) for w in words_in_crop(pdf_words(doc, page, dpi), crop_box))
        truth.pop("", None)
        for kind in kinds:
            crop = degrade(image.crop(crop_box), kind, seed + index)
            turn = variants[index % len(variants) :] + variants[: index % len(variants)]
            for name in turn:
                reader, t = readers[name], totals[kind][name]
                timings = getattr(reader, "timings", None)
                if timings is not None:
                    timings.reset()
                c0, p0, w0 = _children_cpu(), time.process_time(), time.perf_counter()
                words = reader(crop)
                t["wall_s"] += time.perf_counter() - w0
                t["cpu_s"] += (_children_cpu() - c0) if timings is None else (time.process_time() - p0)
                if timings is not None:
                    t["detect_s"] += timings.detect
                    t["recognise_s"] += timings.recognise
                got = Counter(_norm(w.text) for w in words)
                got.pop("", None)
                t["words"] += sum(got.values())
                t["matched"] += sum((got & truth).values())
                t["truth"] += sum(truth.values())
    return {"tables": len(records), "dpi": dpi, "seed": seed, "kinds": totals}


def main(argv: list[str]) -> int:
    from worker.devtools.ocr_degrade import KINDS

    parser = argparse.ArgumentParser(prog="python -m worker.devtools.bench_ocr", description=__doc__)
    parser.add_argument("data", type=Path, help="an evaluation set with born-digital PDFs (e.g. the dev set)")
    parser.add_argument("--tables", type=int, default=0, help="the first N tables (0: all)")
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument(
        "--variants",
        default=",".join(DEFAULT_VARIANTS),
        help="comma-separated, of: " + ", ".join(VARIANTS) + f" (default: {', '.join(DEFAULT_VARIANTS)})",
    )
    parser.add_argument(
        "--degrade", default="clean", help="comma-separated image kinds, of: " + ", ".join(KINDS) + " (default: clean)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the degradations")
    parser.add_argument("--json", type=Path, dest="json_out", help="also write the totals here")
    args = parser.parse_args(argv)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    kinds = tuple(k.strip() for k in args.degrade.split(",") if k.strip())
    unknown = (set(variants) - set(VARIANTS)) | (set(kinds) - set(KINDS))
    if unknown:
        print(f"error: unknown variant(s) or kind(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    result = measure(args.data, args.tables, args.dpi, variants, kinds, args.seed)
    print(f"{result['tables']} table crops at {result['dpi']} dpi; words against the PDF text layer")
    print(
        f"{'kind':<7}{'variant':<22}{'read':>7}{'match':>7}{'truth':>7}{'recall':>8}{'prec':>7}"
        f"{'s/crop':>8}{'CPU/crop':>9}{'det':>6}{'rec':>6}"
    )
    n = max(1, result["tables"])
    for kind, per in result["kinds"].items():
        for name, t in per.items():
            recall = t["matched"] / t["truth"] if t["truth"] else 0.0
            precision = t["matched"] / t["words"] if t["words"] else 0.0
            split = f"{t['detect_s'] / n:>6.2f}{t['recognise_s'] / n:>6.2f}" if t["recognise_s"] else f"{'':>12}"
            print(
                f"{kind:<7}{name:<22}{t['words']:>7}{t['matched']:>7}{t['truth']:>7}{recall:>8.3f}{precision:>7.3f}"
                f"{t['wall_s'] / n:>8.2f}{t['cpu_s'] / n:>9.2f}{split}"
            )
    if args.json_out:
        args.json_out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
