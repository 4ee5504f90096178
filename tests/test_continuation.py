"""Tables continued across pages: linked, merged, stored and chunked as one logical table.

The ICDAR-2013 dev PDFs are read from the dev set (helpers.DEV_DATA) at test time (never copied here);
tests needing them are skipped when that folder is absent.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from helpers import DEV_DATA

from worker.core.captions import capture_context
from worker.core.continuation import Part, continues, link_parts, merge_grids
from worker.core.detections import padded_box
from worker.core.headers import infer_header_rows
from worker.core.types import Cell, TableGrid
from worker.evaluation.dataset import GtCell, cells_in_crop, complete_grid
from worker.evaluation.oracle import oracle_from_cells
from worker.settings import Settings

DEV = DEV_DATA / "icdar2013-eu"
needs_dev = pytest.mark.skipif(not (DEV / "gt.jsonl").is_file(), reason="no dev data (TABLESIGHT_DEV_DATA)")


def part(
    tid: str,
    page: int,
    xs: list[float],
    *,
    top: float = 80,
    bottom: float = 1000,
    caption: str = "",
    header: list[str] | None = None,
    clear: tuple[bool | None, bool | None] = (True, True),
) -> Part:
    edges: list[tuple[float, float] | None] = [(a, b) for a, b in zip(xs, xs[1:])]
    return Part(
        tid,
        page,
        (xs[0], top, xs[-1], bottom),
        (1200.0, 1100.0),
        edges,
        header or [],
        1 if header else 0,
        caption,
        clear[0],
        clear[1],
    )


def test_link_rules():
    a = part("p0001-t01", 1, [100, 300, 500, 700], top=600, header=["Item", "2023", "2024"], caption="Table 3: Sales")
    b = part("p0002-t01", 2, [104, 298, 505, 702], bottom=500)
    link, why = continues(a, b)
    assert link and not link.repeated_header and "header not repeated" in why
    repeated = part("p0002-t01", 2, [100, 300, 500, 700], header=["Item", "2023", "2024"])
    assert continues(a, repeated)[0].repeated_header  # type: ignore[union-attr]
    assert continues(a, part("p0002-t01", 2, [100, 300, 500, 700], caption="Table 3 (continued)"))[0]
    assert continues(a, part("p0002-t01", 2, [100, 300, 500, 700], caption="Table 3. Sales, cont."))[0]
    refusals = {
        "own caption": part("p0002-t01", 2, [100, 300, 500, 700], caption="Pesticides"),
        "columns moved": part("p0002-t01", 2, [100, 380, 500, 700]),
        "column count": part("p0002-t01", 2, [100, 300, 700]),
        "other header": part("p0002-t01", 2, [100, 300, 500, 700], header=["Name", "Age", "Town"]),
        "text between": part("p0002-t01", 2, [100, 300, 500, 700], clear=(False, True)),
        "page gap": part("p0003-t01", 3, [100, 300, 500, 700]),
    }
    for name, b2 in refusals.items():
        assert continues(a, b2)[0] is None, name
    # page text not seen: where the tables sit decides
    a_mid = part("p0001-t01", 1, [100, 300, 500, 700], top=100, bottom=400, clear=(None, None))
    assert continues(a_mid, part("p0002-t01", 2, [100, 300, 500, 700], clear=(None, None)))[0] is None
    a_low = part("p0001-t01", 1, [100, 300, 500, 700], top=500, bottom=1050, clear=(None, None))
    assert continues(a_low, part("p0002-t01", 2, [100, 300, 500, 700], top=60, clear=(None, None)))[0]
    a.last_on_page = False
    assert continues(a, b)[0] is None
    chains, _ = link_parts(
        [
            part("p0001-t01", 1, [0, 50, 90], top=500),
            part("p0002-t01", 2, [0, 50, 90]),
            part("p0003-t01", 3, [0, 50, 90]),
        ]
    )
    assert chains == [["p0001-t01", "p0002-t01", "p0003-t01"]]


def test_merge_skips_a_repeated_header_and_keeps_spans():
    a = TableGrid(
        3,
        2,
        [
            Cell(0, 0, text="Item", is_header=True),
            Cell(0, 1, text="Qty", is_header=True),
            Cell(1, 0, 2, 1, "Bolts"),
            Cell(1, 1, text="1"),
            Cell(2, 1, text="2"),
        ],
        header_rows=1,
    )
    b = TableGrid(
        2,
        2,
        [
            Cell(0, 0, text="Item", is_header=True),
            Cell(0, 1, text="Qty", is_header=True),
            Cell(1, 0, text="Nuts"),
            Cell(1, 1, text="3"),
        ],
        header_rows=1,
    )
    merged, sources = merge_grids([a, b], [0, 1])
    merged.owner_map()
    assert (merged.n_rows, merged.header_rows) == (4, 1)
    assert [c.text for c in merged.sorted_cells()] == ["Item", "Qty", "Bolts", "1", "2", "Nuts", "3"]
    assert sources == [(0, 0), (0, 1), (0, 2), (1, 1)]


# --- end to end: stored parts -> linked, merged, chunked ---------------------------------


class Replay:
    """A predictor that answers from a list, in call order: with one pipeline lane and every page
    in one batch, detection sees the pages and structure the crops in document order."""

    model_id, revision = "oracle-replay", None

    def __init__(self, answers: list[list[dict[str, Any]]]) -> None:
        self.answers = list(answers)

    def predict(self, images: list[Any], batch_size: int | None = None) -> list[list[dict[str, Any]]]:
        out, self.answers = self.answers[: len(images)], self.answers[len(images) :]
        return out


def oracle_stages(
    tables: list[tuple[tuple[float, float], tuple[float, float, float, float], list[GtCell], int, int, int]],
    settings: Settings,
) -> Any:
    """Stages answering with the truth: per page one table (page size, bbox, cells in page px,
    n_rows, n_cols, header rows); structure objects made by the evaluation's oracle."""
    from worker.pipeline import Stages

    detections, structures = [], []
    for size, bbox, cells, n_rows, n_cols, header in tables:
        detections.append([{"label": "table", "score": 0.99, "bbox": list(bbox)}])
        x0, y0, x1, y1 = padded_box(
            bbox, (int(size[0]), int(size[1])), settings.detection.crop_padding, settings.detection.crop_padding_min_px
        )
        local = cells_in_crop(cells, (x0, y0))
        oracle = oracle_from_cells(local, n_rows, n_cols, (x1 - x0, y1 - y0), header_rows=header)
        structures.append([{"label": o.label, "score": o.score, "bbox": list(o.bbox)} for o in oracle.objects])
    return Stages(structure=Replay(structures), detector=Replay(detections), ocr=lambda im: [])


