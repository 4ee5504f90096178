"""End-to-end evaluation on real pages: detection, structure and text together, against GT tables.

For every ICDAR-2013 table of `<data>/*/gt.jsonl` with a source PDF, its page is rendered at
the ground truth's `render_dpi` and run through a tool: in `scan` mode without the text layer
(an image, as from a scanner), in `text` mode with it (a born-digital PDF). Predicted tables
are matched one-to-one to the page's GT tables by IoU of their page boxes (the GT box is the
union of its cells' `pdf_bbox_pt`, or the dataset's crop box, whichever overlaps more), and
each GT table scores TEDS / TEDS-struct against its match, 0 when missed. `crop` mode scores
structure plus OCR alone: each GT crop image is one table.

Tools are adapters with one signature, so tablesight (any engine) and peer tools run on the
same pages and go through the same scorer (peers: worker.evaluation.peers).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from worker.core.geometry import iou, union_box
from worker.core.page_transform import Affine, invert, unbound_box
from worker.core.types import BBox
from worker.evaluation.binding import bind, rates
from worker.metrics.teds import teds

if TYPE_CHECKING:
    from PIL import Image

MATCH_IOU = 0.5
MODES = ("scan", "text", "crop")


@dataclass
class GtPageTable:
    """One GT table on its page: the page's PDF and number, boxes in page pixels, its HTML."""

    table_id: str
    pdf: Path
    page: int
    dpi: int
    crop_box: BBox
    cells_pt: list[BBox]
    html: str
    image: Path

    def page_boxes(self, page_height_px: float) -> list[BBox]:
        """The crop box and, when the cells have PDF boxes, their union (PDF y runs upwards)."""
        boxes = [self.crop_box]
        if self.cells_pt:
            s = self.dpi / 72.0
            x0, y0, x1, y1 = union_box(self.cells_pt)
            boxes.append((x0 * s, page_height_px - y1 * s, x1 * s, page_height_px - y0 * s))
        return boxes


@dataclass
class Predicted:
    bbox: BBox  # page pixels at the page's dpi
    html: str
    unsure: frozenset[tuple[int, int]] = frozenset()  # slots the tool marks as doubtful (ours only)


@dataclass
class PageJob:
    """What a tool is asked for: one PDF's pages (or crop images) at one dpi.

    With a degradation (`--degrade`), `images` are the degraded scans at `image_dpi`, and
    `to_degraded[page]` maps the clean page (the GT's frame, at `dpi`) onto each."""

    pdf: Path
    pages: list[int]
    dpi: int
    images: dict[int, Path] = field(default_factory=dict)  # page -> image (scan / crop mode)
    image_dpi: int | None = None
    to_degraded: dict[int, Affine] = field(default_factory=dict)


@dataclass(frozen=True)
class Degradation:
    """A scan simulator kind (worker.evaluation.degrade) at a strength; each page draws its own
    parameters from `seed` and the page's name."""

    kind: str
    strength: str = "moderate"
    seed: int = 0


# a tool: (job, mode, workdir) -> {page: [Predicted]} (crop mode: {index: [Predicted]})
Tool = Callable[[PageJob, str, Path], dict[int, list[Predicted]]]


def load_page_tables(data_dir: Path, limit: int | None = None) -> list[GtPageTable]:
    """GT tables that have a source PDF page (ICDAR), in file order; `gt_issue` ones skipped."""
    out: list[GtPageTable] = []
    for gt in sorted(Path(data_dir).glob("*/gt.jsonl")):
        for line in gt.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            if rec.get("gt_issue") or not rec.get("pdf") or not rec.get("crop_px_in_page"):
                continue
            cells = [tuple(float(v) for v in c["pdf_bbox_pt"]) for c in rec["cells"] if c.get("pdf_bbox_pt")]
            out.append(
                GtPageTable(
                    table_id=Path(rec["image"]).stem,
                    pdf=Path(data_dir) / rec["pdf"],
                    page=int(rec["page"]),
                    dpi=int(rec.get("render_dpi") or 144),
                    crop_box=tuple(float(v) for v in rec["crop_px_in_page"]),  # type: ignore[arg-type]
                    cells_pt=cells,  # type: ignore[arg-type]
                    html=str(rec["html"]),
                    image=Path(data_dir) / rec["image"],
                )
            )
    if limit is not None:
        keep = {(t.pdf, t.page) for t in out[:limit]}
        out = [t for t in out if (t.pdf, t.page) in keep]  # whole pages: every table of a page
    return out


def match(gt_boxes: list[list[BBox]], predicted: list[BBox], threshold: float = MATCH_IOU) -> dict[int, int]:
    """GT index -> predicted index, greedily by best IoU, each used once."""
    pairs = []
    for g, boxes in enumerate(gt_boxes):
        for p, box in enumerate(predicted):
            score = max(iou(b, box) for b in boxes)
            if score >= threshold:
                pairs.append((score, g, p))
    out: dict[int, int] = {}
    used: set[int] = set()
    for _score, g, p in sorted(pairs, reverse=True):
        if g not in out and p not in used:
            out[g] = p
            used.add(p)
    return out


