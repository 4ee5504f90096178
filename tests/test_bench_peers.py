"""`tablesight bench --peers` and the GPU sweep: they run and report what they promise on a tiny
evaluation set built here (two born-digital pages with their ground truth). Functional checks only:
the figures themselves are measurements (docs/speed.md), never asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worker.cli.main import main

DPI = 144


def _html(cells: list[dict]) -> str:
    rows: dict[int, list[dict]] = {}
    for c in cells:
        rows.setdefault(c["row"], []).append(c)
    out = ["<table>"]
    for r in sorted(rows):
        out.append("<tr>")
        for c in sorted(rows[r], key=lambda c: c["col"]):
            span = "".join(f' {k}="{c[k]}"' for k in ("rowspan", "colspan") if c[k] > 1)
            out.append(f"<td{span}>{c['text']}</td>")
        out.append("</tr>")
    return "".join(out + ["</table>"])


@pytest.fixture(scope="module")
def eval_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An evaluation set as `--data` reads it: <root>/<set>/gt.jsonl naming PDFs and pages."""
    from worker.devtools.samples import financial_table, make_born_digital_pdf, staffing_table

    root = tmp_path_factory.mktemp("evalset")
    (root / "tiny" / "pdf").mkdir(parents=True)
    records = []
    for name, spec in (("a", financial_table()), ("b", staffing_table())):
        table = make_born_digital_pdf(root / "tiny" / "pdf" / f"{name}.pdf", spec)
        s = DPI / 72.0
        x0 = min(c["bbox"][0] for c in table.cells) * s
        y0 = min(c["bbox"][1] for c in table.cells) * s
        x1 = max(c["bbox"][2] for c in table.cells) * s
        y1 = max(c["bbox"][3] for c in table.cells) * s
        records.append(
            {
                "pdf": f"tiny/pdf/{name}.pdf",
                "page": 1,
                "render_dpi": DPI,
                "crop_px_in_page": [x0, y0, x1, y1],
                "cells": [{k: c[k] for k in ("row", "col", "rowspan", "colspan", "text")} for c in table.cells],
                "html": _html(table.cells),
                "image": f"tiny/images/{name}.png",
            }
        )
    (root / "tiny" / "gt.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return root


def test_parse_settings_labels_and_prefixes() -> None:
    from worker.cli.bench_peers_cmd import parse_settings

    assert parse_settings([]) == {"": {}}
    got = parse_settings(["base:", "pool:SUBPROCESS_THREADS=2,tablesight_ocr__page_pass=false"])
    assert got == {"base": {}, "pool": {"TABLESIGHT_SUBPROCESS_THREADS": "2", "TABLESIGHT_OCR__PAGE_PASS": "false"}}
    for bad in (["nolabel"], ["a:", "a:"], ["x:KEY"], [":A=1"]):
        with pytest.raises(ValueError):
            parse_settings(bad)


def test_page_selection_takes_the_densest_whole_pages(eval_set: Path) -> None:
    from worker.devtools.bench_peers import select_pages

    tables = select_pages(eval_set, 1)
    assert len({(t.pdf, t.page) for t in tables}) == 1
    assert len(select_pages(eval_set, 0)) == 2


def test_bad_arguments_are_refused(eval_set: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--engine", "embedded", "--peers"]) == 2  # no --data
    assert "--peers needs --data" in capsys.readouterr().err
    assert main(["bench", "--engine", "embedded", "--peers", "camelot", "--data", str(eval_set)]) == 2
    assert main(["bench", "--engine", "embedded,tatr", "--peers", "", "--data", str(eval_set)]) == 2
    assert main(["bench", "--engine", "quick"]) == 2
    assert main(["bench", "--engine", "embedded", "--peers", "", "--data", str(eval_set), "--setting", "x"]) == 2
    code = main(["bench", "--engine", "embedded", "--peers", "", "--data", str(eval_set), "--degrade", "coffee"])
    assert code == 2 and "coffee" in capsys.readouterr().err  # the simulator's kinds are the option's choices


def test_ours_alone_reports_time_memory_and_teds(eval_set: Path, tmp_path: Path) -> None:
    """Ours as one `tablesight extract` process over both pages, degraded: wall, CPU, RSS, stages, TEDS."""
    out = tmp_path / "report.json"
    code = main(
        ["bench", "--engine", "embedded", "--peers", "", "--data", str(eval_set), "--pages", "0", "--rounds", "1"]
        + ["--degrade", "office", "--json", str(out)]
    )
    assert code == 0
    report = json.loads(out.read_text())
    assert report["corpus"]["pages"] == 2 and report["corpus"]["tables"] == 2
    assert report["corpus"]["degrade"] == "office" and report["corpus"]["degrade_source"]
    ours = report["tools"]["tablesight"]
    assert ours["wall_s"] > ours["steady_s_per_page"] > 0 and ours["cpu_s"] > 0 and ours["peak_rss_mib"] > 100
    assert {"detection", "structure", "ocr"} <= set(ours["stage_s"])
    assert ours["recall"] == 1.0 and 0.5 < ours["teds"] <= 1.0  # both tables found and read
    assert report["ratios"] == {}


def test_gpu_sweep_refuses_cuda_without_a_device(capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: the refusal is for machines without one")
    assert main(["bench", "--device", "cuda", "--engine", "embedded,tatr"]) == 2
    err = capsys.readouterr().err
    assert "CUDA" in err and "error:" in err
    assert main(["bench", "--gpu-sweep", "--device", "cpu", "--batch-sizes", "1,x"]) == 2


def test_gpu_sweep_runs_on_the_cpu(tmp_path: Path) -> None:
    """The same script on the CPU (the fallback a GPU-less machine can check): rows per engine and batch."""
    from worker.devtools.bench_gpu import GpuBenchOptions, format_gpu_report, run_gpu_bench
    from worker.settings import Settings

    settings = Settings(_env_file=None, device="cpu", bench_dir=tmp_path / "models")
    options = GpuBenchOptions(
        engines=("embedded", "tatr"), device="cpu", batch_sizes=(1, 2), pages=1, models="random", size="tiny"
    )
    options.min_seconds = 0.0
    report = run_gpu_bench(options, settings)
    assert report["device"] == "cpu" and [e["engine"] for e in report["engines"]] == ["embedded", "tatr"]
    for engine in report["engines"]:
        assert [r["batch_size"] for r in engine["batches"]] == [1, 2]
        assert all(r["models_pages_per_s"] > 0 and r["device_used_mib"] is None for r in engine["batches"])
        assert engine["pipeline"]["pages"] == 1
    assert "whole pipeline" in format_gpu_report(report)