def born_digital_part(path: Path, rows: list[list[str]], header: bool, top: float, title: str) -> Any:
    from worker.devtools.samples import CellSpec, TableSpec, make_born_digital_pdf

    body = ([["Item", "Qty", "Price"]] if header else []) + rows
    spec = TableSpec(tuple(tuple(CellSpec(t) for t in row) for row in body), header_rows=1 if header else 0)
    return make_born_digital_pdf(path, spec, origin_pt=(72.0, top), title=title)


@pytest.mark.parametrize("repeat_header", [True, False])
def test_born_digital_table_over_two_pages_is_one_logical_table(tmp_path, capsys, repeat_header):
    from pypdf import PdfWriter

    from worker.cli.main import main
    from worker.pipeline import extract_document
    from worker.storage import LocalStorage

    rows = [[f"Widget model {i:02d}", f"{12000 + 37 * i:,}", f"{1000 + i * 3.25:,.2f}"] for i in range(36)]
    first = born_digital_part(tmp_path / "a.pdf", rows[:17], True, 400.0, "Table 7: Widget prices")
    second = born_digital_part(tmp_path / "b.pdf", rows[17:], repeat_header, 60.0, "")
    pdf = tmp_path / "two-pages.pdf"
    writer = PdfWriter()
    for p in ("a.pdf", "b.pdf"):
        writer.append(str(tmp_path / p))
    writer.write(pdf)
    settings = Settings(dpi=72, detection_batch_size=2, pipeline_lanes=1)
    s = settings.inputs.dpi / 72
    tables = []
    for truth in (first, second):
        cells = [
            GtCell(c["row"], c["col"], 1, 1, c["text"], tuple(v * s for v in c["bbox"]), c["is_header"])
            for c in truth.cells
        ]
        bbox = (
            min(c.bbox[0] for c in cells),
            min(c.bbox[1] for c in cells),  # type: ignore[index]
            max(c.bbox[2] for c in cells),
            max(c.bbox[3] for c in cells),
        )  # type: ignore[index]
        n_rows = max(c.row for c in cells) + 1
        tables.append(((612 * s, 792 * s), bbox, cells, n_rows, 3, 1 if cells[0].is_header else 0))
    store = LocalStorage(tmp_path / "out")
    manifest = extract_document(pdf, stages=oracle_stages(tables, settings), storage=store, settings=settings)
    assert manifest["status"] == "complete"
    [logical] = manifest["logical_tables"]
    assert logical["parts"] == ["p0001-t01", "p0002-t01"] and logical["pages"] == [1, 2]
    assert logical["links"][0]["repeated_header"] is repeat_header
    assert manifest["tables"][1]["continues"] == "p0001-t01"
    record = store.get_json(logical["files"]["json"])
    ser = record["serialisations"]
    assert record["grid"]["n_rows"] == 1 + 36 and ser["column_labels"] == ["Item", "Qty", "Price"]
    assert len(ser["row_lines"]) == 36  # the repeated header is a header, not a row
    assert ser["row_lines"][20] == f"Item: Widget model 20; Qty: {rows[20][1]}; Price: {rows[20][2]}"
    assert ser["caption"] == "Table 7: Widget prices" and "Pages: 1-2" in ser["description"]
    part2 = store.get_json(f"{manifest['doc_id']}/tables/p0002-t01.json")
    assert part2["continuation"]["logical_table"] == logical["logical_id"]
    assert store.exists(logical["files"]["md"]) and store.exists(logical["files"]["rows"])
    assert store.exists(f"{manifest['doc_id']}/tables/p0001-t01.md")

    assert main(["chunks", manifest["doc_id"], "--store", str(tmp_path / "out"), "--max-tokens", "150"]) == 0
    chunks = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {c["table_id"] for c in chunks} == {logical["logical_id"]} and len(chunks) > 2
    covered = [r for c in chunks for r in range(c["row_range"][0], c["row_range"][1] + 1)]
    assert covered == list(range(1, 37))
    assert chunks[0]["pages"] == [1] and chunks[-1]["pages"] == [2]
    assert all(
        c["text"].startswith("Table: Table 7: Widget prices\nPages: 1-2\nColumns: Item | Qty | Price") for c in chunks
    )
    assert (
        main(
            [
                "chunks",
                manifest["doc_id"],
                "--store",
                str(tmp_path / "out"),
                "--tokenizer",
                str(tmp_path / "no-such-tokenizer"),
            ]
        )
        == 2
    )
    assert main(["chunks", "0000000000000000", "--store", str(tmp_path / "out")]) == 1