def _page_height(pdf: Path, page: int, dpi: int) -> float:
    import pypdfium2 as pdfium

    doc = pdfium.PdfDocument(str(pdf))
    try:
        return float(doc[page - 1].get_height()) * dpi / 72.0
    finally:
        doc.close()


def _render_scans(job: PageJob, workdir: Path, degradation: Degradation | None = None) -> None:
    """Each page as a PNG without any text layer: what a scanner would give (degraded by the
    scan simulator when asked; lossless PNG of the degraded pixels, so every tool reads the same)."""
    from worker.inputs import open_document
    from worker.settings import Settings

    doc = open_document(job.pdf, settings=Settings(_env_file=None))
    for p in job.pages:
        path = workdir / f"{job.pdf.stem}-p{p:04d}.png"
        if degradation is None:
            doc.render(p, job.dpi).save(path)
        else:
            from worker.evaluation.degrade import degrade_page, page_seed

            seed = page_seed(degradation.seed, f"{job.pdf.stem}:{p}")

            def render(dpi: int, page: int = p) -> Image.Image:
                return doc.render(page, dpi)

            done = degrade_page(render, job.dpi, degradation.kind, degradation.strength, seed)
            done.image.save(path, dpi=(done.dpi, done.dpi))
            job.to_degraded[p] = done.to_degraded
            job.image_dpi = done.dpi
        job.images[p] = path


def _back_to_clean(job: PageJob, found: dict[int, list[Predicted]]) -> dict[int, list[Predicted]]:
    """Boxes on the degraded scans mapped back onto the clean page by the simulator's own
    map, the same for every tool (`unbound_box`: the upright box a tool's box stands for)."""
    out: dict[int, list[Predicted]] = {}
    for page, preds in found.items():
        m = job.to_degraded.get(page)
        if m is None:
            out[page] = preds
            continue
        back = invert(m)
        out[page] = [Predicted(unbound_box(back, p.bbox), p.html, p.unsure) for p in preds]
    return out


