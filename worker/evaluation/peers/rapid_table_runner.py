"""rapid-table's own pipeline for `tablesight eval pages`; runs in its venv, never in ours.

rapid-table-det's object detector finds the tables (its default 0.7 score), each table box
(padded 10 px) goes to RapidTable with SLANet-plus and the package's own matching; text comes
from its bundled OCR (rapidocr_onnxruntime), or in text mode from the PDF's words we pass in.
rapid-table 1.0.3 imports torch at package import only for another model, so its modules are
loaded without the package __init__ (torch is not installed here).

Reads a job (JSON) on stdin, writes {"tables": {page: [{"bbox", "html"}]}, "failures": {}, "timing":
{"load_s", "page_s": [...]}} (timing: seconds to ready, then per page, for `tablesight bench --peers`).
"""

import json
import sys
import sysconfig
import time
import types
from pathlib import Path

STARTED = time.perf_counter()  # before the peer's imports: its start-up is part of what a user pays

import cv2  # noqa: E402
import numpy as np  # noqa: E402

SITE = Path(sysconfig.get_paths()["purelib"])


def _load_rapid_table():
    for name in ("rapid_table", "rapid_table.table_structure"):
        module = types.ModuleType(name)
        module.__path__ = [str(SITE / name.replace(".", "/"))]
        sys.modules[name] = module
    from rapid_table.table_structure.table_structure import TableStructurer

    sys.modules["rapid_table.table_structure"].TableStructurer = TableStructurer
    sys.modules["rapid_table.table_structure"].TableStructureUnitable = None
    import rapid_table.main as main

    return main.RapidTable(
        main.RapidTableInput(model_type="slanet_plus", model_path=str(SITE / "rapid_table/models/slanet-plus.onnx"))
    )


def main() -> None:
    from rapid_table_det.inference import TableDetector

    job = json.load(sys.stdin)
    detector = TableDetector(use_edge_det=False, use_cls_det=False)
    engine = _load_rapid_table()
    tables, failures = {}, {}
    from PIL import Image

    timing = {"load_s": time.perf_counter() - STARTED, "page_s": []}
    for page in job["pages"]:
        key = str(page)
        t0 = time.perf_counter()

        rgb = np.array(Image.open(job["images"][key]).convert("RGB"))
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        h, w = bgr.shape[:2]
        try:
            if job["mode"] == "crop":
                boxes = [[0, 0, w, h]]
            else:
                found, _ = detector(bgr, det_accuracy=0.7)
                boxes = [
                    [
                        max(0, b["box"][0] - 10),
                        max(0, b["box"][1] - 10),
                        min(w, b["box"][2] + 10),
                        min(h, b["box"][3] + 10),
                    ]
                    for b in found
                ]
            out = []
            for x0, y0, x1, y1 in boxes:
                crop = bgr[int(y0) : int(y1), int(x0) : int(x1)]
                ocr = None
                if job["mode"] == "text":
                    ocr = []
                    for word in job["words"].get(key, []):
                        a, b, c, d = word["bbox"]
                        cx, cy = (a + c) / 2, (b + d) / 2
                        if x0 <= cx <= x1 and y0 <= cy <= y1:
                            a, b, c, d = a - x0, b - y0, c - x0, d - y0
                            ocr.append([[[a, b], [c, b], [c, d], [a, d]], word["text"], 1.0])
                    if not ocr:
                        ocr = None
                result = engine(crop, ocr)
                out.append({"bbox": [float(x0), float(y0), float(x1), float(y1)], "html": result.pred_html or ""})
            tables[key] = out
        except Exception as exc:  # one page failing scores 0 there, the others still count
            failures[key] = f"{type(exc).__name__}: {exc}"[:300]
        timing["page_s"].append(time.perf_counter() - t0)
    print(json.dumps({"tables": tables, "failures": failures, "timing": timing}))


if __name__ == "__main__":
    main()
