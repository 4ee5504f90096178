"""Tiled PP-OCR detection (models.ppocr.tiles): the stitched map is the whole map's frame, and
a text line across a seam is read once, by the real detector and recogniser."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from PIL import Image, ImageDraw

from models.ppocr.tiles import STRIDE, grid, tiled_map
from tests.test_ppocr import needs_weights
from worker.devtools.samples import load_font


@pytest.mark.parametrize("size", [(2016, 1600), (1600, 448), (640, 640), (4032, 96)])
def test_tiles_cover_the_input_within_the_budget_on_the_stride(size) -> None:
    width, height = size
    pixels, overlap = 512 * 512, 128
    cols, rows = grid(width, height, pixels, overlap)
    for windows, extent in ((cols, width), (rows, height)):
        assert windows[0][0] == 0 and windows[-1][1] == extent
        for (_, a1), (b0, _) in zip(windows, windows[1:]):
            assert a1 - b0 >= overlap - STRIDE  # overlapping, within one stride of the ask
        assert all(s % STRIDE == 0 and e % STRIDE == 0 for s, e in windows)
    assert all((x1 - x0) * (y1 - y0) <= pixels for x0, x1 in cols for y0, y1 in rows)
    assert grid(width, height, 0, overlap) == ([(0, width)], [(0, height)])


def test_stitched_map_puts_every_pixel_back_where_it_was() -> None:
    height, width = 640, 960
    tensor = np.random.default_rng(0).random((1, 3, height, width), dtype=np.float32)
    calls: list[tuple[int, ...]] = []

    def run(t: np.ndarray) -> np.ndarray:  # a position-independent map: the first channel
        calls.append(t.shape)
        return t[0, 0] * 2

    stitched = tiled_map(tensor, run, 300 * 300, 96)
    assert len(calls) > 1 and all(h * w <= 300 * 300 for _, _, h, w in calls)
    np.testing.assert_array_equal(stitched, tensor[0, 0] * 2)


@needs_weights
def test_a_line_across_both_seams_is_read_once_as_a_whole_read_does() -> None:
    import models.ppocr as ppocr

    engine = ppocr.load(threads=1)
    image = Image.new("L", (640, 448), 255)
    config = dataclasses.replace(engine.detector.config, tile_pixels=360 * 256, tile_overlap=96)
    cols, rows = grid(640, 448, config.tile_pixels, config.tile_overlap)
    assert len(cols) > 1 and len(rows) > 1
    seam_x = (cols[1][0] + cols[0][1]) // 2
    seam_y = (rows[1][0] + rows[0][1]) // 2
    font = load_font(26)
    text = "Total 2,335 thousand"
    left, top, right, bottom = ImageDraw.Draw(image).textbbox((0, 0), text, font=font)
    # the line's middle on the horizontal seam, and the vertical seam through its second word
    origin = (seam_x - (right - left) // 2, seam_y - (top + bottom) // 2)
    ImageDraw.Draw(image).text(origin, text, fill=0, font=font)
    ink = ImageDraw.Draw(image).textbbox(origin, text, font=font)
    assert ink[0] < seam_x < ink[2] and ink[1] < seam_y < ink[3]

    whole = [(w.text, w.bbox) for w in engine(image)]
    engine.detector.config = config
    tiled = engine(image)
    assert [w.text for w in tiled] == ["Total", "2,335", "thousand"]
    assert [(w.text, w.bbox) for w in tiled] == whole
    rgb = np.repeat(np.asarray(image)[:, :, None], 3, axis=2)
    (box,) = engine.detector.detect(rgb)  # one line box, not one per tile
    assert box.x0 <= ink[0] and box.x1 >= ink[2] and box.y0 <= ink[1] and box.y1 >= ink[3]
