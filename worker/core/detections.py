"""Detector output -> the tables of a page: thresholds, merged duplicates, padded crops, rotation.

A detection model with 15 queries often proposes the same table several times; a table
must come out once. Crops get a generous margin because the structure model was trained
on crops with ~30 px around the table and loses edge rows on tight crops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from worker.core.geometry import area, intersection_area, iou, union_box
from worker.core.types import BBox, Word


@dataclass(slots=True)
class TableBox:
    bbox: BBox
    score: float
    rotated: bool


def select_tables(
    detections: list[dict[str, Any]],
    *,
    threshold: float,
    rotated_threshold: float,
    merge_iou: float,
    page_size: tuple[int, int],
) -> list[TableBox]:
    """Tables above their class threshold; overlapping proposals merged into one, best first.

    Two proposals are the same table when their IoU exceeds `merge_iou` or one lies mostly
    (80 %) inside the other. A merged table takes the union box and the best score and label.
    """
    w, h = page_size
    candidates = []
    for d in detections:
        rotated = d["label"] == "table rotated"
        if d["label"] not in ("table", "table rotated"):
            continue
        if d["score"] < (rotated_threshold if rotated else threshold):
            continue
        x0, y0, x1, y1 = (float(v) for v in d["bbox"])
        box = (max(0.0, x0), max(0.0, y0), min(float(w), x1), min(float(h), y1))
        if box[2] - box[0] >= 2 and box[3] - box[1] >= 2:
            candidates.append(TableBox(box, float(d["score"]), rotated))
    candidates.sort(key=lambda t: -t.score)
    merged: list[TableBox] = []
    for cand in candidates:
        for kept in merged:
            inter = intersection_area(cand.bbox, kept.bbox)
            small = min(area(cand.bbox), area(kept.bbox))
            if iou(cand.bbox, kept.bbox) > merge_iou or (small > 0 and inter / small > 0.8):
                kept.bbox = union_box([kept.bbox, cand.bbox])
                break
        else:
            merged.append(TableBox(cand.bbox, cand.score, cand.rotated))
    # reading order on the page: top to bottom, then left to right
    merged.sort(key=lambda t: (round(t.bbox[1] / 20), t.bbox[0]))
    return merged


def padded_box(bbox: BBox, page_size: tuple[int, int], fraction: float, min_px: int) -> tuple[int, int, int, int]:
    """Integer crop box with a margin of max(min_px, fraction x longer table side), inside the page."""
    pad = max(float(min_px), fraction * max(bbox[2] - bbox[0], bbox[3] - bbox[1]))
    w, h = page_size
    return (
        max(0, int(bbox[0] - pad)),
        max(0, int(bbox[1] - pad)),
        min(w, int(bbox[2] + pad + 0.999)),
        min(h, int(bbox[3] + pad + 0.999)),
    )


def words_in_crop(words: list[Word], crop: tuple[int, int, int, int]) -> list[Word]:
    """Page words whose centre lies in the crop, moved to crop coordinates and clipped to it."""
    x0, y0, x1, y1 = crop
    out = []
    for word in words:
        cx, cy = (word.bbox[0] + word.bbox[2]) / 2, (word.bbox[1] + word.bbox[3]) / 2
        if x0 <= cx < x1 and y0 <= cy < y1:
            b = word.bbox
            out.append(
                Word(
                    word.text,
                    (max(b[0], x0) - x0, max(b[1], y0) - y0, min(b[2], x1) - x0, min(b[3], y1) - y0),
                    word.confidence,
                )
            )
    return out


def rotate_words_clockwise(words: list[Word], crop_height: float) -> list[Word]:
    """Word boxes after the crop is turned 90° clockwise (how a `table rotated` is set upright)."""
    return [
        Word(w.text, (crop_height - w.bbox[3], w.bbox[0], crop_height - w.bbox[1], w.bbox[2]), w.confidence)
        for w in words
    ]
