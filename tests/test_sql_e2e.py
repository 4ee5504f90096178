"""From a PDF to a SQL answer: extraction writes CSV and Parquet for every table (merged tables
too) and `tablesight sql` answers on them; with the truth's structure the values are exact."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from test_continuation import born_digital_part, oracle_stages
from test_extract_e2e import tiny_model_settings

from worker.cli.main import main
from worker.devtools.samples import financial_table, make_born_digital_pdf
from worker.evaluation.dataset import GtCell
from worker.pipeline import extract_document, load_stages
from worker.settings import Settings
from worker.storage import LocalStorage


def exports_of(store: LocalStorage, manifest: dict) -> list[str]:
    """Table ids (merged ones too) whose CSV and Parquet are stored and readable."""
    found = []
    for entry in manifest["tables"] + manifest.get("logical_tables", []):
        files = entry["files"]
        assert store.exists(files["csv"]) and store.exists(files["parquet"])
        record = store.get_json(files["json"])
        table = pq.read_table(store.location(files["parquet"]))
        assert table.column_names == [c["name"] for c in record["schema"]["columns"]]
        assert table.num_rows == record["schema"]["n_rows"]
        assert record["description"]
        found.append(entry.get("table_id") or entry["logical_id"])
    return found


def test_born_digital_pdf_to_exact_sql_answers(tmp_path, capsys):
    from pypdf import PdfWriter

    rows = [[f"Widget model {i:02d}", f"{12000 + 37 * i:,}", f"{1000 + i * 3.25:,.2f}"] for i in range(30)]
    first = born_digital_part(tmp_path / "a.pdf", rows[:14], True, 400.0, "Table 7: Widget prices")
    second = born_digital_part(tmp_path / "b.pdf", rows[14:], True, 60.0, "")
    pdf = tmp_path / "two-pages.pdf"
    writer = PdfWriter()
    for p in ("a.pdf", "b.pdf"):
        writer.append(str(tmp_path / p))
    writer.write(pdf)
    settings = Settings(dpi=72, detection_batch_size=2, pipeline_lanes=1)
    tables = []
    for truth in (first, second):
        cells = [GtCell(c["row"], c["col"], 1, 1, c["text"], tuple(c["bbox"]), c["is_header"]) for c in truth.cells]
        bbox = (
            min(c.bbox[0] for c in cells),  # type: ignore[index]
            min(c.bbox[1] for c in cells),  # type: ignore[index]
            max(c.bbox[2] for c in cells),  # type: ignore[index]
            max(c.bbox[3] for c in cells),  # type: ignore[index]
        )
        tables.append(((612.0, 792.0), bbox, cells, max(c.row for c in cells) + 1, 3, 1))
    store = LocalStorage(tmp_path / "out")
    manifest = extract_document(pdf, stages=oracle_stages(tables, settings), storage=store, settings=settings)
    assert manifest["status"] == "complete"
    merged = "p0001-t01-to-p0002-t01"
    assert exports_of(store, manifest) == ["p0001-t01", "p0002-t01", merged]

    out = ["--store", str(tmp_path / "out")]
    doc = manifest["doc_id"]
    query = f"SELECT qty, price, price__text FROM \"{merged}\" WHERE item = 'Widget model 20'"
    assert main(["sql", *out, "--json", doc, query]) == 0
    assert json.loads(capsys.readouterr().out) == [{"qty": 12740, "price": 1065.0, "price__text": "1,065.00"}]
    total = sum(12000 + 37 * i for i in range(30))
    assert main(["sql", *out, "--json", doc, f'SELECT sum(qty) AS s, count(*) AS n FROM "{merged}"']) == 0
    assert json.loads(capsys.readouterr().out) == [{"s": total, "n": 30}]
    assert main(["sql", *out, "--json", doc, 'SELECT max(price) AS p FROM "p0002-t01"']) == 0
    assert json.loads(capsys.readouterr().out) == [{"p": 1000 + 29 * 3.25}]
    assert main(["sql", *out, "--json", doc, "SELECT table_id, caption FROM _tables WHERE table_id = ?"]) == 1
    capsys.readouterr()
    assert main(["sql", *out, "--json", doc, f"SELECT caption FROM _tables WHERE table_id = '{merged}'"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"caption": "Table 7: Widget prices"}]


def test_sample_with_tiny_models_every_table_is_queryable(tiny_models, tmp_path, capsys):
    pdf = tmp_path / "digital.pdf"
    make_born_digital_pdf(pdf, financial_table())
    settings = tiny_model_settings(tiny_models)
    store = LocalStorage(tmp_path / "out")
    # the random tiny models give some grid: what matters is that every table is exported and queryable
    manifest = extract_document(pdf, stages=load_stages(settings, tables="page"), storage=store, settings=settings)
    ids = exports_of(store, manifest)
    assert ids and len(ids) == len(manifest["tables"])
    doc, out = manifest["doc_id"], ["--store", str(tmp_path / "out")]
    assert main(["sql", *out, "--json", doc, "SELECT table_id, n_rows FROM _tables ORDER BY table_id"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["table_id"] for r in listed] == sorted(ids)
    for row in listed:
        assert main(["sql", *out, "--json", doc, f'SELECT count(*) AS n FROM "{row["table_id"]}"']) == 0
        assert json.loads(capsys.readouterr().out) == [{"n": row["n_rows"]}]