# --- the ICDAR-2013 dev PDFs ----------------------------------------------------------------


def dev_records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DEV / "gt.jsonl").read_text().splitlines() if line.strip()]


def gt_part_cells(rec: dict[str, Any], rows: range, page_top_pt: float, dpi: int) -> list[GtCell]:
    """Cells of `rows` with boxes in pixels of a page whose top edge is at `page_top_pt` (PDF y)."""
    s = dpi / 72
    out = []
    for c in rec["cells"]:
        if c["row"] in rows and c.get("pdf_bbox_pt"):
            x0, y0, x1, y1 = c["pdf_bbox_pt"]
            out.append(
                GtCell(
                    c["row"] - rows.start,
                    c["col"],
                    min(c.get("rowspan", 1), rows.stop - c["row"]),
                    c.get("colspan", 1),
                    c["text"],
                    (x0 * s, (page_top_pt - y1) * s, x1 * s, (page_top_pt - y0) * s),
                )
            )
    return out


@needs_dev
def test_dev_set_regions_are_one_table_each():
    """ICDAR-2013 marks a table continued across pages as several regions of one (pdf, table_id).
    The dev set has none, so the real-table merge is checked on a dev table split at a row
    boundary (below); this test keeps that premise honest: it fails if the data changes."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in dev_records():
        groups.setdefault((r["pdf"], r["table_id"]), []).append(r)
    assert groups, "no ICDAR-2013 records read from the dev set"
    multi = sorted(k for k, v in groups.items() if len(v) > 1)
    assert multi == [], f"multi-region tables appeared in the dev set ({multi}): run them through the merge"


@needs_dev
def test_dev_table_split_across_two_pages_is_merged(tmp_path, caplog):
    """A real dev table (eu-004 p2, 16 x 7) cut by a page break: the page is split in two at a row
    boundary by its page boxes, so the text layer, fonts and rules are the original's."""
    from pypdf import PdfReader, PdfWriter

    from worker.pipeline import extract_document
    from worker.storage import LocalStorage

    caplog.set_level(logging.ERROR, logger="pypdf")  # the source PDF has odd xref offsets pypdf reports
    rec = next(r for r in dev_records() if r["pdf"].endswith("eu-004.pdf") and r["table_id"] == "1")
    split_row = 9
    above = max(c["pdf_bbox_pt"][1] for c in rec["cells"] if c["row"] == split_row - 1 and c.get("pdf_bbox_pt"))
    below = min(c["pdf_bbox_pt"][3] for c in rec["cells"] if c["row"] == split_row and c.get("pdf_bbox_pt"))
    cut = (above + below) / 2
    height = 842.0
    writer = PdfWriter()
    for lo, hi in ((cut, height), (0.0, cut)):
        page = writer.add_page(PdfReader(DEV.parent / rec["pdf"]).pages[rec["page"] - 1])
        page.mediabox.lower_left, page.mediabox.upper_right = (0, lo), (595, hi)
        page.cropbox.lower_left, page.cropbox.upper_right = (0, lo), (595, hi)
    pdf = tmp_path / "eu-004-split.pdf"
    with pdf.open("wb") as fh:
        writer.write(fh)

    settings = Settings(dpi=72, detection_batch_size=2, pipeline_lanes=1)
    full = complete_grid(rec["cells"], rec["n_rows"], rec["n_cols"], 0)
    assert full is not None
    header = infer_header_rows(
        TableGrid(rec["n_rows"], rec["n_cols"], [Cell(c.row, c.col, c.rowspan, c.colspan, c.text) for c in full])
    )
    assert header == 1
    tables = []
    for rows, top in ((range(0, split_row), height), (range(split_row, rec["n_rows"]), cut)):
        cells = gt_part_cells(rec, rows, top, settings.inputs.dpi)
        bbox = (
            min(c.bbox[0] for c in cells),
            min(c.bbox[1] for c in cells),  # type: ignore[index]
            max(c.bbox[2] for c in cells),
            max(c.bbox[3] for c in cells),
        )  # type: ignore[index]
        size = (595.0, (height - cut) if top == height else cut)
        grid = complete_grid(
            [
                {"row": c.row, "col": c.col, "rowspan": c.rowspan, "colspan": c.colspan, "text": c.text, "bbox": c.bbox}
                for c in cells
            ],
            len(rows),
            rec["n_cols"],
            0,
        )
        tables.append((size, bbox, grid, len(rows), rec["n_cols"], header if rows.start == 0 else 0))
    store = LocalStorage(tmp_path / "out")
    manifest = extract_document(pdf, stages=oracle_stages(tables, settings), storage=store, settings=settings)
    assert manifest["status"] == "complete"
    [logical] = manifest["logical_tables"]
    merged = store.get_json(logical["files"]["json"])
    assert merged["parts"] == ["p0001-t01", "p0002-t01"]
    assert merged["links"][0]["repeated_header"] is False
    got = {(c["row"], c["col"]): " ".join(c["text"].split()) for c in merged["grid"]["cells"] if c["text"]}
    want = {(c.row, c.col): " ".join(c.text.split()) for c in full if c.text}
    assert got == want, "the merged table is the original table"
    ser = merged["serialisations"]
    assert ser["caption"] == "Table 6.1: Size of the market across the member states"
    assert ser["row_lines"][split_row - 1].startswith("Portugal; per capita GNP ($000) 1995: 9.7;")


