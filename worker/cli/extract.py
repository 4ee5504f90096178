"""`tablesight extract FILE... --out DIR`: the whole pipeline in process, no broker."""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

from tqdm import tqdm


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "extract",
        help="run the pipeline in process on PDFs or images",
        description="Find tables, rebuild their structure and write HTML, crops and JSON.",
    )
    p.add_argument("files", nargs="+", type=Path, metavar="FILE", help="PDF, PNG, JPEG or TIFF files")
    p.add_argument("--out", type=Path, help="output folder (default: TABLESIGHT_STORAGE_URL)")
    p.add_argument("--pages", help="page ranges, e.g. 1-3,5,9- (default: all)")
    p.add_argument("--dpi", type=int, help="render resolution for PDFs (default: TABLESIGHT_DPI)")
    p.add_argument("--device", help="auto, cpu, cuda or cuda:N (default: TABLESIGHT_DEVICE)")
    p.add_argument(
        "--tables",
        choices=("detect", "page"),
        default="detect",
        help="detect: find tables on each page; page: each page/image is one table crop",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_engine_argument(p)
    p.add_argument(
        "--read-hard",
        action="store_true",
        help="then read every needs_vision table with the vision model, in process "
        "(default: TABLESIGHT_VISION_AUTO_READ)",
    )
    p.set_defaults(func=run)


def add_engine_argument(p: argparse.ArgumentParser, default: str | None = None, auto: bool = True) -> None:
    """`--engine`, its choices from the engine registry (worker.engines)."""
    from worker.engines import AUTO, ENGINES, offline_engine

    choices = [*ENGINES, *([AUTO] if auto else [])]
    titles = "; ".join(f"{name}: {engine.title}" for name, engine in ENGINES.items())
    auto_help = f"; auto: the first whose weights resolve, else {offline_engine().name}" if auto else ""
    p.add_argument(
        "--engine",
        choices=choices,
        default=default,
        help=f"{titles}{auto_help} (default: {default or 'TABLESIGHT_ENGINE, itself auto by default'})",
    )
    p.add_argument(
        "--ocr",
        choices=("tesseract", "ppocr", "auto"),
        help="OCR engine for crops without a text layer: tesseract, ppocr (PP-OCRv6) or auto "
        "(ppocr when its weights are present) (default: TABLESIGHT_OCR__ENGINE)",
    )


def run(args: argparse.Namespace) -> int:
    from worker.engines import resolve_engine
    from worker.errors import TablesightError
    from worker.pipeline import extract_documents, load_stages
    from worker.settings import get_settings
    from worker.storage import storage_for

    settings = get_settings()
    updates = {k: v for k, v in {"device": args.device, "dpi": args.dpi}.items() if v is not None}
    if updates:
        settings = settings.replace(**updates)
    chosen, why = resolve_engine(getattr(args, "engine", None) or settings.models.engine, settings)
    if getattr(args, "engine", None):
        why = why.replace("ENGINE=", "--engine ", 1)
    print(f"engine: {chosen.name} ({why})", file=sys.stderr)  # the one line saying which engine ran, and why
    settings = settings.replace(engine=chosen.name)
    from worker.engines.ocr import resolve_ocr_engine

    ocr, why = resolve_ocr_engine(getattr(args, "ocr", None) or settings.ocr.engine, settings.models.models_dir)
    print(f"ocr: {ocr} ({why})", file=sys.stderr)
    settings = settings.replace(ocr={"engine": ocr})
    vision_reads = getattr(args, "read_hard", False) or settings.vision.auto_read
    if vision_reads:  # a reader that cannot work fails now, not after the extraction
        from worker.vision.policy import reader_problem

        problem = reader_problem(settings.vision, settings.models)
        if problem:
            print(f"error: vision read: {problem}", file=sys.stderr)
            return 2
    storage = storage_for(settings, args.out)
    loaded = {}

    def stages():
        if "stages" not in loaded:
            loaded["stages"] = load_stages(settings, tables=args.tables)
        return loaded["stages"]

    t0 = time.time()
    n_pages = n_tables = failed = 0
    quiet = args.no_progress or not sys.stderr.isatty()
    several = len(args.files) > 1
    docs = tqdm(total=len(args.files), desc="documents", unit="doc", disable=quiet or not several)
    # short documents run side by side (worker.pipeline.documents): one page bar counts them all
    bar = tqdm(total=0, desc="pages" if several else args.files[0].name, unit="page", disable=quiet, leave=False)
    done = extract_documents(
        list(args.files),
        stages=stages,
        storage=storage,
        settings=settings,
        pages=args.pages,
        dpi=args.dpi,
        on_start=partial(_grow, bar),
        on_page=partial(_advance, bar),
    )
    try:
        for path, manifest in done:
            docs.update()
            if vision_reads:
                from worker.vision.policy import read_hard

                if not read_hard(storage, manifest, settings, print, partial(print, file=sys.stderr)):
                    return 1
            n_pages += len(manifest["pages_done"])
            n_tables += len(manifest["tables"])
            where = storage.location(f"{manifest['doc_id']}/manifest.json")
            if manifest["status"] == "complete":
                print(f"{path}: {len(manifest['tables'])} table(s) on {len(manifest['pages'])} page(s) -> {where}")
            else:
                failed += 1
                reasons = "; ".join(_told(e) for e in manifest["errors"][:3])
                print(f"error: {path}: {manifest['status']}: {reasons} (manifest: {where})", file=sys.stderr)
    except TablesightError as exc:  # models or storage unusable: nothing else can run either
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        done.close()  # documents not started are dropped; those running finish
        bar.close()
        docs.close()
    print(
        f"done: {len(args.files)} document(s), {n_pages} page(s), {n_tables} table(s), "
        f"{failed} failed, {time.time() - t0:.1f}s",
        file=sys.stderr,
    )
    return 1 if failed else 0


def _told(error: dict) -> str:
    """One error as a line names it: with its page where it has one."""
    return f"page {error['page']}: {error['reason']}" if error.get("page") else error["reason"]


def _grow(bar: tqdm, _path: object, pages: int) -> None:
    bar.total += pages
    bar.refresh()


def _advance(bar: tqdm, _path: object, _page: object) -> None:
    bar.update()
