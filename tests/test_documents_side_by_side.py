"""Several documents in one process (worker.pipeline.documents): one-page scans run side by side on
the lanes, a long document waits for every lane in its turn, and the outputs are those of the
documents run one after another."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from contract_check import contract_problems
from helpers import bad_inputs
from test_extract_e2e import tiny_model_settings

from worker.devtools.samples import financial_table, key_figures_table, make_page, make_scanned_pdf, staffing_table
from worker.overlap import DocumentSlot, LaneBudget, SubprocessPool
from worker.pipeline import extract_document, extract_documents, load_stages
from worker.storage import LocalStorage


def test_lane_budget_short_documents_share_lanes_a_long_one_waits_its_turn() -> None:
    budget, lock = LaneBudget(2), threading.Lock()
    in_use, peak, started = [0], [0], []

    def document(turn: int, pages: int, seconds: float) -> None:
        slot = DocumentSlot(SubprocessPool(1), budget, turn)
        try:
            if pages == 0:  # could not be opened: it takes no lanes and gives up its turn
                return
            slot.take(pages)
            taken = slot.held
            with lock:
                started.append(turn)
                in_use[0] += taken
                peak[0] = max(peak[0], in_use[0])
            time.sleep(seconds)
            with lock:
                in_use[0] -= taken
        finally:
            slot.close()

    # turn: pages, seconds. 0 and 1 are one-page scans side by side; 2 cannot be opened; 3 is long
    # and needs both lanes, so 4 (one page, ready at once) must not pass it
    plan = {0: (1, 0.3), 1: (1, 0.3), 2: (0, 0.0), 3: (5, 0.2), 4: (1, 0.1)}
    threads = []
    for turn in sorted(plan, reverse=True):  # asked for in the wrong order: turns still rule
        threads.append(threading.Thread(target=document, args=(turn, *plan[turn])))
        threads[-1].start()
        time.sleep(0.02)
    for t in threads:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in threads)
    assert started == [0, 1, 3, 4]
    assert peak[0] == 2 and in_use[0] == 0


def test_documents_run_side_by_side_with_the_outputs_of_one_after_another(tiny_models, tmp_path: Path) -> None:
    paths = []
    for i, specs in enumerate(([financial_table()], [staffing_table()], [key_figures_table()])):
        page = make_page(specs, page_size_px=(1000, 1200), seed=i).image
        paths.append(make_scanned_pdf(tmp_path / f"scan-{i}.pdf", [page], dpi=100))
    two = [make_page([financial_table()], page_size_px=(1000, 1200), seed=9).image] * 2
    paths.append(make_scanned_pdf(tmp_path / "two-pages.pdf", two, dpi=100))
    paths.insert(2, bad_inputs(tmp_path / "bad", "corrupt")["corrupt"].path)
    twin = tmp_path / "scan-0-again.pdf"  # the same content under another name: the same doc_id,
    twin.write_bytes(paths[0].read_bytes())  # written by two documents in flight at once
    paths.insert(1, twin)
    settings = tiny_model_settings(tiny_models).replace(lanes={"pipeline_lanes": 2})
    stages = load_stages(settings)

    first = LocalStorage(tmp_path / "a")
    one_by_one = {p: extract_document(p, stages=stages, storage=first, settings=settings) for p in paths}

    lock, flight, peak = threading.Lock(), {}, [0]

    def started(path: Path, pages: int) -> None:
        with lock:
            flight[path] = pages
            peak[0] = max(peak[0], len(flight))

    def page_done(path: Path, _result: object) -> None:
        with lock:
            flight[path] -= 1
            if not flight[path]:
                del flight[path]

    side = LocalStorage(tmp_path / "b")
    got = list(
        extract_documents(paths, stages=stages, storage=side, settings=settings, on_start=started, on_page=page_done)
    )
    assert [p for p, _ in got] == paths  # in the order given
    assert peak[0] == 2 and not flight  # two one-page scans were in flight at once, never more
    for path, manifest in got:
        before = one_by_one[path]
        assert manifest["status"] == before["status"]
        if path.name == "corrupt.pdf":
            assert manifest["status"] == "failed" and manifest["errors"][0]["reason"]
            continue
        assert manifest["status"] == "complete" and manifest["tables"] == before["tables"]
        doc = manifest["doc_id"]
        for entry in manifest["tables"]:
            key = f"{doc}/tables/{entry['table_id']}.html"
            assert side.get_bytes(key) == first.get_bytes(key)
    assert got[0][1]["doc_id"] == got[1][1]["doc_id"] and got[0][1]["tables"] == got[1][1]["tables"]
    assert contract_problems(tmp_path / "b")[1] == []  # every stored file whole and valid
    assert sum(len(m["tables"]) for _, m in got) >= 6  # every good page gave a table


def test_stopping_early_stops_the_documents_running(tiny_models, tmp_path: Path) -> None:
    """Ctrl-C or an error in whoever reads the manifests closes the generator: the long document
    running stops after its page groups in flight, writes no manifest, and nothing waits for it."""
    short = make_scanned_pdf(tmp_path / "short.pdf", [make_page([financial_table()], (1000, 1200)).image], dpi=100)
    pages = [make_page([key_figures_table()], (1000, 1200), seed=i).image for i in range(8)]
    long = make_scanned_pdf(tmp_path / "long.pdf", pages, dpi=100)
    settings = tiny_model_settings(tiny_models).replace(lanes={"pipeline_lanes": 2})
    store, done = LocalStorage(tmp_path / "out"), []
    started = threading.Event()

    def page_done(path: Path, _result: object) -> None:
        if path == long:
            done.append(path)
            started.set()

    run = extract_documents(
        [short, long], stages=load_stages(settings), storage=store, settings=settings, on_page=page_done
    )
    path, manifest = next(run)
    assert path == short and manifest["status"] == "complete"
    assert started.wait(timeout=120)  # the long document is under way
    run.close()
    assert 1 <= len(done) < len(pages)  # it stopped part way
    assert [m.parent.name for m in (tmp_path / "out").glob("*/manifest.json")] == [manifest["doc_id"]]