@needs_dev
def test_dev_consecutive_page_tables_with_own_captions_stay_apart():
    """Real page breaks between different tables with the same columns (eu-001: Heavy metals ->
    Pesticides; eu-020: Table 2.3 -> 2.4; ...): never merged."""
    from worker.inputs import open_document
    from worker.text_layer import pdf_words

    recs = dev_records()
    pairs = [
        ("eu-001", "3", "4"),
        ("eu-001", "5", "6"),
        ("eu-020", "2", "3"),
        ("eu-026", "2", "3"),
        ("eu-004", "8", "9"),
    ]
    docs: dict[str, Any] = {}
    for stem, ta, tb in pairs:
        a_rec, b_rec = (next(r for r in recs if Path(r["pdf"]).stem == stem and r["table_id"] == t) for t in (ta, tb))
        parts = []
        for rec in (a_rec, b_rec):
            dpi = int(rec["render_dpi"])
            pad = 8 * dpi / 72
            x0, y0, x1, y1 = rec["crop_px_in_page"]
            box = (x0 + pad, y0 + pad, x1 - pad, y1 - pad)
            if stem not in docs:
                docs[stem] = open_document(DEV.parent / rec["pdf"], settings=Settings())
            same_page = [r for r in recs if r["pdf"] == rec["pdf"] and r["page"] == rec["page"]]
            others = [
                (
                    r["crop_px_in_page"][0] + pad,
                    r["crop_px_in_page"][1] + pad,
                    r["crop_px_in_page"][2] - pad,
                    r["crop_px_in_page"][3] - pad,
                )
                for r in same_page
            ]
            size = docs[stem].page_size_px(rec["page"], dpi)
            ctx = capture_context(pdf_words(docs[stem], rec["page"], dpi), box, size, other_tables=others)
            full = complete_grid(rec["cells"], rec["n_rows"], rec["n_cols"], 0)
            lo: dict[int, float] = {}
            hi: dict[int, float] = {}
            for c in full or []:
                if c.bbox and c.colspan == 1:
                    lo[c.col] = min(lo.get(c.col, 1e9), c.bbox[0] + x0)
                    hi[c.col] = max(hi.get(c.col, 0.0), c.bbox[2] + x0)
            edges = [(lo[k], hi[k]) if k in lo else None for k in range(rec["n_cols"])]
            parts.append(
                Part(
                    rec["table_id"],
                    rec["page"],
                    box,
                    (float(size[0]), float(size[1])),
                    edges,
                    [],
                    0,
                    ctx.caption,
                    ctx.above_clear,
                    ctx.below_clear,
                    False,
                    same_page[0] is rec,
                    same_page[-1] is rec,
                )
            )
        link, why = continues(parts[0], parts[1])
        assert link is None, (stem, ta, tb, why)