def evaluate(
    tool: Tool,
    tables: list[GtPageTable],
    mode: str,
    workdir: Path | None = None,
    degradation: Degradation | None = None,
) -> dict[str, Any]:
    """Run `tool` over the pages (or crops) of `tables` and score it; see the module docstring.

    `degradation` (scan mode only) gives every tool the same degraded scans."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    if degradation is not None and mode != "scan":
        raise ValueError("a degradation applies to scan mode only (a degraded page has no text layer)")
    with tempfile.TemporaryDirectory(prefix="tablesight-eval-") as tmp:
        work = Path(workdir or tmp)
        jobs: dict[tuple[Path, int], PageJob] = {}
        if mode == "crop":
            for i, t in enumerate(tables):
                jobs.setdefault((t.image.parent, t.dpi), PageJob(t.image.parent, [], t.dpi))
                job = jobs[(t.image.parent, t.dpi)]
                job.pages.append(i)
                job.images[i] = t.image
        else:
            for t in tables:
                job = jobs.setdefault((t.pdf, t.dpi), PageJob(t.pdf, [], t.dpi))
                if t.page not in job.pages:
                    job.pages.append(t.page)
        seconds = 0.0
        results: dict[tuple[Path, int], dict[int, list[Predicted]]] = {}
        failures: list[str] = []
        for key, job in jobs.items():
            job.pages.sort()
            if mode != "crop":  # the page images (peers take them with the text layer's words in text mode)
                _render_scans(job, work, degradation)
            warm = getattr(tool, "warm", None)
            if warm is not None:
                warm(mode)  # models load outside the timed part
            t0 = time.perf_counter()
            try:
                results[key] = _back_to_clean(job, tool(job, mode, work))
            except Exception as exc:  # noqa: BLE001 - a tool failing on a document scores 0 there
                failures.append(f"{job.pdf.name}: {type(exc).__name__}: {str(exc)[:200]}")
                results[key] = {}
            seconds += time.perf_counter() - t0
    result = score(tables, results, mode, seconds, failures)
    if degradation is not None:
        result["summary"]["degrade"] = f"{degradation.kind}/{degradation.strength}"
        result["summary"]["seed"] = degradation.seed
    return result


def score(
    tables: list[GtPageTable],
    results: dict[tuple[Path, int], dict[int, list[Predicted]]],
    mode: str,
    seconds: float,
    failures: list[str],
) -> dict[str, Any]:
    per_table: list[dict[str, Any]] = []
    tp = fp = 0
    if mode == "crop":
        for i, t in enumerate(tables):
            preds = results.get((t.image.parent, t.dpi), {}).get(i, [])
            per_table.append(_scored(t, preds[0] if preds else None))
        tp = sum(1 for r in per_table if r["matched"])
        n_units = len(tables)
    else:
        by_page: dict[tuple[Path, int], list[GtPageTable]] = defaultdict(list)
        for t in tables:
            by_page[(t.pdf, t.page)].append(t)
        for (pdf, page), gts in by_page.items():
            preds = results.get((pdf, gts[0].dpi), {}).get(page, [])
            height = _page_height(pdf, page, gts[0].dpi)
            pairs = match([g.page_boxes(height) for g in gts], [p.bbox for p in preds])
            tp += len(pairs)
            fp += len(preds) - len(pairs)
            for g, t in enumerate(gts):
                per_table.append(_scored(t, preds[pairs[g]] if g in pairs else None))
        n_units = len(by_page)
    matched = [r for r in per_table if r["matched"]]
    n = len(per_table)
    summary = {
        "mode": mode,
        "tables": n,
        "pages": n_units,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "recall": round(tp / n, 4) if n else 0.0,
        "teds": round(sum(r["teds"] for r in per_table) / n, 4) if n else 0.0,
        "teds_struct": round(sum(r["teds_struct"] for r in per_table) / n, 4) if n else 0.0,
        "teds_matched": round(sum(r["teds"] for r in matched) / len(matched), 4) if matched else 0.0,
        "teds_struct_matched": round(sum(r["teds_struct"] for r in matched) / len(matched), 4) if matched else 0.0,
        **rates(per_table),
        "pages_per_s": round(n_units / seconds, 3) if seconds > 0 else 0.0,
        "seconds": round(seconds, 1),
        "failures": failures,
    }
    return {"summary": summary, "tables": per_table}


def _scored(t: GtPageTable, pred: Predicted | None) -> dict[str, Any]:
    """TEDS and label binding of one GT table (a missed table, None, scores 0 and binds nothing)."""
    html = pred.html if pred is not None else ""
    return {
        "table_id": t.table_id,
        "matched": pred is not None,
        "teds": round(teds(html, t.html), 4) if pred is not None else 0.0,
        "teds_struct": round(teds(html, t.html, structure_only=True), 4) if pred is not None else 0.0,
        **bind(html, t.html, pred.unsure if pred is not None else frozenset()),
    }


def tablesight_tool(engine: str, device: str = "cpu") -> Tool:
    """tablesight's own pipeline with `engine`, in process, models loaded once."""
    from worker.pipeline import extract_document, load_stages
    from worker.settings import get_settings
    from worker.storage import LocalStorage

    base = get_settings().replace(**{"engine": engine, "device": device})
    loaded: dict[str, Any] = {}

    def warm(mode: str) -> None:
        tables = "page" if mode == "crop" else "detect"
        if tables not in loaded:
            loaded[tables] = load_stages(base, tables=tables)

    def run(job: PageJob, mode: str, work: Path) -> dict[int, list[Predicted]]:
        tables = "page" if mode == "crop" else "detect"
        settings = base.replace(**{"text_layer": mode == "text"})
        warm(mode)
        store = LocalStorage(work / "tablesight-out")
        out: dict[int, list[Predicted]] = defaultdict(list)
        inputs = [(p, job.images[p], None) for p in job.pages] if mode != "text" else [(0, job.pdf, job.pages)]
        for key, path, pages in inputs:
            manifest = extract_document(
                path,
                stages=loaded[tables],
                storage=store,
                settings=settings,
                pages=",".join(map(str, pages)) if pages else None,
                dpi=job.image_dpi or job.dpi,
            )
            for entry in manifest["tables"]:
                stem = f"{manifest['doc_id']}/tables/{entry['table_id']}"
                html = store.get_bytes(f"{stem}.html").decode("utf-8")
                record = json.loads(store.get_bytes(f"{stem}.json"))
                page = entry["page"] if pages else key
                out[page].append(Predicted(tuple(entry["bbox"]), html, _unsure(record)))
        return out

    run.warm = warm  # type: ignore[attr-defined]
    return run


def _unsure(record: dict[str, Any]) -> frozenset[tuple[int, int]]:
    """The slots our serialisations mark as doubtful (the same header decision as theirs)."""
    from worker.core.doubt import unsure_slots
    from worker.core.headers import header_rows_of
    from worker.core.serialise import grid_from_dict

    grid = grid_from_dict(record["grid"])
    return frozenset(unsure_slots(grid, header_rows_of(grid)[0]))


def format_rows(rows: list[tuple[str, dict[str, Any]]]) -> str:
    """A Markdown table, one row per (tool, summary)."""
    head = (
        "| tool | mode | tables | det. recall | det. precision | TEDS | TEDS-struct | TEDS matched "
        "| TEDS-struct matched | values | bound (both labels) | column path | row label "
        "| wrong stated (marked) | pages/s |"
    )
    lines = [head, "|" + "---|" * 15]
    for name, s in rows:
        mode = f"{s['mode']} {s['degrade']}" if s.get("degrade") else s["mode"]  # scan + simulator kind
        lines.append(
            f"| {name} | {mode} | {s['tables']} | {s['recall']:.3f} | {s['precision']:.3f} | {s['teds']:.3f} "
            f"| {s['teds_struct']:.3f} | {s['teds_matched']:.3f} | {s['teds_struct_matched']:.3f} "
            f"| {s['values']} | {s['binding']:.3f} | {s['binding_col']:.3f} | {s['binding_row']:.3f} "
            f"| {s.get('stated_wrong', 0)} ({s.get('marked_wrong', 0)}) | {s['pages_per_s']:.2f} |"
        )
    return "\n".join(lines)
